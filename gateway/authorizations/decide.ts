import { recordAudit } from '../audit/audit-log';
import type { Database, Queryable } from '../db/database';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';
import type { Logger } from '../logging/logger';
import { applyTransaction } from '../transactions/projection';
import type { DeclineReason } from '../upstreams/partner-transaction';
import type { Transaction } from '../upstreams/types';

/**
 * Real-time authorization decisions (docs/authorizations.md): the card processing system asks, for
 * each authorization, whether to approve it; the gateway answers before the processor's deadline,
 * first match wins: the card's own state, the spend controls, the partner's decision endpoint,
 * otherwise approve. Each authorization id is decided once, whatever repeats the processor sends and
 * whichever instance receives them.
 */

/** The processor's authorization request (docs/upstreams.md, 6.10). */
export interface AuthorizationRequest {
  /** The processor's authorization id: what a repeat carries again. */
  id: string;
  /** The id the transaction will have (its notifications carry it). */
  transactionId: string;
  cardId: string;
  amount: number;
  currency: string;
  type: 'PURCHASE' | 'WITHDRAWAL';
  merchant: { name: string; mcc: string; city: string; country: string };
  at: string;
}

/** Who decided: the partner view's `authorization.decidedBy`. */
export type DecidedBy = 'card_state' | 'spend_controls' | 'partner' | 'partner_default' | 'approved';

/** A decision, as answered to the processor and recorded on the transaction. */
export interface AuthorizationDecision {
  approved: boolean;
  declineReason?: DeclineReason;
  decidedBy: DecidedBy;
  /** Which control or rule decided (`card.blockedMccs`, `velocity.1h.maxCount`, the card status). */
  rule?: string;
  partnerLatencyMs?: number;
  /** The partner's own reason for a decline: kept in the audit entry only. */
  partnerReason?: string;
}

/** The card as a decision reads it. */
export interface DecisionCard {
  cardKey: string;
  partnerId: string;
  individualId: string | null;
  tenantId: string | null;
  status: string;
}

/** A refusal by a control: its reason and the rule that refused. */
export interface Refusal {
  declineReason: DeclineReason;
  rule: string;
}

/** What the partner's decision endpoint said (or the endpoint's default when it did not). */
export type PartnerOutcome =
  | { kind: 'none' }
  | { kind: 'answered'; approved: boolean; declineReason?: string; latencyMs: number }
  | { kind: 'default'; reason: 'timeout' | 'error' | 'disabled' | 'overloaded'; approved: boolean; latencyMs: number };

/**
 * The checks a decision runs beside the card's state; each is optional (a gateway without spend
 * controls or decision endpoints approves what the card state allows).
 */
export interface DecisionChecks {
  /** The spend controls that need no count (MCC and country lists, the maximum per transaction). */
  staticControls?(db: Queryable, card: DecisionCard, request: AuthorizationRequest): Promise<Refusal | undefined>;
  /** The velocity rules, counted in `tx` (the recording transaction) under the card's decision lock. */
  velocity?(tx: Queryable, card: DecisionCard, request: AuthorizationRequest): Promise<Refusal | undefined>;
  /** Whether the card's partner has a decision endpoint to ask (enabled, or disabled by an operator: its default applies). */
  partnerEnrolled?(card: DecisionCard): Promise<boolean>;
  /** Asks the partner's decision endpoint, within `budgetMs`. */
  askPartner?(card: DecisionCard, request: AuthorizationRequest, budgetMs: number): Promise<PartnerOutcome>;
}

export interface DecisionDeps {
  db: Database;
  log: Logger;
  checks: DecisionChecks;
}

/** The gateway answers this long before the processor's deadline (network, the processor's own work). */
export const ANSWER_MARGIN_MS = 300;
/** Kept for recording the decision (one database transaction) out of the partner's share of the budget. */
export const RECORDING_RESERVE_MS = 150;
/** How often a repeat waits for the first request's decision. */
const WAIT_STEP_MS = 10;

/** The budget ran out before the decision was recorded: nothing is recorded, the processor applies its stand-in. */
export class DecisionTooLate extends Error {
  constructor() {
    super('authorization decision not recorded before the deadline');
  }
}

const LOCKED_STATUSES = new Set(['LOCKED', 'TEMP_LOCKED']);

/** The card's own state: an ACTIVE card passes; a locked one is `card_locked`; any other (closed, restricted, lost…) `card_inactive`. */
export function cardStateRefusal(card: DecisionCard | undefined): Refusal | undefined {
  if (!card) return { declineReason: 'card_inactive', rule: 'card.unknown' };
  if (card.status === 'ACTIVE') return undefined;
  return { declineReason: LOCKED_STATUSES.has(card.status) ? 'card_locked' : 'card_inactive', rule: `card.status.${card.status}` };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Decides one authorization by `answerBy` (epoch ms) or throws: {@link DecisionTooLate} when the
 * budget ran out (the caller answers an error at once, so the processor's stand-in applies), a
 * database error as it is. Exactly once per authorization id: the first request claims it in
 * `authorization_decisions` (a lease of the deadline's length); a repeat, here or on another
 * instance, waits for that decision and answers it, without asking the partner or counting again.
 * No database transaction is open while the partner is asked.
 */
export async function decideAuthorization(deps: DecisionDeps, request: AuthorizationRequest, answerBy: number): Promise<AuthorizationDecision> {
  const { db } = deps;
  const claimed = await claim(db, request, answerBy);
  if (!claimed) return waitForDecision(db, request.id, answerBy);

  const card = (
    await db.query<{ partner_id: string; individual_id: string | null; tenant_id: string | null; status: string }>(
      'SELECT partner_id, individual_id, tenant_id, status FROM cards WHERE card_key = $1',
      [request.cardId]
    )
  ).rows[0];
  const decisionCard: DecisionCard | undefined = card && { cardKey: request.cardId, partnerId: card.partner_id, individualId: card.individual_id, tenantId: card.tenant_id, status: card.status };

  let decision: AuthorizationDecision;
  const stateRefusal = cardStateRefusal(decisionCard);
  if (stateRefusal || !decisionCard) {
    decision = { approved: false, decidedBy: 'card_state', ...(stateRefusal ?? { declineReason: 'card_inactive', rule: 'card.unknown' }) };
  } else {
    decision = await decideForCard(deps, decisionCard, request, answerBy);
  }
  return record(deps, decisionCard, request, decision, answerBy);
}

async function decideForCard(deps: DecisionDeps, card: DecisionCard, request: AuthorizationRequest, answerBy: number): Promise<AuthorizationDecision> {
  const { checks, db } = deps;
  const staticRefusal = await checks.staticControls?.(db, card, request);
  if (staticRefusal) return { approved: false, decidedBy: 'spend_controls', ...staticRefusal };
  // Without a decision endpoint, velocity is counted once, in the recording transaction.
  if (!checks.askPartner || (checks.partnerEnrolled && !(await checks.partnerEnrolled(card)))) return { approved: true, decidedBy: 'approved' };
  // Velocity is read before the partner is asked (a purchase over a limit is not sent to the
  // partner), and counted again in the recording transaction, which is what holds.
  const velocityRefusal = checks.velocity && (await db.transaction((tx) => checks.velocity!(tx, card, request)));
  if (velocityRefusal) return { approved: false, decidedBy: 'spend_controls', ...velocityRefusal };
  const budgetMs = answerBy - Date.now() - RECORDING_RESERVE_MS;
  const outcome = budgetMs > 0 ? await checks.askPartner(card, request, budgetMs) : ({ kind: 'default', reason: 'timeout', approved: false, latencyMs: 0 } as const);
  switch (outcome.kind) {
    case 'none':
      return { approved: true, decidedBy: 'approved' };
    case 'answered':
      return outcome.approved
        ? { approved: true, decidedBy: 'partner', partnerLatencyMs: outcome.latencyMs }
        : { approved: false, declineReason: 'partner_declined', decidedBy: 'partner', partnerLatencyMs: outcome.latencyMs, ...(outcome.declineReason ? { partnerReason: outcome.declineReason } : {}) };
    case 'default':
      return outcome.approved
        ? { approved: true, decidedBy: 'partner_default', rule: `partner.${outcome.reason}`, partnerLatencyMs: outcome.latencyMs }
        : {
            approved: false,
            declineReason: outcome.reason === 'timeout' ? 'partner_timeout' : 'partner_error',
            decidedBy: 'partner_default',
            rule: `partner.${outcome.reason}`,
            partnerLatencyMs: outcome.latencyMs,
          };
  }
}

/** Claims the authorization id for this request (or takes over a claim whose lease ran out); false when another holds or decided it. */
async function claim(db: Database, request: AuthorizationRequest, answerBy: number): Promise<boolean> {
  const leaseUntil = new Date(answerBy + ANSWER_MARGIN_MS).toISOString();
  const inserted = await db.query(
    `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, lease_until)
     VALUES ($1, $2, $3, 'deciding', $4) ON CONFLICT (authorization_id) DO NOTHING`,
    [request.id, request.transactionId, request.cardId, leaseUntil]
  );
  if ((inserted.rowCount ?? 0) > 0) return true;
  // A claim whose holder died (or missed its deadline) without deciding: this request decides.
  const taken = await db.query(
    `UPDATE authorization_decisions SET lease_until = $2 WHERE authorization_id = $1 AND state = 'deciding' AND lease_until < now()`,
    [request.id, leaseUntil]
  );
  return (taken.rowCount ?? 0) > 0;
}

/** The decision of the request that claimed the id, once recorded; {@link DecisionTooLate} past `answerBy`. */
async function waitForDecision(db: Database, authorizationId: string, answerBy: number): Promise<AuthorizationDecision> {
  for (;;) {
    const row = (await db.query<{ state: string; decision: AuthorizationDecision | string | null }>('SELECT state, decision FROM authorization_decisions WHERE authorization_id = $1', [authorizationId])).rows[0];
    if (row?.state === 'decided' && row.decision) return typeof row.decision === 'string' ? (JSON.parse(row.decision) as AuthorizationDecision) : row.decision;
    if (Date.now() + WAIT_STEP_MS >= answerBy) throw new DecisionTooLate();
    await sleep(WAIT_STEP_MS);
  }
}

/**
 * Records the decision in one database transaction: under the card's decision lock, the velocity
 * count again (an approval that another decision's commit pushed over a limit becomes
 * `velocity_exceeded`), the transaction (PENDING or DECLINED, with `authorization`), its audit entry
 * and its `transaction.created` event, and the decision row. Rolled back, and {@link DecisionTooLate},
 * when the budget ran out meanwhile: a decision the processor did not get in time must not stand.
 */
async function record(deps: DecisionDeps, card: DecisionCard | undefined, request: AuthorizationRequest, first: AuthorizationDecision, answerBy: number): Promise<AuthorizationDecision> {
  const { db, checks } = deps;
  return db.transaction(async (tx) => {
    let decision = first;
    if (card) {
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('auth:' || $1::text, 0))", [card.cardKey]);
      if (decision.approved && checks.velocity) {
        const refusal = await checks.velocity(tx, card, request);
        if (refusal) decision = { approved: false, decidedBy: 'spend_controls', ...refusal };
      }
      const transaction: Transaction = {
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
      const owner = { partner_id: card.partnerId, individual_id: card.individualId, tenant_id: card.tenantId };
      await applyTransaction(tx, transaction, { via: 'decision', authorizationId: request.id, authorization: authorizationOf(decision), owner });
      await recordAudit(tx, {
        partnerId: card.partnerId,
        individualId: card.individualId ?? undefined,
        tenantId: card.tenantId ?? undefined,
        operation: 'card.authorization.decided',
        targetType: 'card',
        targetId: card.cardKey,
        requestId: `authorization-${request.id}`,
        outcome: 'success',
        details: {
          authorizationId: request.id,
          transactionId: request.transactionId,
          approved: decision.approved,
          decidedBy: decision.decidedBy,
          declineReason: decision.declineReason ?? null,
          rule: decision.rule ?? null,
          partnerLatencyMs: decision.partnerLatencyMs ?? null,
          partnerReason: decision.partnerReason?.slice(0, 200) ?? null,
        },
      });
    }
    const { partnerReason: _kept, ...answered } = decision;
    await tx.query(`UPDATE authorization_decisions SET state = 'decided', decision = $2, decided_at = now() WHERE authorization_id = $1`, [request.id, JSON.stringify(answered)]);
    if (Date.now() > answerBy) throw new DecisionTooLate();
    return answered;
  });
}

/** The transaction's `authorization` field: how it was decided. */
export function authorizationOf(decision: AuthorizationDecision): { decidedBy: DecidedBy; rule?: string; partnerLatencyMs?: number } {
  return {
    decidedBy: decision.decidedBy,
    ...(decision.rule === undefined ? {} : { rule: decision.rule }),
    ...(decision.partnerLatencyMs === undefined ? {} : { partnerLatencyMs: decision.partnerLatencyMs }),
  };
}

/**
 * Forgets the decisions made more than `retentionDays` ago (`NOTIFICATIONS_RETENTION_DAYS`, the
 * processor's retry window with a margin, as for its notifications), in batches; returns how many
 * went. A repeat of an authorization id comes within the processor's retry window; past it the id
 * would be decided again (the transaction's row stays, so no second transaction is recorded).
 * Claims still `deciding` are left to their lease. Idempotent; safe on several instances.
 */
export async function deleteExpiredDecisions(db: Queryable, retentionDays: number, batch = RETENTION_BATCH): Promise<number> {
  return deleteInBatches(
    db,
    `DELETE FROM authorization_decisions WHERE authorization_id IN (
       SELECT authorization_id FROM authorization_decisions WHERE created_at < now() - make_interval(days => $1) AND state = 'decided'
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays],
    batch
  );
}
