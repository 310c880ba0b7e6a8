/**
 * `npm run bench:hot-path -- --base /tmp/hot-base/dist [--rounds 7] [--requests 3000] [--connections 50]`
 *
 * One change of the hot path measured against the build before it (docs/performance.md, "The
 * hot path"). `--base` is the `dist/`
 * of the previous build (e.g. `git worktree add /tmp/hot-base <commit>`, a node_modules link, built
 * there). In one run and on one database: the sandbox, two one-worker gateways (this build and the
 * base, both on the compiled engine), and the two baselines of `npm run bench` (the bare Node
 * keep-alive proxy and express-gateway's proxy policy alone, "eg-proxy"). One partner, one card,
 * one token reused: S1 (`GET /api/partner/cards/{id}/status`, the verified-token and ownership
 * caches hit). Each round runs S1 on both gateways, the order swapped every round, then the two
 * baselines; CPU time of each serving process over the round divided by the requests it answered
 * (/proc, bench/processes.ts). Prints each round and the medians of the values and of the
 * per-round ratios (this build / base, this build / eg-proxy, this build / bare proxy), and writes
 * them to bench/results/hot-path-<time>.json. The database is dropped at the end. `--profile`: after
 * the rounds, one more S1 run on this build with V8's profiler on (bench/cpu-profile-on-signal),
 * written to bench/results/profiles/ (`node dist/bench/profile-summary.js <file>`).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { signPartnerToken } from '../scripts/token';
import { benchGatewayEnv, cpuTimeMs, startNode, type BenchProcess } from './processes';
import { json } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 100) / 100;
};

/** CPU µs per answered request of `server` over `amount` requests to `url`; errors and non-2xx counted. */
async function cpuPerRequest(server: BenchProcess, url: string, amount: number, connections: number, headers: Record<string, string> = {}): Promise<{ us: number; bad: number }> {
  const before = cpuTimeMs(server.child.pid!);
  const result = await autocannon({ url, headers, amount, connections: Math.min(connections, amount), sampleInt: 100 });
  const ms = cpuTimeMs(server.child.pid!) - before;
  return { us: Math.round((ms * 1000) / Math.max(1, result.requests.total)), bad: result.errors + result.timeouts + result.non2xx };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      base: { type: 'string' },
      rounds: { type: 'string' },
      requests: { type: 'string' },
      connections: { type: 'string' },
      profile: { type: 'boolean', default: false },
    },
  });
  if (!values.base) throw new Error('--base <dist directory of the previous build> is required');
  const baseDist = path.resolve(values.base);
  if (!fs.existsSync(path.join(baseDist, 'gateway', 'main.js'))) throw new Error(`${baseDist}/gateway/main.js does not exist: build the base first`);
  const rounds = Number(values.rounds ?? 7);
  const amount = Number(values.requests ?? 3000);
  const connections = Number(values.connections ?? 50);
  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const log = (message: string) => process.stderr.write(`hot-path: ${message}\n`);

  const database = `pgw_hot_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${database}`;
  const processes: BenchProcess[] = [];
  const dataDir = fs.mkdtempSync(path.join(ROOT, '.data-bench-'));
  try {
    const sandbox = await startNode(path.join(DIST, 'sandbox', 'main.js'), {}, (l) => typeof l.issuer === 'string');
    processes.push(sandbox);
    const issuer = sandbox.ready.issuer as string;
    const adminToken = crypto.randomBytes(24).toString('base64url');
    const env: Record<string, string> = { ...benchGatewayEnv({ databaseUrl: dbUrl.toString(), sandbox, adminToken, dataDir }), PIPELINE_ENGINE: 'compiled' };
    const profileFile = values.profile ? path.join(ROOT, 'bench', 'results', 'profiles', `${new Date().toISOString().replace(/[:.]/g, '-')}-hot-path-S1.cpuprofile`) : undefined;
    if (profileFile) fs.mkdirSync(path.dirname(profileFile), { recursive: true });
    const profiled = profileFile ? { NODE_OPTIONS: `${env.NODE_OPTIONS} --require ${path.join(DIST, 'bench', 'cpu-profile-on-signal.js')}`, BENCH_PROFILE_FILE: profileFile } : {};
    // This build first: it migrates the database; the base then finds it migrated.
    const current = await startNode(path.join(DIST, 'gateway', 'main.js'), { ...env, ...profiled }, (l) => l.msg === 'gateway ready');
    processes.push(current);
    const booted = await Promise.allSettled([
      startNode(path.join(baseDist, 'gateway', 'main.js'), env, (l) => l.msg === 'gateway ready'),
      startNode(path.join(DIST, 'bench', 'baselines', 'bare-proxy.js'), { TARGET: issuer }, (l) => typeof l.port === 'number'),
      startNode(path.join(DIST, 'bench', 'baselines', 'eg-proxy.js'), { TARGET: issuer }, (l) => typeof l.port === 'number'),
    ]);
    for (const outcome of booted) if (outcome.status === 'fulfilled') processes.push(outcome.value);
    for (const outcome of booted) if (outcome.status === 'rejected') throw outcome.reason;
    const [base, bare, eg] = booted.map((outcome) => (outcome as PromiseFulfilledResult<BenchProcess>).value);
    const url = (p: BenchProcess) => `http://127.0.0.1:${String(p.ready.port)}`;
    const adminBase = `http://127.0.0.1:${String(current.ready.adminPort)}`;

    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
    const partner = await json(`${adminBase}/admin/partners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ name: 'hot-path', issuer: 'https://bench.example', publicKey: publicKey.export({ type: 'spki', format: 'pem' }) }),
    });
    const token = await signPartnerToken({ partnerId: partner._id, issuer: 'https://bench.example', privateKey, ttlSeconds: 300 });
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const individual = await json(`${url(current)}/api/partner/individual/accounts`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        firstName: 'Bench', middleName: 'Mark', lastName: 'Runner', country: 'DE', city: 'Berlin', zipCode: '10115', buildingNumber: '1',
        idType: 'PASSPORT', address1: 'Main 1', passportNumber: 'C01X00T47', issuingDate: '2020-01-01', validityDate: '2030-01-01',
        passportCountry: 'DE', birthCountry: 'DE', birthDate: '1990-01-01', nationality: 'DE', phone: '+4915112345678', email: 'bench@example.com',
      }),
    });
    const card = await json(`${url(current)}/api/partner/individual/accounts/${individual._id}/cards/virtual`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ expDate: `12/${new Date().getUTCFullYear() + 3}`, clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD', embossedName: 'BENCH.RUNNER' }),
    });
    const statusPath = `/cards/${card.cardKey}/status`;

    // Both gateways warm (JIT, caches filled) before any round.
    log('warming up...');
    for (const gateway of [current, base]) await cpuPerRequest(gateway, `${url(gateway)}/api/partner${statusPath}`, Math.min(amount, 2000), connections, auth);
    await cpuPerRequest(eg, `${url(eg)}${statusPath}`, 500, connections);
    await cpuPerRequest(bare, `${url(bare)}${statusPath}`, 500, connections);

    const cpu = { current: [] as number[], base: [] as number[], eg: [] as number[], bare: [] as number[] };
    let bad = 0;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['current', 'base'] as const) : (['base', 'current'] as const);
      for (const which of order) {
        const gateway = which === 'current' ? current : base;
        const r = await cpuPerRequest(gateway, `${url(gateway)}/api/partner${statusPath}`, amount, connections, auth);
        cpu[which].push(r.us);
        bad += r.bad;
      }
      for (const [which, proxy] of [['eg', eg], ['bare', bare]] as const) {
        const r = await cpuPerRequest(proxy, `${url(proxy)}${statusPath}`, amount, connections);
        cpu[which].push(r.us);
        bad += r.bad;
      }
      log(`round ${round + 1}: S1 this build ${cpu.current[round]} µs, base ${cpu.base[round]} µs; eg-proxy ${cpu.eg[round]}, bare ${cpu.bare[round]}`);
    }
    if (profileFile) {
      const toggle = async (marker: string) => {
        fs.rmSync(marker, { force: true });
        current.child.kill('SIGUSR2');
        const deadline = Date.now() + 30_000;
        while (!fs.existsSync(marker)) {
          if (Date.now() > deadline) throw new Error(`${marker} did not appear`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await toggle(`${profileFile}.started`);
      await cpuPerRequest(current, `${url(current)}/api/partner${statusPath}`, amount, connections, auth);
      await toggle(`${profileFile}.done`);
      log(`CPU profile of S1 on this build: ${path.relative(ROOT, profileFile)}`);
    }
    const ratio = (a: number[], b: number[]) => median(a.map((x, i) => +(x / Math.max(1, b[i]!)).toFixed(3)));
    const report = {
      date: new Date().toISOString(),
      base: baseDist,
      rounds,
      requestsPerRound: amount,
      connections,
      cpuUsPerRequest: cpu,
      medians: { current: median(cpu.current), base: median(cpu.base), egProxy: median(cpu.eg), bareProxy: median(cpu.bare) },
      ratios: { currentVsBase: ratio(cpu.current, cpu.base), currentVsEgProxy: ratio(cpu.current, cpu.eg), baseVsEgProxy: ratio(cpu.base, cpu.eg), currentVsBareProxy: ratio(cpu.current, cpu.bare), baseVsBareProxy: ratio(cpu.base, cpu.bare) },
      failedRequests: bad,
    };
    const dir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `hot-path-${report.date.replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    const m = report.medians;
    const r = report.ratios;
    process.stdout.write(
      `S1 medians of CPU µs per request over ${rounds} alternating rounds: this build ${m.current}, base ${m.base} (${r.currentVsBase}x); eg-proxy ${m.egProxy}, bare ${m.bareProxy}\n` +
        `S1 / eg-proxy: this build ${r.currentVsEgProxy}x, base ${r.baseVsEgProxy}x; S1 / bare: this build ${r.currentVsBareProxy}x, base ${r.baseVsBareProxy}x; failed requests ${bad}\n` +
        `written to ${path.relative(ROOT, file)}\n`
    );
    if (bad > 0) process.exitCode = 1;
  } finally {
    for (const p of processes.reverse()) await p.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`hot-path bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
