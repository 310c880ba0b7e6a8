/**
 * The card list's search links (migration 022), run to completion by an operator instead of
 * waiting for the gateway's background job (docs/operator-guide.md):
 *
 *   npm run -s cards:search-links [-- --database-url URL] [--batch N]
 *
 * Links every card written before the migration (waiting while a gateway instance runs a batch),
 * then deletes the values no card holds any more, and prints `{linked, done, pruned, seconds}`.
 * Safe while gateways run: the same batches as their job, one instance at a time. The database is
 * DATABASE_URL unless --database-url is given; it must be migrated (the gateway's start does it).
 */
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { Database } from '../gateway/db/database';
import { createLogger } from '../gateway/logging/logger';
import { backfillSearchLinks, BACKFILL_BATCH, pruneSearchTerms } from '../gateway/cards/search-links';

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { 'database-url': { type: 'string' }, batch: { type: 'string' } } });
  const url = values['database-url'] || process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('usage: npm run -s cards:search-links -- [--database-url URL] [--batch N] (or set DATABASE_URL)\n');
    process.exit(2);
  }
  const batch = values.batch === undefined ? BACKFILL_BATCH : Number(values.batch);
  if (!Number.isInteger(batch) || batch < 1) {
    process.stderr.write('--batch must be a positive integer\n');
    process.exit(2);
  }
  const db = new Database(url, { max: 1, log: createLogger({ level: 'warn' }), queryTimeoutMs: 0 });
  try {
    const started = Date.now();
    let linked = 0;
    for (;;) {
      const step = await backfillSearchLinks(db, { batch, progress: (n) => process.stderr.write(`\r${linked + n} cards linked`) });
      linked += step.linked;
      if (step.done) break;
      // Another instance holds the backfill's state row for one batch: wait for it, then go on.
      await delay(500);
    }
    process.stderr.write('\n');
    const pruned = await pruneSearchTerms(db);
    process.stdout.write(`${JSON.stringify({ linked, done: true, pruned: pruned.deleted, seconds: (Date.now() - started) / 1000 })}\n`);
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
