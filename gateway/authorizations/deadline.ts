/**
 * The deadline of an authorization decision (docs/authorizations.md, "Deadline"): the budgets its
 * steps take from the instant its answer is due (`answerBy`), the commit-by instant the database
 * fences every recording with (migration 024), and the clock they are counted on.
 */

/** Epoch milliseconds now: the decision path's clock, a parameter so that tests advance it instead of sleeping. */
export type Clock = () => number;

/** The real clock. */
export const systemClock: Clock = () => Date.now();

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

/** The budget ran out before the decision was recorded: nothing is recorded, the processor applies its stand-in. */
export class DecisionTooLate extends Error {
  /** @param byDatabase the database refused the recording (past its commit-by instant, a lock not had in time, the claim lost), rather than the gateway not sending it. */
  constructor(readonly byDatabase = false) {
    super('authorization decision not recorded before the deadline');
  }
}

/**
 * SQLSTATEs that mean the recording came too late: the card's lock not had in time
 * (lock_not_available; also the card's velocity-ledger lock at the commit, under the same
 * lock_timeout, migration 023), or the claim lost or the commit-by instant passed (PGW01,
 * migration 024).
 */
const TOO_LATE_CODES = new Set(['55P03', 'PGW01']);

/** The SQLSTATE of a database error (undefined for any other error). */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether `err` is the database saying the recording came too late ({@link TOO_LATE_CODES}). */
export function tooLate(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && TOO_LATE_CODES.has(code);
}
