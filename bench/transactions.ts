/**
 * `npm run bench:transactions [-- --smoke] [--count 1000000] [--requests 1000] [--limit N] [--database URL [--partner ID]] [--keep] [--profile MIX]`
 *
 * The partner-wide transaction search, `GET /api/partner/transactions`, for one partner holding
 * `--count` transactions (1,000,000 by default; docs/performance.md, "Transaction search at
 * 1,000,000 transactions"). Creates `pgw_bench_tx_<time>` (dropped at the end unless `--keep`),
 * seeds it with scripts/seed-transactions (the partner is created there, without a key), starts the
 * sandbox upstreams and the real gateway (`dist/gateway/main.js`, one worker), adds an ES512 key to
 * the seeded partner through the admin API, then for each filter mix sends `--requests` requests
 * one after the other (one client, one keep-alive connection, one token reused while it is valid)
 * after a few unmeasured ones, and reports p50 / p95 / p99 / max in ms, the gateway's CPU per
 * request and that of the PostgreSQL backends serving it. For every mix it also runs the route's
 * own SQL (built by gateway/transactions/projection.ts) under `EXPLAIN (ANALYZE, BUFFERS)` and
 * names the indexes the plan walks. Writes bench/results/transactions-<date>[-smoke].json.
 *
 * The six target mixes (p95 ≤ 50 ms each): no filter, cardKey, individualId, status, a 7-day
 * from/to window, status with that window. The filter values exist in the seed: the card and the
 * individual with the most transactions, status PENDING, a window ending 180 days before the
 * newest transaction. Informative mixes, no target: type REFUND; status PENDING with type REFUND
 * (no transaction is both: the walk of every PENDING row, so a tenth of `--requests`); no filter
 * followed page after page through nextCursor.
 *
 * `--database URL` measures an existing database instead (seeded only when its partner has no
 * transaction, never dropped); `--partner` names the partner, else the one with the most
 * transactions. `--smoke`: 2,000 transactions, 30 requests per mix: proves the harness works.
 * `--profile none` (or another mix) records a V8 CPU profile of the gateway over that mix's measured
 * requests, in bench/results/profiles/ (`node dist/bench/profile-summary.js <file>` sums it up).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from 'pg';
import { listTransactions, type TransactionFilters, type TransactionPosition } from '../gateway/transactions/projection';
import { cpuTimeMs, type BenchProcess } from './processes';
import { one, openBenchDatabase, partnerTokens, seededPartner, startBenchGateway } from './seeded-gateway';
import { percentile, round2 } from './stats';
import { positive } from './cli-options';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
/** The target (docs/performance.md): p95 of each target mix, through HTTP, one sequential client. */
const TARGET_P95_MS = 50;

interface Options {
  smoke: boolean;
  count: number;
  requests: number;
  /** Page size sent as `limit`; undefined: none sent (the route's default). */
  limit?: number;
  /** An existing database to measure (`--database`): never dropped. */
  database?: string;
  partner?: string;
  keep: boolean;
  serverUrl: string;
  /** The mix whose gateway CPU profile is recorded (`--profile`). */
  profile?: string;
}


function options(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      count: { type: 'string' },
      requests: { type: 'string' },
      limit: { type: 'string' },
      database: { type: 'string' },
      partner: { type: 'string' },
      keep: { type: 'boolean', default: false },
      profile: { type: 'string' },
    },
  });
  const smoke = values.smoke ?? false;
  if (values.partner !== undefined && !/^[0-9a-f]{24}$/.test(values.partner)) throw new Error('--partner must be a partner id (24 lower-case hex characters)');
  const limit = positive(values.limit, '--limit');
  return {
    smoke,
    count: positive(values.count, '--count') ?? (smoke ? 2000 : 1_000_000),
    requests: positive(values.requests, '--requests') ?? (smoke ? 30 : 1000),
    ...(limit !== undefined ? { limit } : {}),
    ...(values.database ? { database: values.database } : {}),
    ...(values.partner ? { partner: values.partner } : {}),
    keep: values.keep ?? false,
    ...(values.profile ? { profile: values.profile } : {}),
    serverUrl: process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}

/** One filter mix: the query string sent, and the filters the route turns it into. */
interface Mix {
  name: string;
  description: string;
  filters: TransactionFilters;
  /** Held to p95 ≤ 50 ms. */
  target: boolean;
  /** Each request sends the previous answer's nextCursor (back to the first page when there is none). */
  followCursor?: boolean;
  /** Share of `--requests` this mix sends (default all). */
  requestShare?: number;
}

interface MixResult {
  name: string;
  description: string;
  query: string;
  target: boolean;
  requests: number;
  /** Items on the first page (the filter values exist in the seed: 0 only where the mix says so). */
  firstPageItems: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  /** CPU time of the gateway process per request, in µs. */
  cpuUsPerRequest: number;
  /** CPU time of the PostgreSQL backends connected to the bench database (the gateway's pool) per request, in µs. */
  dbCpuUsPerRequest: number;
  /** Indexes the plan of the route's query walks, and the executor's time for it. */
  plan: { indexes: string[]; executionMs: number; text: string };
  met?: boolean;
}



function queryString(mix: Mix, limit: number | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(mix.filters)) if (value !== undefined) params.set(name, String(value));
  if (limit !== undefined) params.set('limit', String(limit));
  return params.toString();
}

/** One GET on a keep-alive agent: the status, the body, and the time to its last byte in ms. */
function get(agent: http.Agent, url: string, token: string): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** CPU time in ms of the given processes (those that are gone count 0). */
function cpuOf(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += cpuTimeMs(pid);
    } catch {
      // ended since it was listed
    }
  }
  return total;
}

/**
 * The SQL and parameters the route runs for `filters` (gateway/transactions/projection.ts builds
 * them; a stand-in database records them), so that the plan explained is the route's own.
 */
async function routeQuery(partnerId: string, filters: TransactionFilters, limit: number, after?: TransactionPosition): Promise<{ text: string; params: unknown[] }> {
  let captured: { text: string; params: unknown[] } | undefined;
  const recorder = {
    query: async (text: string, params?: unknown[]) => {
      captured ??= { text, params: params ?? [] };
      return { rows: [], rowCount: 0, command: 'SELECT', oid: 0, fields: [] };
    },
  };
  await listTransactions(recorder as never, partnerId, filters, { limit, ...(after ? { after } : {}) });
  if (!captured) throw new Error('listTransactions ran no query');
  return captured;
}

async function explain(pg: Client, query: { text: string; params: unknown[] }): Promise<MixResult['plan']> {
  // Twice: the first warms the cache as the measured requests had, the second is reported.
  await pg.query(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.params);
  const rows = await pg.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.params);
  const text = rows.rows.map((r) => r['QUERY PLAN']).join('\n');
  const indexes = [...new Set([...text.matchAll(/(?:Index|Index Only|Bitmap Index) Scan(?: Backward)? (?:using|on) (\S+)/g)].map((m) => m[1]))];
  const seq = /Seq Scan on card_transactions/.test(text) ? ['(sequential scan)'] : [];
  const execution = /Execution Time: ([\d.]+) ms/.exec(text);
  return { indexes: [...indexes, ...seq], executionMs: execution ? Number(execution[1]) : NaN, text };
}

/** SIGUSR2 toggles the preloaded profiler (bench/cpu-profile-on-signal); the marker file says the toggle took effect. */
async function toggleProfiler(server: BenchProcess, marker: string): Promise<void> {
  fs.rmSync(marker, { force: true });
  server.child.kill('SIGUSR2');
  const deadline = Date.now() + 30_000;
  while (!fs.existsSync(marker)) {
    if (Date.now() > deadline) throw new Error(`${marker} did not appear`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(): Promise<void> {
  const o = options();
  const started = new Date();
  const log = (message: string) => process.stderr.write(`bench:transactions: ${message}\n`);
  const db = await openBenchDatabase(o, 'pgw_bench_tx', log);
  const { pg, dbUrl } = db;
  const processes: BenchProcess[] = [];
  let profileFile: string | undefined;
  if (o.profile) {
    const dir = path.join(ROOT, 'bench', 'results', 'profiles');
    fs.mkdirSync(dir, { recursive: true });
    profileFile = path.join(dir, `transactions-${started.toISOString().replace(/[:.]/g, '-')}-${o.profile.replace(/[^a-zA-Z+]/g, '_')}.cpuprofile`);
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-tx-'));
  try {
    await pg.connect();
    const { partnerId, rows: transactions, seed, issuer } = await seededPartner(db, o, { table: 'card_transactions', script: 'seed-transactions.js', noun: 'transactions' }, log);

    // Filter values that exist: the busiest card and individual, PENDING, a week 180 days before the newest transaction.
    const card = await one<{ card_key: string; n: string }>(pg, 'SELECT card_key, count(*) AS n FROM card_transactions WHERE partner_id = $1 GROUP BY card_key ORDER BY 2 DESC LIMIT 1', [partnerId]);
    const individual = await one<{ individual_id: string; n: string }>(
      pg,
      'SELECT individual_id, count(*) AS n FROM card_transactions WHERE partner_id = $1 AND individual_id IS NOT NULL GROUP BY individual_id ORDER BY 2 DESC LIMIT 1',
      [partnerId]
    );
    const span = await one<{ oldest: Date; newest: Date }>(pg, 'SELECT min(created_at) AS oldest, max(created_at) AS newest FROM card_transactions WHERE partner_id = $1', [partnerId]);
    const windowEnd = new Date(Math.max(span.oldest.getTime() + 7 * 86_400_000, span.newest.getTime() - 180 * 86_400_000));
    const windowStart = new Date(windowEnd.getTime() - 7 * 86_400_000);
    const window = { from: windowStart.toISOString(), to: windowEnd.toISOString() };
    const counts = await one<{ card: string; individual: string; pending: string; window: string; pending_window: string }>(
      pg,
      `SELECT count(*) FILTER (WHERE card_key = $2) AS card, count(*) FILTER (WHERE individual_id = $3) AS individual,
              count(*) FILTER (WHERE status = 'PENDING') AS pending, count(*) FILTER (WHERE created_at >= $4 AND created_at < $5) AS window,
              count(*) FILTER (WHERE status = 'PENDING' AND created_at >= $4 AND created_at < $5) AS pending_window
       FROM card_transactions WHERE partner_id = $1`,
      [partnerId, card.card_key, individual.individual_id, window.from, window.to]
    );
    const matching = (n: string) => `${Number(n).toLocaleString('en')} match`;
    const mixes: Mix[] = [
      { name: 'none', description: `no filter (${transactions.toLocaleString('en')})`, filters: {}, target: true },
      { name: 'cardKey', description: `the busiest card (${matching(counts.card)})`, filters: { cardKey: card.card_key }, target: true },
      { name: 'individualId', description: `the busiest individual (${matching(counts.individual)})`, filters: { individualId: individual.individual_id.trim() }, target: true },
      { name: 'status', description: `status PENDING (${matching(counts.pending)})`, filters: { status: 'PENDING' }, target: true },
      { name: 'window', description: `7-day from/to (${matching(counts.window)})`, filters: { ...window }, target: true },
      { name: 'status+window', description: `PENDING in that window (${matching(counts.pending_window)})`, filters: { status: 'PENDING', ...window }, target: true },
      { name: 'type', description: 'type REFUND (informative)', filters: { type: 'REFUND' }, target: false },
      // Slow by design (every PENDING row is read): a tenth of the requests.
      { name: 'status+type', description: 'PENDING and REFUND: none is both (informative)', filters: { status: 'PENDING', type: 'REFUND' }, target: false, requestShare: 0.1 },
      { name: 'none, next pages', description: 'no filter, each request the next page (informative)', filters: {}, target: false, followCursor: true },
    ];

    log('sandbox and gateway...');
    const { gateway, base, adminBase, adminToken } = await startBenchGateway(dbUrl, dataDir, processes, {
      // `--profile`: the profiler, started and stopped by SIGUSR2.
      ...(profileFile ? { NODE_OPTIONS: `--max-old-space-size=160 --require ${path.join(DIST, 'bench', 'cpu-profile-on-signal.js')}`, BENCH_PROFILE_FILE: profileFile } : {}),
    });
    const currentToken = await partnerTokens(adminBase, adminToken, partnerId, issuer);

    // The database backends of the gateway's pool (and its background work): their CPU is the database's share of a request.
    const backends = async () =>
      (await pg.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => r.pid);

    if (o.profile && !mixes.some((m) => m.name === o.profile)) throw new Error(`--profile takes a mix: ${mixes.map((m) => m.name).join(', ')}`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const loadAtStart = os.loadavg()[0]!;
    const results: MixResult[] = [];
    const warmup = Math.min(50, Math.max(5, Math.ceil(o.requests / 10)));
    for (const mix of mixes) {
      const qs = queryString(mix, o.limit);
      const firstUrl = `${base}/api/partner/transactions${qs ? `?${qs}` : ''}`;
      let next: string | null = null;
      let firstPageItems = -1;
      const send = async (): Promise<number> => {
        const url: string = mix.followCursor && next ? `${firstUrl}${qs ? '&' : '?'}cursor=${encodeURIComponent(next)}` : firstUrl;
        const answer = await get(agent, url, await currentToken());
        if (answer.status !== 200) throw new Error(`GET ${url} → ${answer.status} ${answer.body.slice(0, 500)}`);
        const page = JSON.parse(answer.body) as { data: unknown[]; nextCursor: string | null };
        if (firstPageItems < 0) firstPageItems = page.data.length;
        next = page.nextCursor;
        return answer.ms;
      };
      const requests = Math.max(1, Math.round(o.requests * (mix.requestShare ?? 1)));
      for (let i = 0; i < Math.min(warmup, requests); i++) await send();
      next = null;
      const pids = await backends();
      const cpuBefore = cpuTimeMs(gateway.child.pid!);
      const dbBefore = cpuOf(pids);
      const latencies: number[] = [];
      const profiled = profileFile !== undefined && mix.name === o.profile;
      if (profiled) await toggleProfiler(gateway, `${profileFile!}.started`);
      for (let i = 0; i < requests; i++) latencies.push(await send());
      const cpuMs = cpuTimeMs(gateway.child.pid!) - cpuBefore;
      const dbMs = cpuOf(pids) - dbBefore;
      if (profiled) {
        await toggleProfiler(gateway, `${profileFile!}.done`);
        log(`CPU profile of ${mix.name} (its CPU figures include the profiler's cost): ${path.relative(ROOT, profileFile!)}`);
      }
      latencies.sort((a, b) => a - b);

      const limit = o.limit ?? 20;
      // The page-after-page mix: explained at a cursor as deep as the middle of its walk.
      let after: TransactionPosition | undefined;
      if (mix.followCursor) {
        const position = await pg.query<{ created_at: string; id: string }>(
          `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at, id FROM card_transactions
           WHERE partner_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
          [partnerId, Math.floor((o.requests * limit) / 2)]
        );
        if (position.rows[0]) after = { createdAt: position.rows[0].created_at, id: position.rows[0].id };
      }
      const query = await routeQuery(partnerId, mix.filters, limit, after);
      const plan = await explain(pg, query);
      const result: MixResult = {
        name: mix.name,
        description: mix.description,
        query: qs,
        target: mix.target,
        requests: latencies.length,
        firstPageItems,
        p50: round2(percentile(latencies, 50)),
        p95: round2(percentile(latencies, 95)),
        p99: round2(percentile(latencies, 99)),
        max: round2(latencies[latencies.length - 1] ?? 0),
        mean: round2(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)),
        cpuUsPerRequest: Math.round((cpuMs * 1000) / latencies.length),
        dbCpuUsPerRequest: Math.round((dbMs * 1000) / latencies.length),
        plan,
        ...(mix.target ? { met: percentile(latencies, 95) <= TARGET_P95_MS } : {}),
      };
      results.push(result);
      log(`${mix.name}: p50 ${result.p50} ms, p95 ${result.p95} ms, plan ${plan.indexes.join(' + ')} (${plan.executionMs} ms)`);
    }
    agent.destroy();

    const report = {
      date: started.toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        memoryGb: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        postgres: (await one<{ v: string }>(pg, 'SELECT version() AS v')).v,
        sharedBuffers: (await one<{ shared_buffers: string }>(pg, 'SHOW shared_buffers')).shared_buffers,
        note: 'the client, the gateway, the sandbox and PostgreSQL share the cores',
        // Other work on the machine during the measured requests (1-minute load average, at the start and the end).
        loadAverage: { start: round2(loadAtStart), end: round2(os.loadavg()[0]!) },
      },
      options: o,
      transactions,
      seed,
      partnerId,
      filterValues: { cardKey: card.card_key, individualId: individual.individual_id.trim(), ...window },
      tableMb: Math.round(Number((await one<{ b: string }>(pg, "SELECT pg_total_relation_size('card_transactions') AS b")).b) / 2 ** 20),
      targetP95Ms: TARGET_P95_MS,
      results,
      allTargetsMet: results.filter((r) => r.target).every((r) => r.met),
    };
    const table = [
      `GET /api/partner/transactions, ${transactions.toLocaleString('en')} transactions, ${o.requests} sequential requests per mix (status+type: a tenth), limit ${o.limit ?? 'default (20)'}`,
      '| mix              | p50 ms | p95 ms | p99 ms | max ms | gw CPU µs | db CPU µs | items | plan (indexes), executor ms | p95 ≤ 50',
      '|------------------|--------|--------|--------|--------|-----------|-----------|-------|-----------------------------|---------',
      ...results.map(
        (r) =>
          `| ${r.name.padEnd(16)} | ${String(r.p50).padStart(6)} | ${String(r.p95).padStart(6)} | ${String(r.p99).padStart(6)} | ${String(r.max).padStart(6)} | ${String(r.cpuUsPerRequest).padStart(9)} | ${String(r.dbCpuUsPerRequest).padStart(9)} | ${String(r.firstPageItems).padStart(5)} | ${`${r.plan.indexes.join(' + ')}, ${r.plan.executionMs}`.padEnd(27)} | ${r.target ? (r.met ? 'met' : 'MISSED') : '-'}`
      ),
      ...results.map((r) => `  ${r.name}: ${r.description}`),
    ].join('\n');
    process.stdout.write(`${table}\n`);
    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `transactions-${started.toISOString().slice(0, 10)}${o.smoke ? '-smoke' : ''}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`written ${path.relative(ROOT, file)}\n`);
  } finally {
    for (const p of processes.reverse()) await p.stop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:transactions failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
