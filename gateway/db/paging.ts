import type { QueryResultRow } from 'pg';
import type { Queryable } from './database';

/** Validated `page` and `limit` of a request. */
export interface PageRequest {
  page: number;
  limit: number;
}

/** SQL OFFSET of a page. */
export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.limit;
}

/** Tables of per-individual history, listed newest first (`created_at DESC, id DESC`). */
export type IndividualHistoryTable = 'audit_log' | 'card_status_history';

/**
 * One page of an individual's rows of a history table, newest first, and how many it has in all:
 * the count and the page are read in parallel. `columns` is a fixed SQL column list of the caller.
 */
export async function pageOfIndividualHistory<R extends QueryResultRow>(
  db: Queryable,
  table: IndividualHistoryTable,
  columns: string,
  individualId: string,
  page: PageRequest
): Promise<{ total: number; rows: R[] }> {
  const [count, rows] = await Promise.all([
    db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE individual_id = $1`, [individualId]),
    db.query<R>(
      `SELECT ${columns} FROM ${table} WHERE individual_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [individualId, page.limit, offsetOf(page)]
    ),
  ]);
  return { total: Number(count.rows[0].n), rows: rows.rows };
}
