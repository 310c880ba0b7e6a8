import type { PageRequest } from '../db/paging';

/**
 * The one Pagination object of every paginated response except the individual list (which the
 * spec shapes as `{count, data}`): docs/pagination.md.
 */
export interface Pagination {
  /** The page returned, from 1. */
  page: number;
  /** The page size asked for (1..100). */
  limit: number;
  /** Items across all pages: exact, or a lower bound where the route caps its count (the answer then carries `X-Total-Capped: true`). */
  total: number;
  /** Pages across `total` items (0 when there is none). */
  totalPages: number;
  /** A page after this one holds items. */
  hasMore: boolean;
}

/** The header of an answer whose `total` is a lower bound (docs/pagination.md). */
export const TOTAL_CAPPED: Readonly<Record<string, string>> = { 'X-Total-Capped': 'true' };

/**
 * Builds the Pagination object. `hasMore` defaults to what an exact `total` says; a route whose
 * total may be a lower bound passes what it read (one row past the page).
 */
export function pagination(request: PageRequest, total: number, hasMore = request.page * request.limit < total): Pagination {
  return { page: request.page, limit: request.limit, total, totalPages: Math.ceil(total / request.limit), hasMore };
}
