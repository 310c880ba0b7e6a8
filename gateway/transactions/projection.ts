import { recordAudit } from '../audit/audit-log';
import type { Queryable } from '../db/database';
import { emitEvent } from '../outbox/partner-events';
import { normalizeTransaction, statusAfter, toPartnerTransaction, type FullTransaction, type PartnerTransaction } from '../upstreams/partner-transaction';
import type { Transaction, TransactionStatus, TransactionStep, TransactionType } from '../../contracts/upstreams';

/**
 * The gateway's projection of the card processing system's transactions (table
 * `card_transactions`, docs/transactions.md): one row per transaction in the newest state the
 * gateway has heard of, fed by the processor's notifications, the simulations' answers and the
 * reconciler's reads of the processor's change feed, all through {@link applyTransaction}.
 */

/** How a transaction state reached the gateway (the audit entry's `via`). */
export type TransactionOrigin =
  | { via: 'notification'; notificationId: string }
  | { via: 'reconciler' }
  | { via: 'simulation'; requestId: string };

/** What applying a state did: `applied` (newer than the row), `unchanged` (not newer), `unknown_card` (not a card of this gateway). */
export type TransactionApplyOutcome = 'applied' | 'unchanged' | 'unknown_card';

/** Whose a transaction is (its card's partner, and the individual or tenant the card sits under). */
export interface TransactionOwner {
  partner_id: string;
  individual_id: string | null;
  tenant_id: string | null;
}

/** How the gateway decided a transaction's authorization (docs/authorizations.md). */
export interface TransactionAuthorization {
  decidedBy: string;
  rule?: string;
  partnerLatencyMs?: number;
}

interface TransactionRow {
  id: string;
  partner_id: string;
  card_key: string;
  individual_id: string | null;
  amount: string;
  currency: string;
  type: TransactionType;
  status: TransactionStatus;
  merchant: { name: string; mcc: string; city: string; country: string };
  settled_amount: string | null;
  decline_reason: string | null;
  related_transaction_id: string | null;
  history: TransactionStep[];
  version: number;
  created_at: Date;
  updated_at: Date;
  decided_by: TransactionAuthorization | null;
  token_id: string | null;
  wallet_provider: string | null;
}

const COLUMNS =
  'id, partner_id, card_key, individual_id, amount, currency, type, status, merchant, settled_amount, decline_reason, related_transaction_id, history, version, created_at, updated_at, decided_by, token_id, wallet_provider';

/** The owner of a card by its key or, for a card replaced since, by the key it replaced. */
async function cardOwner(tx: Queryable, cardKey: string): Promise<TransactionOwner | undefined> {
  const card = (await tx.query<TransactionOwner>('SELECT partner_id, individual_id, tenant_id FROM cards WHERE card_key = $1', [cardKey])).rows[0];
  if (card) return card;
  return (await tx.query<TransactionOwner>('SELECT partner_id, individual_id, tenant_id FROM cards WHERE replaced_from = $1 LIMIT 1', [cardKey])).rows[0];
}

/** A jsonb column as pg answers it: parsed already, or its text (PGlite, some drivers). */
function fromJson<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

/** A projected row as partners see it. */
function toView(row: TransactionRow): PartnerTransaction {
  return toPartnerTransaction(
    {
      id: row.id,
      cardId: row.card_key,
      accountId: null,
      amount: Number(row.amount),
      currency: row.currency,
      type: row.type,
      status: row.status,
      merchant: row.merchant,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
      version: row.version,
      settledAmount: row.settled_amount === null ? null : Number(row.settled_amount),
      declineReason: row.decline_reason,
      relatedTransactionId: row.related_transaction_id,
      history: fromJson<TransactionStep[]>(row.history),
    },
    row.individual_id,
    row.decided_by && fromJson<TransactionAuthorization>(row.decided_by),
    row.token_id === null ? null : { id: row.token_id, walletProvider: row.wallet_provider! }
  );
}

/** The columns a projected row is written with, in {@link rowValues}' order. */
const INSERT_COLUMNS =
  'id, partner_id, card_key, individual_id, tenant_id, authorization_id, amount, currency, type, status, merchant, settled_amount, decline_reason, related_transaction_id, history, version, created_at, updated_at, decided_by';

/**
 * A transaction's row as `card_transactions` takes it: the column list and the values in its order,
 * one value so that the two cannot drift apart (the projection's inserts and the authorization
 * decision's recording statement write it).
 */
export function transactionRow(
  t: FullTransaction,
  card: TransactionOwner,
  authorization: TransactionAuthorization | null,
  token?: TransactionToken
): { columns: string; values: unknown[] } {
  // The token's columns only for a purchase made with one: a card purchase's row (and the decision's
  // recording statement built on it) is written as before.
  if (token) return { columns: `${INSERT_COLUMNS}, token_id, wallet_provider`, values: [...rowValues(t, card, authorization), token.id, token.walletProvider] };
  return { columns: INSERT_COLUMNS, values: rowValues(t, card, authorization) };
}

/** The network token a transaction was made with: the gateway's id (`tok_…`) and its wallet (docs/tokens.md). */
export interface TransactionToken {
  id: string;
  walletProvider: string;
}

/** A state's values for {@link INSERT_COLUMNS} ($1 to $19). */
function rowValues(t: FullTransaction, card: TransactionOwner, authorization: TransactionAuthorization | null): unknown[] {
  return [
    t.id,
    card.partner_id,
    t.cardId,
    card.individual_id,
    card.tenant_id,
    t.authorizationId,
    t.amount,
    t.currency,
    t.type,
    t.status,
    JSON.stringify({ name: t.merchant.name, mcc: t.merchant.mcc, city: t.merchant.city, country: t.merchant.country }),
    t.settledAmount,
    t.declineReason,
    t.relatedTransactionId,
    JSON.stringify(t.history.map((s) => ({ kind: s.kind, amount: s.amount, at: s.at }))),
    t.version,
    t.createdAt,
    t.updatedAt,
    authorization === null ? null : JSON.stringify(authorization),
  ];
}

/**
 * Applies one state of a transaction, in `tx` (the caller's database transaction: a notification's
 * dedupe row commits with it). A state whose `version` is not newer than the row's changes nothing,
 * so a repeated, late or out-of-order state never moves a transaction back. A newer one replaces the
 * row and writes, in the same transaction, the audit entry and one partner event per step the
 * gateway had not seen, in the history's order: `transaction.created` for the first step,
 * `transaction.updated {previousStatus, change}` for each later one (ordered per card). Each event
 * carries the newest state; `previousStatus` is the status before that step, read from the history.
 */
export async function applyTransaction(tx: Queryable, snapshot: Transaction, origin: TransactionOrigin): Promise<TransactionApplyOutcome> {
  const t = normalizeTransaction(snapshot);
  // One writer per transaction id at a time: a notification, the simulation that caused it and the
  // reconciler may bring the same state at once, and only one of them may write its events.
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('txn:' || $1::text, 0))", [t.id]);
  // The row as it stands (its owner too: a card replaced since keeps its transactions under the old key).
  const existing = (
    await tx.query<TransactionOwner & { version: number; card_key: string; steps: number; status: string; decline_reason: string | null; decided: boolean; decided_by: TransactionAuthorization | null }>(
      `SELECT partner_id, individual_id, tenant_id, version, card_key, jsonb_array_length(history) AS steps, status, decline_reason, decided_by IS NOT NULL AS decided, decided_by
         FROM card_transactions WHERE id = $1`,
      [t.id]
    )
  ).rows[0];
  const card = existing ?? (await cardOwner(tx, t.cardId));
  if (!card) return 'unknown_card';
  // The processor's record of an authorization the gateway decided, at the same version but another
  // outcome: the processor did not get the answer in time and applied its stand-in. The processor's
  // record stands (it is what happened to the money), as one more step for the partner.
  const overruled =
    existing !== undefined && existing.decided && existing.version === t.version && (existing.status !== t.status || existing.decline_reason !== t.declineReason);
  // A transaction never moves to another card: a state that says so is not applied.
  if (existing && ((existing.version >= t.version && !overruled) || existing.card_key !== t.cardId)) return 'unchanged';
  await tx.query(
    `INSERT INTO card_transactions (${INSERT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT (id) DO UPDATE SET amount = EXCLUDED.amount, status = EXCLUDED.status, settled_amount = EXCLUDED.settled_amount,
       decline_reason = EXCLUDED.decline_reason, related_transaction_id = EXCLUDED.related_transaction_id, history = EXCLUDED.history,
       version = EXCLUDED.version, updated_at = EXCLUDED.updated_at, merchant = EXCLUDED.merchant,
       authorization_id = COALESCE(card_transactions.authorization_id, EXCLUDED.authorization_id),
       decided_by = CASE WHEN $20 THEN NULL ELSE COALESCE(card_transactions.decided_by, EXCLUDED.decided_by) END, recorded_at = now()`,
    // An overruled decision did not stand: the transaction no longer says the gateway decided it.
    [...rowValues(t, card, null), overruled]
  );
  // Overruled: the events restart from the first step that differs (the processor's last).
  const seen = overruled ? Math.max(0, t.history.length - 1) : (existing?.steps ?? 0);
  const newSteps = t.history.slice(seen);
  await recordAudit(tx, {
    partnerId: card.partner_id,
    individualId: card.individual_id ?? undefined,
    tenantId: card.tenant_id ?? undefined,
    operation: existing ? 'card.transaction.updated' : 'card.transaction.received',
    targetType: 'card',
    targetId: t.cardId,
    requestId:
      origin.via === 'simulation' ? origin.requestId : origin.via === 'notification' ? `notify-${origin.notificationId}` : 'transaction-reconciler',
    outcome: 'success',
    details: {
      source: 'processing',
      via: origin.via,
      ...(origin.via === 'notification' ? { notificationId: origin.notificationId } : {}),
      ...(overruled ? { overruledDecision: existing!.status } : {}),
      transactionId: t.id,
      type: t.type,
      status: t.status,
      version: t.version,
      steps: newSteps.map((s) => s.kind).join(','),
    },
  });
  const authorization = overruled ? null : (existing?.decided_by ?? null);
  const token = await transactionToken(tx, t.id, snapshot);
  const transaction = toPartnerTransaction(t, card.individual_id, authorization && fromJson<TransactionAuthorization>(authorization), token);
  const requestId = origin.via === 'simulation' ? origin.requestId : undefined;
  for (let i = seen; i < t.history.length; i++) {
    if (overruled) {
      await emitEvent(tx, {
        type: 'transaction.updated',
        partnerId: card.partner_id,
        cardKey: t.cardId,
        data: { transaction, previousStatus: existing!.status as TransactionStatus, change: t.history[i].kind },
      });
    } else if (i === 0) {
      await emitEvent(tx, { type: 'transaction.created', partnerId: card.partner_id, cardKey: t.cardId, requestId, data: { transaction } });
    } else {
      await emitEvent(tx, {
        type: 'transaction.updated',
        partnerId: card.partner_id,
        cardKey: t.cardId,
        requestId,
        data: { transaction, previousStatus: statusAfter(t.history, i), change: t.history[i].kind },
      });
    }
  }
  return 'applied';
}

/**
 * The network token a transaction was made with (docs/upstreams.md 10.8: the processor's
 * `tokenReference`, the same on every step), as the row keeps it: its `token_id` and `wallet_provider`,
 * written once, by the decision's recording or here from the reference (the gateway's token of that
 * reference). Null for a purchase with the card itself, and then no statement is sent.
 */
async function transactionToken(tx: Queryable, id: string, snapshot: Transaction): Promise<{ id: string; walletProvider: string } | null> {
  // `tokenReference` is part A's entry of contracts/upstreams.ts (issue 35): read through a widened type until it lands there.
  const reference = (snapshot as Transaction & { tokenReference?: string | null }).tokenReference;
  if (reference === undefined || reference === null) return null;
  // Written once (the row is only updated while it holds no token yet), then read as it stands.
  const row =
    (
      await tx.query<{ token_id: string; wallet_provider: string }>(
        `UPDATE card_transactions c SET token_id = t.id, wallet_provider = t.wallet_provider
           FROM (SELECT id, wallet_provider FROM tokens WHERE processor_ref = $2) AS t
          WHERE c.id = $1 AND c.token_id IS NULL RETURNING c.token_id, c.wallet_provider`,
        [id, reference]
      )
    ).rows[0] ?? (await tx.query<{ token_id: string | null; wallet_provider: string | null }>('SELECT token_id, wallet_provider FROM card_transactions WHERE id = $1', [id])).rows[0];
  return row?.token_id ? { id: row.token_id, walletProvider: row.wallet_provider! } : null;
}

/** How the gateway decided each of these transactions' authorizations (those it decided). */
export async function authorizationsOf(db: Queryable, ids: string[]): Promise<Map<string, TransactionAuthorization>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{ id: string; decided_by: TransactionAuthorization | string }>(
    'SELECT id, decided_by FROM card_transactions WHERE id = ANY($1::text[]) AND decided_by IS NOT NULL',
    [ids]
  );
  return new Map(rows.rows.map((r) => [r.id, fromJson<TransactionAuthorization>(r.decided_by)]));
}

/** One of the partner's transactions, or undefined. */
export async function findTransaction(db: Queryable, partnerId: string, id: string): Promise<PartnerTransaction | undefined> {
  const rows = await db.query<TransactionRow>(`SELECT ${COLUMNS} FROM card_transactions WHERE id = $1 AND partner_id = $2`, [id, partnerId]);
  return rows.rows[0] && toView(rows.rows[0]);
}

/** The filters of the partner-wide search (all optional); `from` inclusive, `to` exclusive, on `createdAt`. */
export interface TransactionFilters {
  cardKey?: string;
  individualId?: string;
  status?: TransactionStatus;
  type?: TransactionType;
  from?: string;
  to?: string;
}

/** Where a page starts: after the transaction at (createdAt, id), newest first. */
export interface TransactionPosition {
  createdAt: string;
  id: string;
}

/**
 * One page of the partner's transactions, newest first (ties by id, descending), after `after`:
 * `limit` of them and the position of the last when an older page exists. Only the conditions
 * asked for are written, so each shape walks its index (partner, [card | individual | status,]
 * created_at DESC, id DESC); a window is a range on created_at within it, the position a row
 * comparison on the same columns, so rows inserted meanwhile never shift a page.
 */
export async function listTransactions(
  db: Queryable,
  partnerId: string,
  filters: TransactionFilters,
  page: { limit: number; after?: TransactionPosition }
): Promise<{ data: PartnerTransaction[]; last?: TransactionPosition }> {
  const params: unknown[] = [partnerId, page.limit + 1];
  let where = 'partner_id = $1';
  if (filters.cardKey !== undefined) where += ` AND card_key = $${params.push(filters.cardKey)}`;
  if (filters.individualId !== undefined) where += ` AND individual_id = $${params.push(filters.individualId)}`;
  if (filters.status !== undefined) where += ` AND status = $${params.push(filters.status)}`;
  if (filters.type !== undefined) where += ` AND type = $${params.push(filters.type)}`;
  if (filters.from !== undefined) where += ` AND created_at >= $${params.push(filters.from)}`;
  if (filters.to !== undefined) where += ` AND created_at < $${params.push(filters.to)}`;
  if (page.after !== undefined) where += ` AND (created_at, id) < ($${params.push(page.after.createdAt)}::timestamptz, $${params.push(page.after.id)})`;
  // The position is read at the database's precision (microseconds): a Date would round it to milliseconds.
  const rows = await db.query<TransactionRow & { position_at: string }>(
    `SELECT ${COLUMNS}, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at
       FROM card_transactions WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`,
    params
  );
  const items = rows.rows.slice(0, page.limit);
  const more = rows.rows.length > page.limit;
  const lastRow = items[items.length - 1];
  return { data: items.map(toView), ...(more && lastRow ? { last: { createdAt: lastRow.position_at, id: lastRow.id } } : {}) };
}
