import os from 'node:os';

/**
 * How many child processes that are busy on CPU (a gateway starting or refusing its configuration,
 * a CLI run) a test file runs at once: one per core, at most four. More than the cores only makes
 * each of them slower (a refused boot is about a second of one core, with little waiting).
 */
export const PROCESS_CONCURRENCY = Math.min(4, os.availableParallelism());

/**
 * Runs async jobs at most `limit` at a time, in the order they were queued: for test files whose
 * cases each wait on something slow of their own (a gateway process refusing its configuration, a
 * CLI run) and can overlap without touching each other's state.
 *
 * Every job's promise is marked handled as it is made, so a `before` hook can queue all of them
 * and each `it` await its own result later (a rejection then fails that `it`, and only it).
 *
 * @example
 * const run = limitConcurrency(PROCESS_CONCURRENCY);
 * let results: Promise<Result>[] = [];
 * before(() => (results = cases.map((c) => run(() => check(c)))));
 * cases.forEach((c, i) => it(c.name, async () => expect((await results[i]).code).to.equal(1)));
 */
export function limitConcurrency(limit: number): <T>(job: () => Promise<T>) => Promise<T> {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`limit must be a positive integer, not ${limit}`);
  let running = 0;
  const queue: (() => void)[] = [];
  const next = () => {
    while (running < limit && queue.length > 0) {
      running += 1;
      queue.shift()!();
    }
  };
  return <T>(job: () => Promise<T>): Promise<T> => {
    const result = new Promise<T>((resolve, reject) => {
      queue.push(() => {
        // A job that throws synchronously rejects its own promise like one that rejects.
        Promise.resolve()
          .then(job)
          .then(resolve, reject)
          .finally(() => {
            running -= 1;
            next();
          });
      });
    });
    next();
    // Awaited later, by the test it belongs to: not an unhandled rejection meanwhile.
    result.catch(() => undefined);
    return result;
  };
}
