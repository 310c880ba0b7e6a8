/**
 * `npm run bench:cards [-- --smoke] [--count 1000000] [--requests 200] [--database URL [--partner ID]] [--keep] [--only NAME,NAME]`
 *
 * The partner-wide card list, `GET /api/partner/cards`, for one partner holding `--count` cards
 * (1,000,000 by default; docs/performance.md, "Card search at 1,000,000 cards (S5)"). Built like bench/transactions.ts: creates `pgw_bench_cards_<time>` (dropped at the
 * end unless `--keep`), seeds it with scripts/seed-cards (the partner is created there, without a
 * key), starts the sandbox upstreams and the real gateway (`dist/gateway/main.js`, one worker),
 * adds an ES512 key to the seeded partner through the admin API, then for each filter mix sends
 * `--requests` requests one after the other (one client, one keep-alive connection, one token
 * reused while it is valid) after a few unmeasured ones, and reports p50 / p95 / p99 / max in ms.
 * For every mix it also runs the queries the route runs (gateway/cards/card-search.ts, recorded
 * on a real connection) under `EXPLAIN (ANALYZE, BUFFERS)`, and reports each one's executor time
 * and the indexes it walks.
 *
 * The route allows `page`, `limit`, `status`, `type` and `search` (schema `cards-list-query`):
 * there is no currency, owner or sort parameter. Every mix is held to p95 ≤ 50 ms except those
 * marked informative (pages at the edge of the 10,000-card window).
 *
 * `--database URL` measures an existing database instead (seeded only when it has no card, never
 * dropped); `--partner` names the partner, else the one with the most cards. `--smoke`: 2,000
 * cards, 20 requests per mix: proves the harness works.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from 'pg';
import { searchCards, type CardListFilter } from '../gateway/cards/card-search';
import type { BenchProcess } from './processes';
import { one, openBenchDatabase, partnerTokens, seededPartner, startBenchGateway } from './seeded-gateway';
import { percentile, round2 } from './stats';
import { positive } from './cli-options';

const ROOT = path.resolve(__dirname, '..', '..');
/** S5's target: p95 of every mix, through HTTP, one sequential client. */
const TARGET_P95_MS = 50;

interface Options {
  smoke: boolean;
  count: number;
  requests: number;
  database?: string;
  partner?: string;
  keep: boolean;
  only?: string[];
  serverUrl: string;
}


function options(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      count: { type: 'string' },
      requests: { type: 'string' },
      database: { type: 'string' },
      partner: { type: 'string' },
      keep: { type: 'boolean', default: false },
      only: { type: 'string' },
    },
  });
  const smoke = values.smoke ?? false;
  if (values.partner !== undefined && !/^[0-9a-f]{24}$/.test(values.partner)) throw new Error('--partner must be a partner id (24 lower-case hex characters)');
  return {
    smoke,
    count: positive(values.count, '--count') ?? (smoke ? 2000 : 1_000_000),
    requests: positive(values.requests, '--requests') ?? (smoke ? 20 : 200),
    ...(values.database ? { database: values.database } : {}),
    ...(values.partner ? { partner: values.partner } : {}),
    keep: values.keep ?? false,
    ...(values.only ? { only: values.only.split(',') } : {}),
    serverUrl: process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}

/** One filter mix: the query string the client sends (the route's own parameters). */
interface Mix {
  name: string;
  query: Record<string, string>;
  /** Held to p95 ≤ 50 ms. */
  target: boolean;
}

const SEARCHES: [string, string][] = [
  ['nickname word', 'travel'],
  ['name word (3 letters)', 'ada'],
  ['embossed surname', 'lovelace'],
  ['company', 'acme'],
  ['nickname with number', 'Marketing 52'],
  ['last 4 digits', '1234'],
  ['mask prefix, 85 %', '5355 70'],
  ['mask prefix, 15 %', '4921'],
  ['matches nothing', 'zzzz'],
  ['no trigram, matches nothing', 'z.z'],
  ['no trigram, every mask', '** ****'],
  ['no trigram, names', 'a.l'],
  ['in masks and nicknames', '100'],
];

function mixes(): Mix[] {
  const list: Mix[] = [
    { name: 'none', query: {}, target: true },
    { name: 'status=ACTIVE', query: { status: 'ACTIVE' }, target: true },
    { name: 'status=FRAUD', query: { status: 'FRAUD' }, target: true },
    { name: 'type=physical', query: { type: 'physical' }, target: true },
    { name: 'status=ACTIVE&type=virtual', query: { status: 'ACTIVE', type: 'virtual' }, target: true },
    { name: 'status=FRAUD&type=physical', query: { status: 'FRAUD', type: 'physical' }, target: true },
  ];
  for (const [, search] of SEARCHES) list.push({ name: `search=${search}`, query: { search }, target: true });
  const combos: Record<string, string>[] = [
    { search: 'travel', status: 'ACTIVE' },
    { search: 'ada', type: 'physical' },
    { search: 'travel', type: 'virtual' },
    { search: 'lovelace', status: 'ACTIVE' },
    { search: 'ada', status: 'LOCKED' },
    { search: 'travel', status: 'FRAUD' },
    { search: 'acme', status: 'ACTIVE', type: 'physical' },
    { search: 'ada', type: 'physical', status: 'LOST' },
    { search: '1234', status: 'ACTIVE' },
    { search: '1234', type: 'physical' },
    { search: '4921', status: 'ACTIVE' },
    { search: '5355 70', type: 'virtual', status: 'ACTIVE' },
    { search: 'zzzz', status: 'ACTIVE' },
    { search: 'z.z', status: 'ACTIVE' },
    { search: '** ****', type: 'physical', status: 'LOST' },
    { search: '100', status: 'ACTIVE' },
  ];
  for (const q of combos) list.push({ name: new URLSearchParams(q).toString(), query: q, target: true });
  const paged: Record<string, string>[] = [
    {},
    { status: 'ACTIVE' },
    { type: 'physical' },
    { search: 'travel' },
    { search: 'ada' },
    { search: '4921' },
    { search: 'travel', status: 'ACTIVE' },
    { search: 'ada', type: 'physical' },
    { search: '1234', status: 'ACTIVE' },
  ];
  for (const q of paged) list.push({ name: new URLSearchParams({ ...q, page: '3' }).toString(), query: { ...q, page: '3' }, target: true });
  list.push({ name: 'search=travel&status=ACTIVE&limit=100', query: { search: 'travel', status: 'ACTIVE', limit: '100' }, target: true });
  list.push({ name: 'search=ada&type=physical&limit=100&page=3', query: { search: 'ada', type: 'physical', limit: '100', page: '3' }, target: true });
  // The window's last page (informative: a deep page, docs/card-search.md).
  for (const q of [{}, { search: 'travel' }, { search: 'ada', type: 'physical' }] as Record<string, string>[]) {
    list.push({ name: new URLSearchParams({ ...q, page: '500' }).toString(), query: { ...q, page: '500' }, target: false });
  }
  return list;
}

interface Recorded {
  text: string;
  values: unknown[];
}

interface MixResult {
  name: string;
  target: boolean;
  requests: number;
  total: number;
  capped: boolean;
  firstPageItems: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Each query the route ran, explained: executor ms and the indexes (or seq scan) it read. */
  plans: { executionMs: number; buffers: number; indexes: string[]; text: string }[];
  met?: boolean;
}



function get(agent: http.Agent, url: string, token: string): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** The queries searchCards runs for a request, on a real connection (the answers steer which ones). */
async function routeQueries(pg: Client, partnerId: string, query: Record<string, string>): Promise<Recorded[]> {
  const recorded: Recorded[] = [];
  const recorder = {
    query: async (text: string, values?: unknown[]) => {
      recorded.push({ text, values: values ?? [] });
      return pg.query(text, values);
    },
  };
  const filter: CardListFilter = {
    partnerId,
    ...(query.status ? { status: query.status as CardListFilter['status'] } : {}),
    ...(query.type ? { type: query.type as CardListFilter['type'] } : {}),
    ...(query.search ? { search: query.search } : {}),
  };
  await searchCards(recorder as never, filter, { page: Number(query.page ?? 1), limit: Number(query.limit ?? 20) });
  return recorded;
}

async function explain(pg: Client, query: Recorded): Promise<MixResult['plans'][number]> {
  await pg.query(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.values);
  const rows = await pg.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.values);
  const text = rows.rows.map((r) => r['QUERY PLAN']).join('\n');
  const indexes = [...new Set([...text.matchAll(/(?:Index|Index Only|Bitmap Index) Scan(?: Backward)? (?:using|on) (\S+)/g)].map((m) => m[1]!))];
  const seq = /Seq Scan on cards/.test(text) ? ['(seq scan)'] : [];
  const execution = /Execution Time: ([\d.]+) ms/.exec(text);
  // The plan's root comes first: its Buffers line counts every block the query touched.
  const root = /Buffers: shared([^\n]*)/.exec(text);
  const buffers = root ? [...root[1].matchAll(/(?:hit|read)=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0) : 0;
  return { indexes: [...indexes, ...seq], executionMs: execution ? Number(execution[1]) : NaN, buffers, text };
}

async function main(): Promise<void> {
  const o = options();
  const started = new Date();
  const log = (message: string) => process.stderr.write(`bench:cards: ${message}\n`);
  const db = await openBenchDatabase(o, 'pgw_bench_cards', log);
  const { pg, dbUrl } = db;
  const processes: BenchProcess[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-cards-'));
  try {
    await pg.connect();
    const { partnerId, rows: cards, seed, issuer } = await seededPartner(db, o, { table: 'cards', script: 'seed-cards.js', noun: 'cards' }, log);

    log('sandbox and gateway...');
    const { base, adminBase, adminToken } = await startBenchGateway(dbUrl, dataDir, processes);
    const currentToken = await partnerTokens(adminBase, adminToken, partnerId, issuer);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const loadAtStart = os.loadavg()[0]!;
    const results: MixResult[] = [];
    const warmup = Math.min(20, Math.max(3, Math.ceil(o.requests / 10)));
    const selected = mixes().filter((m) => !o.only || o.only.includes(m.name));
    for (const mix of selected) {
      const qs = new URLSearchParams(mix.query).toString();
      const url = `${base}/api/partner/cards${qs ? `?${qs}` : ''}`;
      let first: { total: number; capped: boolean; items: number } | undefined;
      const send = async (): Promise<number> => {
        const answer = await get(agent, url, await currentToken());
        if (answer.status !== 200) throw new Error(`GET ${url} → ${answer.status} ${answer.body.slice(0, 500)}`);
        if (!first) {
          const page = JSON.parse(answer.body) as { data: unknown[]; pagination: { total: number } };
          first = { total: page.pagination.total, capped: answer.headers['x-total-capped'] === 'true', items: page.data.length };
        }
        return answer.ms;
      };
      for (let i = 0; i < warmup; i++) await send();
      const latencies: number[] = [];
      for (let i = 0; i < o.requests; i++) latencies.push(await send());
      latencies.sort((a, b) => a - b);
      const plans = [];
      for (const q of await routeQueries(pg, partnerId, mix.query)) plans.push(await explain(pg, q));
      const p95 = percentile(latencies, 95);
      const result: MixResult = {
        name: mix.name,
        target: mix.target,
        requests: latencies.length,
        total: first!.total,
        capped: first!.capped,
        firstPageItems: first!.items,
        p50: round2(percentile(latencies, 50)),
        p95: round2(p95),
        p99: round2(percentile(latencies, 99)),
        max: round2(latencies[latencies.length - 1] ?? 0),
        plans,
        ...(mix.target ? { met: p95 <= TARGET_P95_MS } : {}),
      };
      results.push(result);
      log(`${mix.name}: p50 ${result.p50} p95 ${result.p95} p99 ${result.p99} ms; queries ${plans.map((p) => `${p.indexes.join('+')} ${p.executionMs} ms ${p.buffers} buffers`).join(' | ')}`);
    }
    agent.destroy();

    const report = {
      date: started.toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        node: process.version,
        postgres: (await one<{ v: string }>(pg, 'SELECT version() AS v')).v,
        note: 'the client, the gateway, the sandbox and PostgreSQL share the cores',
        loadAverage: { start: round2(loadAtStart), end: round2(os.loadavg()[0]!) },
      },
      options: o,
      cards,
      seed,
      partnerId,
      targetP95Ms: TARGET_P95_MS,
      results,
      allTargetsMet: results.filter((r) => r.target).every((r) => r.met),
    };
    const table = [
      `GET /api/partner/cards, ${cards.toLocaleString('en')} cards, ${o.requests} sequential requests per mix`,
      '| mix | total | p50 ms | p95 ms | p99 ms | queries (indexes, executor ms, buffers) | p95 ≤ 50 |',
      '|---|---|---|---|---|---|---|',
      ...results.map(
        (r) =>
          `| ${r.name} | ${r.total}${r.capped ? '+' : ''} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.plans.map((p) => `${p.indexes.join(' + ')} ${p.executionMs} ms ${p.buffers} buf`).join('; ')} | ${r.target ? (r.met ? 'met' : 'MISSED') : '-'} |`
      ),
    ].join('\n');
    process.stdout.write(`${table}\n`);
    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `cards-${started.toISOString().replace(/[:.]/g, '-').slice(0, 19)}${o.smoke ? '-smoke' : ''}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`written ${path.relative(ROOT, file)}\n`);
  } finally {
    for (const p of processes.reverse()) await p.stop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:cards failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
