import { recordAudit } from '../audit/audit-log';
import type { Queryable } from '../db/database';
import { newTokenId } from '../ids';
import type { Token, TokenChange, TokenDevice, TokenHistoryBy, TokenHistoryEntry, TokenStatus, TokenSuspendedBy } from '../shapes/token';
import type { UpstreamToken } from './contract-stub';
import { emitTokenEvent, lockCardEvents } from './events';
import { fromJson, PENDING_OPERATION_MS, TOKEN_COLUMNS, tokenAuditScope, tokenByReference, toToken, type PendingTokenOperation, type TokenRow } from './store';

/**
 * Applying a token's state as the processor holds it (docs/upstreams.md 10.5; docs/tokens.md): the
 * projection's rule of the transactions (gateway/transactions/projection.ts), for tokens. Every
 * processor state goes through {@link applyToken}: a notification, the token reconciler's reads, the
 * answer of a token operation (the cascade's, a partner's), a verification's outcome.
 */

/** How a token's state reached the gateway: the audit entry's `via`, and who the history names. */
export type TokenOrigin =
  /** The processor's notification (10.5): `reason` its own. */
  | { via: 'notification'; notificationId: string; reason?: string }
  /** The token reconciler's read of the change feed or of one token (10.7). */
  | { via: 'reconciler' }
  /** A simulation's answer (sandbox mode). */
  | { via: 'simulation'; requestId: string }
  /**
   * The processor's answer to an operation the gateway sent (10.6): a partner's route (`by:
   * partner`, `requestId` the partner's request) or the cascade (`by: card_state`, the card change's
   * request). Applied at the same version too: the processor answers an operation that changed
   * nothing at its end (a suspended token suspended again) with the version it had, and the
   * gateway's attribution (`suspendedBy`) still changes.
   */
  | { via: 'operation'; requestId: string; by: 'partner' | 'card_state'; reason?: string }
  /** A verification's outcome (./verification.ts): the gateway's own change, at the version held. */
  | { via: 'verification'; verificationId: string; reason?: string };

/** What applying did: `applied` (a change partners see), `unchanged` (nothing they see), `unknown_card` (not a card of this gateway). */
export type TokenApplyOutcome = 'applied' | 'unchanged' | 'unknown_card';

export interface TokenApplyResult {
  outcome: TokenApplyOutcome;
  /** The token as partners now read it (absent with `unknown_card`). */
  token?: Token;
}

/** Who a change from `origin` is attributed to in the token's history. */
function byOf(origin: TokenOrigin): TokenHistoryBy {
  if (origin.via === 'operation') return origin.by;
  if (origin.via === 'verification') return 'verification';
  return 'network';
}

/** The request id of the audit entry (and of the event when a partner's request caused it). */
function auditRequestId(origin: TokenOrigin): string {
  switch (origin.via) {
    case 'notification':
      return `notify-${origin.notificationId}`;
    case 'reconciler':
      return 'token-reconciler';
    case 'verification':
      return `verify-${origin.verificationId}`;
    default:
      return origin.requestId;
  }
}

function eventRequestId(origin: TokenOrigin): string | undefined {
  return origin.via === 'simulation' || origin.via === 'operation' ? origin.requestId : undefined;
}

function reasonOf(origin: TokenOrigin): string | undefined {
  return origin.via === 'notification' || origin.via === 'operation' || origin.via === 'verification' ? origin.reason : undefined;
}

/**
 * The `change` of a `token.updated` for a status change (`requested` → `pending_verification`:
 * `verification_required`), or undefined for a status no change leads to (`requested`).
 */
export function statusChangeOf(previous: TokenStatus, next: TokenStatus): TokenChange | undefined {
  switch (next) {
    case 'pending_verification':
      return 'verification_required';
    case 'active':
      return previous === 'suspended' ? 'resumed' : 'activated';
    case 'suspended':
      return 'suspended';
    case 'deactivated':
      return 'deactivated';
    case 'declined':
      return 'declined';
    default:
      return undefined;
  }
}

/**
 * Who holds the token suspended after this state (docs/tokens.md, "suspendedBy"): only while
 * `suspended`. A partner's suspension stays the partner's (the card's unlock must not resume it);
 * otherwise the card's state when the cascade asked for it (its hold), else the network's (null).
 */
export function suspendedByAfter(status: TokenStatus, origin: TokenOrigin, existing?: Pick<TokenRow, 'status' | 'suspended_by' | 'card_state_hold'>): TokenSuspendedBy | null {
  if (status !== 'suspended') return null;
  if (origin.via === 'operation' && origin.by === 'partner') return 'partner';
  if (existing?.status === 'suspended' && existing.suspended_by === 'partner') return 'partner';
  if ((origin.via === 'operation' && origin.by === 'card_state') || existing?.card_state_hold) return 'card_state';
  return null;
}

/** Whose a card is (its partner, and the individual or tenant it sits under), by its key or the key it replaced. */
interface CardOwner {
  partner_id: string;
  individual_id: string | null;
  tenant_id: string | null;
  card_key: string;
}

async function cardOwner(tx: Queryable, cardKey: string): Promise<CardOwner | undefined> {
  const card = (await tx.query<CardOwner>('SELECT partner_id, individual_id, tenant_id, card_key FROM cards WHERE card_key = $1', [cardKey])).rows[0];
  if (card) return card;
  // A token of a card replaced since stands for the new card (a move the processor has not made yet).
  return (await tx.query<CardOwner>('SELECT partner_id, individual_id, tenant_id, card_key FROM cards WHERE replaced_from = $1 LIMIT 1', [cardKey])).rows[0];
}

function sameDevice(a: TokenDevice, b: TokenDevice): boolean {
  return a.type === b.type && (a.name ?? null) === (b.name ?? null) && (a.ipCountry ?? null) === (b.ipCountry ?? null);
}

/** The device as stored: only the contract's three members. */
function deviceOf(device: TokenDevice): TokenDevice {
  return { type: device.type, ...(device.name === undefined ? {} : { name: device.name }), ...(device.ipCountry === undefined ? {} : { ipCountry: device.ipCountry }) };
}

/**
 * Applies one state of a processor's token, in `tx` (the caller's transaction: a notification's
 * dedupe row, an operation's audit entry commit with it). The token is found by the processor's
 * reference (`processor_ref`); its card's event-ordering lock, then its row lock, are taken first,
 * so that one writer at a time applies a token and its events keep the card's order.
 *
 * - A token the gateway does not hold: inserted as the processor holds it (history `by: network`;
 *   a `declined` one without a reason is the processor's `stand_in`), with the audit entry
 *   `card.token.received` and the event `token.created`; its id is the one the tokenization's claim
 *   drew when there is one (the partner's endpoint may have been told it). A card the gateway does
 *   not hold: `unknown_card`, nothing written.
 * - A held token: the state is applied only when its `version` is newer than the one held (at the
 *   same version too for the gateway's own origins, `operation` and `verification`), so a repeated,
 *   late or out-of-order state never moves a token back. A change partners see (status, who holds
 *   it suspended, its card, its device) writes the history entry (not for a device), the audit
 *   entry `card.token.updated` and one `token.updated` `{token, previousStatus, change}`; a newer
 *   version with nothing they see only moves `version` (an operation's own notification).
 */
export async function applyToken(tx: Queryable, t: UpstreamToken, origin: TokenOrigin): Promise<TokenApplyResult> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const seen = await tokenByReference(tx, t.tokenReference);
    if (!seen) {
      const inserted = await insertNew(tx, t, origin);
      if (inserted) return inserted;
      // Another writer inserted it meanwhile: apply over theirs.
      continue;
    }
    await lockCardEvents(tx, seen.partner_id, seen.card_key);
    const existing = await tokenByReference(tx, t.tokenReference, { forUpdate: true });
    // Moved to another card between the read and the lock: take that card's lock instead.
    if (!existing || existing.card_key !== seen.card_key) continue;
    return applyToExisting(tx, existing, t, origin);
  }
  throw new Error(`token ${t.tokenReference}: its card kept changing while it was applied`);
}

async function insertNew(tx: Queryable, t: UpstreamToken, origin: TokenOrigin): Promise<TokenApplyResult | undefined> {
  const owner = await cardOwner(tx, t.cardKey);
  if (!owner) return { outcome: 'unknown_card' };
  await lockCardEvents(tx, owner.partner_id, owner.card_key);
  const claimed =
    t.tokenizationId === null
      ? undefined
      : (await tx.query<{ token_id: string }>('SELECT token_id FROM tokenization_decisions WHERE tokenization_id = $1', [t.tokenizationId])).rows[0]?.token_id;
  const id = claimed ?? newTokenId();
  const reason = reasonOf(origin) ?? (t.status === 'declined' ? 'stand_in' : undefined);
  const history: TokenHistoryEntry[] = [{ status: t.status, at: t.updatedAt, by: byOf(origin), ...(reason === undefined ? {} : { reason }) }];
  const rows = await tx.query<TokenRow>(
    `INSERT INTO tokens (id, partner_id, card_key, individual_id, tenant_id, processor_ref, tokenization_id, wallet_provider, token_requestor_id, last4, token_exp_date,
                         device, status, suspended_by, history, version, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15::jsonb, $16, now(), now())
     ON CONFLICT DO NOTHING RETURNING ${TOKEN_COLUMNS}`,
    [
      id,
      owner.partner_id,
      owner.card_key,
      owner.individual_id,
      owner.tenant_id,
      t.tokenReference,
      t.tokenizationId,
      t.walletProvider,
      t.tokenRequestorId,
      t.last4,
      t.tokenExpDate,
      JSON.stringify(deviceOf(t.device)),
      t.status,
      suspendedByAfter(t.status, origin),
      JSON.stringify(history),
      t.version,
    ]
  );
  const row = rows.rows[0];
  if (!row) return undefined;
  const token = toToken(row);
  await recordAudit(tx, {
    ...tokenAuditScope(row),
    operation: 'card.token.received',
    requestId: auditRequestId(origin),
    outcome: 'success',
    details: auditDetails(origin, row.id, t, undefined),
  });
  await emitTokenEvent(tx, { type: 'token.created', partnerId: row.partner_id, cardKey: row.card_key, requestId: eventRequestId(origin), data: { token } });
  return { outcome: 'applied', token };
}

function auditDetails(origin: TokenOrigin, tokenId: string, t: UpstreamToken, change: TokenChange | undefined): Record<string, string | number | boolean | null> {
  return {
    source: 'processing',
    via: origin.via,
    ...(origin.via === 'notification' ? { notificationId: origin.notificationId } : {}),
    tokenId,
    walletProvider: t.walletProvider,
    status: t.status,
    version: t.version,
    ...(change === undefined ? {} : { change }),
  };
}

/**
 * The origin a state is applied with: the processor's own report (a notification, the reconciler's
 * read) of the change an operation of the gateway's asked for, while that operation's answer is not
 * applied yet, is the operation's change (its `by`, request id and reason): the change is then one
 * history entry and one event, whichever of the two comes first (migration 029).
 */
export function effectiveOrigin(origin: TokenOrigin, pending: PendingTokenOperation | null, status: TokenStatus, now = Date.now()): TokenOrigin {
  if (origin.via !== 'notification' && origin.via !== 'reconciler') return origin;
  if (!pending || pending.to !== status || now - pending.at > PENDING_OPERATION_MS) return origin;
  return { via: 'operation', requestId: pending.requestId, by: pending.by, ...(pending.reason === undefined ? {} : { reason: pending.reason }) };
}

async function applyToExisting(tx: Queryable, existing: TokenRow, t: UpstreamToken, reported: TokenOrigin): Promise<TokenApplyResult> {
  const origin = effectiveOrigin(reported, existing.operation_pending === null ? null : fromJson<PendingTokenOperation>(existing.operation_pending), t.status);
  const ownOrigin = origin.via === 'operation' || origin.via === 'verification';
  if (t.version < existing.version || (t.version === existing.version && !ownOrigin)) return { outcome: 'unchanged', token: toToken(existing) };
  // A token never moves to a card of another partner: a state that says so keeps its card.
  let cardKey = existing.card_key;
  if (t.cardKey !== existing.card_key) {
    const moved = await tx.query('SELECT 1 FROM cards WHERE card_key = $1 AND partner_id = $2', [t.cardKey, existing.partner_id]);
    if ((moved.rowCount ?? 0) > 0) cardKey = t.cardKey;
  }
  const suspendedBy = suspendedByAfter(t.status, origin, existing);
  const device = deviceOf(t.device);
  const statusChanged = t.status !== existing.status;
  const moved = cardKey !== existing.card_key;
  const holderChanged = !statusChanged && suspendedBy !== existing.suspended_by;
  const deviceChanged = !sameDevice(device, fromJson<TokenDevice>(existing.device));
  const change: TokenChange | undefined = statusChanged
    ? statusChangeOf(existing.status, t.status)
    : moved
      ? 'card_updated'
      : holderChanged
        ? 'suspended'
        : deviceChanged
          ? 'device_updated'
          : undefined;
  const visible = statusChanged || moved || holderChanged || deviceChanged;
  if (!visible) {
    // Nothing partners see: the processor's version only (an operation's own notification, a feed read of a state applied).
    const pendingReached = existing.operation_pending !== null && fromJson<PendingTokenOperation>(existing.operation_pending).to === t.status;
    if (t.version > existing.version || pendingReached) {
      await tx.query(
        `UPDATE tokens SET version = greatest(version, $2), operation_pending = CASE WHEN operation_pending->>'to' = $3 THEN NULL ELSE operation_pending END
          WHERE id = $1`,
        [existing.id, t.version, t.status]
      );
    }
    return { outcome: 'unchanged', token: toToken({ ...existing, version: Math.max(existing.version, t.version) }) };
  }
  const history = fromJson<TokenHistoryEntry[]>(existing.history);
  if (statusChanged || moved || holderChanged) {
    const reason = reasonOf(origin);
    history.push({ status: t.status, at: new Date().toISOString(), by: byOf(origin), ...(reason === undefined ? {} : { reason }) });
  }
  const rows = await tx.query<TokenRow>(
    `UPDATE tokens SET status = $2, suspended_by = $3, card_key = $4, device = $5::jsonb, history = $6::jsonb, version = greatest(version, $7),
            -- the code's hash lives only while the token waits for it
            verification = CASE WHEN $2 = 'pending_verification' THEN verification END,
            -- a final token holds nothing for the card's state any more
            card_state_hold = card_state_hold AND $2 NOT IN ('deactivated', 'declined'),
            -- the operation that led here is applied (its answer, or the processor's report of it)
            operation_pending = CASE WHEN operation_pending->>'to' = $2 THEN NULL ELSE operation_pending END,
            updated_at = now()
      WHERE id = $1 RETURNING ${TOKEN_COLUMNS}`,
    [existing.id, t.status, suspendedBy, cardKey, JSON.stringify(device), JSON.stringify(history), t.version]
  );
  const row = rows.rows[0]!;
  const token = toToken(row);
  await recordAudit(tx, {
    ...tokenAuditScope(row),
    operation: 'card.token.updated',
    requestId: auditRequestId(origin),
    outcome: 'success',
    details: auditDetails(origin, row.id, t, change),
  });
  if (change !== undefined) {
    await emitTokenEvent(tx, {
      type: 'token.updated',
      partnerId: row.partner_id,
      cardKey: row.card_key,
      requestId: eventRequestId(origin),
      data: { token, previousStatus: existing.status, change },
    });
  }
  return { outcome: 'applied', token };
}
