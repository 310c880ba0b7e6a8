import { setTimeout as pause } from 'node:timers/promises';
import type { Queryable } from '../db/database';
import { every } from '../background/every';
import type { Logger } from '../logging/logger';

/**
 * The search links of the card list (migration 022, docs/card-search.md "Search terms"): the
 * backfill of the cards written before the migration, and the pruning of the values no card holds
 * any more that a card write left (a card write deletes the values it stops holding itself,
 * migration 026, unless another transaction holds one at that moment). Both run as a background
 * job of every instance (startSearchLinks) and as an operator command (`npm run
 * cards:search-links`, scripts/card-search-links.ts).
 */

/**
 * Cards one backfill batch links on PostgreSQL: one statement (card_search_backfill_batch) that
 * holds these cards FOR SHARE while it runs, so a status change of one of them waits for it, about
 * 0.1-0.3 s. It takes them NOWAIT: a card a write holds fails the batch at once (SQLSTATE 55P03,
 * nothing written), and the batch never waits for one write after another while holding the
 * others; a value a concurrent write inserted uncommitted, the one wait left, is given up after
 * 20 ms (lock_timeout). Then backfillSearchLinks tries the batch again after a pause.
 */
export const BACKFILL_BATCH = 2_000;

/**
 * Cards one backfill batch links on the embedded database (PGlite): one connection for everything,
 * so every other query waits for the whole batch; a tenth of PostgreSQL's keeps that wait short.
 */
export const EMBEDDED_BACKFILL_BATCH = 200;

/**
 * Batches one pass of the background job runs at most (then the next pass, `intervalMs` later,
 * goes on from the cursor): a pass stays within about 20 s at a million cards.
 */
export const BATCHES_PER_PASS = 100;

/** The job's pause between two batches, so that card writes waiting for a batch are never starved. */
export const BATCH_PAUSE_MS = 50;

/** Values one pruning statement looks at (in key order): a short statement, a bounded lock. */
export const PRUNE_BATCH = 5_000;

/**
 * Times a batch that found a card or value held by a write (NOWAIT or lock_timeout, SQLSTATE 55P03)
 * is tried again before the pass fails, after a pause that doubles from RETRY_PAUSE_MS (or the
 * pause between batches, if longer): 50, 100, 200 ms, so that a write transaction of up to about a
 * third of a second does not fail the pass.
 */
export const LOCK_RETRIES = 3;

/** The first pause before a batch that found a lock taken is tried again (then doubled each time). */
export const RETRY_PAUSE_MS = 50;

const LOCK_NOT_AVAILABLE = '55P03';
const codeOf = (err: unknown) => (err as { code?: string }).code;

/** What a backfill call did. */
export interface BackfillOutcome {
  /** Cards linked by this call. */
  linked: number;
  /** Whether the backfill is marked done (by this call or before). */
  done: boolean;
  /** True when it stopped because another instance is running a batch (it goes on there). */
  busy: boolean;
  /**
   * Cards the last batch's safety net found without links although the batches had gone past them
   * (card_search_backfill_missing): when above 0, the backfill started over from the first card
   * instead of being marked done. 0 normally.
   */
  missing: number;
}

/**
 * Links the cards written before migration 022, batch by batch in card_key order, until the
 * backfill is done, another instance is running it (`busy`: the state row is locked; one instance
 * at a time), `maxBatches` ran or `stopped()` says so (checked between batches). Idempotent and
 * resumable: the cursor is kept in `card_search_backfill`, each batch is its own transaction, and
 * linking a card twice writes the same links. A batch that found a card or value held by a write
 * (SQLSTATE 55P03, nothing written) is tried again after a pause, at most LOCK_RETRIES times. The
 * last batch marks it done; searchCards then reads the links. Should its safety net find cards
 * without links, the backfill starts over (counted in `missing`) and goes on with the first cards.
 */
export async function backfillSearchLinks(
  db: Queryable,
  options: { batch?: number; maxBatches?: number; pauseMs?: number; stopped?: () => boolean; progress?: (linkedSoFar: number) => void } = {}
): Promise<BackfillOutcome> {
  const batch = options.batch ?? BACKFILL_BATCH;
  const pauseMs = options.pauseMs ?? 0;
  let linked = 0;
  let missing = 0;
  for (let n = 0; options.maxBatches === undefined || n < options.maxBatches; n++) {
    if (n > 0 && options.stopped?.()) break;
    if (n > 0 && pauseMs > 0) await pause(pauseMs);
    let step: BackfillOutcome;
    for (let attempt = 0; ; attempt++) {
      try {
        step = (await db.query<BackfillOutcome>('SELECT linked, done, busy, missing FROM card_search_backfill_batch($1)', [batch])).rows[0];
        break;
      } catch (err) {
        if (codeOf(err) !== LOCK_NOT_AVAILABLE || attempt >= LOCK_RETRIES) throw err;
        await pause(Math.max(pauseMs, RETRY_PAUSE_MS) * 2 ** attempt);
      }
    }
    linked += step.linked;
    missing += step.missing;
    if (step.linked > 0) options.progress?.(linked);
    if (step.done || step.busy) return { linked, done: step.done, busy: step.busy, missing };
  }
  return { linked, done: false, busy: false, missing };
}

/** What a pruning pass did. */
export interface PruneOutcome {
  /** Values deleted: no card of their partner held them any more. */
  deleted: number;
  /** Batches that lost a race with a new link of one of their values, or gave up waiting for a lock, and deleted nothing (retried next pass). */
  raced: number;
}

/**
 * Deletes every value (`card_search_terms`) that no card of its partner holds any more: a card
 * deleted, or its nickname, embossed name or mask changed. The links go with the card's own write
 * (the triggers), and so does the value when no other transaction holds it at the write's commit
 * (migration 026, card_search_release_terms); a value held then, or left from before migration 026,
 * goes here, at the next pass. One pass reads every value once, in
 * batches (card_search_prune_batch), each its own statement, one instance at a time (a pass that
 * finds another instance pruning stops). A value a card write holds (FOR KEY SHARE,
 * card_search_keep_terms) is skipped, never waited for: left for the next pass. Should a batch
 * still lose a race with a new link (the foreign key fails it) or give up waiting for a lock
 * (lock_timeout), it deletes nothing, is counted in `raced`, and the pass goes on with the next
 * batch. `stopped()` is checked between batches.
 */
export async function pruneSearchTerms(db: Queryable, options: { batch?: number; stopped?: () => boolean } = {}): Promise<PruneOutcome> {
  const batch = options.batch ?? PRUNE_BATCH;
  let cursor: [string, number, string] = ['', 0, ''];
  const outcome: PruneOutcome = { deleted: 0, raced: 0 };
  for (;;) {
    if (options.stopped?.()) return outcome;
    let last: { partner_id: string; field: number; term: string; deleted: number } | undefined;
    try {
      last = (await db.query<{ partner_id: string; field: number; term: string; deleted: number }>(
        'SELECT partner_id, field, term, deleted FROM card_search_prune_batch($1::char(24), $2::smallint, $3::text, $4)',
        [...cursor, batch]
      )).rows[0];
    } catch (err) {
      // foreign_key_violation: a link came back; lock_not_available: a lock held past lock_timeout.
      if (codeOf(err) !== '23503' && codeOf(err) !== LOCK_NOT_AVAILABLE) throw err;
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

/** Whether `db` is the embedded database (PGlite reports an Emscripten build in its version). */
async function isEmbedded(db: Queryable): Promise<boolean> {
  const version = (await db.query<{ v: string }>('SELECT version() AS v')).rows[0].v;
  return /emscripten|wasm/i.test(version);
}

/**
 * Starts the search links' job on this instance: at once and every `intervalMs`, a pass of the
 * backfill (a no-op once done; at most `batchesPerPass` batches with `pauseMs` between them; `busy`
 * when another instance runs it, which this one then leaves alone until its next pass), then, once
 * the backfill is done, the pruning every `pruneEveryMs` (counted from the last pruning that ran
 * to its end: a failed one is tried again at the next pass). Never two passes at a time. Returns
 * the function that stops it: no pass starts any more, and the one running stops after its current
 * batch; its promise resolves once that pass has ended.
 */
export function startSearchLinks(
  db: Queryable,
  log: Logger,
  options: { intervalMs: number; pruneEveryMs: number; batch?: number; batchesPerPass?: number; pauseMs?: number }
): () => Promise<void> {
  let backfilled = false;
  let prunedAt = 0;
  let stopping = false;
  let batch = options.batch;
  const stopped = () => stopping;
  const pass = async () => {
    if (!backfilled) {
      batch ??= (await isEmbedded(db)) ? EMBEDDED_BACKFILL_BATCH : BACKFILL_BATCH;
      const started = Date.now();
      const outcome = await backfillSearchLinks(db, { batch, maxBatches: options.batchesPerPass ?? BATCHES_PER_PASS, pauseMs: options.pauseMs ?? BATCH_PAUSE_MS, stopped });
      if (outcome.missing > 0) {
        // Counts only: no key or value of a card in this line.
        log.warn({ missing: outcome.missing }, 'card search links: cards the backfill went past had no links; the backfill starts over');
      }
      if (outcome.linked > 0) {
        log.info(
          { linked: outcome.linked, done: outcome.done, ms: Date.now() - started },
          outcome.done ? 'card search links backfilled' : outcome.busy ? 'card search links backfill left to another instance' : 'card search links backfill goes on at the next pass'
        );
      }
      backfilled = outcome.done;
      if (!backfilled) return;
    }
    if (stopping || Date.now() - prunedAt < options.pruneEveryMs) return;
    const pruned = await pruneSearchTerms(db, { stopped });
    if (!stopping) prunedAt = Date.now();
    if (pruned.deleted > 0 || pruned.raced > 0) log.info({ ...pruned }, 'card search values no card holds deleted');
  };
  const stop = every(options.intervalMs, pass, log, 'card search links pass failed', { immediately: true });
  return async () => {
    stopping = true;
    await stop();
  };
}
