/**
 * The set-up the 1,000,000-row benches share (`npm run bench:cards`, bench/cards-search.ts;
 * `npm run bench:transactions`, bench/transactions.ts; `npm run bench:lists`, bench/list-routes.ts,
 * which seeds its two partners itself): a database of their own or a reused one, a partner seeded by
 * a seed script, the sandbox and a one-worker gateway on that database, and the partner's tokens.
 */
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Client, type QueryResultRow } from 'pg';
import { signPartnerToken } from '../scripts/token';
import { benchGatewayEnv, startNode, type BenchProcess } from './processes';

const DIST = path.resolve(__dirname, '..');

/** The options of a seeded bench that this module reads. */
export interface SeededBenchOptions {
  smoke: boolean;
  count: number;
  /** An existing database to measure (seeded only when its partner has no rows, never dropped). */
  database?: string;
  partner?: string;
  /** Keep the database this bench created. */
  keep: boolean;
  serverUrl: string;
}

/** The one row a query must answer. */
export async function one<T extends QueryResultRow>(pg: Client, text: string, params: unknown[] = []): Promise<T> {
  const rows = await pg.query<T>(text, params);
  if (!rows.rows[0]) throw new Error(`no row: ${text}`);
  return rows.rows[0];
}

/** The bench's database: `pg` connected to it; `close` drops it when this bench created it (unless `--keep`). */
export interface BenchDatabase {
  dbUrl: string;
  pg: Client;
  /** True when this bench created the database (not `--database`). */
  created: boolean;
  close(): Promise<void>;
}

/** A database named `<prefix>_<time>` on `serverUrl`, or the one `--database` names. */
export async function openBenchDatabase(o: Pick<SeededBenchOptions, 'database' | 'keep' | 'serverUrl'>, prefix: string, log: (message: string) => void): Promise<BenchDatabase> {
  const created = o.database ? undefined : `${prefix}_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: o.serverUrl });
  await admin.connect();
  let dbUrl = o.database!;
  if (created) {
    await admin.query(`CREATE DATABASE ${created}`);
    const url = new URL(o.serverUrl);
    url.pathname = `/${created}`;
    dbUrl = url.toString();
  }
  const pg = new Client({ connectionString: dbUrl });
  return {
    dbUrl,
    pg,
    created: created !== undefined,
    async close() {
      await pg.end().catch(() => undefined);
      if (created && !o.keep) await admin.query(`DROP DATABASE IF EXISTS ${created} WITH (FORCE)`).catch(() => undefined);
      else if (created) log(`kept the database: ${dbUrl}`);
      await admin.end();
    },
  };
}

/** What a bench measures: a partner's rows of `table`, seeded by `script` (scripts/) when it has none. */
export interface SeedSpec {
  table: 'cards' | 'card_transactions';
  script: 'seed-cards.js' | 'seed-transactions.js';
  /** What the rows are, in the log. */
  noun: string;
}

/**
 * The partner to measure: `--partner`, else in a reused database the one with the most rows, else a
 * new one, which the seed script creates. Its rows are seeded when it has none; `rows` is how many
 * it has, `seed` what the script reported, `issuer` its tokens' issuer.
 */
export async function seededPartner(
  db: BenchDatabase,
  o: SeededBenchOptions,
  spec: SeedSpec,
  log: (message: string) => void
): Promise<{ partnerId: string; rows: number; seed?: Record<string, unknown>; issuer: string }> {
  const { pg, dbUrl } = db;
  let partnerId = o.partner;
  if (!partnerId && !db.created) {
    const biggest = await pg
      .query<{ partner_id: string }>(`SELECT partner_id FROM ${spec.table} GROUP BY partner_id ORDER BY count(*) DESC LIMIT 1`)
      .catch(() => ({ rows: [] as { partner_id: string }[] }));
    partnerId = biggest.rows[0]?.partner_id.trim();
  }
  partnerId ??= crypto.randomBytes(12).toString('hex');
  const existing = await pg
    .query<{ n: string }>(`SELECT count(*) AS n FROM ${spec.table} WHERE partner_id = $1`, [partnerId])
    .then((r) => Number(r.rows[0]!.n))
    .catch(() => 0);
  let seed: Record<string, unknown> | undefined;
  if (existing === 0) {
    log(`seeding ${o.count.toLocaleString('en')} ${spec.noun} for partner ${partnerId}...`);
    const out = execFileSync(process.execPath, [path.join(DIST, 'scripts', spec.script), '--partner', partnerId, '--count', String(o.count), '--database-url', dbUrl], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', o.smoke ? 'ignore' : 'inherit'],
    });
    seed = JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
    log(`seeded in ${String(seed.seconds)} s`);
  } else {
    log(`reusing ${existing.toLocaleString('en')} ${spec.noun} of partner ${partnerId}`);
  }
  const partner = await one<{ issuer: string }>(pg, 'SELECT issuer FROM partners WHERE id = $1', [partnerId]);
  return { partnerId, rows: existing || o.count, ...(seed ? { seed } : {}), issuer: partner.issuer };
}

/**
 * The sandbox and a one-worker gateway on `dbUrl`, as npm start and the container run it
 * (docs/performance.md, "Memory"), its rate limits out of the way (the benches measure the route, not the
 * limiter); both pushed to `processes` for the caller to stop. `env` adds to or replaces the
 * gateway's variables (a profiler in NODE_OPTIONS); `gatewayScript` is another build's
 * `dist/gateway/main.js` (bench:lists `--gateway`), this build's by default.
 */
export async function startBenchGateway(
  dbUrl: string,
  dataDir: string,
  processes: BenchProcess[],
  env: Record<string, string> = {},
  gatewayScript: string = path.join(DIST, 'gateway', 'main.js')
): Promise<{ gateway: BenchProcess; base: string; adminBase: string; adminToken: string }> {
  const sandbox = await startNode(path.join(DIST, 'sandbox', 'main.js'), {}, (l) => typeof l.issuer === 'string');
  processes.push(sandbox);
  const adminToken = crypto.randomBytes(24).toString('base64url');
  const gateway = await startNode(
    gatewayScript,
    { ...benchGatewayEnv({ databaseUrl: dbUrl, sandbox, adminToken, dataDir }), ...env },
    (l) => l.msg === 'gateway ready'
  );
  processes.push(gateway);
  return { gateway, base: `http://127.0.0.1:${String(gateway.ready.port)}`, adminBase: `http://127.0.0.1:${String(gateway.ready.adminPort)}`, adminToken };
}

/**
 * The seeded partner has no key: one is added through the admin API, as an operator would. Its
 * token, signed with it, is reused until it is 4 minutes old (the gateway accepts lifetimes up to 5).
 */
export async function partnerTokens(adminBase: string, adminToken: string, partnerId: string, issuer: string): Promise<() => Promise<string>> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const added = await fetch(`${adminBase}/admin/partners/${partnerId}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ publicKey: publicKey.export({ type: 'spki', format: 'pem' }) }),
  });
  if (added.status !== 201) throw new Error(`adding a key to partner ${partnerId}: ${added.status} ${await added.text()}`);
  const { kid } = (await added.json()) as { kid: string };
  let token = { value: '', signedAt: 0 };
  return async () => {
    if (Date.now() - token.signedAt > 240_000) {
      token = { value: await signPartnerToken({ partnerId, issuer, privateKey, kid, ttlSeconds: 300 }), signedAt: Date.now() };
    }
    return token.value;
  };
}
