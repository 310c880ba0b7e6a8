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
  /** Items across all pages. */
  total: number;
  /** Pages across all items (0 when there is none). */
  totalPages: number;
}

/** Builds the Pagination object. */
export function pagination(request: PageRequest, total: number): Pagination {
  return { page: request.page, limit: request.limit, total, totalPages: Math.ceil(total / request.limit) };
}
