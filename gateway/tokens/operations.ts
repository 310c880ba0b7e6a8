import crypto from 'node:crypto';
import { recordAudit } from '../audit/audit-log';
import type { Database, Queryable } from '../db/database';
import { GatewayError } from '../errors';
import type { Logger } from '../logging/logger';
import { enqueue, type OutboxHandlers, type TokenMovePayload, type TokenOperationPayload } from '../outbox/outbox';
import type { Token, TokenStatus } from '../shapes/token';
import type { CallContext } from '../upstreams';
import { outcomeUnknown } from '../upstreams/failures';
import { applyToken } from './apply';
import { tokenCourse } from './decision';
import type { UpstreamToken } from './contract-stub';
import { tokenAuditScope, toToken, tokenRow, type PendingTokenOperation, type TokenRow } from './store';

/**
 * The token operations the gateway sends the processor (docs/upstreams.md 10.6) and what it does
 * with their answers: a partner's suspend, resume and deactivate ({@link changeTokenStatus}), and the
 * outbox's delivery of the cascade's operations and moves ({@link tokenOutboxHandlers}). Every
 * answer is applied through `applyToken` (./apply.ts), with its history entry, audit entry and event.
 */

/** What a token operation asks of the processor. */
export type TokenAction = TokenOperationPayload['action'];

/**
 * The processing client's token methods this file calls (gateway/upstreams/processing-client.ts,
 * part A: `tokenOperation`, `moveTokens`, `getToken`), declared here so that the composition root
 * hands `clients.processing` in and a test a client of its own.
 */
export interface TokenProcessor {
  tokenOperation(ctx: CallContext, tokenReference: string, action: TokenAction, body: { reason?: string; requestedBy: 'partner' | 'card_state' }, operationId: string): Promise<UpstreamToken>;
  moveTokens(ctx: CallContext, cardKey: string, body: { toCardKey: string; reason: 'replaced' | 'reissued' }, operationId: string): Promise<{ moved: UpstreamToken[] }>;
  getToken(ctx: CallContext, tokenReference: string): Promise<UpstreamToken>;
}

/** What the token operations need. */
export interface TokenOperationDeps {
  db: Database;
  processing: TokenProcessor;
  log: Logger;
}

/**
 * The processor's token refusals, mapped where they are called (as handlers/simulations.ts maps the
 * transaction ones): `TOKEN_NOT_FOUND` is 404 `not_found`, `TOKEN_TRANSITION_INVALID` 409
 * `token_transition_invalid`. Anything else stays the upstream failure it is.
 */
export function tokenRefusal(err: unknown, tokenStatus?: TokenStatus): unknown {
  if (!(err instanceof GatewayError)) return err;
  const upstreamCode = err.extensions?.upstreamCode;
  if (err.code === 'not_found' && upstreamCode === 'TOKEN_NOT_FOUND') return new GatewayError('not_found', 'No token has this id', { extensions: { upstream: 'processing', upstreamCode } });
  if (err.code === 'conflict' && upstreamCode === 'TOKEN_TRANSITION_INVALID') {
    return new GatewayError('token_transition_invalid', 'The card processing system refused the token\'s change in its current state', {
      extensions: { upstream: 'processing', upstreamCode, ...(tokenStatus === undefined ? {} : { tokenStatus }) },
    });
  }
  return err;
}

/** Whether a processor error is its final answer for a token operation: a 404 or a 409 (not its "still running"). */
function finalRefusal(err: unknown): boolean {
  return err instanceof GatewayError && (err.code === 'not_found' || err.code === 'conflict');
}

/** A new operation id for an operation nobody named (a partner's change without `Idempotency-Key`). */
export function newTokenOperationId(): string {
  return `tokop_${crypto.randomBytes(12).toString('hex')}`;
}

// ---------------------------------------------------------------------------------------------
// The partner's changes: POST /tokens/{id}/suspend | resume | deactivate
// ---------------------------------------------------------------------------------------------

/** A partner's change of one of its tokens. */
export interface TokenStatusOrder {
  tokenId: string;
  /** The token's partner (the ownership check answered 403 for another's already). */
  partnerId: string;
  action: TokenAction;
  reason?: string;
  /** The processor's `Idempotency-Key`: the request's upstream operation id (the same on every retry of its `Idempotency-Key`). */
  operationId: string;
  /** The audit entry's operation (the catalog entry's: `token.suspend`, `token.resume`, `token.deactivate`). */
  operation: string;
  requestId: string;
  ctx: CallContext;
}

/** The answer of a change, and the outbox messages it queued (a resume the card's state overtook), to deliver after the commit. */
export interface TokenStatusResult {
  token: Token;
  queued: string[];
}

const FINAL: ReadonlySet<TokenStatus> = new Set<TokenStatus>(['deactivated', 'declined']);
const NOT_DECIDED: ReadonlySet<TokenStatus> = new Set<TokenStatus>(['requested', 'pending_verification']);

function transitionInvalid(action: TokenAction, status: TokenStatus): GatewayError {
  return new GatewayError('token_transition_invalid', `A ${status} token cannot be moved by ${action}`, { extensions: { tokenStatus: status } });
}

/** The card a token stands for, as the change reads it: its status (and code) and the partner's setting. */
interface TokenCard {
  status: string;
  status_code: string;
  tokenize_before_activation: boolean;
}

async function tokenCard(db: Queryable, cardKey: string, lock = false): Promise<TokenCard | undefined> {
  return (
    await db.query<TokenCard>(
      `SELECT c.status, c.status_code, p.tokenize_before_activation FROM cards c JOIN partners p ON p.id = c.partner_id WHERE c.card_key = $1${lock ? ' FOR SHARE OF c' : ''}`,
      [cardKey]
    )
  ).rows[0];
}

function usable(card: TokenCard | undefined): boolean {
  return card !== undefined && tokenCourse(card.status_code, card.tokenize_before_activation) === 'usable';
}

function cardNotActive(card: TokenCard | undefined): GatewayError {
  return new GatewayError('card_not_active', 'The token\'s card is not active: unlock the card first', {
    extensions: card ? { cardStatus: card.status, statusCode: card.status_code } : {},
  });
}

/**
 * What the routes' table (docs/tokens.md "Statuses and the transitions allowed") says of `action` on
 * `row`: `call` the processor, answer the token `unchanged`, or refuse (thrown).
 */
export function transitionOf(action: TokenAction, row: Pick<TokenRow, 'status' | 'suspended_by' | 'card_state_hold'>, card: TokenCard | undefined): 'call' | 'unchanged' {
  const { status } = row;
  if (FINAL.has(status)) throw transitionInvalid(action, status);
  switch (action) {
    case 'deactivate':
      return 'call';
    case 'suspend':
      if (NOT_DECIDED.has(status)) throw transitionInvalid(action, status);
      // Suspended by the partner or the network already: nothing changes. Held by the card's state
      // (suspended, or still active while the cascade's suspension is on its way): the partner's from now on.
      if (status === 'suspended' && row.suspended_by !== 'card_state' && !row.card_state_hold) return 'unchanged';
      return 'call';
    case 'resume':
      if (NOT_DECIDED.has(status)) throw transitionInvalid(action, status);
      if (status === 'active' && !row.card_state_hold) return 'unchanged';
      if (!usable(card)) throw cardNotActive(card);
      return 'call';
  }
}

/** The status each operation leads to. */
const OPERATION_TARGET: Readonly<Record<TokenAction, TokenStatus>> = { suspend: 'suspended', resume: 'active', deactivate: 'deactivated' };

/**
 * Marks the token with the operation about to be sent (migration 029, one statement, no
 * transaction held across the call): the processor's notification of its change, should it arrive
 * before the answer is applied, is applied as this operation (`effectiveOrigin`, ./apply.ts).
 */
async function markPending(db: Queryable, tokenId: string, operation: Omit<PendingTokenOperation, 'to' | 'at'>): Promise<void> {
  const pending: PendingTokenOperation = { ...operation, to: OPERATION_TARGET[operation.action], at: Date.now() };
  await db.query('UPDATE tokens SET operation_pending = $2::jsonb WHERE id = $1', [tokenId, JSON.stringify(pending)]);
}

/** Clears the mark of an operation the processor refused (a later operation's mark is left). */
async function clearPending(db: Queryable, tokenId: string, requestId: string): Promise<void> {
  await db.query("UPDATE tokens SET operation_pending = NULL WHERE id = $1 AND operation_pending->>'requestId' = $2", [tokenId, requestId]);
}

/**
 * A partner's suspend, resume or deactivate of a token (docs/tokens.md): the routes' table checked
 * first (409 `token_transition_invalid` with `tokenStatus`, or `card_not_active` with the card's
 * status, and no processor call); then the processor, with the operation id as its
 * `Idempotency-Key` (its refusals mapped by {@link tokenRefusal}; an unknown outcome, a timeout,
 * marks the token `processor_check_due` for the token reconciler and is answered as it is, 504);
 * then one transaction, under the card's row lock (`FOR SHARE`, the cascade's order): the answered
 * state through `applyToken` (history `by: partner`, the event), the card's hold released for a
 * suspension or a deactivation the partner now owns, and the audit entry. A resume whose card
 * stopped being usable since the check is held again for the card's state, and its suspension
 * queued (returned in `queued`, for the caller to deliver after the commit).
 */
export async function changeTokenStatus(deps: TokenOperationDeps, order: TokenStatusOrder): Promise<TokenStatusResult> {
  const { db, processing, log } = deps;
  const row = await tokenRow(db, order.tokenId);
  if (!row || row.partner_id !== order.partnerId) throw new GatewayError('not_found', 'No token has this id');
  const card = await tokenCard(db, row.card_key);
  const audit = { ...tokenAuditScope(row), operation: order.operation, requestId: order.requestId };
  if (transitionOf(order.action, row, card) === 'unchanged') {
    await recordAudit(db, { ...audit, outcome: 'success', details: { tokenId: row.id, status: row.status, unchanged: true } });
    return { token: toToken(row), queued: [] };
  }
  await markPending(db, row.id, { action: order.action, by: 'partner', requestId: order.requestId, ...(order.reason === undefined ? {} : { reason: order.reason }) });
  let answered: UpstreamToken;
  try {
    answered = await processing.tokenOperation(order.ctx, row.processor_ref, order.action, { requestedBy: 'partner', ...(order.reason === undefined ? {} : { reason: order.reason }) }, order.operationId);
  } catch (err) {
    const reason = err instanceof GatewayError ? err.code : 'error';
    await recordAudit(db, { ...audit, outcome: 'failure', details: { tokenId: row.id, reason } }).catch((auditError: unknown) =>
      log.warn({ err: auditError, requestId: order.requestId }, 'failure audit entry not written')
    );
    if (outcomeUnknown(err)) await db.query('UPDATE tokens SET processor_check_due = true WHERE id = $1', [row.id]).catch(() => undefined);
    else await clearPending(db, row.id, order.requestId).catch(() => undefined);
    throw tokenRefusal(err, row.status);
  }
  return db.transaction(async (tx) => {
    // The card first, as every card change takes it: a lock committed after the check above is seen here.
    const now = await tokenCard(tx, row.card_key, true);
    if (order.action !== 'resume') await tx.query('UPDATE tokens SET card_state_hold = false WHERE id = $1 AND card_state_hold', [row.id]);
    const applied = await applyToken(tx, answered, { via: 'operation', requestId: order.requestId, by: 'partner', ...(order.reason === undefined ? {} : { reason: order.reason }) });
    await recordAudit(tx, { ...audit, outcome: 'success', details: { tokenId: row.id, from: row.status, to: answered.status } });
    const queued: string[] = [];
    if (order.action === 'resume' && answered.status === 'active' && !usable(now)) {
      // The card was locked between the check and this transaction: its state holds the token again.
      const held = await tx.query<{ id: string; processor_ref: string }>('UPDATE tokens SET card_state_hold = true WHERE id = $1 RETURNING id, processor_ref', [row.id]);
      for (const t of held.rows) {
        const payload: TokenOperationPayload = { operationId: newTokenOperationId(), tokenId: t.id, tokenReference: t.processor_ref, action: 'suspend', requestedBy: 'card_state', reason: `card ${now?.status ?? 'unknown'}` };
        queued.push(await enqueue(tx, { kind: 'processing.token_operation', payload }, { partnerId: row.partner_id, requestId: order.requestId }));
      }
    }
    const token = applied.token ?? toToken((await tokenRow(tx, row.id))!);
    return { token, queued };
  });
}

// ---------------------------------------------------------------------------------------------
// The outbox's deliveries of the cascade's operations
// ---------------------------------------------------------------------------------------------

/**
 * Whether a queued cascade operation is overtaken by a later card change (docs/plans/issue-35.md,
 * "The cascade"): a suspension for a hold an unlock has released since, or a resumption of a token
 * a lock holds again. It is then not sent (the later change queued its own operation).
 */
function overtaken(payload: TokenOperationPayload, row: Pick<TokenRow, 'card_state_hold' | 'status'>): boolean {
  if (payload.requestedBy !== 'card_state') return false;
  if (FINAL.has(row.status)) return true;
  if (payload.action === 'suspend') return !row.card_state_hold;
  if (payload.action === 'resume') return row.card_state_hold;
  return false;
}

/**
 * After a processor's final refusal (a 404 or a 409) the token is read and applied as the processor
 * holds it, so that the gateway converges to it; a token the processor does not know is left.
 */
async function applyAsHeld(deps: TokenOperationDeps, ctx: CallContext, tokenReference: string): Promise<void> {
  let held: UpstreamToken;
  try {
    held = await deps.processing.getToken(ctx, tokenReference);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'not_found') return;
    throw err;
  }
  await deps.db.transaction((tx) => applyToken(tx, held, { via: 'reconciler' }));
}

/** Sends one cascade token operation (an outbox message) and applies the answer; throws to be retried. */
export async function deliverTokenOperation(deps: TokenOperationDeps, ctx: CallContext, payload: TokenOperationPayload): Promise<void> {
  const row = await tokenRow(deps.db, payload.tokenId);
  if (!row || overtaken(payload, row)) return;
  await markPending(deps.db, row.id, { action: payload.action, by: payload.requestedBy, requestId: ctx.requestId, ...(payload.reason === undefined ? {} : { reason: payload.reason }) });
  let answered: UpstreamToken;
  try {
    answered = await deps.processing.tokenOperation(
      ctx,
      payload.tokenReference,
      payload.action,
      { requestedBy: payload.requestedBy, ...(payload.reason === undefined ? {} : { reason: payload.reason }) },
      payload.operationId
    );
  } catch (err) {
    if (!finalRefusal(err)) throw err;
    await clearPending(deps.db, row.id, ctx.requestId);
    deps.log.info({ tokenId: payload.tokenId, action: payload.action, requestId: ctx.requestId }, 'token operation refused by the processor; its state applied instead');
    await applyAsHeld(deps, ctx, payload.tokenReference);
    return;
  }
  await deps.db.transaction((tx) =>
    applyToken(tx, answered, { via: 'operation', requestId: ctx.requestId, by: payload.requestedBy, ...(payload.reason === undefined ? {} : { reason: payload.reason }) })
  );
}

/**
 * Sends a card's token move and applies the moved tokens (their card is the new one here already:
 * the processor's version is what changes). A 404 is retried, not final: it is the new card the
 * processor does not know yet (its `card_created`, queued first, not delivered); a 409 is final.
 */
export async function deliverTokenMove(deps: TokenOperationDeps, ctx: CallContext, payload: TokenMovePayload): Promise<void> {
  let moved: UpstreamToken[];
  try {
    ({ moved } = await deps.processing.moveTokens(ctx, payload.cardKey, { toCardKey: payload.toCardKey, reason: payload.reason }, payload.operationId));
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'conflict') {
      deps.log.warn({ cardKey: payload.cardKey, requestId: ctx.requestId }, 'token move refused by the processor; the token reconciler converges');
      return;
    }
    throw err;
  }
  for (const token of moved) {
    await deps.db.transaction((tx) => applyToken(tx, token, { via: 'operation', requestId: ctx.requestId, by: 'card_state', reason: `card ${payload.reason}` }));
  }
}

/** The outbox's handlers of its two token kinds (gateway/outbox/outbox.ts), for the composition root. */
export function tokenOutboxHandlers(deps: TokenOperationDeps): Required<OutboxHandlers> {
  return {
    tokenOperation: (ctx, payload) => deliverTokenOperation(deps, ctx, payload),
    tokenMove: (ctx, payload) => deliverTokenMove(deps, ctx, payload),
  };
}
