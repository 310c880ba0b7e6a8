import type { Logger } from '../logging/logger';
import { every } from './every';

/** One table's retention: what `run` deletes (counts by name), logged when anything went. */
export interface RetentionTask {
  /** What goes (`partner events`), named in a failure's log line. */
  what: string;
  /** The log line when anything went (`expired partner events deleted`). */
  message: string;
  /** Deletes what expired; resolves with counts (`{ deleted }`, or one per table). */
  run(): Promise<Record<string, number>>;
  /** Extra fields of the log line (the retention period). */
  fields?: Record<string, unknown>;
}

/**
 * Runs every task now and every `intervalMs`, one after the other, never two passes at a time; a
 * task that fails is logged (`retention pass failed`, with `what`) and the next still runs. Every
 * instance may run them: each task is idempotent and batched (gateway/db/retention.ts). Returns the
 * function that stops it.
 */
export function startRetention(log: Logger, tasks: readonly RetentionTask[], options: { intervalMs: number }): () => void {
  return every(
    options.intervalMs,
    async () => {
      for (const task of tasks) {
        try {
          const counts = await task.run();
          if (Object.values(counts).some((n) => n > 0)) log.info({ ...counts, ...task.fields }, task.message);
        } catch (err) {
          log.warn({ err, what: task.what }, 'retention pass failed');
        }
      }
    },
    log,
    'retention pass failed',
    { immediately: true }
  );
}
