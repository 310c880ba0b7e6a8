import crypto from 'node:crypto';
import { recordAudit } from '../audit/audit-log';
import { GatewayError } from '../errors';
import type { Database, Queryable } from '../db/database';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';
import type { Logger } from '../logging/logger';
import { applyTransaction } from '../transactions/projection';
import { declineReasonOf, type DeclineReason } from '../upstreams/partner-transaction';
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
  /**
   * The partner's decision endpoint, when the card's partner has one to ask (enabled, or disabled by
   * an operator: its default applies): `ask` asks it within `budgetMs`. Undefined: not enrolled.
   */
  partnerEndpoint?(card: DecisionCard): Promise<{ ask(request: AuthorizationRequest, budgetMs: number): Promise<PartnerOutcome> } | undefined>;
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
/** Kept before the deadline for the recording's commit: past `answerBy` less this, nothing is committed. */
export const COMMIT_RESERVE_MS = 50;
/** How often a repeat waits for the first request's decision. */
const WAIT_STEP_MS = 10;

/** Where a decision stands: `committing` once its commit is sent (the caller then waits for it, rather than answering over it). */
export interface DecisionProgress {
  committing: boolean;
}

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
export async function decideAuthorization(deps: DecisionDeps, request: AuthorizationRequest, answerBy: number, progress: DecisionProgress = { committing: false }): Promise<AuthorizationDecision> {
  const { db } = deps;
  const token = await claimOrWait(db, request, answerBy);
  if (typeof token !== 'string') return token;

  const card = (
    await db.query<{ partner_id: string; individual_id: string | null; tenant_id: string | null; status: string }>(
      'SELECT partner_id, individual_id, tenant_id, status FROM cards WHERE card_key = $1',
      [request.cardId]
    )
  ).rows[0];
  const decisionCard: DecisionCard | undefined = card && { cardKey: request.cardId, partnerId: card.partner_id, individualId: card.individual_id, tenantId: card.tenant_id, status: card.status };

  // cardStateRefusal refuses an unknown card, so past it the card is known and ACTIVE.
  const stateRefusal = cardStateRefusal(decisionCard);
  const decision: AuthorizationDecision = stateRefusal
    ? { approved: false, decidedBy: 'card_state', ...stateRefusal }
    : await decideForCard(deps, decisionCard!, request, answerBy);
  return record(deps, decisionCard, request, decision, answerBy, token, progress);
}

async function decideForCard(deps: DecisionDeps, card: DecisionCard, request: AuthorizationRequest, answerBy: number): Promise<AuthorizationDecision> {
  const { checks, db } = deps;
  const staticRefusal = await checks.staticControls?.(db, card, request);
  if (staticRefusal) return { approved: false, decidedBy: 'spend_controls', ...staticRefusal };
  // Without a decision endpoint, velocity is counted once, in the recording transaction.
  const endpoint = await checks.partnerEndpoint?.(card);
  if (!endpoint) return { approved: true, decidedBy: 'approved' };
  // Velocity is read before the partner is asked (a purchase over a limit is not sent to the
  // partner), and counted again in the recording transaction, which is what holds.
  const velocityRefusal = checks.velocity && (await db.transaction((tx) => checks.velocity!(tx, card, request)));
  if (velocityRefusal) return { approved: false, decidedBy: 'spend_controls', ...velocityRefusal };
  const budgetMs = answerBy - Date.now() - RECORDING_RESERVE_MS;
  // An exhausted budget still gets the endpoint's default decision (the call returns it at once).
  const outcome = await endpoint.ask(request, Math.max(0, budgetMs));
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

/**
 * Claims the authorization id for this request and returns the claim's token, or returns the
 * decision another request recorded for it. A claim whose lease ran out (its holder died, or missed
 * its deadline without recording) is taken over by whichever repeat sees it first, with a new token
 * (the old holder's late recording then finds its token gone and rolls back). The lease is counted
 * on the database's clock. A repeat naming another card than the claim is refused: an authorization
 * id is one card's. {@link DecisionTooLate} when `answerBy` comes first.
 */
async function claimOrWait(db: Database, request: AuthorizationRequest, answerBy: number): Promise<string | AuthorizationDecision> {
  const token = newClaimToken();
  // The lease lasts until this request's answer is due, with the margin: counted on the database's clock.
  const leaseMs = () => Math.max(1, answerBy + ANSWER_MARGIN_MS - Date.now());
  const inserted = await db.query(
    `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, lease_until)
     VALUES ($1, $2, $3, 'deciding', $4, now() + make_interval(secs => $5::double precision / 1000)) ON CONFLICT (authorization_id) DO NOTHING`,
    [request.id, request.transactionId, request.cardId, token, leaseMs()]
  );
  if ((inserted.rowCount ?? 0) > 0) return token;
  for (;;) {
    const row = (
      await db.query<{ state: string; card_key: string; decision: AuthorizationDecision | string | null; expired: boolean }>(
        'SELECT state, card_key, decision, lease_until < now() AS expired FROM authorization_decisions WHERE authorization_id = $1',
        [request.id]
      )
    ).rows[0];
    if (row && row.card_key !== request.cardId) {
      throw new GatewayError('validation_failed', 'The authorization id is another card\'s', { invalidParams: [{ name: 'authorization.id', reason: 'is already another card\'s authorization' }] });
    }
    if (row?.state === 'decided' && row.decision) return typeof row.decision === 'string' ? (JSON.parse(row.decision) as AuthorizationDecision) : row.decision;
    if (row?.state === 'deciding' && row.expired) {
      const taken = await db.query(
        `UPDATE authorization_decisions SET claim_token = $2, transaction_id = $3, lease_until = now() + make_interval(secs => $4::double precision / 1000)
          WHERE authorization_id = $1 AND state = 'deciding' AND lease_until < now()`,
        [request.id, token, request.transactionId, leaseMs()]
      );
      if ((taken.rowCount ?? 0) > 0) return token;
    }
    if (Date.now() + WAIT_STEP_MS >= answerBy) throw new DecisionTooLate();
    await sleep(WAIT_STEP_MS);
  }
}

function newClaimToken(): string {
  return crypto.randomBytes(12).toString('hex');
}

/**
 * Records the decision in one database transaction: under the card's decision lock, the velocity
 * count again (an approval that another decision's commit pushed over a limit becomes
 * `velocity_exceeded`), the transaction (PENDING or DECLINED, with `authorization`), its audit entry
 * and its `transaction.created` event, and the decision row. Rolled back, and {@link DecisionTooLate},
 * when the budget ran out meanwhile: a decision the processor did not get in time must not stand.
 */
async function record(
  deps: DecisionDeps,
  card: DecisionCard | undefined,
  request: AuthorizationRequest,
  first: AuthorizationDecision,
  answerBy: number,
  token: string,
  progress: DecisionProgress
): Promise<AuthorizationDecision> {
  const { db, checks } = deps;
  try {
    return await db.transaction(async (tx) => {
    let decision = first;
    // Waiting for the card's lock (a burst on one card, a stalled holder) must not outlast the budget.
    await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${Math.max(1, answerBy - COMMIT_RESERVE_MS - Date.now())}ms`]);
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
      const outcome = await applyTransaction(tx, transaction, { via: 'decision', authorizationId: request.id, authorization: authorizationOf(decision), owner });
      // The transaction exists already (a stand-in recorded first, or the id decided again past
      // retention): the answer is what stands, not a new decision.
      if (outcome !== 'applied') decision = await standing(tx, request.transactionId, decision);
      else await recordAudit(tx, {
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
    const fenced = await tx.query(
      `UPDATE authorization_decisions SET state = 'decided', decision = $3, decided_at = now() WHERE authorization_id = $1 AND claim_token = $2 AND state = 'deciding'`,
      [request.id, token, JSON.stringify(answered)]
    );
    // Another request took the claim over (this one's lease ran out): its decision stands, not this one.
    if ((fenced.rowCount ?? 0) === 0) throw new DecisionTooLate();
    // Past this check the commit is sent; the caller waits for it rather than answering 503 over it.
    if (Date.now() > answerBy - COMMIT_RESERVE_MS) throw new DecisionTooLate();
    progress.committing = true;
    return answered;
    });
  } catch (err) {
    progress.committing = false;
    // lock_not_available: the card's lock was not had within the budget.
    if ((err as { code?: unknown } | null)?.code === '55P03') throw new DecisionTooLate();
    throw err;
  }
}

/** The decision a transaction already recorded stands for (its status and decline reason). */
async function standing(tx: Queryable, transactionId: string, fallback: AuthorizationDecision): Promise<AuthorizationDecision> {
  const row = (await tx.query<{ status: string; decline_reason: string | null }>('SELECT status, decline_reason FROM card_transactions WHERE id = $1', [transactionId])).rows[0];
  if (!row) return fallback;
  if (row.status !== 'DECLINED') return { approved: true, decidedBy: fallback.approved ? fallback.decidedBy : 'approved' };
  return { approved: false, declineReason: declineReasonOf('DECLINED', row.decline_reason) ?? 'do_not_honor', decidedBy: fallback.approved ? 'approved' : fallback.decidedBy };
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
