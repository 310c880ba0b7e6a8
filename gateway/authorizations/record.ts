import type { Database } from '../db/database';
import { declineReasonOf } from '../upstreams/partner-transaction';
import { newClaimToken } from './claim';
import { commitByOf, DecisionTooLate, sqlState, tooLate, type Clock } from './deadline';
import { answeredOf, velocityDecline, velocityPurchase, type AuthorizationDecision, type AuthorizationRequest, type DecisionCard, type Refusal } from './decision';
import { mark, type DecisionTrace } from './decision-trace';
import { finishStatement, readStanding, recordingStatement, unknownCardStatement, type RecordingRow, type Remembered } from './recording-statements';
import { velocityGate, type ApplicableSpendControls } from './spend-controls';

/**
 * Recording a decision (docs/authorizations.md, "Recording"): sends ./recording-statements.ts'
 * statements and reads what they did. Exactly once per authorization id, within the commit-by
 * instant of the answer (./deadline.ts), whatever the database or the network does.
 */

/** What records: the database and the decision's clock. */
export interface RecordingDeps {
  db: Database;
  now: Clock;
}

/** What one recording took: the decision it is for, and where its steps' time went. */
export interface RecordingTarget {
  card: DecisionCard;
  controls: ApplicableSpendControls;
  request: AuthorizationRequest;
  answerBy: number;
  trace?: DecisionTrace;
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

/**
 * Records the decision in one statement, one round trip and one commit (docs/performance.md, "Authorization decisions"),
 * fenced by the claim's `token`: {@link recordingStatement}. An approval the gate refuses (another
 * decision's commit pushed the card over a limit) writes nothing and is recorded as
 * `velocity_exceeded` by a second statement. A transaction that existed already (a stand-in
 * recorded first, or the id decided again past retention): the answer is what stands, and the claim
 * is marked decided with it by one statement of its own, fenced by the commit-by instant as the
 * recording is. {@link DecisionTooLate} when the database refused (the claim lost, past the
 * commit-by instant, a lock not had in time) or the budget ran out before sending.
 */
export async function record(deps: RecordingDeps, card: DecisionCard | undefined, controls: ApplicableSpendControls, request: AuthorizationRequest, first: AuthorizationDecision, answerBy: number, token: string, trace?: DecisionTrace): Promise<{ decision: AuthorizationDecision; recorded: boolean }> {
  try {
    if (!card) {
      // No card, no transaction: the claim is marked decided, in one statement.
      const answered = answeredOf(first);
      if (!(await finish(deps, request, token, answered, answerBy))) throw new DecisionTooLate();
      return { decision: answered, recorded: false };
    }
    const { outcome, decision } = await recordUntilStands(deps, { card, controls, request, answerBy, trace }, first, token);
    if (outcome.kind === 'recorded') return { decision: answeredOf(decision), recorded: true };
    const answered = answeredOf(await standing(deps.db, request.transactionId, decision));
    if (!(await finish(deps, request, token, answered, answerBy))) throw new DecisionTooLate();
    return { decision: answered, recorded: false };
  } catch (err) {
    if (tooLate(err)) throw new DecisionTooLate(true);
    throw err;
  }
}

/**
 * Records a decision that was not claimed first (the card's partner has no decision endpoint) with
 * its claim, in one statement and one commit, in which the decision row is inserted already
 * decided, after the velocity gate and before the transaction, and the rest is written only when it
 * was. Undefined when it recorded nothing: the id has a decision row already (a repeat: the caller
 * waits for that decision, as a claim that lost), or the transaction existed already (the caller
 * then claims first, and answers what stands), or, with `remembered` (the card and controls the
 * decision was taken on, read by an earlier decision), the card, its controls or its partner's
 * endpoint are not what was remembered any more.
 */
export async function recordWithClaim(
  deps: RecordingDeps,
  card: DecisionCard | undefined,
  controls: ApplicableSpendControls,
  request: AuthorizationRequest,
  first: AuthorizationDecision,
  answerBy: number,
  trace?: DecisionTrace,
  remembered?: Remembered
): Promise<{ decision: AuthorizationDecision; recorded: boolean } | undefined> {
  const { db, now } = deps;
  try {
    if (!card) {
      // No card, no transaction: the decision row alone.
      const answered = answeredOf(first);
      const commitBy = commitByOf(answerBy);
      const inserted = await db.statement(() => {
        if (now() > commitBy) throw new DecisionTooLate();
        return unknownCardStatement(request, answered, commitBy, newClaimToken());
      });
      return (inserted.rowCount ?? 0) > 0 ? { decision: answered, recorded: false } : undefined;
    }
    const { outcome, decision } = await recordUntilStands(deps, { card, controls, request, answerBy, trace }, first, undefined, remembered);
    return outcome.kind === 'recorded' ? { decision: answeredOf(decision), recorded: true } : undefined;
  } catch (err) {
    // PGW01 here: the transaction existed (or the commit-by instant passed): nothing was recorded.
    if (sqlState(err) === 'PGW01' && now() <= commitByOf(answerBy)) return undefined;
    if (tooLate(err)) throw new DecisionTooLate(true);
    throw err;
  }
}

/**
 * {@link recordForCard} for `first`, then again for a `velocity_exceeded` decline as long as the gate
 * refuses the approval: what the last statement did, and the decision it was for.
 */
async function recordUntilStands(
  deps: RecordingDeps,
  target: RecordingTarget,
  first: AuthorizationDecision,
  token: string | undefined,
  remembered?: Remembered
): Promise<{ outcome: Exclude<RecordingOutcome, { kind: 'refused' }>; decision: AuthorizationDecision }> {
  let decision = first;
  for (;;) {
    const outcome = await recordForCard(deps, target, decision, token, remembered);
    if (outcome.kind !== 'refused') return { outcome, decision };
    decision = velocityDecline(outcome.refusal);
  }
}

/** Sends one recording statement for `decision` on a known card and reads what it did. */
async function recordForCard(deps: RecordingDeps, target: RecordingTarget, decision: AuthorizationDecision, token: string | undefined, remembered?: Remembered): Promise<RecordingOutcome> {
  const { card, controls, request, answerBy, trace } = target;
  // Only an approval is counted (a decline never counts, nor can velocity refuse it).
  const gate = velocityGate(decision.approved ? controls : { partner: {}, card: {} }, velocityPurchase(card, request));
  mark(trace, 'recCall');
  const row = (
    await deps.db.statement<RecordingRow>(() => {
      mark(trace, 'recSent');
      // Built once the connection is had: nothing is sent past the commit-by instant. The database
      // checks the same instant on its own clock when the statement runs, however late it arrives:
      // the card's lock is waited for until then, and the check that ends the statement refuses past it.
      const commitBy = commitByOf(answerBy);
      if (commitBy - deps.now() <= 0) throw new DecisionTooLate();
      return recordingStatement({ card, request, decision, gate, commitBy, token, remembered, newToken: newClaimToken });
    })
  ).rows[0];
  mark(trace, 'recDone');
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

/** A text[] as pg answers it: parsed, or its literal (`{1,2}`) when a driver leaves it. */
function textArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map((v) => v.replace(/^"|"$/g, ''));
}

/**
 * Marks the claim decided (fenced by its token), in one statement of its own that the database
 * refuses past the commit-by instant of `answerBy` (PGW01, whenever it arrives); false: another
 * request took the claim over.
 */
async function finish(deps: RecordingDeps, request: AuthorizationRequest, token: string, answered: AuthorizationDecision, answerBy: number): Promise<boolean> {
  const commitBy = commitByOf(answerBy);
  const result = await deps.db.statement(() => {
    if (deps.now() > commitBy) throw new DecisionTooLate();
    return finishStatement(request, token, answered, commitBy);
  });
  return (result.rowCount ?? 0) > 0;
}

/** The decision a transaction already recorded stands for (its status and decline reason). */
async function standing(db: Database, transactionId: string, fallback: AuthorizationDecision): Promise<AuthorizationDecision> {
  const row = await readStanding(db, transactionId);
  if (!row) return fallback;
  if (row.status !== 'DECLINED') return { approved: true, decidedBy: fallback.approved ? fallback.decidedBy : 'approved' };
  return { approved: false, declineReason: declineReasonOf('DECLINED', row.decline_reason) ?? 'do_not_honor', decidedBy: fallback.approved ? 'approved' : fallback.decidedBy };
}
