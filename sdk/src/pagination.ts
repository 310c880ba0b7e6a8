/**
 * Lists that span pages, walked with `for await`. The gateway pages two ways (docs/pagination.md):
 * by page number (`page`, `limit`; the answer's `pagination.hasMore`, or `count` for the
 * individual list) and by cursor (the answer's `nextCursor`, sent back as `cursor` or `after`).
 */

import type { RequestOptions } from './client';

/** How a list operation pages (from the generated operation table). */
export type PagingKind = 'page' | 'page-count' | 'cursor' | 'after';

type PageAnswer<T> = { data: T[]; pagination?: { page: number; totalPages: number; hasMore?: boolean }; count?: number; nextCursor?: string | null };

/** The default page size of the gateway's lists. */
const DEFAULT_LIMIT = 20;

/**
 * A list: `for await (const item of list)` walks every item of every page; `pages()` walks the
 * answers; `firstPage()` gets one. Nothing is fetched until one of them is used, and each use
 * starts again from the first page asked for. The request options given (signal, retry) go to the
 * call of every page; an aborted signal ends the walk with its abort error, before the next page.
 */
export class Paginated<T, A extends PageAnswer<T> = PageAnswer<T>> implements AsyncIterable<T> {
  constructor(
    private readonly kind: PagingKind,
    private readonly query: Record<string, unknown>,
    private readonly fetchPage: (query: Record<string, unknown>, options?: RequestOptions) => Promise<A>,
    private readonly options?: RequestOptions
  ) {}

  /** The first page's answer. */
  firstPage(): Promise<A> {
    return this.fetchPage({ ...this.query }, this.options);
  }

  /** Every page's answer, up to and including the last. */
  async *pages(): AsyncGenerator<A, void, undefined> {
    const query = { ...this.query };
    const seenCursors = new Set<string>();
    for (;;) {
      // Aborted while the caller handled the previous page: no further request.
      this.options?.signal?.throwIfAborted();
      const answer = await this.fetchPage({ ...query }, this.options);
      yield answer;
      if (answer.data.length === 0) return;
      if (this.kind === 'page' || this.kind === 'page-count') {
        const page = Number(query.page ?? 1);
        if (this.kind === 'page') {
          // `hasMore` says it exactly, also where `total` is a capped lower bound; a gateway before it: `totalPages`.
          if (!answer.pagination) return;
          if (answer.pagination.hasMore === undefined ? page >= answer.pagination.totalPages : !answer.pagination.hasMore) return;
        } else {
          const limit = Number(query.limit ?? DEFAULT_LIMIT);
          if (answer.data.length < limit || answer.count === undefined || page * limit >= answer.count) return;
        }
        query.page = page + 1;
      } else {
        const next = answer.nextCursor;
        // A cursor seen already would loop for ever: a gateway bug, stop rather than spin.
        if (!next || seenCursors.has(next)) return;
        seenCursors.add(next);
        query[this.kind] = next;
      }
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const answer of this.pages()) yield* answer.data;
  }

  /** Every item, in an array (at most `max`, default 10,000). */
  async toArray(max = 10_000): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) {
      if (items.length >= max) break;
      items.push(item);
    }
    return items;
  }
}
