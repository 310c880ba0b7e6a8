/**
 * The command line the seed scripts share (`seed:cards`, `seed:transactions`):
 *
 *   npm run -s seed:<what> -- --partner ID --count N [--database-url URL] [--batch N]
 *
 * Reads and checks the arguments, opens the database (DATABASE_URL unless --database-url), migrates
 * it, runs the seed with a progress line on stderr, and prints `{partnerId, …result, seconds}` on
 * stdout. A usage error exits 2 with the usage line, any other failure 1.
 */
import { parseArgs } from 'node:util';
import { Database } from '../gateway/db/database';
import { migrate } from '../gateway/db/migrate';
import { createLogger } from '../gateway/logging/logger';

/** What a seed is asked for. */
export interface SeedRequest {
  partnerId: string;
  count: number;
  batchSize: number;
  progress: (inserted: number) => void;
}

class UsageError extends Error {}

function positiveInteger(value: string | undefined, what: string): number {
  const n = Number(value);
  if (!value || !Number.isInteger(n) || n < 1) throw new UsageError(`${what} must be a positive integer`);
  return n;
}

async function run(argv: string[], noun: string, seed: (db: Database, request: SeedRequest) => Promise<object>): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      partner: { type: 'string' },
      count: { type: 'string' },
      batch: { type: 'string' },
      'database-url': { type: 'string' },
    },
  });
  const partnerId = values.partner ?? '';
  if (!/^[0-9a-f]{24}$/.test(partnerId)) throw new UsageError('--partner must be a partner id (24 lower-case hex characters)');
  const count = positiveInteger(values.count, '--count');
  const batchSize = values.batch === undefined ? 100_000 : positiveInteger(values.batch, '--batch');
  const url = values['database-url'] || process.env.DATABASE_URL;
  if (!url) throw new UsageError('no database: pass --database-url or set DATABASE_URL');

  const log = createLogger({ level: 'warn' });
  // No query timeout: one batch, the onboardings of a million cards or the final VACUUM can take
  // longer than the gateway's 15 s on a busy machine.
  const db = new Database(url, { max: 1, log, queryTimeoutMs: 0 });
  try {
    await migrate(db, log);
    const started = Date.now();
    const result = await seed(db, { partnerId, count, batchSize, progress: (n) => process.stderr.write(`\r${n} / ${count} ${noun}`) });
    process.stderr.write('\n');
    process.stdout.write(`${JSON.stringify({ partnerId, ...result, seconds: (Date.now() - started) / 1000 })}\n`);
  } finally {
    await db.close();
  }
}

/** Runs a seed script's command line (`script` names it in the usage line, `noun` in the progress line). */
export function seedCli(script: string, noun: string, seed: (db: Database, request: SeedRequest) => Promise<object>): void {
  run(process.argv.slice(2), noun, seed).catch((err: unknown) => {
    const usage = `usage: npm run -s ${script} -- --partner ID --count N [--database-url URL] [--batch N]`;
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${err instanceof UsageError ? `${usage}\n` : ''}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}
