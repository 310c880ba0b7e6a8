import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AUDIT_COLUMNS, auditValues, type AuditEntry } from '../audit/audit-log';
import { GatewayError } from '../errors';
import type { Database, Queryable } from '../db/database';
import { StatementParams } from '../db/statement-params';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';
import type { Logger } from '../logging/logger';
import { decidedTransactionStatement } from '../transactions/projection';
import { declineReasonOf, type DeclineReason } from '../upstreams/partner-transaction';
import type { Transaction } from '../../contracts/upstreams';
import { boundedLru } from '../bounded-lru';
import { mark, type DecisionTrace } from './decision-trace';
import { CARD_COLUMNS, toCard, type Card, type CardRow } from '../cards/card-store';
import { endpointTargetColumn, endpointTargetOf, type AuthorizationEndpointTarget } from './endpoint-store';
import { applicableControlsColumn, applicableControlsOf, checkStaticControls, checkVelocityCounts, velocityCountsColumn, velocityGate, type ApplicableSpendControls } from './spend-controls';

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
  | { kind: 'default'; reason: 'timeout' | 'error' | 'disabled' | 'overloaded'; approved: boolean; latencyMs: number; error?: string };

/**
 * What the claim statement read of the card's partner's decision endpoint, when it has one (in any
 * status): the endpoint with its live secret rows (sealed), and the card as events carry it (no
 * card number, CVV or PIN).
 */
export interface EndpointRead {
  target: AuthorizationEndpointTarget;
  card: Card;
}

/**
 * What a decision asks beyond the card's state and its spend controls (which it reads itself): the
 * partner's decision endpoint, when the card's partner has one (enabled, or disabled by an
 * operator: its default applies), as the claim statement read it; `ask` asks it within `budgetMs`.
 * Undefined: not enrolled.
 */
export interface DecisionChecks {
  partnerEndpoint?(card: DecisionCard, endpoint: EndpointRead): Promise<{ ask(request: AuthorizationRequest, budgetMs: number): Promise<PartnerOutcome> } | undefined>;
}

export interface DecisionDeps {
  db: Database;
  log: Logger;
  checks: DecisionChecks;
  /**
   * What this process remembers of each card from its last claim statement ({@link newEndpointHints}):
   * which claim statement to send, and, for a card whose partner has no decision endpoint, the card
   * and its controls, so that its next decision is one statement ({@link decideAuthorization}).
   * Without: always the claim statement first, without the endpoint's reads.
   */
  endpointHints?: EndpointHints;
}

/**
 * The gateway answers this long before the processor's deadline (network, the processor's own
 * work): its answer, a decision or 503, is due `AUTHORIZATION_DEADLINE_MS` less this after the
 * request arrived (`answerBy`), and never waits past it (docs/authorizations.md, "Deadline").
 */
export const ANSWER_MARGIN_MS = 300;
/** The partner's decision endpoint is asked until this long before `answerBy`: what is left is the recording's. */
export const RECORDING_RESERVE_MS = 200;
/**
 * Between a recording's commit-by instant and `answerBy` (less {@link CLOCK_SKEW_BOUND_MS}): the
 * commit's own work after its check (the deferred ledger triggers, the WAL flush) and the
 * acknowledgement's way back to the gateway.
 */
export const COMMIT_RESERVE_MS = 50;
/**
 * The most the database's clock may differ from the gateway's, either way, for the commit-by
 * fence to hold: the instant is sent this much early, so that a database clock that is behind
 * still refuses before `answerBy` less {@link COMMIT_RESERVE_MS}. Each instance measures the
 * offset (../db/clock-offset.ts) and logs an error when it is over this.
 */
export const CLOCK_SKEW_BOUND_MS = 50;
/** How often a repeat waits for the first request's decision. */
const WAIT_STEP_MS = 10;

/**
 * The instant (epoch ms, the gateway's clock) past which the database refuses to commit a decision
 * for an answer due at `answerBy`, read on its own clock: every recording statement carries it
 * (migration 024). Whenever the statement arrives, a decision stands only if its check ran by then,
 * so it is acknowledged before the answer is due; a statement held on the network past it rolls
 * back when it arrives.
 */
export function commitByOf(answerBy: number): number {
  return answerBy - COMMIT_RESERVE_MS - CLOCK_SKEW_BOUND_MS;
}

/** A decision's default that the partner's endpoint caused: it did not answer usably (timeout, error, its cap of calls in flight). */
export interface PartnerFault {
  partnerId: string;
  reason: 'timeout' | 'error' | 'overloaded';
  /** With reason `error`: what failed (never the answer's content). */
  error?: string;
  latencyMs: number;
}

/** What the caller learns of a decision while it is taken. */
export interface DecisionProgress {
  /** Set when the partner's endpoint did not answer usably: its default applied (the caller logs it as the partner's fault, not the gateway's). */
  partnerFault?: PartnerFault;
  /** Set when this request's own statement recorded the decision (not a repeat's read of another's). */
  recorded?: boolean;
  /** The decision's timestamps by step, when the diagnostic is on (./decision-trace). */
  trace?: DecisionTrace;
}

/** The budget ran out before the decision was recorded: nothing is recorded, the processor applies its stand-in. */
export class DecisionTooLate extends Error {
  /** @param byDatabase the database refused the recording (past its commit-by instant, a lock not had in time, the claim lost), rather than the gateway not sending it. */
  constructor(readonly byDatabase = false) {
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


/**
 * Decides one authorization by `answerBy` (epoch ms) or throws: {@link DecisionTooLate} when the
 * budget ran out (the caller answers an error at once, so the processor's stand-in applies), a
 * database error as it is. Exactly once per authorization id: one row in `authorization_decisions`.
 * When the card's partner has a decision endpoint, the first request claims the id there (a lease
 * of the deadline's length) before asking; a repeat, here or on another instance, waits for that
 * decision and answers it, without asking the partner or counting again. Without an endpoint the
 * row is inserted, decided, by the statement that records the decision (one commit): a concurrent
 * repeat's insert waits for that commit, finds the row and answers its decision, having written
 * nothing. No database transaction is open while the partner is asked.
 */
export async function decideAuthorization(deps: DecisionDeps, request: AuthorizationRequest, answerBy: number, progress: DecisionProgress = {}): Promise<AuthorizationDecision> {
  // A card this process decided before, whose partner had no decision endpoint then: decided on what
  // was read then, and recorded by one statement that first checks, on its own snapshot, that the card
  // (owner, status), its controls and the partner's lack of an endpoint are still what was read, and
  // writes nothing otherwise. Then, or when the id had a decision row or its transaction existed, the
  // path below, from the claim statement's fresh reads.
  const remembered = deps.endpointHints?.get(request.cardId);
  if (remembered && !remembered.hasEndpoint && remembered.controls !== undefined) {
    const { card } = remembered;
    const controls = JSON.parse(remembered.controls) as ApplicableSpendControls;
    const decision = await decideOn(deps, card, controls, undefined, request, answerBy, progress);
    const recorded = await recordWithClaim(deps, card, controls, request, decision, answerBy, progress, { card, controls: remembered.controls });
    if (recorded) return recorded;
    deps.endpointHints?.delete(request.cardId);
  }
  // First without a claim when the card's partner has no decision endpoint: the decision is then
  // recorded with its claim in one statement and one commit ({@link recordWithClaim}); a claim first
  // (a lease repeats wait on) only when the partner is to be asked, or when that statement did not
  // record (another request's claim, or a transaction recorded before).
  for (let claimFirst = false; ; claimFirst = true) {
    const claim = await claimOrWait(deps.db, deps.endpointHints, request, answerBy, claimFirst, progress.trace);
    if ('approved' in claim) return claim;
    const { token, card, controls, endpoint } = claim;
    const decision = await decideOn(deps, card, controls, endpoint, request, answerBy, progress);
    if (token !== undefined) return record(deps, card, controls, request, decision, answerBy, token, progress);
    const recorded = await recordWithClaim(deps, card, controls, request, decision, answerBy, progress);
    if (recorded) return recorded;
  }
}

/**
 * The decision on what was read of the card: its own state first (an unknown card is refused
 * there), then the static controls, then, with an enrolled endpoint, velocity and the partner.
 */
async function decideOn(
  deps: DecisionDeps,
  card: DecisionCard | undefined,
  controls: ApplicableSpendControls,
  read: (EndpointRead & { velocity: unknown }) | undefined,
  request: AuthorizationRequest,
  answerBy: number,
  progress: DecisionProgress
): Promise<AuthorizationDecision> {
  const { trace } = progress;
  const stateRefusal = cardStateRefusal(card);
  // cardStateRefusal refuses an unknown card (`!card` only narrows the type): past it the card is known and ACTIVE.
  if (stateRefusal || !card) return { approved: false, decidedBy: 'card_state', ...stateRefusal! };
  const staticRefusal = checkStaticControls(controls, { amount: request.amount, mcc: request.merchant.mcc, country: request.merchant.country });
  if (staticRefusal) return { approved: false, decidedBy: 'spend_controls', ...staticRefusal };
  // Without a decision endpoint, velocity is counted once, in the recording transaction.
  const endpoint = read ? await deps.checks.partnerEndpoint?.(card, read) : undefined;
  if (!endpoint) return { approved: true, decidedBy: 'approved' };
  // Velocity is checked before the partner is asked (a purchase over a limit is not sent to the
  // partner), on the counts the claim statement read, and counted again in the recording
  // transaction, which is what holds.
  const velocityRefusal = checkVelocityCounts(controls, read!.velocity as Record<string, string> | string | null, velocityPurchase(card, request));
  if (velocityRefusal) return { approved: false, decidedBy: 'spend_controls', ...velocityRefusal };
  const budgetMs = answerBy - Date.now() - RECORDING_RESERVE_MS;
  // An exhausted budget still gets the endpoint's default decision (the call returns it at once).
  mark(trace, 'askStart');
  const outcome = await endpoint.ask(request, Math.max(0, budgetMs));
  mark(trace, 'askEnd');
  // The partner's fault, unless an operator disabled the endpoint or the gateway could not read its
  // own signing secret (logged at error where it failed).
  if (outcome.kind === 'default' && outcome.reason !== 'disabled' && outcome.error !== 'secret_unavailable') {
    progress.partnerFault = { partnerId: card.partnerId, reason: outcome.reason, latencyMs: outcome.latencyMs, ...(outcome.error === undefined ? {} : { error: outcome.error }) };
  }
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

function velocityPurchase(card: DecisionCard, request: AuthorizationRequest) {
  return { partnerId: card.partnerId, cardKey: card.cardKey, amount: request.amount, at: new Date(request.at) };
}

/** A claim this request holds, with what the decision reads beside it (in the claim's statement). */
interface Claimed {
  /** Undefined: not claimed (the partner has no decision endpoint, and the claim was not asked for). */
  token: string | undefined;
  /** Undefined: no card of this gateway has the key. */
  card: DecisionCard | undefined;
  controls: ApplicableSpendControls;
  /** The card's partner has a decision endpoint (enabled or not). */
  hasEndpoint: boolean;
  /** With a claim and an endpoint: the endpoint, the card as events carry it and the velocity counts; undefined otherwise. */
  endpoint: (EndpointRead & { velocity: unknown }) | undefined;
}

/**
 * What a claim statement read of a card, kept for its next decision in this process: whether its
 * partner had a decision endpoint (which of the two claim statements to send, {@link claimAndRead});
 * without one, the card and its controls, on which the next decision is taken and which its
 * recording statement checks are still the card's ({@link recordForCard}'s `remembered`).
 */
export type CardHint = { hasEndpoint: true } | { hasEndpoint: false; card: DecisionCard; controls: string | undefined };

/**
 * The longest controls (the JSON text of both scopes, as the claim statement read them) a hint keeps:
 * past it only whether the partner has an endpoint is kept (and the card's decisions read first).
 * 10,000 hints then hold at most about 10 MB of controls (typical controls are 100 to 400 characters).
 */
export const REMEMBERED_CONTROLS_CHARS = 1024;

/**
 * The hints of one gateway process by card key ({@link CardHint}). A hint only: a stale one costs a
 * statement (a read of the endpoint after the claim, or a recording that finds the card changed and
 * writes nothing) or a few reads of nothing, never a wrong decision.
 */
export type EndpointHints = ReturnType<typeof newEndpointHints>;

/** The hints of one gateway process: the last 10,000 cards decided. */
export function newEndpointHints() {
  return boundedLru<string, CardHint>(10_000);
}

/** The card's columns as events carry them ({@link CARD_COLUMNS}), as one jsonb value. */
const EVENT_CARD_JSON = `jsonb_build_object(${CARD_COLUMNS.split(',')
  .map((column) => `'${column.trim()}', c.${column.trim()}`)
  .join(', ')})`;

type EventCardJson = (Omit<CardRow, 'created_at'> & { created_at: string }) | string;

/** What {@link EVENT_CARD_JSON}, {@link endpointTargetColumn} and {@link velocityCountsColumn} read, as the decision takes them; undefined without an endpoint. */
function endpointReadOf(endpoint: unknown, eventCard: EventCardJson | null, velocity: unknown): Claimed['endpoint'] {
  const target = endpointTargetOf(endpoint);
  if (!target || eventCard === null) return undefined;
  const cardRow = typeof eventCard === 'string' ? (JSON.parse(eventCard) as Exclude<EventCardJson, string>) : eventCard;
  return { target, card: toCard({ ...cardRow, created_at: new Date(cardRow.created_at) } as CardRow), velocity };
}

/**
 * The claim's commit does not wait for its WAL flush (docs/authorizations.md, "Exactly once"): a
 * column of every claim statement, so that it holds for that statement's own transaction only (the
 * setting is local to it, and the connection's next transaction commits synchronously again). The
 * claim is visible to other sessions at its commit either way; it is durable once the decision's
 * recording, which commits synchronously after it, is, since flushing the WAL to the recording's
 * commit flushes everything before it. Lost only when PostgreSQL crashes between the two, which
 * leaves the id as a crash before the claim would: nothing recorded, the holder's recording fenced
 * out (its token gone), a repeat decides afresh. Half the flushes of a decision with an endpoint
 * (docs/performance.md, "Run K").
 */
export const CLAIM_COMMIT_COLUMN = "set_config('synchronous_commit', 'off', true) AS claim_commit";

/** Each claim statement's text by its name, built on its first use (a name stands for one text: PostgreSQL prepares it under that name). */
const claimTexts = new Map<string, string>();

/**
 * Runs a claim (`claimSql`: an INSERT or UPDATE of `authorization_decisions` … `RETURNING 1`) and,
 * in the same statement, reads the card (`$cardParam`), its spend controls and whether its partner
 * has a decision endpoint: one round trip. When the card's {@link EndpointHints hint} says its
 * partner has one, the statement (`<name>-endpoint`) also reads the endpoint with its live secrets
 * (sealed), the card as events carry it and the card's velocity counts at the purchase's time:
 * everything the decision reads before asking the partner, in the same round trip. Without the
 * hint those reads stay out of the statement (their tables out of its plan: about 40 µs of the
 * backend's CPU per decision), and a claim that finds an endpoint reads them in one more
 * statement. `claimed`: whether the claim changed a row. `name`: the statement's (its text is
 * fixed), so that PostgreSQL parses it once per connection.
 *
 * Never run it inside an explicit transaction (BEGIN … COMMIT, `db.transaction`): the statement's
 * {@link CLAIM_COMMIT_COLUMN} sets `synchronous_commit = off` for the transaction it runs in, which
 * is the statement's own only when it autocommits; inside a transaction it would turn off the
 * synchronous commit of everything that transaction writes (docs/authorizations.md, "Exactly once").
 */
async function claimAndRead(
  db: Database,
  hints: EndpointHints | undefined,
  claimSql: string,
  params: unknown[],
  cardParam: number,
  at: string,
  token: string,
  name: string,
  trace?: DecisionTrace
): Promise<Claimed & { claimed: boolean; seen: boolean }> {
  const cardKey = params[cardParam - 1] as string;
  const withEndpoint = hints?.get(cardKey)?.hasEndpoint === true;
  const statementName = withEndpoint ? `${name}-endpoint` : name;
  let text = claimTexts.get(statementName);
  if (text === undefined) {
    const head = `WITH claim AS (${claimSql})
       SELECT (SELECT count(*) FROM claim) AS claimed, ${CLAIM_COMMIT_COLUMN}, c.partner_id, c.individual_id, c.tenant_id, c.status,
              EXISTS (SELECT 1 FROM authorization_decisions d WHERE d.authorization_id = $1) AS seen,`;
    text = withEndpoint
      ? `${head} ctl.controls, ep.endpoint, ep.endpoint IS NOT NULL AS has_endpoint,
              CASE WHEN ep.endpoint IS NOT NULL THEN ${EVENT_CARD_JSON} END AS event_card,
              CASE WHEN ep.endpoint IS NOT NULL THEN ${velocityCountsColumn('ctl.controls', 'c', `$${params.length + 1}`)} END AS velocity
         FROM (SELECT 1) AS one LEFT JOIN cards c ON c.card_key = $${cardParam}
              LEFT JOIN LATERAL (SELECT ${applicableControlsColumn('c')} AS controls) AS ctl ON true
              LEFT JOIN LATERAL (SELECT ${endpointTargetColumn('c')} AS endpoint) AS ep ON true`
      : `${head} ${applicableControlsColumn('c')} AS controls,
              EXISTS (SELECT 1 FROM authorization_endpoints e WHERE e.partner_id = c.partner_id) AS has_endpoint
         FROM (SELECT 1) AS one LEFT JOIN cards c ON c.card_key = $${cardParam}`;
    claimTexts.set(statementName, text);
  }
  if (trace && trace.claimSent === undefined) mark(trace, 'claimSent');
  const row = (
    await db.named<{
      claimed: string;
      partner_id: string | null;
      individual_id: string | null;
      tenant_id: string | null;
      status: string | null;
      controls: Parameters<typeof applicableControlsOf>[0];
      has_endpoint: boolean | null;
      endpoint?: unknown;
      event_card?: EventCardJson | null;
      velocity?: unknown;
      seen: boolean;
    }>(
      statementName,
      text,
      withEndpoint ? [...params, at] : params
    )
  ).rows[0];
  mark(trace, 'claimDone');
  const card: DecisionCard | undefined =
    row.partner_id === null ? undefined : { cardKey, partnerId: row.partner_id, individualId: row.individual_id, tenantId: row.tenant_id, status: row.status! };
  const hasEndpoint = row.has_endpoint === true;
  const controls = applicableControlsOf(row.controls);
  if (card && hints) {
    const text = hasEndpoint ? undefined : JSON.stringify(controls);
    hints.set(cardKey, hasEndpoint ? { hasEndpoint } : { hasEndpoint, card, controls: text !== undefined && text.length <= REMEMBERED_CONTROLS_CHARS ? text : undefined });
  }
  const claimed = Number(row.claimed) > 0;
  let endpoint: Claimed['endpoint'];
  if (withEndpoint) endpoint = endpointReadOf(row.endpoint, row.event_card ?? null, row.velocity);
  else if (hasEndpoint && claimed && card) endpoint = await readEndpoint(db, cardKey, row.controls, at);
  return { claimed, token, card, controls, hasEndpoint, endpoint, seen: row.seen };
}

/**
 * The reads of {@link claimAndRead}'s `-endpoint` statement after a claim without them (the card's
 * hint was missing or stale): the endpoint, the card as events carry it, and the velocity counts
 * of the windows of `controls`, the controls the claim read.
 */
async function readEndpoint(db: Database, cardKey: string, controls: unknown, at: string): Promise<Claimed['endpoint']> {
  const row = (
    await db.named<{ endpoint: unknown; event_card: EventCardJson; velocity: unknown }>(
      'authorization-endpoint-read',
      `SELECT ${endpointTargetColumn('c')} AS endpoint, ${EVENT_CARD_JSON} AS event_card, ${velocityCountsColumn('$2::jsonb', 'c', '$3')} AS velocity
         FROM cards c WHERE c.card_key = $1`,
      [cardKey, controls === null || controls === undefined ? null : typeof controls === 'string' ? controls : JSON.stringify(controls), at]
    )
  ).rows[0];
  return row ? endpointReadOf(row.endpoint, row.event_card, row.velocity) : undefined;
}

/**
 * Claims the authorization id for this request and returns the claim's token, or returns the
 * decision another request recorded for it. A claim whose lease ran out (its holder died, or missed
 * its deadline without recording) is taken over by whichever repeat sees it first, with a new token
 * (the old holder's late recording then finds its token gone and rolls back). The lease is counted
 * on the database's clock. A repeat naming another card than a decided claim is refused: an
 * authorization id is one card's; while that claim is still deciding, {@link DecisionTooLate} (503) at
 * once, since the claim may not be durable yet. {@link DecisionTooLate} when `answerBy` comes first.
 */
async function claimOrWait(db: Database, hints: EndpointHints | undefined, request: AuthorizationRequest, answerBy: number, always: boolean, trace?: DecisionTrace): Promise<Claimed | AuthorizationDecision> {
  const token = newClaimToken();
  // The lease lasts until the processor's deadline (this request's answer is due, with the margin),
  // an instant: a claim that reaches the database late (a link that held it) is no longer than that.
  const leaseUntil = new Date(answerBy + ANSWER_MARGIN_MS).toISOString();
  // Unless `always`, claimed only when the card's partner has a decision endpoint (the statement's
  // own snapshot): otherwise the reads alone, and the caller records the decision with its claim.
  const first = await claimAndRead(
    db,
    hints,
    `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, lease_until)
     SELECT $1, $2, $3, 'deciding', $4, $5::timestamptz
      WHERE $6::boolean OR EXISTS (SELECT 1 FROM cards c JOIN authorization_endpoints e ON e.partner_id = c.partner_id WHERE c.card_key = $3)
     ON CONFLICT (authorization_id) DO NOTHING RETURNING 1`,
    [request.id, request.transactionId, request.cardId, token, leaseUntil, always],
    3,
    request.at,
    token,
    'authorization-claim',
    trace
  );
  if (first.claimed) return first;
  // No claim was tried: the claim goes with the recording (a concurrent repeat finds it there). A
  // repeat of an id that has its decision row (committed) reads it below instead of recording again.
  if (!always && !first.hasEndpoint && !first.seen) return { card: first.card, controls: first.controls, hasEndpoint: false, endpoint: undefined, token: undefined };
  for (;;) {
    const row = (
      await db.query<{ state: string; card_key: string; decision: AuthorizationDecision | string | null; expired: boolean }>(
        'SELECT state, card_key, decision, lease_until < now() AS expired FROM authorization_decisions WHERE authorization_id = $1',
        [request.id]
      )
    ).rows[0];
    if (row && row.card_key !== request.cardId) {
      // Refused (400) only once the other card's decision is recorded (a synchronous commit: durable).
      // A claim still deciding may not be durable yet (its commit does not wait for its flush): lost in
      // a crash, the id could still be decided for this card. Until then 503, as when no decision can
      // be had (the processor's stand-in; its retry gets the 400 or a decision).
      if (row.state !== 'decided') throw new DecisionTooLate();
      throw new GatewayError('validation_failed', 'The authorization id is another card\'s', { invalidParams: [{ name: 'authorization.id', reason: 'is already another card\'s authorization' }] });
    }
    if (row?.state === 'decided' && row.decision) return typeof row.decision === 'string' ? (JSON.parse(row.decision) as AuthorizationDecision) : row.decision;
    if (row?.state === 'deciding' && row.expired) {
      const taken = await claimAndRead(
        db,
        hints,
        `UPDATE authorization_decisions SET claim_token = $2, transaction_id = $3, lease_until = $4::timestamptz
          WHERE authorization_id = $1 AND state = 'deciding' AND lease_until < now() RETURNING 1`,
        [request.id, token, request.transactionId, leaseUntil, request.cardId],
        5,
        request.at,
        token,
        'authorization-takeover'
      );
      if (taken.claimed) return taken;
    }
    if (Date.now() + WAIT_STEP_MS >= answerBy) throw new DecisionTooLate();
    await sleep(WAIT_STEP_MS);
  }
}

function newClaimToken(): string {
  return crypto.randomBytes(12).toString('hex');
}

/**
 * SQLSTATEs that mean the recording came too late: the card's lock not had in time
 * (lock_not_available; also the card's velocity-ledger lock at the commit, under the same
 * lock_timeout, migration 023), or the claim lost or the commit-by instant passed (PGW01,
 * migration 024).
 */
const TOO_LATE_CODES = new Set(['55P03', 'PGW01']);

/**
 * Records the decision in one statement, one round trip and one commit (docs/performance.md, "Run H"):
 * the velocity gate (migration 021: the card's decision lock, then the velocity count with a fresh
 * snapshot, so it sees what the lock's previous holder committed; counted from the card's velocity
 * ledger, migration 023, whose entry for this approval a deferred trigger writes at this statement's
 * commit, before the card's lock is released), then, only when it passed, the
 * transaction (PENDING or DECLINED, with `authorization`), its `transaction.created` event, the
 * decision row (fenced by the claim's token) and the audit entry; last, a check that raises (and so
 * rolls everything back, {@link DecisionTooLate}) when the claim was another request's by then or
 * the database's clock is past the decision's commit-by instant ({@link commitByOf}), however late
 * the statement arrived: a decision the processor did not get in time must not stand. An
 * approval the gate refuses (another decision's commit pushed the card over a limit) writes nothing
 * and is recorded as `velocity_exceeded` by a second statement.
 */
async function record(
  deps: DecisionDeps,
  card: DecisionCard | undefined,
  controls: ApplicableSpendControls,
  request: AuthorizationRequest,
  first: AuthorizationDecision,
  answerBy: number,
  token: string,
  progress: DecisionProgress
): Promise<AuthorizationDecision> {
  const { db } = deps;
  try {
    if (!card) {
      // No card, no transaction: the claim is marked decided, in one statement.
      const answered = answeredOf(first);
      if (!(await finish(db, request, token, answered, answerBy))) throw new DecisionTooLate();
      return answered;
    }
    const { outcome, decision } = await recordUntilStands(db, card, controls, request, first, answerBy, token, progress);
    if (outcome.kind === 'recorded') {
      progress.recorded = true;
      return answeredOf(decision);
    }
    // The transaction exists already (a stand-in recorded first, or the id decided again past
    // retention): the answer is what stands, not a new decision; the claim is marked decided with
    // it by one statement of its own, fenced by the commit-by instant as the recording is.
    const answered = answeredOf(await standing(db, request.transactionId, decision));
    if (!(await finish(db, request, token, answered, answerBy))) throw new DecisionTooLate();
    return answered;
  } catch (err) {
    if (TOO_LATE_CODES.has((err as { code?: unknown } | null)?.code as string)) throw new DecisionTooLate(true);
    throw err;
  }
}

/**
 * Records a decision that was not claimed first (the card's partner has no decision endpoint) with
 * its claim, in one statement and one commit: {@link recordForCard}'s statement, in which the decision
 * row is inserted already decided, after the velocity gate and before the transaction, and the rest
 * is written only when it was. Undefined when it recorded nothing: the id has a decision row already
 * (a repeat: the caller waits for that decision, as a claim that lost), or the transaction existed
 * already (the caller then claims first, and answers what stands), or, with `remembered` (the card
 * and controls the decision was taken on, read by an earlier decision), the card, its controls or
 * its partner's endpoint are not what was remembered any more.
 */
async function recordWithClaim(
  deps: DecisionDeps,
  card: DecisionCard | undefined,
  controls: ApplicableSpendControls,
  request: AuthorizationRequest,
  first: AuthorizationDecision,
  answerBy: number,
  progress: DecisionProgress,
  remembered?: Remembered
): Promise<AuthorizationDecision | undefined> {
  const { db } = deps;
  try {
    if (!card) {
      // No card, no transaction: the decision row alone.
      const answered = answeredOf(first);
      const commitBy = commitByOf(answerBy);
      const inserted = await db.statement(() => {
        if (Date.now() > commitBy) throw new DecisionTooLate();
        return {
          name: 'authorization-decided-unknown-card',
          text: `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, decision, lease_until, decided_at)
                 SELECT $1, $2, $3, 'decided', $4, $5::jsonb, now(), now() WHERE authorization_before($6::timestamptz)
                 ON CONFLICT (authorization_id) DO NOTHING`,
          values: [request.id, request.transactionId, request.cardId, newClaimToken(), JSON.stringify(answered), new Date(commitBy).toISOString()],
        };
      });
      return (inserted.rowCount ?? 0) > 0 ? answered : undefined;
    }
    const { outcome, decision } = await recordUntilStands(db, card, controls, request, first, answerBy, undefined, progress, remembered);
    if (outcome.kind !== 'recorded') return undefined;
    progress.recorded = true;
    return answeredOf(decision);
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    // PGW01 here: the transaction existed (or the commit-by instant passed): nothing was recorded.
    if (code === 'PGW01' && Date.now() <= commitByOf(answerBy)) return undefined;
    if (TOO_LATE_CODES.has(code as string)) throw new DecisionTooLate(true);
    throw err;
  }
}

/**
 * {@link recordForCard} for `first`, then again for a `velocity_exceeded` decline as long as the gate
 * refuses the approval (another decision's commit pushed the card over a limit): what the last
 * statement did, and the decision it was for. The callers of {@link record} and
 * {@link recordWithClaim} differ only in what they do with a transaction that existed or a row taken.
 */
async function recordUntilStands(
  db: Database,
  card: DecisionCard,
  controls: ApplicableSpendControls,
  request: AuthorizationRequest,
  first: AuthorizationDecision,
  answerBy: number,
  token: string | undefined,
  progress: DecisionProgress,
  remembered?: Remembered
): Promise<{ outcome: Exclude<RecordingOutcome, { kind: 'refused' }>; decision: AuthorizationDecision }> {
  let decision = first;
  for (;;) {
    const outcome = await recordForCard(db, card, controls, request, decision, answerBy, token, progress, remembered);
    if (outcome.kind !== 'refused') return { outcome, decision };
    decision = { approved: false, decidedBy: 'spend_controls', ...outcome.refusal };
  }
}

/** What one recording statement did. */
type RecordingOutcome =
  | { kind: 'recorded' }
  | { kind: 'refused'; refusal: Refusal }
  /** The transaction existed already: nothing written. */
  | { kind: 'exists' }
  /** Without a claim first: the id had a decision row already, nothing written. */
  | { kind: 'taken' }
  /** With `remembered`: the card, its controls or its partner's endpoint changed since, nothing written. */
  | { kind: 'changed' };

/** A card and its controls (both scopes, as JSON text) as an earlier decision read them, its partner without an endpoint then. */
interface Remembered {
  card: DecisionCard;
  controls: string;
}

/**
 * The recording statement of {@link record} for `decision` on a known card, fenced by the claim's
 * `token`; without a token ({@link recordWithClaim}), the decision row is inserted, decided, after
 * the gate (the card's lock first, then a same-id repeat's row; the claimed path takes the card's
 * lock, then the transaction's and the event's, then fences its own row: no request waits for a
 * lock that a request waiting on it holds, since a claim's holder never waits on its repeats), and
 * the transaction is written only when it was; a transaction that existed already
 * then raises (PGW01: the check's "claimed but nothing recorded"), so that the claim rolls back too.
 */
async function recordForCard(
  db: Database,
  card: DecisionCard,
  controls: ApplicableSpendControls,
  request: AuthorizationRequest,
  decision: AuthorizationDecision,
  answerBy: number,
  token: string | undefined,
  progress: DecisionProgress,
  remembered?: Remembered
): Promise<RecordingOutcome> {
  // Only an approval is counted (a decline never counts, nor can velocity refuse it).
  const gate = velocityGate(decision.approved ? controls : { partner: {}, card: {} }, velocityPurchase(card, request));
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
  const audit: AuditEntry = {
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
  };
  mark(progress.trace, 'recCall');
  const row = (
    await db.statement<{ passed: boolean; counts: string[] | string; amounts: string[] | string; inserted: string; fenced: string }>(() => {
      mark(progress.trace, 'recSent');
      // Built once the connection is had: nothing is sent past the commit-by instant. The database
      // checks the same instant on its own clock when the statement runs, however late it arrives:
      // the card's lock is waited for until then, and the check that ends the statement refuses past it.
      const commitBy = commitByOf(answerBy);
      if (commitBy - Date.now() <= 0) throw new DecisionTooLate();
      const params = new StatementParams();
      const commitByParam = params.add(new Date(commitBy).toISOString());
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
        const written = decidedTransactionStatement(transaction, { authorization: authorizationOf(decision), owner }, params, 'gate');
        const fence = fenceSql(params, request, token, answeredOf(decision));
        // `checked` reads the writes it must follow (the transaction, its claim's fence, the audit entry, the event), so it runs after them: the commit follows it at once.
        text = `WITH ${gated}, ${written.ctes}, fenced AS (${fence} AND EXISTS (SELECT 1 FROM ins) RETURNING 1), audited AS (
             INSERT INTO audit_log (${AUDIT_COLUMNS}) SELECT ${params.list(auditValues(audit))} FROM fenced RETURNING 1
           ), checked AS (
             SELECT authorization_recorded_by(i.n, f.n, ${commitByParam}::timestamptz) AS ok
               FROM (SELECT count(*) AS n FROM ins) AS i, (SELECT count(*) AS n FROM fenced) AS f, (SELECT count(*) FROM audited) AS a, (SELECT count(*) FROM ev) AS e
           ) SELECT g.passed, g.counts, g.amounts, ${written.columns}, (SELECT count(*) FROM fenced) AS fenced, (SELECT ok FROM checked) AS checked FROM gate AS g`;
      } else {
        const claim = `claim AS (
             INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, decision, lease_until, decided_at)
             SELECT ${params.add(request.id)}, ${params.add(request.transactionId)}, ${params.add(request.cardId)}, 'decided', ${params.add(newClaimToken())}, ${params.add(answered)}::jsonb, now(), now()
               FROM gate WHERE passed
             ON CONFLICT (authorization_id) DO NOTHING RETURNING 1
           ), claimed AS MATERIALIZED (SELECT true AS passed FROM claim)`;
        const written = decidedTransactionStatement(transaction, { authorization: authorizationOf(decision), owner }, params, 'claimed');
        // The check raises when the claim was inserted but no transaction (it existed): both roll back.
        text = `WITH ${gated}, ${claim}, ${written.ctes}, audited AS (
             INSERT INTO audit_log (${AUDIT_COLUMNS}) SELECT ${params.list(auditValues(audit))} FROM ins RETURNING 1
           ), checked AS (
             SELECT authorization_recorded_by(c.n, i.n, ${commitByParam}::timestamptz) AS ok
               FROM (SELECT count(*) AS n FROM claim) AS c, (SELECT count(*) AS n FROM ins) AS i, (SELECT count(*) FROM audited) AS a, (SELECT count(*) FROM ev) AS e
           ) SELECT g.passed, g.counts, g.amounts, ${written.columns}, (SELECT count(*) FROM claim) AS fenced, (SELECT ok FROM checked) AS checked FROM gate AS g`;
      }
      return { name: token !== undefined ? 'authorization-record' : remembered === undefined ? 'authorization-record-with-claim' : 'authorization-record-remembered', text, values: params.values };
    })
  ).rows[0];
  mark(progress.trace, 'recDone');
  if (!row) {
    // Only the remembered statement's gate can answer no row (its check found a change).
    if (remembered === undefined) throw new Error('the recording statement answered no row');
    return { kind: 'changed' };
  }
  if (!row.passed) {
    const refusal = gate.refusal(textArray(row.counts), textArray(row.amounts));
    if (!refusal) throw new Error('the velocity gate refused a purchase that no velocity rule refuses');
    return { kind: 'refused', refusal };
  }
  // Without a claim first: no decision row inserted, the id had one (the check raised otherwise).
  if (token === undefined && Number(row.fenced) === 0) return { kind: 'taken' };
  // The check raised unless the claim was fenced: a new row here was recorded with its decision.
  return Number(row.inserted) === 0 ? { kind: 'exists' } : { kind: 'recorded' };
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

/** A text[] as pg answers it: parsed, or its literal (`{1,2}`) when a driver leaves it. */
function textArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map((v) => v.replace(/^"|"$/g, ''));
}

/** The decision as answered and kept: without the partner's own reason (the audit entry keeps it). */
function answeredOf(decision: AuthorizationDecision): AuthorizationDecision {
  const { partnerReason: _kept, ...answered } = decision;
  return answered;
}

/** The UPDATE that marks the claim decided, only while it is still this request's (its token), without `RETURNING`. */
function fenceSql(params: StatementParams, request: AuthorizationRequest, token: string, answered: AuthorizationDecision): string {
  return `UPDATE authorization_decisions SET state = 'decided', decision = ${params.add(JSON.stringify(answered))}, decided_at = now()
           WHERE authorization_id = ${params.add(request.id)} AND claim_token = ${params.add(token)} AND state = 'deciding'`;
}

/**
 * Marks the claim decided (fenced by its token), in one statement of its own that the database
 * refuses past the commit-by instant of `answerBy` (PGW01, whenever it arrives); false: another
 * request took the claim over.
 */
async function finish(db: Database, request: AuthorizationRequest, token: string, answered: AuthorizationDecision, answerBy: number): Promise<boolean> {
  const commitBy = commitByOf(answerBy);
  const result = await db.statement(() => {
    if (Date.now() > commitBy) throw new DecisionTooLate();
    const params = new StatementParams();
    const text = `${fenceSql(params, request, token, answered)} AND authorization_before(${params.add(new Date(commitBy).toISOString())}::timestamptz)`;
    return { text, values: params.values };
  });
  return (result.rowCount ?? 0) > 0;
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
