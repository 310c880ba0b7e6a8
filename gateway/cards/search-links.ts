import type { Queryable } from '../db/database';
import type { Logger } from '../logging/logger';
import { every } from '../background/every';

/**
 * The search links of the card list (migration 022, docs/card-search.md "Search terms"): the
 * backfill of the cards written before the migration, and the pruning of the values no card holds
 * any more. Both run as a background job of every instance (startSearchLinks) and as an operator
 * command (`npm run cards:search-links`, scripts/card-search-links.ts).
 */

/**
 * Cards one backfill batch links: one statement (card_search_backfill_batch) that holds these
 * cards FOR SHARE while it runs, so a status change of one of them waits for it, about 0.1-0.3 s.
 */
export const BACKFILL_BATCH = 2_000;

/** Values one pruning statement looks at (in key order): a short statement, a bounded lock. */
export const PRUNE_BATCH = 5_000;

/** What a backfill call did. */
export interface BackfillOutcome {
  /** Cards linked by this call. */
  linked: number;
  /** Whether the backfill is marked done (by this call or before). */
  done: boolean;
  /** True when it stopped because another instance is running a batch (it goes on there). */
  busy: boolean;
}

/**
 * Links the cards written before migration 022, batch by batch in card_key order, until the
 * backfill is done, another instance is running it (`busy`: the state row is locked; one instance
 * at a time) or `maxBatches` ran. Idempotent and resumable: the cursor is kept in
 * `card_search_backfill`, each batch is its own transaction, and linking a card twice writes the
 * same links. The last batch marks it done; searchCards then reads the links.
 */
export async function backfillSearchLinks(
  db: Queryable,
  options: { batch?: number; maxBatches?: number; progress?: (linkedSoFar: number) => void } = {}
): Promise<BackfillOutcome> {
  const batch = options.batch ?? BACKFILL_BATCH;
  let linked = 0;
  for (let n = 0; options.maxBatches === undefined || n < options.maxBatches; n++) {
    const step = (await db.query<BackfillOutcome>('SELECT linked, done, busy FROM card_search_backfill_batch($1)', [batch])).rows[0];
    linked += step.linked;
    if (step.linked > 0) options.progress?.(linked);
    if (step.done || step.busy) return { linked, done: step.done, busy: step.busy };
  }
  return { linked, done: false, busy: false };
}

/** What a pruning pass did. */
export interface PruneOutcome {
  /** Values deleted: no card of their partner held them any more. */
  deleted: number;
  /** Batches that lost a race with a new link of one of their values and deleted nothing (retried next pass). */
  raced: number;
}

/**
 * One batch of the pruning: the next `$4` values after the cursor `($1, $2, $3)` in key order; those
 * no link references are deleted. Answers the batch's last key (no row: the end, or another
 * instance is pruning: the state row, taken FOR UPDATE SKIP LOCKED as the backfill does, lets one
 * instance at a time) and the count.
 */
const PRUNE_STATEMENT = `
WITH mutex AS (
  SELECT 1 FROM card_search_backfill FOR UPDATE SKIP LOCKED
), batch AS (
  SELECT partner_id, field, term FROM card_search_terms
  WHERE (partner_id, field, term) > ($1::char(24), $2::smallint, $3::text) AND EXISTS (SELECT 1 FROM mutex)
  ORDER BY partner_id, field, term LIMIT $4
), gone AS (
  DELETE FROM card_search_terms t USING batch b
  WHERE t.partner_id = b.partner_id AND t.field = b.field AND t.term = b.term
    AND NOT EXISTS (SELECT 1 FROM card_search_links l WHERE l.partner_id = t.partner_id AND l.term = t.term AND l.field = t.field)
  RETURNING 1
)
SELECT last.partner_id, last.field::int AS field, last.term, (SELECT count(*) FROM gone)::int AS deleted
FROM (SELECT partner_id, field, term FROM batch ORDER BY partner_id DESC, field DESC, term DESC LIMIT 1) AS last`;

/**
 * Deletes every value (`card_search_terms`) that no card of its partner holds any more: a card
 * deleted, or its nickname, embossed name or mask changed. The links go with the card's own write
 * (the triggers); the value goes here, at the next pass. One pass reads every value once, in
 * batches, each its own statement, one instance at a time (a pass that finds another instance
 * pruning stops). A value a concurrent card write links again while its batch
 * deletes it is protected by the foreign key: that batch fails and deletes nothing (the write's
 * trigger holds the value FOR KEY SHARE, card_search_keep_terms), counted in `raced`, and the pass
 * goes on with the next batch.
 */
export async function pruneSearchTerms(db: Queryable, options: { batch?: number } = {}): Promise<PruneOutcome> {
  const batch = options.batch ?? PRUNE_BATCH;
  let cursor: [string, number, string] = ['', 0, ''];
  const outcome: PruneOutcome = { deleted: 0, raced: 0 };
  for (;;) {
    let last: { partner_id: string; field: number; term: string; deleted: number } | undefined;
    try {
      last = (await db.query<{ partner_id: string; field: number; term: string; deleted: number }>(PRUNE_STATEMENT, [...cursor, batch])).rows[0];
    } catch (err) {
      if ((err as { code?: string }).code !== '23503') throw err; // foreign_key_violation: a link came back
      outcome.raced += 1;
      last = (await db.query<{ partner_id: string; field: number; term: string }>(
        `SELECT partner_id, field::int AS field, term FROM (SELECT partner_id, field, term FROM card_search_terms WHERE (partner_id, field, term) > ($1::char(24), $2::smallint, $3::text) ORDER BY partner_id, field, term LIMIT $4) AS b ORDER BY partner_id DESC, field DESC, term DESC LIMIT 1`,
        [...cursor, batch]
      )).rows[0] as typeof last;
      if (last) last.deleted = 0;
    }
    if (!last) return outcome;
    outcome.deleted += last.deleted;
    cursor = [last.partner_id, last.field, last.term];
  }
}

/**
 * Starts the search links' job on this instance: at once and every `intervalMs`, the backfill (a
 * no-op once done; `busy` when another instance runs it, which this one then leaves alone until
 * its next pass), then, once the backfill is done, the pruning every `pruneEveryMs`. Returns the
 * function that stops it.
 */
export function startSearchLinks(db: Queryable, log: Logger, options: { intervalMs: number; pruneEveryMs: number }): () => void {
  let backfilled = false;
  let prunedAt = 0;
  return every(
    options.intervalMs,
    async () => {
      if (!backfilled) {
        const started = Date.now();
        const outcome = await backfillSearchLinks(db);
        if (outcome.linked > 0) {
          log.info({ linked: outcome.linked, done: outcome.done, ms: Date.now() - started }, outcome.done ? 'card search links backfilled' : 'card search links backfill left to another instance');
        }
        backfilled = outcome.done;
        if (!backfilled) return;
      }
      if (Date.now() - prunedAt < options.pruneEveryMs) return;
      prunedAt = Date.now();
      const pruned = await pruneSearchTerms(db);
      if (pruned.deleted > 0 || pruned.raced > 0) log.info({ ...pruned }, 'card search values no card holds deleted');
    },
    log,
    'card search links pass failed',
    { immediately: true }
  );
}
