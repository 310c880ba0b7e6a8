import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { EndpointHints } from './card-hints';
import { claimOrWait, type EndpointRead } from './claim';
import { RECORDING_RESERVE_MS, systemClock, type Clock } from './deadline';
import { AUTHORIZATION_POLICIES, firstDecision, partnerDecision, partnerFaultOf, type AuthorizationDecision, type AuthorizationRequest, type DecisionCard, type DecisionPolicy, type PartnerFault, type PartnerOutcome } from './decision';
import { mark, type DecisionTrace } from './decision-trace';
import { record, recordWithClaim } from './record';
import type { ApplicableSpendControls } from './spend-controls';

export { ANSWER_MARGIN_MS, DecisionTooLate } from './deadline';
export type { AuthorizationDecision, AuthorizationRequest, PartnerFault } from './decision';

/**
 * Real-time authorization decisions (docs/authorizations.md): the card processing system asks, for
 * each authorization, whether to approve it; the gateway answers before the processor's deadline,
 * first match wins: the card's own state, the spend controls, the partner's decision endpoint,
 * otherwise approve. Each authorization id is decided once, whatever repeats the processor sends and
 * whichever instance receives them. This is the shell: it claims (./claim.ts), decides
 * (./decision.ts, pure) and records (./record.ts); ./decider.ts wires it.
 */

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
   * What this process remembers of each card from its last claim statement (./card-hints.ts):
   * which claim statement to send, and, for a card whose partner has no decision endpoint, the card
   * and its controls, so that its next decision is one statement ({@link decideAuthorization}).
   * Without: always the claim statement first, without the endpoint's reads.
   */
  endpointHints?: EndpointHints;
  /** The decision order before the partner (./decision.ts); {@link AUTHORIZATION_POLICIES} by default. */
  policies?: readonly DecisionPolicy[];
  /** The clock budgets are counted on (the real one by default). */
  now?: Clock;
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

/**
 * Decides one authorization by `answerBy` (epoch ms) or throws: `DecisionTooLate` when the
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
  const now = deps.now ?? systemClock;
  const recording = { db: deps.db, now };
  // A card this process decided before, whose partner had no decision endpoint then: decided on what
  // was read then, and recorded by one statement that first checks, on its own snapshot, that the card
  // (owner, status), its controls and the partner's lack of an endpoint are still what was read, and
  // writes nothing otherwise. Then, or when the id had a decision row or its transaction existed, the
  // path below, from the claim statement's fresh reads.
  // A purchase with a token never takes it: its card is the token's, read by the claim statement.
  const remembered = request.token === undefined ? deps.endpointHints?.get(request.cardId) : undefined;
  if (remembered && !remembered.hasEndpoint && remembered.controls !== undefined) {
    const { card } = remembered;
    const controls = JSON.parse(remembered.controls) as ApplicableSpendControls;
    const decision = await decideOn(deps, now, card, controls, undefined, request, answerBy, progress);
    const recorded = await recordWithClaim(recording, card, controls, request, decision, answerBy, progress.trace, { card, controls: remembered.controls });
    if (recorded) return answered(recorded, progress);
    deps.endpointHints?.delete(request.cardId);
  }
  // First without a claim when the card's partner has no decision endpoint: the decision is then
  // recorded with its claim in one statement and one commit (recordWithClaim); a claim first
  // (a lease repeats wait on) only when the partner is to be asked, or when that statement did not
  // record (another request's claim, or a transaction recorded before). A purchase with a token
  // always claims first (./claim.ts reads its card through the token), then records with the claim's
  // token: the plain path of the protocol, leaving the card purchases' statements as they are.
  for (let claimFirst = request.token !== undefined; ; claimFirst = true) {
    const claim = await claimOrWait(deps.db, deps.endpointHints, request, answerBy, claimFirst, now, progress.trace);
    if ('approved' in claim) return claim;
    const { token, card, controls, endpoint } = claim;
    const decision = await decideOn(deps, now, card, controls, endpoint, request, answerBy, progress);
    if (token !== undefined) return answered(await record(recording, card, controls, request, decision, answerBy, token, progress.trace), progress);
    const recorded = await recordWithClaim(recording, card, controls, request, decision, answerBy, progress.trace);
    if (recorded) return answered(recorded, progress);
  }
}

/** A recording's decision, noting on `progress` whether this request's own statement recorded it. */
function answered(outcome: { decision: AuthorizationDecision; recorded: boolean }, progress: DecisionProgress): AuthorizationDecision {
  if (outcome.recorded) progress.recorded = true;
  return outcome.decision;
}

/**
 * The decision on what was read of the card (./decision.ts): with an enrolled endpoint, the policies
 * take the velocity counts the claim statement read (a purchase over a limit is not sent to the
 * partner; the recording's gate counts again, and that is what holds); without, velocity is counted
 * once, by the recording's gate. The partner is asked only when every policy passed.
 */
async function decideOn(
  deps: DecisionDeps,
  now: Clock,
  card: DecisionCard | undefined,
  controls: ApplicableSpendControls,
  read: (EndpointRead & { velocity: unknown }) | undefined,
  request: AuthorizationRequest,
  answerBy: number,
  progress: DecisionProgress
): Promise<AuthorizationDecision> {
  const endpoint = read && card ? await deps.checks.partnerEndpoint?.(card, read) : undefined;
  const velocity = endpoint ? (read!.velocity as Record<string, string> | string | null) : undefined;
  const refused = firstDecision({ card, controls, request, velocity }, deps.policies ?? AUTHORIZATION_POLICIES);
  if (refused || !endpoint || !card) return refused ?? partnerDecision(undefined);
  const budgetMs = answerBy - now() - RECORDING_RESERVE_MS;
  // An exhausted budget still gets the endpoint's default decision (the call returns it at once).
  mark(progress.trace, 'askStart');
  const outcome = await endpoint.ask(request, Math.max(0, budgetMs));
  mark(progress.trace, 'askEnd');
  const fault = partnerFaultOf(card.partnerId, outcome);
  if (fault) progress.partnerFault = fault;
  return partnerDecision(outcome);
}
