/**
 * `npm run bench:webhooks [-- --events 20000] [--cards 200] [--warmup 1000] [--rounds 1] [--server URL] [--profile] [--env K=V ...]`
 *
 * Webhook deliveries per second per worker (docs/performance.md, "Webhook deliveries"). Creates `pgw_bench_wh_<time>` on the PostgreSQL server (dropped at the end),
 * starts the real gateway (`dist/gateway/main.js`, WORKERS=1, sandbox mode: no upstream), a loopback
 * receiver in this process answering 200 at once, one partner with one endpoint for every type.
 * Then, per round, writes `--events` `card.updated` events spread round-robin over `--cards` card
 * keys with `emitEvent` (the gateway's own outbox code, so the deliveries are queued by `fanOut`
 * exactly as a real change queues them) **in one transaction**, so the whole backlog becomes due at
 * its commit, and measures from that commit to the receiver holding every event:
 * - deliveries per second (distinct events received over the time);
 * - the gateway's CPU (the cluster primary and its worker, /proc) per delivery, and that of the
 *   PostgreSQL backends of the bench database (the gateway's pool);
 * - PostgreSQL transactions per delivery (`pg_stat_database.xact_commit`: every statement outside
 *   `BEGIN`…`COMMIT` is one), and statements per delivery when pg_stat_statements is loadable;
 * - ordering per card at the receiver (each event carries its per-card number in the card's nickname:
 *   a first arrival lower than one already received for that card is an ordering violation),
 *   repeats (at-least-once), and a signature check of every 50th delivery.
 * A first round of `--warmup` events (not measured) compiles the code paths.
 * `--profile`: a V8 CPU profile of the gateway worker over the measured rounds
 * (bench/results/profiles/; `node dist/bench/profile-summary.js <file>`).
 * Writes bench/results/webhooks-<date>.json.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { emitEvent, type EventCard } from '../gateway/outbox/partner-events';
import { signPartnerToken } from '../scripts/token';
import { cpuTimeMs, startNode, type BenchProcess } from './processes';
import { childrenOf } from './processes';
import { json } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    cards: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '1' },
    server: { type: 'string', default: process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    profile: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
  },
});

const log = (message: string) => process.stderr.write(`bench:webhooks: ${message}\n`);


/** CPU ms of a process and its children (the gateway's primary and its worker). */
const treeCpuMs = (pid: number): number => [pid, ...childrenOf(pid)].reduce((sum, p) => sum + safeCpu(p), 0);
function safeCpu(pid: number): number {
  try {
    return cpuTimeMs(pid);
  } catch {
    return 0;
  }
}


/** The receiver: answers 200 at once; records the first arrival of each event and checks per-card order. */
class Receiver {
  server!: http.Server;
  secret = '';
  seen = new Set<string>();
  lastOfCard = new Map<string, number>();
  repeats = 0;
  orderViolations = 0;
  badSignatures = 0;
  checked = 0;
  count = 0;
  lastAt = 0;
  private waiter: { wanted: number; resolve: () => void } | undefined;

  async up(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(200).end();
        const raw = Buffer.concat(chunks).toString('utf8');
        const id = req.headers['partner-gateway-event-id'] as string;
        if (this.seen.has(id)) {
          this.repeats++;
          return;
        }
        this.seen.add(id);
        const event = JSON.parse(raw);
        const [card, n] = String(event.data.card.nickname).split('#');
        const number = Number(n);
        if ((this.lastOfCard.get(card) ?? -1) > number) this.orderViolations++;
        else this.lastOfCard.set(card, number);
        if (this.count % 50 === 0) {
          this.checked++;
          const header = String(req.headers['partner-gateway-signature']);
          const t = /t=(\d+)/.exec(header)?.[1];
          const expected = crypto.createHmac('sha256', this.secret).update(`${t}.${raw}`).digest('hex');
          if (!header.includes(`v1=${expected}`)) this.badSignatures++;
        }
        this.count++;
        this.lastAt = performance.now();
        if (this.waiter && this.count >= this.waiter.wanted) this.waiter.resolve();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  until(wanted: number, timeoutMs: number): Promise<void> {
    if (this.count >= wanted) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver: ${this.count} of ${wanted} events after ${timeoutMs} ms`)), timeoutMs);
      this.waiter = {
        wanted,
        resolve: () => {
          clearTimeout(timer);
          this.waiter = undefined;
          resolve();
        },
      };
    });
  }
}

function eventCard(cardKey: string, nickname: string, partnerId: string): EventCard {
  return {
    cardKey, cardMask: '535512******1234', type: 'virtual', status: 'ACTIVE', statusCode: '00', currency: 'EUR', ownerType: 'individual', ownerId: partnerId,
    createdAt: '2026-01-01T00:00:00.000Z', productCode: 'P-STD', holderClientCode: null, expDate: '12/2029', embossedName: 'BENCH.RUNNER', nickname, threeDsPhone: null,
  };
}

/** Writes `count` events over `cards` card keys, round-robin, in one transaction; resolves at its commit. */
async function writeEvents(db: Client, partnerId: string, cards: number, count: number, offset: number): Promise<void> {
  await db.query('BEGIN');
  for (let i = 0; i < count; i++) {
    const cardKey = `bench-card-${String(i % cards).padStart(4, '0')}`;
    const nickname = `${cardKey}#${offset + i}`;
    await emitEvent(db, { type: 'card.updated', partnerId, cardKey, data: { cardKey, changed: ['nickname'], card: eventCard(cardKey, nickname, partnerId) } });
  }
  await db.query('COMMIT');
}

async function main(): Promise<void> {
  const events = Number(args.events);
  const cards = Number(args.cards);
  const warmup = Number(args.warmup);
  const rounds = Number(args.rounds);
  const extraEnv = Object.fromEntries((args.env as string[]).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const database = `pgw_bench_wh_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: args.server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const dbUrl = new URL(args.server!);
  dbUrl.pathname = `/${database}`;
  const processes: BenchProcess[] = [];
  const receiver = new Receiver();
  const writer = new Client({ connectionString: dbUrl.toString() });
  const dataDir = fs.mkdtempSync(path.join(ROOT, '.data-bench-'));
  let profileFile: string | undefined;
  if (args.profile) {
    fs.mkdirSync(path.join(ROOT, 'bench', 'results', 'profiles'), { recursive: true });
    profileFile = path.join(ROOT, 'bench', 'results', 'profiles', `webhooks-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  }
  try {
    const url = await receiver.up();
    const adminToken = crypto.randomBytes(24).toString('base64url');
    const gateway = await startNode(
      path.join(DIST, 'gateway', 'main.js'),
      {
        DATABASE_URL: dbUrl.toString(),
        PORT: '0',
        ADMIN_PORT: '0',
        NOTIFICATIONS_PORT: '0',
        ADMIN_TOKEN: adminToken,
        WORKERS: '1',
        LOG_LEVEL: 'info',
        NODE_OPTIONS: `--max-old-space-size=160${profileFile ? ` --require ${path.join(DIST, 'bench', 'cpu-profile-on-signal.js')}` : ''}`,
        ...(profileFile ? { BENCH_PROFILE_FILE: profileFile } : {}),
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        DATA_DIR: dataDir,
        ...extraEnv,
      },
      (l) => l.msg === 'gateway ready'
    );
    processes.push(gateway);
    const base = `http://127.0.0.1:${String(gateway.ready.port)}`;
    const adminBase = `http://127.0.0.1:${String(gateway.ready.adminPort)}`;
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
    const partner = await json(`${adminBase}/admin/partners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ name: 'bench', issuer: 'https://bench.example', publicKey: publicKey.export({ type: 'spki', format: 'pem' }) }),
    });
    const token = await signPartnerToken({ partnerId: partner._id, issuer: 'https://bench.example', privateKey, ttlSeconds: 300 });
    const endpoint = await json(`${base}/api/partner/webhooks/endpoints`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ url }) });
    receiver.secret = endpoint.secret;
    await writer.connect();
    const pgStatements = await writer
      .query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
      .then(() => writer.query('SELECT pg_stat_statements_reset()'))
      .then(() => true)
      .catch(() => false);

    // WORKERS=1 serves in the process itself (no cluster worker): its CPU profile is its own.
    const workerPid = childrenOf(gateway.child.pid!)[0] ?? gateway.child.pid!;
    let written = 0;
    if (warmup > 0) {
      log(`warm-up: ${warmup} events over ${cards} cards...`);
      await writeEvents(writer, partner._id, cards, warmup, written);
      written += warmup;
      await receiver.until(written, 120_000);
    }
    if (profileFile && workerPid) process.kill(workerPid, 'SIGUSR2');
    const measured: Record<string, number>[] = [];
    for (let round = 0; round < rounds; round++) {
      log(`round ${round + 1}: writing ${events} events over ${cards} cards in one transaction...`);
      // The writer's own transaction is not the gateway's work: the counters are read after its commit.
      await writeEvents(writer, partner._id, cards, events, written);
      written += events;
      const start = performance.now();
      const gatewayCpu0 = treeCpuMs(gateway.child.pid!);
      const backends = (await writer.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r) => r.pid);
      const pgCpu0 = backends.reduce((s, p) => s + safeCpu(p), 0);
      const stat0 = (await writer.query<{ xacts: string }>('SELECT xact_commit + xact_rollback AS xacts FROM pg_stat_database WHERE datname = current_database()')).rows[0].xacts;
      if (pgStatements) await writer.query('SELECT pg_stat_statements_reset()');
      await receiver.until(written, 600_000);
      const seconds = (receiver.lastAt - start) / 1000;
      const gatewayCpu = treeCpuMs(gateway.child.pid!) - gatewayCpu0;
      const pgCpu = backends.reduce((s, p) => s + safeCpu(p), 0) - pgCpu0;
      // Read just after the last arrival: its completion may still be in flight (one at most per slot).
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stat1 = (await writer.query<{ xacts: string }>('SELECT xact_commit + xact_rollback AS xacts FROM pg_stat_database WHERE datname = current_database()')).rows[0].xacts;
      let statements: number | undefined;
      let topStatements: { calls: number; query: string }[] = [];
      if (pgStatements) {
        const rows = await writer.query<{ calls: string; query: string }>(
          `SELECT s.calls, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 90) AS query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
            WHERE d.datname = current_database() AND s.query NOT ILIKE '%pg_stat%' ORDER BY s.calls DESC`
        );
        statements = rows.rows.reduce((s, r) => s + Number(r.calls), 0);
        topStatements = rows.rows.slice(0, 12).map((r) => ({ calls: Number(r.calls), query: r.query }));
      }
      const row = {
        deliveries: events,
        seconds: Math.round(seconds * 100) / 100,
        deliveriesPerSecond: Math.round(events / seconds),
        gatewayCpuUsPerDelivery: Math.round((gatewayCpu * 1000) / events),
        postgresCpuUsPerDelivery: Math.round((pgCpu * 1000) / events),
        // Minus the two reads of the counter itself.
        pgTransactionsPerDelivery: Math.round(((Number(stat1) - Number(stat0) - 2) / events) * 100) / 100,
        ...(statements !== undefined ? { pgStatementsPerDelivery: Math.round((statements / events) * 100) / 100 } : {}),
      };
      measured.push(row);
      log(`round ${round + 1}: ${JSON.stringify(row)}`);
      if (topStatements.length) for (const s of topStatements) log(`  ${String(s.calls).padStart(7)}  ${s.query}`);
    }
    if (profileFile && workerPid) {
      process.kill(workerPid, 'SIGUSR2');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      log(`profile: ${profileFile}`);
    }
    const report = {
      date: new Date().toISOString(),
      events,
      cards,
      env: extraEnv,
      rounds: measured,
      receiver: { received: receiver.count, repeats: receiver.repeats, orderViolations: receiver.orderViolations, signaturesChecked: receiver.checked, badSignatures: receiver.badSignatures },
    };
    fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    const file = path.join(ROOT, 'bench', 'results', `webhooks-${report.date.replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    if (receiver.orderViolations || receiver.badSignatures) {
      log(`FAILED: ${receiver.orderViolations} ordering violations, ${receiver.badSignatures} bad signatures`);
      process.exitCode = 1;
    }
  } finally {
    await writer.end().catch(() => undefined);
    for (const p of processes) await p.stop();
    receiver.server?.close();
    receiver.server?.closeAllConnections();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch((err) => log(`drop: ${String(err)}`));
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
