/**
 * `npm run bench:card-db-time [-- --database URL [--partner ID]] [--count 1000000] [--ops 400] [--calls 100] [--only writes,list] [--keep]`
 *
 * PostgreSQL's own time for the card writes and for the card list's queries, for one partner
 * holding `--count` cards (docs/performance.md, "Card writes at 1,000,000 cards"). No
 * gateway: the statements the gateway sends, on one connection.
 *
 * **Writes** (`writes`): for each kind, `--ops` writes of random cards of the partner, each its own
 * transaction, run by a procedure on the server that reads `clock_timestamp()` before and after the
 * write statement and after its `COMMIT` (so no network or client time is in the figures):
 *
 * - `nickname-new`: `UPDATE cards SET nickname = <a value no card holds>, updated_at = now()`, as
 *   `PATCH /cards/{id}/nickname` does (the soak's stream of distinct nicknames);
 * - `nickname-known`: the same to one of the seed's nicknames (a value other cards hold);
 * - `status`: `UPDATE cards SET status, status_code, updated_at` (ACTIVE ↔ LOCKED), as a status change;
 * - `insert`: one card, `INSERT … RETURNING`, as `insertCard` on issuing.
 *
 * The statement is sent with `EXECUTE … USING` (parsed and planned on each call, as the gateway's
 * unnamed statements are). The commit runs with `synchronous_commit = off`: its WAL flush is the
 * disk's, the same for every write, and not what the triggers cost; what the commit runs (deferred
 * triggers) is in. The card tables are vacuumed and analysed first, as autovacuum would have been
 * after an earlier run's writes, and the cards the insert kind made are deleted at the end. Reported: statement, commit and their sum (p50, p95, mean, in ms), the same
 * statements with every trigger off (`session_replication_role = replica`, rolled back: the bare
 * card write), the triggers' functions' own time per write (`track_functions`), and, for a few more
 * writes under `auto_explain` (nested statements, `log_analyze`), each statement the triggers ran with its
 * mean time. Then the growth of `card_search_terms` under `--ops` distinct nicknames given to the
 * same 50 cards in turn (no pruning runs meanwhile).
 *
 * **List** (`list`): `GET /cards` without a search (the filters a counter can answer) and two
 * searches, each call's queries as searchCards runs them, then `--calls` times each under
 * `EXPLAIN (ANALYZE)`: planning plus execution time per call (p50, p95).
 *
 * Without `--database`, creates `pgw_bench_card_db_time_<time>` and seeds it with scripts/seed-cards
 * (dropped at the end unless `--keep`). The machine's other load shows in the figures: run it under
 * `flock /tmp/bench.lock` when the machine is shared.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from 'pg';
import { searchCards, type CardListFilter } from '../gateway/cards/card-search';
import { one, openBenchDatabase, seededPartner } from './seeded-gateway';
import { percentile, round2 } from './stats';
import { positive } from './cli-options';

const ROOT = path.resolve(__dirname, '..', '..');

interface Options {
  smoke: boolean;
  count: number;
  ops: number;
  calls: number;
  database?: string;
  partner?: string;
  keep: boolean;
  only: string[];
  serverUrl: string;
}


function options(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      count: { type: 'string' },
      ops: { type: 'string' },
      calls: { type: 'string' },
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
    ops: positive(values.ops, '--ops') ?? (smoke ? 40 : 400),
    calls: positive(values.calls, '--calls') ?? (smoke ? 10 : 100),
    ...(values.database ? { database: values.database } : {}),
    ...(values.partner ? { partner: values.partner } : {}),
    keep: values.keep ?? false,
    only: values.only ? values.only.split(',') : ['writes', 'list'],
    serverUrl: process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  };
}

/** The cards of the `hot` figures, written in turn. */
const HOT_CARDS = 100;

/** Writes of each kind run under auto_explain, for the statements the triggers run. */
const EXPLAINED = 100;

const WRITE_KINDS = ['nickname-new', 'nickname-known', 'status', 'insert'] as const;
type WriteKind = (typeof WRITE_KINDS)[number];

/**
 * The timed loop, on the server: one write per key, each in its own transaction, committed or
 * rolled back. Answers the statement's and the commit's microseconds, in the keys' order.
 */
const WRITE_PROCEDURE = `
CREATE OR REPLACE PROCEDURE pg_temp.card_write_bench(p_kind text, p_keys text[], p_commit boolean, INOUT stmt_us float8[] DEFAULT NULL, INOUT commit_us float8[] DEFAULT NULL)
LANGUAGE plpgsql AS $proc$
DECLARE
  k text;
  c record;
  t0 timestamptz;
  t1 timestamptz;
  t2 timestamptz;
  known text[] := ARRAY['Travel', 'Groceries', 'Fuel', 'Office supplies', 'Marketing', 'Team lunch', 'Savings', 'Rent'];
BEGIN
  stmt_us := '{}';
  commit_us := '{}';
  FOREACH k IN ARRAY p_keys LOOP
    SELECT * INTO c FROM cards WHERE card_key = k;
    t0 := clock_timestamp();
    IF p_kind = 'nickname-new' THEN
      EXECUTE 'UPDATE cards SET nickname = $2, updated_at = now() WHERE card_key = $1' USING k, 'Bench ' || md5(k || clock_timestamp()::text);
    ELSIF p_kind = 'nickname-known' THEN
      EXECUTE 'UPDATE cards SET nickname = $2, updated_at = now() WHERE card_key = $1'
        USING k, (SELECT n FROM unnest(known) AS n WHERE n IS DISTINCT FROM c.nickname ORDER BY random() LIMIT 1);
    ELSIF p_kind = 'status' THEN
      EXECUTE 'UPDATE cards SET status = $2, status_code = $3, updated_at = now() WHERE card_key = $1'
        USING k, CASE WHEN c.status = 'ACTIVE' THEN 'LOCKED' ELSE 'ACTIVE' END, CASE WHEN c.status = 'ACTIVE' THEN 'L1' ELSE '00' END;
    ELSE
      EXECUTE 'INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code,
                                  currency, product_code, holder_client_code, exp_date, embossed_name, created_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING card_key, partner_id, owner_type, owner_id, card_mask, type,
               status, status_code, currency, product_code, holder_client_code, exp_date, embossed_name, nickname, three_ds_phone, created_at'
        USING 'CKW' || upper(substr(md5(k || clock_timestamp()::text), 1, 15)), c.partner_id, c.owner_type, c.owner_id, c.individual_id, c.tenant_id,
              c.card_mask, c.type, 'ACTIVE', '00', c.currency, c.product_code, c.holder_client_code, c.exp_date, c.embossed_name, now();
    END IF;
    t1 := clock_timestamp();
    IF p_commit THEN COMMIT; ELSE ROLLBACK; END IF;
    t2 := clock_timestamp();
    stmt_us := stmt_us || (extract(epoch FROM t1 - t0) * 1e6)::float8;
    commit_us := commit_us || (extract(epoch FROM t2 - t1) * 1e6)::float8;
  END LOOP;
END
$proc$`;

interface Spread {
  p50: number;
  p95: number;
  mean: number;
}

function spread(us: number[]): Spread {
  const ms = us.map((u) => u / 1000).sort((a, b) => a - b);
  return { p50: round2(percentile(ms, 50) * 1000) / 1000, p95: round2(percentile(ms, 95) * 1000) / 1000, mean: round2((ms.reduce((s, x) => s + x, 0) / Math.max(1, ms.length)) * 1000) / 1000 };
}

interface WriteResult {
  kind: WriteKind;
  ops: number;
  statement: Spread;
  commit: Spread;
  total: Spread;
  /** The statement with every trigger off (rolled back): the card write alone. */
  triggersOff: Spread;
  /**
   * Statement and commit of `ops` writes to the same 100 cards in turn, after a pass over them:
   * their pages are in shared buffers, so this is the work of the write and its triggers without
   * the page reads and evictions of cards met for the first time.
   */
  hot: Spread;
  /** Each trigger function's own time per write (ms), track_functions. */
  functions: Record<string, { callsPerWrite: number; selfMsPerWrite: number; totalMsPerWrite: number }>;
  /**
   * Statements the triggers ran (auto_explain, nested): mean ms per execution, executions per write,
   * and per execution the buffers read (not in shared buffers) and written (evicted dirty), and the
   * full-page images written to the WAL (a page's first change after a checkpoint).
   */
  statements: { text: string; perWrite: number; meanMs: number; read: number; written: number; fpi: number }[];
}

async function randomKeys(pg: Client, partnerId: string, n: number): Promise<string[]> {
  // A sample of blocks, then a shuffle: cards from all over the table, without sorting a million rows.
  const rows = await pg.query<{ card_key: string }>(
    `SELECT card_key FROM (SELECT card_key FROM cards TABLESAMPLE SYSTEM (2) WHERE partner_id = $1 AND card_key NOT LIKE 'CKW%') AS s ORDER BY random() LIMIT $2`,
    [partnerId, n]
  );
  if (rows.rows.length < n) {
    const all = await pg.query<{ card_key: string }>('SELECT card_key FROM cards WHERE partner_id = $1 ORDER BY random() LIMIT $2', [partnerId, n]);
    return all.rows.map((r) => r.card_key);
  }
  return rows.rows.map((r) => r.card_key);
}

async function runWrites(pg: Client, kind: WriteKind, keys: string[], commit: boolean): Promise<{ stmt: number[]; commit: number[] }> {
  const answer = await pg.query<{ stmt_us: number[]; commit_us: number[] }>('CALL pg_temp.card_write_bench($1, $2, $3)', [kind, keys, commit]);
  return { stmt: answer.rows[0]!.stmt_us, commit: answer.rows[0]!.commit_us };
}

async function functionTimes(pg: Client): Promise<Map<string, { calls: number; self: number; total: number }>> {
  await pg.query('SELECT pg_stat_force_next_flush()');
  // A new transaction (the flush happens when the session goes idle), then a fresh stats snapshot.
  await pg.query('SELECT 1');
  await pg.query('SELECT pg_stat_clear_snapshot()');
  const rows = await pg.query<{ funcname: string; calls: string; self_time: number; total_time: number }>(
    `SELECT funcname, calls, self_time, total_time FROM pg_stat_user_functions WHERE funcname LIKE 'card%'`
  );
  return new Map(rows.rows.map((r) => [r.funcname, { calls: Number(r.calls), self: r.self_time, total: r.total_time }]));
}

/** Nested statements' plans as auto_explain reports them (notice level), grouped by their text. */
async function explainedStatements(pg: Client, kind: WriteKind, keys: string[]): Promise<WriteResult['statements']> {
  const seen = new Map<string, { n: number; ms: number; read: number; written: number; fpi: number }>();
  const onNotice = (notice: { message?: string }) => {
    const m = /^duration: ([\d.]+) ms\s+plan:\s*([\s\S]*)$/.exec(notice.message ?? '');
    if (!m) return;
    const explained = JSON.parse(m[2]!) as { 'Query Text'?: string; Plan?: Record<string, number> };
    const text = String(explained['Query Text'] ?? '').replace(/\s+/g, ' ').trim().slice(0, 160);
    const plan = explained.Plan ?? {};
    const entry = seen.get(text) ?? { n: 0, ms: 0, read: 0, written: 0, fpi: 0 };
    entry.n += 1;
    entry.ms += Number(m[1]);
    entry.read += plan['Shared Read Blocks'] ?? 0;
    entry.written += plan['Shared Written Blocks'] ?? 0;
    entry.fpi += plan['WAL FPI'] ?? 0;
    seen.set(text, entry);
  };
  await pg.query(`LOAD 'auto_explain'`);
  await pg.query(`SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; SET auto_explain.log_wal = on; SET auto_explain.log_format = json; SET auto_explain.log_level = notice; SET client_min_messages = notice`);
  pg.on('notice', onNotice);
  try {
    await runWrites(pg, kind, keys, true);
  } finally {
    pg.removeListener('notice', onNotice);
    await pg.query('SET auto_explain.log_min_duration = -1; SET client_min_messages = warning');
  }
  return [...seen.entries()]
    .filter(([text]) => !text.startsWith('SELECT * FROM cards WHERE card_key') && !text.startsWith('CALL '))
    .map(([text, e]) => ({ text, perWrite: round2(e.n / keys.length), meanMs: Math.round((e.ms / e.n) * 1000) / 1000, read: round2(e.read / e.n), written: round2(e.written / e.n), fpi: round2(e.fpi / e.n) }));
}

/**
 * VACUUM (ANALYZE) of the tables the card writes and the list touch, as autovacuum would have run
 * on them after the writes of an earlier run: the figures then do not depend on whether the server
 * runs autovacuum (the shared test server does not) nor on what an earlier run left.
 */
async function vacuumCardTables(pg: Client): Promise<void> {
  const counts = (await pg.query<{ t: string | null }>(`SELECT to_regclass('card_counts')::text AS t`)).rows[0]!.t;
  await pg.query(`VACUUM (ANALYZE) cards, card_search_links, card_search_terms${counts ? ', card_counts' : ''}`);
}

async function measureWrites(pg: Client, partnerId: string, o: Options, log: (m: string) => void): Promise<{ writes: WriteResult[]; termGrowth: Record<string, number> }> {
  await vacuumCardTables(pg);
  await pg.query(WRITE_PROCEDURE);
  await pg.query(`SET synchronous_commit = off; SET track_functions = 'all'; SET client_min_messages = warning`);
  const writes: WriteResult[] = [];
  const warmup = Math.max(5, Math.ceil(o.ops / 10));
  for (const kind of WRITE_KINDS) {
    // Distinct cards for the warm-up, the timed writes, the writes with the triggers off and the explained ones.
    const keys = await randomKeys(pg, partnerId, warmup + 2 * o.ops + EXPLAINED);
    await runWrites(pg, kind, keys.slice(0, warmup), true);
    const before = await functionTimes(pg);
    const timed = await runWrites(pg, kind, keys.slice(warmup, warmup + o.ops), true);
    const after = await functionTimes(pg);
    const functions: WriteResult['functions'] = {};
    for (const [name, a] of after) {
      const b = before.get(name) ?? { calls: 0, self: 0, total: 0 };
      if (a.calls === b.calls) continue;
      functions[name] = {
        callsPerWrite: round2((a.calls - b.calls) / o.ops),
        selfMsPerWrite: Math.round(((a.self - b.self) / o.ops) * 1000) / 1000,
        totalMsPerWrite: Math.round(((a.total - b.total) / o.ops) * 1000) / 1000,
      };
    }
    await pg.query(`SET session_replication_role = replica`);
    const bare = await runWrites(pg, kind, keys.slice(warmup + o.ops, warmup + 2 * o.ops), false).finally(() => pg.query('SET session_replication_role = origin'));
    const statements = await explainedStatements(pg, kind, keys.slice(warmup + 2 * o.ops));
    const hotCards = await randomKeys(pg, partnerId, HOT_CARDS);
    await runWrites(pg, kind, hotCards, true);
    const hot = await runWrites(pg, kind, Array.from({ length: o.ops }, (_, i) => hotCards[i % hotCards.length]!), true);
    const result: WriteResult = {
      kind,
      ops: o.ops,
      statement: spread(timed.stmt),
      commit: spread(timed.commit),
      total: spread(timed.stmt.map((s, i) => s + timed.commit[i]!)),
      triggersOff: spread(bare.stmt),
      hot: spread(hot.stmt.map((x, i) => x + hot.commit[i]!)),
      functions,
      statements,
    };
    writes.push(result);
    log(`${kind}: statement ${JSON.stringify(result.statement)} commit ${JSON.stringify(result.commit)} total ${JSON.stringify(result.total)} triggers off ${JSON.stringify(result.triggersOff)} hot ${JSON.stringify(result.hot)}`);
  }
  // card_search_terms under a stream of distinct nicknames: the same 50 cards renamed in turn.
  const cards = await randomKeys(pg, partnerId, 50);
  const terms = async () => Number((await one<{ n: string }>(pg, 'SELECT count(*) AS n FROM card_search_terms WHERE partner_id = $1', [partnerId])).n);
  const termsBefore = await terms();
  const stream = Array.from({ length: o.ops }, (_, i) => cards[i % cards.length]!);
  await runWrites(pg, 'nickname-new', stream, true);
  const termsAfter = await terms();
  log(`card_search_terms: ${termsBefore} → ${termsAfter} after ${o.ops} distinct nicknames on ${cards.length} cards`);
  // The cards the insert kind made (keys CKW…: W is no hexadecimal digit, so no seeded key starts so) go
  // again, so that runs on one database see the same newest cards.
  await pg.query(`DELETE FROM cards WHERE partner_id = $1 AND card_key LIKE 'CKW%'`, [partnerId]);
  return { writes, termGrowth: { nicknames: o.ops, cards: cards.length, before: termsBefore, after: termsAfter, added: termsAfter - termsBefore } };
}

interface ListResult {
  name: string;
  total: number;
  capped: boolean;
  queries: number;
  p50: number;
  p95: number;
}

const LIST_MIXES: { name: string; filter: Omit<CardListFilter, 'partnerId'>; page?: number }[] = [
  { name: 'none', filter: {} },
  { name: 'status=ACTIVE', filter: { status: 'ACTIVE' } },
  { name: 'status=FRAUD', filter: { status: 'FRAUD' } },
  { name: 'type=physical', filter: { type: 'physical' } },
  { name: 'status=ACTIVE&type=virtual', filter: { status: 'ACTIVE', type: 'virtual' } },
  { name: 'status=FRAUD&type=physical', filter: { status: 'FRAUD', type: 'physical' } },
  { name: 'page=3', filter: {}, page: 3 },
  { name: 'status=LOCKED&page=3', filter: { status: 'LOCKED' }, page: 3 },
  { name: 'search=travel', filter: { search: 'travel' } },
  { name: 'search=travel&status=ACTIVE', filter: { search: 'travel', status: 'ACTIVE' } },
];

async function measureList(pg: Client, partnerId: string, o: Options, log: (m: string) => void): Promise<ListResult[]> {
  await vacuumCardTables(pg);
  const results: ListResult[] = [];
  for (const mix of LIST_MIXES) {
    const recorded: { text: string; values: unknown[] }[] = [];
    const recorder = { query: (text: string, values?: unknown[]) => (recorded.push({ text, values: values ?? [] }), pg.query(text, values)) };
    const answer = await searchCards(recorder as never, { partnerId, ...mix.filter }, { page: mix.page ?? 1, limit: 20 });
    const perCall: number[] = [];
    for (let i = 0; i < o.calls + 3; i++) {
      let ms = 0;
      for (const q of recorded) {
        const plan = await pg.query<{ 'QUERY PLAN': [{ 'Planning Time': number; 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values);
        const root = plan.rows[0]!['QUERY PLAN'][0];
        ms += root['Planning Time'] + root['Execution Time'];
      }
      if (i >= 3) perCall.push(ms);
    }
    perCall.sort((a, b) => a - b);
    const result: ListResult = {
      name: mix.name,
      total: answer.total,
      capped: answer.totalCapped,
      queries: recorded.length,
      p50: Math.round(percentile(perCall, 50) * 1000) / 1000,
      p95: Math.round(percentile(perCall, 95) * 1000) / 1000,
    };
    results.push(result);
    log(`list ${mix.name}: total ${result.total}${result.capped ? '+' : ''}, ${result.queries} queries, p50 ${result.p50} ms p95 ${result.p95} ms`);
  }
  return results;
}

async function main(): Promise<void> {
  const o = options();
  const started = new Date();
  const log = (message: string) => process.stderr.write(`bench:card-db-time: ${message}\n`);
  const db = await openBenchDatabase(o, 'pgw_bench_card_db_time', log);
  try {
    await db.pg.connect();
    const { partnerId, rows } = await seededPartner(db, o, { table: 'cards', script: 'seed-cards.js', noun: 'cards' }, log);
    const loadAtStart = os.loadavg()[0]!;
    const writes = o.only.includes('writes') ? await measureWrites(db.pg, partnerId, o, log) : undefined;
    const list = o.only.includes('list') ? await measureList(db.pg, partnerId, o, log) : undefined;
    const report = {
      date: started.toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        postgres: (await one<{ v: string }>(db.pg, 'SELECT version() AS v')).v,
        loadAverage: { start: round2(loadAtStart), end: round2(os.loadavg()[0]!) },
      },
      options: { ...o, database: o.database ? '(given)' : undefined },
      cards: rows,
      partnerId,
      migrations: (await db.pg.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version DESC LIMIT 1')).rows[0]?.version,
      ...(writes ? { writes: writes.writes, termGrowth: writes.termGrowth } : {}),
      ...(list ? { list } : {}),
    };
    const lines: string[] = [];
    if (writes) {
      lines.push(
        `Card writes, ${rows.toLocaleString('en')} cards, ${o.ops} writes per kind (ms of PostgreSQL time)`,
        '| write | statement p50 / p95 | commit p50 / p95 | total p50 / p95 / mean | triggers off p50 | 100 cards in turn p50 / p95 |',
        '|---|---|---|---|---|---|',
        ...writes.writes.map(
          (w) => `| ${w.kind} | ${w.statement.p50} / ${w.statement.p95} | ${w.commit.p50} / ${w.commit.p95} | ${w.total.p50} / ${w.total.p95} / ${w.total.mean} | ${w.triggersOff.p50} | ${w.hot.p50} / ${w.hot.p95} |`
        ),
        `card_search_terms: +${writes.termGrowth.added} rows after ${writes.termGrowth.nicknames} distinct nicknames on ${writes.termGrowth.cards} cards`
      );
    }
    if (list) {
      lines.push(`GET /cards queries, ${rows.toLocaleString('en')} cards, ${o.calls} calls per mix (planning + execution ms per call)`, '| mix | total | queries | p50 | p95 |', '|---|---|---|---|---|');
      lines.push(...list.map((l) => `| ${l.name} | ${l.total}${l.capped ? '+' : ''} | ${l.queries} | ${l.p50} | ${l.p95} |`));
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `card-db-time-${started.toISOString().replace(/[:.]/g, '-').slice(0, 19)}${o.smoke ? '-smoke' : ''}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`written ${path.relative(ROOT, file)}\n`);
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:card-db-time failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
