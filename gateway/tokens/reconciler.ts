import { every } from '../background/every';
import { walkChangeFeed } from '../db/change-feed';
import { isUnavailableError, type Database } from '../db/database';
import { GatewayError } from '../errors';
import type { Logger } from '../logging/logger';
import type { CallContext } from '../upstreams/call-context';
import { applyToken } from './apply';
import type { TokenChanges, UpstreamToken } from './contract-stub';
import { checkUpstreamToken } from './validate';

/**
 * The token reconciler (docs/upstreams.md 10.7): the transaction reconciler's pattern
 * (gateway/transactions/reconciler.ts) for tokens. Each pass reads the processor's token change
 * feed from where the last one stopped (`token_feed_cursors`, one row per processor URL) and
 * applies each token's state through `applyToken` (a state held already changes nothing; a newer
 * one writes what its lost notification would have, with its event), then reads the tokens marked
 * `processor_check_due` (a partner's operation whose outcome at the processor is unknown) one by
 * one. No database transaction is held across an upstream call.
 */

/**
 * The processing client's token reads the reconciler uses: part A's `ProcessingClient` methods
 * (`tokenChanges`, `getToken`, upstreams.md 10.7), named here so that this module needs only them.
 */
export interface TokenFeedClient {
  tokenChanges(ctx: CallContext, after: string | undefined, limit: number): Promise<TokenChanges>;
  getToken(ctx: CallContext, tokenReference: string): Promise<UpstreamToken>;
}

export interface TokenReconcilerDeps {
  db: Database;
  processing: TokenFeedClient;
  log: Logger;
  /** The processing system's base URL: the key of the feed cursor (instances in front of one processor share it). */
  source: string;
}

/** Tokens asked for per page of the change feed. */
export const TOKEN_FEED_PAGE = 100;
/** Most pages one pass reads (10,000 changes, the feed's whole size): the next pass goes on from there. */
export const TOKEN_FEED_PAGES_PER_PASS = 100;
/** Most tokens marked `processor_check_due` one pass reads. */
export const CHECK_DUE_PER_PASS = 100;

/** What one pass did. */
export interface TokenReconcileResult {
  read: number;
  applied: number;
  skipped: number;
  checked: number;
}

/**
 * One pass of the token reconciler. Instances may run passes at once: they apply the same states,
 * once each (`applyToken`'s version rule under the token's row lock). A state that cannot be
 * applied (invalid, refused by the database) is logged and passed over: it must not stop the feed
 * for every later one.
 */
export async function reconcileTokens(deps: TokenReconcilerDeps): Promise<TokenReconcileResult> {
  const { db, processing, source, log } = deps;
  const ctx = (): CallContext => ({ requestId: `token-reconciler-${Date.now().toString(36)}` });
  const result: TokenReconcileResult = { read: 0, applied: 0, skipped: 0, checked: 0 };
  result.read = await walkChangeFeed(db, {
    cursors: 'token_feed_cursors',
    source,
    pageSize: TOKEN_FEED_PAGE,
    maxPages: TOKEN_FEED_PAGES_PER_PASS,
    name: 'token change feed',
    page: (cursor, limit) => processing.tokenChanges(ctx(), cursor, limit),
    apply: async (item) => {
      const done = await applyRead(deps, item);
      if (done === 'applied') result.applied += 1;
      else if (done === 'skipped') result.skipped += 1;
    },
  });
  // The tokens a partner's operation left unknown (a timeout): read each, apply what the processor holds, clear the mark.
  const due = await db.query<{ id: string; processor_ref: string }>(
    'SELECT id, processor_ref FROM tokens WHERE processor_check_due ORDER BY updated_at LIMIT $1',
    [CHECK_DUE_PER_PASS]
  );
  for (const { id, processor_ref: reference } of due.rows) {
    let read: UpstreamToken | undefined;
    try {
      read = await processing.getToken(ctx(), reference);
    } catch (err) {
      if (!(err instanceof GatewayError && err.code === 'not_found')) throw err;
      // The processor does not know it (any more): nothing to converge to; the mark is cleared.
      log.warn({ tokenId: id }, 'token reconciler: the processor does not know a token marked for a check');
    }
    if (read !== undefined && (await applyRead(deps, read)) === 'applied') result.applied += 1;
    await db.query('UPDATE tokens SET processor_check_due = false WHERE id = $1', [id]);
    result.checked += 1;
  }
  if (result.applied > 0 || result.skipped > 0) log.info({ ...result }, 'token reconciler applied states the notifications had not brought');
  return result;
}

/** Applies one token state read from the processor: `applied` when it changed what partners see, `skipped` when it could not be applied. */
async function applyRead(deps: TokenReconcilerDeps, item: unknown): Promise<'applied' | 'unchanged' | 'skipped'> {
  try {
    const token = checkUpstreamToken(item, 'change');
    const { outcome } = await deps.db.transaction((tx) => applyToken(tx, token, { via: 'reconciler' }));
    return outcome === 'applied' ? 'applied' : 'unchanged';
  } catch (err) {
    if (isUnavailableError(err) || (err instanceof GatewayError && err.code === 'database_unavailable')) throw err;
    const reference = (item as { tokenReference?: unknown } | null)?.tokenReference;
    deps.log.warn({ err, tokenReference: typeof reference === 'string' ? reference.slice(0, 100) : undefined }, 'token reconciler passed over a state it could not apply');
    return 'skipped';
  }
}

/** Runs {@link reconcileTokens} every `intervalMs` (`TOKEN_RECONCILE_INTERVAL_MS`). */
export function startTokenReconciler(deps: TokenReconcilerDeps, intervalMs: number): () => void {
  return every(intervalMs, () => reconcileTokens(deps), deps.log, 'token reconciliation pass failed');
}
