import { commitByOf, DecisionTooLate, tooLate, type Clock } from '../authorizations/deadline';
import type { Database, Queryable } from '../db/database';

/**
 * Runs `work` in one transaction that must commit by the commit-by instant of an answer due at
 * `answerBy` (gateway/authorizations/deadline.ts): not started once that instant has passed, every
 * lock in it waited for only until then, and the database's refusal for lateness (a lock not had in
 * time, the fence at COMMIT of migration 028) turned into {@link DecisionTooLate} like the gateway's
 * own. `work` is given the instant, which its fenced rows carry, and the lock timeout as
 * `set_config`'s value. With `setsLockTimeout`, `work`'s first statement sets it itself (one round
 * trip less: `set_config('lock_timeout', <value>, true)` in the statement that takes its first
 * lock); otherwise a statement of its own sets it first.
 */
export async function recordedBefore<T>(
  db: Database,
  now: Clock,
  answerBy: number,
  work: (tx: Queryable, commitBy: number, lockTimeout: () => string) => Promise<T>,
  options: { setsLockTimeout?: boolean } = {}
): Promise<T> {
  const commitBy = commitByOf(answerBy);
  if (now() >= commitBy) throw new DecisionTooLate();
  const lockTimeout = () => `${Math.max(1, commitBy - now())}ms`;
  try {
    return await db.transaction(async (tx) => {
      if (!options.setsLockTimeout) await tx.query("SELECT set_config('lock_timeout', $1, true)", [lockTimeout()]);
      return work(tx, commitBy, lockTimeout);
    });
  } catch (err) {
    if (tooLate(err)) throw new DecisionTooLate(true);
    throw err;
  }
}
