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
 * The most rows a total of our own choice is counted exactly up to (the individual's audit log and
 * card status history: docs/pagination.md, "Totals"). Past it `total` is this number, a lower bound,
 * and the answer says so (`X-Total-Capped: true`): the count reads at most this many index entries
 * plus one, whatever the individual's history, so its cost does not grow with the partner's data.
 */
export const HISTORY_COUNT_CAP = 1_000;

/** A page of rows and what is known of the rest: the total (exact, or a lower bound when `capped`) and whether a later page holds rows. */
export interface CountedPage<R> {
  rows: R[];
  total: number;
  /** `total` is {@link HISTORY_COUNT_CAP}, a lower bound: more rows exist. */
  capped: boolean;
  /** A page after this one holds rows (read by fetching one row more than the page). */
  hasMore: boolean;
}

/**
 * One page of an individual's rows of a history table, newest first, and how many it has: the count
 * and the page are read in parallel. The page reads `limit + 1` rows (the extra one says whether
 * more follow); the count stops at {@link HISTORY_COUNT_CAP} + 1, so neither grows with the
 * individual's history (the page's `OFFSET` grows with the page asked for). `columns` is a fixed
 * SQL column list of the caller.
 */
export async function pageOfIndividualHistory<R extends QueryResultRow>(
  db: Queryable,
  table: IndividualHistoryTable,
  columns: string,
  individualId: string,
  page: PageRequest
): Promise<CountedPage<R>> {
  const [count, rows] = await Promise.all([
    db.query<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE individual_id = $1 LIMIT $2) AS capped`, [individualId, HISTORY_COUNT_CAP + 1]),
    db.query<R>(
      `SELECT ${columns} FROM ${table} WHERE individual_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [individualId, page.limit + 1, offsetOf(page)]
    ),
  ]);
  const counted = Number(count.rows[0].n);
  const capped = counted > HISTORY_COUNT_CAP;
  const hasMore = rows.rows.length > page.limit;
  return { rows: hasMore ? rows.rows.slice(0, page.limit) : rows.rows, total: capped ? HISTORY_COUNT_CAP : counted, capped, hasMore };
}
