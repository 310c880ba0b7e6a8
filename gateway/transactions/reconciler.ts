import { every } from '../background/every';
import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { ProcessingClient } from '../upstreams/processing-client';
import { isUnavailableError } from '../db/database';
import { walkChangeFeed } from '../db/change-feed';
import { applyTransaction } from './projection';
import { checkTransaction } from './validate';

/** What the transaction reconciler needs. */
export interface TransactionReconcilerDeps {
  db: Database;
  processing: ProcessingClient;
  log: Logger;
  /** The processing system's base URL: the key of the feed cursor (instances in front of one processor share it). */
  source: string;
}

/** Transactions asked for per page of the change feed. */
export const FEED_PAGE = 100;
/** Most pages one pass reads (10,000 changes): the next pass goes on from there. */
export const FEED_PAGES_PER_PASS = 100;

/**
 * One pass of the transaction reconciler (docs/transactions.md, "Lost notifications"): reads the
 * processing system's change feed (`GET /transactions/changes`) from where the last pass stopped,
 * applies each transaction's state through the projection (a state the gateway already has changes
 * nothing; a newer one writes its row, audit entry and events, exactly as its notification would
 * have), and stores the new position. No database transaction is held across the upstream call: each
 * state is applied in its own, and the position is stored after, so a pass cut short is read again
 * (harmlessly) by the next. Instances may run passes at once: they apply the same states, once each.
 * Returns how many states it applied (that the projection lacked).
 */
export async function reconcileTransactions(deps: TransactionReconcilerDeps): Promise<{ read: number; applied: number; skipped: number }> {
  const { db, processing, source } = deps;
  let applied = 0;
  let skipped = 0;
  const read = await walkChangeFeed(db, {
    cursors: 'transaction_feed_cursors',
    source,
    pageSize: FEED_PAGE,
    maxPages: FEED_PAGES_PER_PASS,
    name: 'change feed',
    page: (cursor, limit) => processing.transactionChanges({ requestId: `transaction-reconciler-${Date.now().toString(36)}` }, cursor, limit),
    apply: async (item) => {
      // One state that cannot be applied (invalid, or refused by the database) is logged and passed
      // over: it must not stop the feed for every later one. The processor's next change of that
      // transaction, or its notification, brings it again.
      try {
        const transaction = checkTransaction(item, 'change');
        const outcome = await db.transaction((tx) => applyTransaction(tx, transaction, { via: 'reconciler' }));
        if (outcome === 'applied') applied += 1;
      } catch (err) {
        if (isUnavailableError(err)) throw err;
        skipped += 1;
        deps.log.warn({ err, transactionId: typeof (item as { id?: unknown })?.id === 'string' ? (item as { id: string }).id.slice(0, 64) : undefined }, 'transaction reconciler passed over a state it could not apply');
      }
    },
  });
  if (applied > 0 || skipped > 0) deps.log.info({ read, applied, skipped }, 'transaction reconciler applied states the notifications had not brought');
  return { read, applied, skipped };
}

/** Runs {@link reconcileTransactions} every `intervalMs` (`TRANSACTION_RECONCILE_INTERVAL_MS`). */
export function startTransactionReconciler(deps: TransactionReconcilerDeps, intervalMs: number): () => void {
  return every(intervalMs, () => reconcileTransactions(deps), deps.log, 'transaction reconciliation pass failed');
}
