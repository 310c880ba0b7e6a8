import type { Queryable } from './database';

/** Where a reconciler keeps its position in one processor's change feed: one row per processor URL. */
export type FeedCursorTable = 'transaction_feed_cursors' | 'token_feed_cursors';

/** One walk of a change feed (docs/upstreams.md 6.8 for transactions, 10.7 for tokens). */
export interface ChangeFeedWalk {
  cursors: FeedCursorTable;
  /** The processing system's base URL: instances in front of one processor share its position. */
  source: string;
  /** Changes asked for per page. */
  pageSize: number;
  /** Most pages one walk reads: the next walk goes on from there. */
  maxPages: number;
  /** The feed's name in the error of a page without `data` or `nextCursor`. */
  name: string;
  /** One page after `cursor` (none: from the oldest change kept). */
  page(cursor: string | undefined, limit: number): Promise<unknown>;
  /** Applies one change; throwing stops the walk where it is (the position stays before its page). */
  apply(item: unknown): Promise<void>;
}

/**
 * Reads a processor's change feed from where the last walk stopped, page by page, applying each
 * change, and stores the new position after each page: a walk cut short is read again from its last
 * stored page by the next one (applying a change twice changes nothing). No database transaction is
 * held across the upstream call. Stops at a short page, a page that did not move the cursor, or
 * `maxPages`. Returns how many changes it read.
 */
export async function walkChangeFeed(db: Queryable, walk: ChangeFeedWalk): Promise<number> {
  const stored = await db.query<{ cursor: string }>(`SELECT cursor FROM ${walk.cursors} WHERE source = $1`, [walk.source]);
  let cursor: string | undefined = stored.rows[0]?.cursor;
  let read = 0;
  for (let pageNo = 0; pageNo < walk.maxPages; pageNo++) {
    const page = (await walk.page(cursor, walk.pageSize)) as { data?: unknown; nextCursor?: unknown } | null | undefined;
    if (!page || !Array.isArray(page.data) || typeof page.nextCursor !== 'string' || page.nextCursor.length === 0 || page.nextCursor.length > 500) {
      throw new Error(`the ${walk.name} answered without data or nextCursor`);
    }
    for (const item of page.data) {
      read += 1;
      await walk.apply(item);
    }
    const moved = page.nextCursor !== cursor;
    cursor = page.nextCursor;
    await db.query(
      `INSERT INTO ${walk.cursors} (source, cursor) VALUES ($1, $2)
       ON CONFLICT (source) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = now()`,
      [walk.source, cursor]
    );
    if (page.data.length < walk.pageSize || !moved) break;
  }
  return read;
}
