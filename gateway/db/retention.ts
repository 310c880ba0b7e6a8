import type { Queryable } from './database';

/** Rows one retention statement deletes at most: a short lock and a bounded transaction. */
export const RETENTION_BATCH = 5_000;

/**
 * Runs `statement`, a DELETE of at most one batch whose batch size is its last parameter, until it
 * deletes fewer rows than a batch; returns how many went. Each statement is its own transaction, so
 * no lock is held across batches. The statements pick their rows `FOR UPDATE SKIP LOCKED`: instances
 * deleting at the same moment take different rows instead of waiting on each other's, and a row
 * another instance deleted first is simply not counted twice (deleting is idempotent).
 *
 * @example await deleteInBatches(db, 'DELETE FROM t WHERE id IN (SELECT id FROM t WHERE old LIMIT $1 FOR UPDATE SKIP LOCKED)', [])
 */
export async function deleteInBatches(db: Queryable, statement: string, params: unknown[], batch = RETENTION_BATCH): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await db.query(statement, [...params, batch]);
    deleted += result.rowCount ?? 0;
    if ((result.rowCount ?? 0) < batch) return deleted;
  }
}
