/**
 * `npm run bench:lists [-- --smoke] [--database URL] [--keep] [--gateway DIR] [--rounds 5] [--calls 200] [--warmup 50] [--label NAME] [--only ROUTE,ROUTE]`
 *
 * Flat cost as a partner's data grows: each list route for a partner holding 100,000
 * individuals, 1,000,000 cards and 1,000,000 audit entries, side by side with a partner holding
 * 1,000 of each (docs/performance.md, "List routes at scale"). Built like bench/cards-search.ts and bench/transactions.ts:
 *
 * - creates `pgw_bench_lists_<time>` (dropped at the end unless `--keep`) and seeds it with
 *   bench/seed-lists.ts (the two partners, each with a measured individual); `--database URL`
 *   measures a database seeded before (seeded now if it holds no seed, never dropped);
 * - starts the sandbox upstreams and the real gateway, one worker (`dist/gateway/main.js` of this
 *   build, or `DIR/dist/gateway/main.js` with `--gateway DIR`: another checkout built there, so that
 *   the same bench measures the code before and after a change), with bench/record-queries.ts
 *   preloaded; adds an ES512 (P-521) key to each partner through the admin API; waits until the
 *   gateway's start-up work has passed (a second in which the database's backends use at most
 *   20 ms of CPU) and reads the backends' CPU for `--idle-ms` without a call (the background jobs'
 *   share, which every round carries);
 * - for each route, one sequential client with keep-alive: `--warmup` unmeasured calls per partner,
 *   then `--rounds` rounds of `--calls` calls per partner, alternating small and large (each round
 *   the other way round from the last), and per partner: p50 / p95 / p99 / max at the client, and
 *   the **database time per call**: the CPU time (/proc) of the PostgreSQL client backends
 *   connected to the database (the gateway's pool, this bench's own connection left out) over its
 *   rounds, divided by the calls (with the gateway process's own CPU per call beside it);
 * - then one more call per partner and route marked `x-bench-record-queries`: the statements it
 *   ran, recorded in the gateway, each run here under `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF)`
 *   (twice, the second reported): executor and planning time, rows returned, rows read (every scan
 *   node's rows and the rows its filters removed) and shared buffers;
 * - per route, the ratios large / small and the targets at the large partner: database
 *   time per call at most 1.5 times the small partner's, and p95 ≤ 25 ms. Exits 1 when one is
 *   missed (except `--smoke`): a route whose SQL reads rows in proportion to the partner's data
 *   fails it.
 *
 * pg_stat_statements is not used: it needs `shared_preload_libraries`, so a restart of PostgreSQL
 * (without it, `CREATE EXTENSION` succeeds but its view refuses to be read). The figures above need
 * no extension and no setting of the server; the report says whether it is preloaded.
 *
 * `--smoke`: bench/seed-lists's smoke shape (2,000 rows of each in the large partner, 200 in the
 * small), no wait for a quiet database, 3 warm-up calls and 2 rounds of 10 calls: proves the
 * harness in seconds, judges nothing.
 * Results: `bench/results/lists-<date>[-<label>].json` (`--label`, by default `gateway-<commit>` with
 * `--gateway`; the smoke's end in `-smoke`, not committed).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from 'pg';
import { Database } from '../gateway/db/database';
import { migrate } from '../gateway/db/migrate';
import { createLogger } from '../gateway/logging/logger';
import { cpuByPid, cpuTimeMs, type BenchProcess } from './processes';
import { RECORD_HEADER } from './record-queries';
import { LISTS_SHAPE, readListsSeed, seedLists, SMOKE_SHAPE, type ListsSeed, type PartnerSize } from './seed-lists';
import { one, openBenchDatabase, partnerTokens, startBenchGateway } from './seeded-gateway';
import { percentile, round2 } from './stats';
import { positive } from './cli-options';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.resolve(__dirname, '..');
/** The large partner's database time per call at most this many times the small one's. */
const TARGET_RATIO = 1.5;
/** p95 at the large partner, through HTTP, one sequential client. */
const TARGET_P95_MS = 25;
const SIZES: PartnerSize[] = ['small', 'large'];
/** A second in which the backends use at most this much CPU (ms) is quiet: the gateway's start-up work is over. */
const QUIET_DB_CPU_MS = 20;
/** At most this many one-second windows are waited for a quiet one. */
const SETTLE_WINDOWS = 60;

interface Options {
  smoke: boolean;
  database?: string;
  keep: boolean;
  gateway?: string;
  rounds: number;
  calls: number;
  warmup: number;
  label?: string;
  only?: string[];
  batch: number;
  /**
   * How long the backends' CPU is read with no call, once they are quiet, for the background work's
   * share (0: neither waited for nor read).
   */
  idleMs: number;
  serverUrl: string;
}


function options(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      database: { type: 'string' },
      keep: { type: 'boolean', default: false },
      gateway: { type: 'string' },
      rounds: { type: 'string' },
      calls: { type: 'string' },
      warmup: { type: 'string' },
      label: { type: 'string' },
      only: { type: 'string' },
      batch: { type: 'string' },
      'idle-ms': { type: 'string' },
    },
  });
  const smoke = values.smoke ?? false;
  const gateway = values.gateway ? path.resolve(values.gateway) : undefined;
  if (gateway && !fs.existsSync(path.join(gateway, 'dist', 'gateway', 'main.js'))) throw new Error(`--gateway ${gateway}: no dist/gateway/main.js there (build it first)`);
  if (values.label !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(values.label)) throw new Error('--label: 1 to 64 of A-Z a-z 0-9 . _ -');
  const only = values.only?.split(',');
  const unknown = only?.filter((name) => !ROUTES.some((r) => r.name === name));
  if (unknown?.length) throw new Error(`--only: no route ${unknown.join(', ')} (routes: ${ROUTES.map((r) => r.name).join(', ')})`);
  return {
    smoke,
    ...(values.database ? { database: values.database } : {}),
    keep: values.keep ?? false,
    ...(gateway ? { gateway } : {}),
    rounds: positive(values.rounds, '--rounds') ?? (smoke ? 2 : 5),
    calls: positive(values.calls, '--calls') ?? (smoke ? 10 : 200),
    warmup: positive(values.warmup, '--warmup', true) ?? (smoke ? 3 : 50),
    ...(values.label ? { label: values.label } : gateway ? { label: `gateway-${commitOf(gateway).slice(0, 7)}` } : {}),
    ...(only ? { only } : {}),
    batch: positive(values.batch, '--batch') ?? 100_000,
    idleMs: positive(values['idle-ms'], '--idle-ms', true) ?? (smoke ? 0 : 3000),
    serverUrl: process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}

/** One list route as the bench calls it: its path for the partner's measured individual. */
interface Route {
  name: string;
  path: (individualId: string) => string;
}

const ROUTES: Route[] = [
  { name: 'individuals', path: () => '/api/partner/individual/accounts' },
  { name: 'me', path: () => '/api/partner/me' },
  { name: 'individual-cards', path: (id) => `/api/partner/individual/accounts/${id}/cards` },
  { name: 'audit-logs', path: (id) => `/api/partner/individual/accounts/${id}/audit-logs` },
  { name: 'card-status-history', path: (id) => `/api/partner/individual/accounts/${id}/card-status-history` },
  { name: 'cards', path: () => '/api/partner/cards' },
  { name: 'cards-active', path: () => '/api/partner/cards?status=ACTIVE' },
];

/** The git commit of a checkout, with `+dirty` when tracked files differ from it. */
function commitOf(dir: string): string {
  try {
    const commit = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return `${commit}${dirty ? '+dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  ms: number;
}

function get(agent: http.Agent, url: string, token: string, extra: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}`, ...extra } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** What one answer held: its items, the total it states (and how), its size. */
interface AnswerSummary {
  items: number;
  total: number | null;
  capped: boolean;
  hasMore: boolean | null;
  bytes: number;
}

function summarize(answer: Answer): AnswerSummary {
  const body = JSON.parse(answer.body) as unknown;
  const capped = answer.headers['x-total-capped'] === 'true';
  if (Array.isArray(body)) return { items: body.length, total: null, capped, hasMore: null, bytes: answer.body.length };
  const page = body as { data?: unknown[]; individuals?: unknown[]; count?: number; pagination?: { total?: number; hasMore?: boolean } };
  return {
    items: (page.data ?? page.individuals ?? []).length,
    total: page.pagination?.total ?? page.count ?? null,
    capped,
    hasMore: page.pagination?.hasMore ?? null,
    bytes: answer.body.length,
  };
}

/**
 * The CPU the backends used between two readings, in ms: each backend's difference, and all of a
 * backend's CPU when it started in between (its connection's set-up is the database's work too). A
 * backend that ended in between is left out (what it used since the first reading is lost: a pool
 * closes only connections idle for 30 s), and counted in `ended`.
 */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): { ms: number; started: number; ended: number } {
  let ms = 0;
  let started = 0;
  for (const [pid, now] of after) {
    const then = before.get(pid);
    if (then === undefined) started += 1;
    ms += now - (then ?? 0);
  }
  const ended = [...before.keys()].filter((pid) => !after.has(pid)).length;
  return { ms, started, ended };
}

/** One statement a route ran, explained. */
interface ExplainedStatement {
  text: string;
  values: unknown[];
  explained: boolean;
  executionMs?: number;
  planningMs?: number;
  /** Rows the statement answered. */
  rows?: number;
  /** Rows its scans visited: every scan node's rows (per loop, times the loops) and those its filters removed. */
  rowsRead?: number;
  /** Shared buffers hit or read (the plan's root, its children included). */
  buffers?: number;
  /** The indexes it walked, and `seq scan on <table>` for a sequential scan. */
  access?: string[];
  plan?: unknown;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, visit: (n: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}

// Scans of a table or an index: what "rows read" adds up (a bitmap index scan's rows are the heap scan's above it).
const TABLE_SCANS = new Set(['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan']);

async function explain(pg: Client, statement: { text: string; values: unknown[] }): Promise<ExplainedStatement> {
  if (!/^\s*(SELECT|WITH)\b/i.test(statement.text)) return { ...statement, explained: false };
  // TIMING OFF: the clock read at every row of every node doubled the executor time of a
  // 100,000-row count here (17 ms without, 22 to 35 ms with); rows and buffers are counted all the same.
  const sql = `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${statement.text}`;
  // Twice: the first as the measured calls left the cache, the second reported.
  await pg.query(sql, statement.values);
  const result = await pg.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Planning Time': number; 'Execution Time': number }] }>(sql, statement.values);
  const top = result.rows[0]!['QUERY PLAN'][0];
  let rowsRead = 0;
  const access: string[] = [];
  walk(top.Plan, (n) => {
    const loops = n['Actual Loops'] ?? 1;
    if (TABLE_SCANS.has(n['Node Type'])) rowsRead += ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * loops;
    if (n['Index Name'] && !access.includes(n['Index Name'])) access.push(n['Index Name']);
    if (n['Node Type'] === 'Seq Scan') access.push(`seq scan on ${n['Relation Name']}`);
  });
  return {
    ...statement,
    explained: true,
    executionMs: Math.round(top['Execution Time'] * 1000) / 1000,
    planningMs: Math.round(top['Planning Time'] * 1000) / 1000,
    rows: top.Plan['Actual Rows'] ?? 0,
    rowsRead: Math.round(rowsRead),
    buffers: (top.Plan['Shared Hit Blocks'] ?? 0) + (top.Plan['Shared Read Blocks'] ?? 0),
    access,
    plan: top,
  };
}

/** One partner's figures for one route. */
interface SideResult {
  calls: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** CPU of the database's backends per call, µs (the database time per call). */
  dbCpuUsPerCall: number;
  /** CPU of the gateway process per call, µs. */
  gatewayCpuUsPerCall: number;
  /** Each round: its calls, the backends' CPU and the gateway's in ms, its wall time in ms, the backends that started and ended during it. */
  rounds: { calls: number; dbCpuMs: number; gatewayCpuMs: number; wallMs: number; backendsStarted: number; backendsEnded: number }[];
  answer: AnswerSummary;
  statements: ExplainedStatement[];
  /** Sums over the statements explained. */
  executorMs: number;
  rowsRead: number;
  buffers: number;
}

interface RouteResult {
  name: string;
  path: string;
  small: SideResult;
  large: SideResult;
  /** large / small; null where the small figure is 0. */
  ratios: { dbCpu: number | null; executor: number | null; rowsRead: number | null; buffers: number | null };
  ratioMet: boolean;
  p95Met: boolean;
}

const ratio = (large: number, small: number): number | null => (small > 0 ? round2(large / small) : null);

async function main(): Promise<void> {
  const o = options();
  const started = new Date();
  const log = (message: string) => process.stderr.write(`bench:lists: ${message}\n`);
  const db = await openBenchDatabase(o, 'pgw_bench_lists', log);
  const { pg, dbUrl } = db;
  const processes: BenchProcess[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-lists-'));
  const recordFile = path.join(dataDir, 'statements.jsonl');
  try {
    await pg.connect();

    // The seed: this run's, or the one the database holds.
    const seeder = new Database(dbUrl, { max: 1, log: createLogger({ level: 'warn' }), queryTimeoutMs: 0 });
    let seed: ListsSeed;
    let seededNow = false;
    try {
      await migrate(seeder, createLogger({ level: 'warn' }));
      const held = await readListsSeed(seeder);
      if (held) {
        seed = held;
        log(`reusing the seed of ${dbUrl}: large partner ${held.large.partnerId}, small ${held.small.partnerId} (seeded in ${held.seconds} s)`);
      } else {
        log(`seeding ${o.smoke ? 'the smoke shape' : '100,000 individuals, 1,000,000 cards, 1,000,000 audit entries and status changes, and 1,000 of each'}...`);
        seed = await seedLists(seeder, o.smoke ? SMOKE_SHAPE : LISTS_SHAPE, { batchSize: o.batch, ...(o.smoke ? {} : { progress: (what: string) => log(what) }) });
        seededNow = true;
        log(`seeded in ${seed.seconds} s`);
      }
    } finally {
      await seeder.close();
    }

    const preloads = (await one<{ s: string }>(pg, "SELECT current_setting('shared_preload_libraries') AS s")).s;
    const pgStatStatements = preloads.split(',').map((s) => s.trim()).includes('pg_stat_statements')
      ? 'preloaded (not read: the figures come from /proc and EXPLAIN)'
      : 'not in shared_preload_libraries: CREATE EXTENSION succeeds, but its view refuses to be read (must be loaded via shared_preload_libraries) until PostgreSQL restarts with it preloaded; database time read from /proc';

    log(`sandbox and gateway (${o.gateway ? `${o.gateway}/dist/gateway/main.js` : 'this build'})...`);
    const { gateway, base, adminBase, adminToken } = await startBenchGateway(
      dbUrl,
      dataDir,
      processes,
      { NODE_OPTIONS: `--max-old-space-size=160 --require ${path.join(DIST, 'bench', 'record-queries.js')}`, BENCH_RECORD_QUERIES_FILE: recordFile },
      o.gateway ? path.join(o.gateway, 'dist', 'gateway', 'main.js') : undefined
    );
    const tokens = {} as Record<PartnerSize, () => Promise<string>>;
    for (const size of SIZES) {
      const { issuer } = await one<{ issuer: string }>(pg, 'SELECT issuer FROM partners WHERE id = $1', [seed[size].partnerId]);
      tokens[size] = await partnerTokens(adminBase, adminToken, seed[size].partnerId, issuer);
    }

    // The database's client backends: the gateway's pool (this bench's own connection left out).
    const backends = async () =>
      (
        await pg.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
      ).rows.map((r) => r.pid);

    // The gateway's start-up work (the first passes of its jobs: retention, reconcilers, the search
    // links' check; about 0.6 s of the backends' CPU at these sizes) is let pass before anything is
    // measured: one-second windows until one is quiet, then the background's share over --idle-ms.
    let background: { settledAfterMs: number; ms: number; dbCpuMs: number } | undefined;
    if (o.idleMs > 0) {
      const settling = performance.now();
      for (let window = 0; window < SETTLE_WINDOWS; window++) {
        const before = cpuByPid(await backends());
        await new Promise((resolve) => setTimeout(resolve, 1000));
        if (cpuBetween(before, cpuByPid(await backends())).ms <= QUIET_DB_CPU_MS) break;
      }
      const settledAfterMs = Math.round(performance.now() - settling);
      const before = cpuByPid(await backends());
      await new Promise((resolve) => setTimeout(resolve, o.idleMs));
      background = { settledAfterMs, ms: o.idleMs, dbCpuMs: cpuBetween(before, cpuByPid(await backends())).ms };
      log(`background: the backends used ${background.dbCpuMs} ms of CPU in ${o.idleMs} ms without a call (quiet after ${settledAfterMs} ms)`);
    }

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const loadAtStart = os.loadavg()[0]!;
    const results: RouteResult[] = [];
    const selected = ROUTES.filter((r) => !o.only || o.only.includes(r.name));
    const call = async (size: PartnerSize, route: Route, extra: Record<string, string> = {}): Promise<Answer> => {
      const url = `${base}${route.path(seed[size].individualId)}`;
      const answer = await get(agent, url, await tokens[size](), extra);
      if (answer.status !== 200) throw new Error(`GET ${url} (${size}) → ${answer.status} ${answer.body.slice(0, 500)}`);
      return answer;
    };

    const measured = {} as Record<string, Record<PartnerSize, { latencies: number[]; rounds: SideResult['rounds']; answer?: AnswerSummary }>>;
    for (const route of selected) {
      const sides = { small: { latencies: [] as number[], rounds: [] as SideResult['rounds'] }, large: { latencies: [] as number[], rounds: [] as SideResult['rounds'] } } as Record<
        PartnerSize,
        { latencies: number[]; rounds: SideResult['rounds']; answer?: AnswerSummary }
      >;
      measured[route.name] = sides;
      for (const size of SIZES) {
        sides[size].answer = summarize(await call(size, route));
        for (let i = 1; i < o.warmup; i++) await call(size, route);
      }
      for (let round = 0; round < o.rounds; round++) {
        for (const size of round % 2 === 0 ? SIZES : [...SIZES].reverse()) {
          const dbBefore = cpuByPid(await backends());
          const gatewayBefore = cpuTimeMs(gateway.child.pid!);
          const wallBefore = performance.now();
          for (let i = 0; i < o.calls; i++) sides[size].latencies.push((await call(size, route)).ms);
          const wallMs = round2(performance.now() - wallBefore);
          const gatewayCpuMs = cpuTimeMs(gateway.child.pid!) - gatewayBefore;
          const db = cpuBetween(dbBefore, cpuByPid(await backends()));
          sides[size].rounds.push({ calls: o.calls, dbCpuMs: db.ms, gatewayCpuMs, wallMs, backendsStarted: db.started, backendsEnded: db.ended });
        }
      }
      const brief = (size: PartnerSize) => {
        const l = [...sides[size].latencies].sort((a, b) => a - b);
        const db = sides[size].rounds.reduce((sum, r) => sum + r.dbCpuMs, 0);
        return `${size} p95 ${round2(percentile(l, 95))} ms, DB ${Math.round((db * 1000) / l.length)} µs/call`;
      };
      log(`${route.name}: ${brief('small')}; ${brief('large')}`);
    }

    // The statements of each route, recorded in the gateway on one marked call (after every
    // measured one: the recorder's async context is entered from here on).
    const recorded: Record<string, Record<PartnerSize, { text: string; values: unknown[] }[]>> = {};
    for (const route of selected) {
      recorded[route.name] = { small: [], large: [] };
      for (const size of SIZES) {
        const label = `${route.name}:${size}`;
        await call(size, route, { [RECORD_HEADER]: label });
        const lines = fs.existsSync(recordFile) ? fs.readFileSync(recordFile, 'utf8').trim().split('\n').filter(Boolean) : [];
        recorded[route.name]![size] = lines.map((l) => JSON.parse(l) as { label: string; text: string; values: unknown[] }).filter((s) => s.label === label).map(({ text, values }) => ({ text, values }));
      }
    }
    agent.destroy();
    for (const p of processes.reverse()) await p.stop().catch(() => undefined);
    processes.length = 0;

    for (const route of selected) {
      const side = async (size: PartnerSize): Promise<SideResult> => {
        const m = measured[route.name]![size];
        const latencies = [...m.latencies].sort((a, b) => a - b);
        const dbMs = m.rounds.reduce((sum, r) => sum + r.dbCpuMs, 0);
        const gatewayMs = m.rounds.reduce((sum, r) => sum + r.gatewayCpuMs, 0);
        const statements: ExplainedStatement[] = [];
        for (const statement of recorded[route.name]![size]) statements.push(await explain(pg, statement));
        const explained = statements.filter((s) => s.explained);
        return {
          calls: latencies.length,
          p50: round2(percentile(latencies, 50)),
          p95: round2(percentile(latencies, 95)),
          p99: round2(percentile(latencies, 99)),
          max: round2(latencies[latencies.length - 1] ?? 0),
          dbCpuUsPerCall: Math.round((dbMs * 1000) / Math.max(1, latencies.length)),
          gatewayCpuUsPerCall: Math.round((gatewayMs * 1000) / Math.max(1, latencies.length)),
          rounds: m.rounds,
          answer: m.answer!,
          statements,
          executorMs: Math.round(explained.reduce((sum, s) => sum + (s.executionMs ?? 0), 0) * 1000) / 1000,
          rowsRead: explained.reduce((sum, s) => sum + (s.rowsRead ?? 0), 0),
          buffers: explained.reduce((sum, s) => sum + (s.buffers ?? 0), 0),
        };
      };
      const small = await side('small');
      const large = await side('large');
      const ratios = {
        dbCpu: ratio(large.dbCpuUsPerCall, small.dbCpuUsPerCall),
        executor: ratio(large.executorMs, small.executorMs),
        rowsRead: ratio(large.rowsRead, small.rowsRead),
        buffers: ratio(large.buffers, small.buffers),
      };
      results.push({
        name: route.name,
        path: route.path('{id}'),
        small,
        large,
        ratios,
        ratioMet: ratios.dbCpu !== null && ratios.dbCpu <= TARGET_RATIO,
        p95Met: large.p95 <= TARGET_P95_MS,
      });
    }

    const allTargetsMet = results.every((r) => r.ratioMet && r.p95Met);
    const report = {
      date: started.toISOString(),
      gateway: { dir: o.gateway ?? ROOT, commit: commitOf(o.gateway ?? ROOT) },
      bench: { commit: commitOf(ROOT) },
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        memoryGb: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        postgres: (await one<{ v: string }>(pg, 'SELECT version() AS v')).v,
        sharedBuffers: (await one<{ shared_buffers: string }>(pg, 'SHOW shared_buffers')).shared_buffers,
        pgStatStatements,
        note: 'the client, the gateway, the sandbox and PostgreSQL share the cores',
        loadAverage: { start: round2(loadAtStart), end: round2(os.loadavg()[0]!) },
      },
      options: o,
      database: { url: db.created && !o.keep ? '(dropped)' : dbUrl, seededNow },
      seed,
      background: background && { ...background, dbCpuMsPerSecond: round2((background.dbCpuMs * 1000) / background.ms) },
      targets: { ratio: TARGET_RATIO, p95Ms: TARGET_P95_MS, judged: !o.smoke },
      results,
      allTargetsMet,
    };

    const cell = (s: SideResult) => s.statements.filter((x) => x.explained).map((x) => `${x.executionMs} ms ${x.rowsRead} rows ${x.buffers} buf`).join(' + ');
    const table = [
      `${o.gateway ? `gateway ${o.gateway} (${report.gateway.commit.slice(0, 12)})` : `this build (${report.gateway.commit.slice(0, 12)})`}: ${o.rounds} rounds of ${o.calls} calls per partner and route after ${o.warmup}, one sequential client`,
      '| route | partner | p50 ms | p95 ms | p99 ms | DB µs/call | gw µs/call | items | statements: executor ms, rows read, buffers |',
      '|---|---|---|---|---|---|---|---|---|',
      ...results.flatMap((r) =>
        SIZES.map((size) => {
          const s = r[size];
          return `| ${r.name} | ${size} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.dbCpuUsPerCall} | ${s.gatewayCpuUsPerCall} | ${s.answer.items}${s.answer.total !== null ? ` of ${s.answer.total}${s.answer.capped ? '+' : ''}` : ''} | ${cell(s)} |`;
        })
      ),
      '',
      `| route | DB µs small | DB µs large | ratio (≤ ${TARGET_RATIO}) | executor ratio | rows-read ratio | buffers ratio | p95 large (≤ ${TARGET_P95_MS} ms) | verdict |`,
      '|---|---|---|---|---|---|---|---|---|',
      ...results.map(
        (r) =>
          `| ${r.name} | ${r.small.dbCpuUsPerCall} | ${r.large.dbCpuUsPerCall} | ${r.ratios.dbCpu ?? '-'} | ${r.ratios.executor ?? '-'} | ${r.ratios.rowsRead ?? '-'} | ${r.ratios.buffers ?? '-'} | ${r.large.p95} | ${
            o.smoke ? '(smoke: not judged)' : r.ratioMet && r.p95Met ? 'met' : `MISSED${r.ratioMet ? '' : ' ratio'}${r.p95Met ? '' : ' p95'}`
          } |`
      ),
    ].join('\n');
    process.stdout.write(`${table}\n`);
    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `lists-${started.toISOString().slice(0, 10)}${o.label ? `-${o.label}` : ''}${o.smoke ? '-smoke' : ''}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`written ${path.relative(ROOT, file)}\n`);
    if (db.created && o.keep) process.stdout.write(`kept the database: ${dbUrl}\n`);
    if (!o.smoke && !allTargetsMet) process.exitCode = 1;
  } finally {
    for (const p of processes.reverse()) await p.stop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:lists failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
