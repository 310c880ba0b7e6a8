import type { Queryable } from '../db/database';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';
import { StatementParams } from '../db/statement-params';
import { newObjectId } from '../ids';
import { eventEnvelope, PARTNER_EVENTS_CHANNEL } from '../outbox/partner-events';
import { transactionRow, type TransactionOwner } from '../transactions/projection';
import { normalizeTransaction, toPartnerTransaction } from '../upstreams/partner-transaction';
import type { Transaction } from '../../contracts/upstreams';
import { answeredOf, authorizationOf, type AuthorizationDecision, type AuthorizationRequest, type DecisionCard } from './decision';
import type { VelocityGate } from './spend-controls';

/**
 * Every statement that records an authorization decision, and all of their SQL: the recording
 * (velocity gate, decision row, transaction, its `transaction.created` event and webhook
 * deliveries, audit entry, commit-by check) in its three forms, the fence of a claim, the unknown
 * card's decision row, the read of what stands, and the retention of decision rows. Each builder
 * gives a statement's name, text and values; no CTE name, column list or alias leaves this file
 * (test/unit/gateway/authorizations/decision-statements.test.ts holds the texts).
 */

/** A card and its controls (both scopes, as JSON text) as an earlier decision read them, its partner without an endpoint then. */
export interface Remembered {
  card: DecisionCard;
  controls: string;
}

/** What one recording statement is for. */
export interface RecordingInput {
  card: DecisionCard;
  request: AuthorizationRequest;
  decision: AuthorizationDecision;
  /** The velocity gate of the purchase (none for a decline). */
  gate: VelocityGate;
  /** The commit-by instant (epoch ms, ./deadline.ts). */
  commitBy: number;
  /** The claim's token; undefined: not claimed first, the statement inserts the decision row decided. */
  token: string | undefined;
  /** With: the decision was taken on these remembered reads, which the statement checks first. */
  remembered?: Remembered;
  /** A new claim token, for the decision row inserted decided. */
  newToken: () => string;
}

/** The recording statement's one row (none from the remembered statement when its check failed). */
export interface RecordingRow {
  passed: boolean;
  counts: string[] | string;
  amounts: string[] | string;
  inserted: string;
  fenced: string;
}

/** A statement as `Database.statement` sends it. */
export interface BuiltStatement {
  name?: string;
  text: string;
  values: unknown[];
}

/** The columns of an audit entry, in {@link auditValues}' order (table `audit_log`). */
const AUDIT_COLUMNS = 'public_id, partner_id, individual_id, tenant_id, operation, target_type, target_id, request_id, outcome, details';

/** The decision's transaction: its first state, one step (PENDING for an approval, DECLINED otherwise). */
function decidedTransaction(request: AuthorizationRequest, decision: AuthorizationDecision): Transaction {
  return {
    id: request.transactionId,
    cardId: request.cardId,
    accountId: null,
    amount: request.amount,
    currency: request.currency,
    type: request.type,
    status: decision.approved ? 'PENDING' : 'DECLINED',
    merchant: request.merchant,
    createdAt: request.at,
    updatedAt: request.at,
    version: 1,
    settledAmount: null,
    declineReason: decision.approved ? null : (decision.declineReason ?? 'do_not_honor'),
    relatedTransactionId: null,
    authorizationId: request.id,
    history: [{ kind: decision.approved ? 'authorization' : 'decline', amount: request.amount, at: request.at }],
  };
}

/** The decision's audit entry's values for {@link AUDIT_COLUMNS} (`card.authorization.decided`, with the partner's own reason). */
function auditValues(card: DecisionCard, request: AuthorizationRequest, decision: AuthorizationDecision): unknown[] {
  const details = {
    authorizationId: request.id,
    transactionId: request.transactionId,
    approved: decision.approved,
    decidedBy: decision.decidedBy,
    declineReason: decision.declineReason ?? null,
    rule: decision.rule ?? null,
    partnerLatencyMs: decision.partnerLatencyMs ?? null,
    partnerReason: decision.partnerReason?.slice(0, 200) ?? null,
  };
  return [newObjectId(), card.partnerId, card.individualId, card.tenantId, 'card.authorization.decided', 'card', card.cardKey, `authorization-${request.id}`, 'success', JSON.stringify(details)];
}

/**
 * The `transaction.created` event of the decided transaction, as CTEs after `ins`: `ordering` (the
 * card's event lock, held before the sequence number is drawn), `ev` (the event, only when the
 * transaction row was written), `queued` (a delivery to each enabled endpoint subscribed to it,
 * reading the event from `ev`'s `RETURNING`) and `woken` (`pg_notify`, sent on commit, only when a
 * delivery was queued), and the columns that make them run (a CTE nothing reads is not run). The
 * endpoints are read in the statement's snapshot, taken before it waited for the card's lock: an
 * endpoint disabled or deleted during that wait still gets the delivery, which the dispatcher skips
 * while it is disabled (as for any delivery queued before a disable); one enabled during it misses
 * the event. The envelope is the outbox's (../outbox/partner-events.ts).
 */
function eventCtes(transaction: ReturnType<typeof toPartnerTransaction>, owner: TransactionOwner, cardKey: string, params: StatementParams): { ctes: string; columns: string } {
  const envelope = eventEnvelope({ type: 'transaction.created', partnerId: owner.partner_id, cardKey, data: { transaction } });
  const partnerId = params.add(envelope.partnerId);
  const card = params.add(cardKey);
  const from = 'ins';
  const ctes = `ordering AS (
    SELECT pg_advisory_xact_lock(hashtextextended('evt:' || ${partnerId}::text || ':' || ${card}::text, 0)) FROM ${from} WHERE ${card}::text IS NOT NULL
  ), ev AS (
    INSERT INTO partner_events (id, partner_id, type, ordering_key, payload, request_id, created_at)
    SELECT ${params.add(envelope.id)}::text, ${partnerId}::text, ${params.add(envelope.type)}::text, ${card}::text, ${params.add(JSON.stringify(envelope))}::text,
           ${params.add(null)}::text, ${params.add(envelope.createdAt)}::timestamptz
      FROM ${from}, (SELECT count(*) FROM ordering) AS locked
    RETURNING seq, partner_id, type, ordering_key
  ), queued AS (
    INSERT INTO webhook_deliveries (event_seq, endpoint_id, ordering_key, state, resend)
    SELECT ev.seq, e.id, ev.ordering_key, 'pending', false
      FROM ev JOIN webhook_endpoints e ON e.partner_id = ev.partner_id
     WHERE e.status = 'enabled' AND e.deleted_at IS NULL AND ('*' = ANY (e.events) OR ev.type = ANY (e.events))
    RETURNING 1
  ), woken AS (
    SELECT pg_notify('${PARTNER_EVENTS_CHANNEL}', '') FROM (SELECT 1 WHERE EXISTS (SELECT 1 FROM queued)) AS any_queued
  )`;
  return { ctes, columns: '(SELECT seq FROM ev) AS event_seq, (SELECT count(*) FROM queued) AS deliveries, (SELECT count(*) FROM woken) AS woken' };
}

/**
 * The decision's transaction as CTEs after `gate` (the name of an earlier CTE with a boolean
 * `passed`: the velocity gate, or `claimed`): `locked` (the transaction's lock), `ins` (the row,
 * only when the id is new) and {@link eventCtes}, written only when the row was; `columns`
 * (`inserted` and the event's) must be selected. The lock is a CTE the insert reads from, so it is
 * held before the insert: a notification of the same id waits for the decision's commit and then
 * sees the row, as the projection's own lock guarantees (../transactions/projection.ts). A row
 * that exists already (a stand-in recorded first, or the id decided again past retention) is left
 * as it is (`inserted` 0). The lock is taken, and the row written, only when `gate` passed.
 */
function transactionCtes(request: AuthorizationRequest, decision: AuthorizationDecision, card: DecisionCard, params: StatementParams, gate: 'gate' | 'claimed'): { ctes: string; columns: string } {
  const owner: TransactionOwner = { partner_id: card.partnerId, individual_id: card.individualId, tenant_id: card.tenantId };
  const authorization = authorizationOf(decision);
  const t = normalizeTransaction(decidedTransaction(request, decision));
  // A purchase with a token the gateway holds: the transaction carries it (`token_id`, `wallet_provider`).
  const token = card.token ? { id: card.token.id, walletProvider: card.token.walletProvider } : undefined;
  const row = transactionRow(t, owner, authorization, token);
  const id = params.add(t.id);
  const event = eventCtes(toPartnerTransaction(t, owner.individual_id, authorization, token), owner, t.cardId, params);
  const ctes = `locked AS (
    SELECT pg_advisory_xact_lock(hashtextextended('txn:' || ${id}::text, 0)) FROM ${gate} WHERE passed
  ), ins AS (
    INSERT INTO card_transactions (${row.columns})
    SELECT ${id}, ${params.list(row.values.slice(1))} FROM (SELECT count(*) FROM locked) AS txn_locked WHERE EXISTS (SELECT 1 FROM ${gate} WHERE passed)
    ON CONFLICT (id) DO NOTHING RETURNING id
  ), ${event.ctes}`;
  return { ctes, columns: `(SELECT count(*) FROM ins) AS inserted, ${event.columns}` };
}

/**
 * One row when the card is still what `remembered` says (its owner and status), its controls (the
 * partner's default and the card's own, `{}` for none) are still equal to the remembered ones, and
 * its partner has no decision endpoint, and the authorization id has no decision row yet (a repeat
 * then waits for no lock and reads the decision); no row otherwise. Read on the recording statement's
 * snapshot, as the claim statement reads them on its own.
 */
function unchangedSql(params: StatementParams, request: AuthorizationRequest, remembered: Remembered): string {
  const { card, controls } = remembered;
  // A repeat of an id decided already: no row, so that it waits for no lock and reads its decision at once.
  return `SELECT 1 FROM cards c
     WHERE c.card_key = ${params.add(card.cardKey)} AND c.partner_id = ${params.add(card.partnerId)} AND c.status = ${params.add(card.status)}
       AND c.individual_id IS NOT DISTINCT FROM ${params.add(card.individualId)}::text AND c.tenant_id IS NOT DISTINCT FROM ${params.add(card.tenantId)}::text
       AND jsonb_build_object(
             'partner', coalesce((SELECT s.controls FROM spend_controls s WHERE s.partner_id = c.partner_id AND s.card_key IS NULL), '{}'::jsonb),
             'card', coalesce((SELECT s.controls FROM spend_controls s WHERE s.partner_id = c.partner_id AND s.card_key = c.card_key), '{}'::jsonb)
           ) = ${params.add(controls)}::jsonb
       AND NOT EXISTS (SELECT 1 FROM authorization_endpoints e WHERE e.partner_id = c.partner_id)
       AND NOT EXISTS (SELECT 1 FROM authorization_decisions d WHERE d.authorization_id = ${params.add(request.id)})`;
}

/** The UPDATE that marks the claim decided, only while it is still this request's (its token), without `RETURNING`. */
function fenceSql(params: StatementParams, request: AuthorizationRequest, token: string, answered: AuthorizationDecision): string {
  return `UPDATE authorization_decisions SET state = 'decided', decision = ${params.add(JSON.stringify(answered))}, decided_at = now()
           WHERE authorization_id = ${params.add(request.id)} AND claim_token = ${params.add(token)} AND state = 'deciding'`;
}

/**
 * The recording statement (docs/authorizations.md, "Recording"), one of three by name:
 * `authorization-record` (claimed first: fenced by the claim's token), `authorization-record-with-claim`
 * (the decision row inserted decided after the gate), `authorization-record-remembered` (that, after
 * {@link unchangedSql}'s check). The velocity gate first (the card's lock, then the count), then,
 * only when it passed, the transaction, its event, the decision row and the audit entry, and last
 * `authorization_recorded_by` (migration 024), which raises PGW01 past the commit-by instant or when
 * the decision row is not this request's, rolling everything back. The lock order (the card's,
 * then a same-id repeat's row; the claimed path: the card's, the transaction's and the event's,
 * then its own row) leaves no request waiting for a lock that a request waiting on it holds.
 */
export function recordingStatement(input: RecordingInput): BuiltStatement {
  const { card, request, decision, gate, token, remembered } = input;
  const params = new StatementParams();
  const commitByParam = params.add(new Date(input.commitBy).toISOString());
  // With `remembered`: nothing runs past this check (not even the gate's lock) unless the card,
  // its controls and its partner's lack of an endpoint are, on this statement's snapshot, what
  // the decision was taken on; otherwise the statement answers no row.
  const unchanged = remembered === undefined ? '' : `unchanged AS MATERIALIZED (${unchangedSql(params, request, remembered)}), `;
  const gated = `${unchanged}gate AS MATERIALIZED (
        SELECT passed, counts::text[] AS counts, amounts::text[] AS amounts
          FROM authorization_velocity_gate(${params.add(card.cardKey)}::text, authorization_ms_left(${commitByParam}::timestamptz), ${params.add(card.partnerId)}::text,
               ${params.add(card.cardKey)}::text, ${params.add(new Date(request.at).toISOString())}::timestamptz, ${params.add(gate.windows)}::integer[],
               ${params.add(gate.countLimits)}::bigint[], ${params.add(gate.amountLimits)}::numeric[])${remembered === undefined ? '' : ' WHERE EXISTS (SELECT 1 FROM unchanged)'})`;
  const answered = JSON.stringify(answeredOf(decision));
  let text: string;
  if (token !== undefined) {
    const written = transactionCtes(request, decision, card, params, 'gate');
    const fence = fenceSql(params, request, token, answeredOf(decision));
    // `checked` reads the writes it must follow (the transaction, its claim's fence, the audit entry, the event), so it runs after them: the commit follows it at once.
    text = `WITH ${gated}, ${written.ctes}, fenced AS (${fence} AND EXISTS (SELECT 1 FROM ins) RETURNING 1), audited AS (
             INSERT INTO audit_log (${AUDIT_COLUMNS}) SELECT ${params.list(auditValues(card, request, decision))} FROM fenced RETURNING 1
           ), checked AS (
             SELECT authorization_recorded_by(i.n, f.n, ${commitByParam}::timestamptz) AS ok
               FROM (SELECT count(*) AS n FROM ins) AS i, (SELECT count(*) AS n FROM fenced) AS f, (SELECT count(*) FROM audited) AS a, (SELECT count(*) FROM ev) AS e
           ) SELECT g.passed, g.counts, g.amounts, ${written.columns}, (SELECT count(*) FROM fenced) AS fenced, (SELECT ok FROM checked) AS checked FROM gate AS g`;
  } else {
    const claim = `claim AS (
             INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, decision, lease_until, decided_at)
             SELECT ${params.add(request.id)}, ${params.add(request.transactionId)}, ${params.add(request.cardId)}, 'decided', ${params.add(input.newToken())}, ${params.add(answered)}::jsonb, now(), now()
               FROM gate WHERE passed
             ON CONFLICT (authorization_id) DO NOTHING RETURNING 1
           ), claimed AS MATERIALIZED (SELECT true AS passed FROM claim)`;
    const written = transactionCtes(request, decision, card, params, 'claimed');
    // The check raises when the claim was inserted but no transaction (it existed): both roll back.
    text = `WITH ${gated}, ${claim}, ${written.ctes}, audited AS (
             INSERT INTO audit_log (${AUDIT_COLUMNS}) SELECT ${params.list(auditValues(card, request, decision))} FROM ins RETURNING 1
           ), checked AS (
             SELECT authorization_recorded_by(c.n, i.n, ${commitByParam}::timestamptz) AS ok
               FROM (SELECT count(*) AS n FROM claim) AS c, (SELECT count(*) AS n FROM ins) AS i, (SELECT count(*) FROM audited) AS a, (SELECT count(*) FROM ev) AS e
           ) SELECT g.passed, g.counts, g.amounts, ${written.columns}, (SELECT count(*) FROM claim) AS fenced, (SELECT ok FROM checked) AS checked FROM gate AS g`;
  }
  // A token purchase's row has two more columns: its text is its own, under a name of its own.
  const name = token !== undefined ? (card.token ? 'authorization-record-token' : 'authorization-record') : remembered === undefined ? 'authorization-record-with-claim' : 'authorization-record-remembered';
  return { name, text, values: params.values };
}

/** The claim marked decided by its token, refused by the database past `commitBy` (PGW01): no row changed when another request took the claim over. */
export function finishStatement(request: AuthorizationRequest, token: string, answered: AuthorizationDecision, commitBy: number): BuiltStatement {
  const params = new StatementParams();
  const text = `${fenceSql(params, request, token, answered)} AND authorization_before(${params.add(new Date(commitBy).toISOString())}::timestamptz)`;
  return { text, values: params.values };
}

/** An unknown card's decision row, inserted decided (no transaction), refused past `commitBy`; no row when the id had one. */
export function unknownCardStatement(request: AuthorizationRequest, answered: AuthorizationDecision, commitBy: number, token: string): BuiltStatement {
  return {
    name: 'authorization-decided-unknown-card',
    text: `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, decision, lease_until, decided_at)
                 SELECT $1, $2, $3, 'decided', $4, $5::jsonb, now(), now() WHERE authorization_before($6::timestamptz)
                 ON CONFLICT (authorization_id) DO NOTHING`,
    values: [request.id, request.transactionId, request.cardId, token, JSON.stringify(answered), new Date(commitBy).toISOString()],
  };
}

/** The status and decline reason of a transaction recorded already (undefined: none). */
export async function readStanding(db: Queryable, transactionId: string): Promise<{ status: string; decline_reason: string | null } | undefined> {
  return (await db.query<{ status: string; decline_reason: string | null }>('SELECT status, decline_reason FROM card_transactions WHERE id = $1', [transactionId])).rows[0];
}

/**
 * Forgets the decisions made more than `retentionDays` ago (`NOTIFICATIONS_RETENTION_DAYS`, the
 * processor's retry window with a margin, as for its notifications), in batches; returns how many
 * went. A repeat of an authorization id comes within the processor's retry window; past it the id
 * would be decided again (the transaction's row stays, so no second transaction is recorded).
 * An abandoned claim (`deciding`, its lease over) of that age goes too; a live one is left to its
 * lease. Idempotent; safe on several instances.
 */
export async function deleteExpiredDecisions(db: Queryable, retentionDays: number, batch = RETENTION_BATCH): Promise<number> {
  return deleteInBatches(
    db,
    `DELETE FROM authorization_decisions WHERE authorization_id IN (
       SELECT authorization_id FROM authorization_decisions WHERE created_at < now() - make_interval(days => $1) AND (state = 'decided' OR lease_until < now())
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays],
    batch
  );
}
