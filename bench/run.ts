/**
 * `npm run bench [-- --smoke] [--duration 10] [--requests N] [--connections 50] [--cards 1000000] [--rss-requests 1000000] [--authorization-rate 200]`
 * `[--only authorizations]`: the set-up and the authorization phase alone (a quicker loop for the decisions' figures);
 * `[--only tokenizations]`: the set-up and the tokenization phase alone.
 *
 * Starts, in one run and on this machine: the sandbox upstreams, our gateway (one worker, then a
 * cluster of two), and the baselines (a) the upstream called directly, (b) a bare Node keep-alive
 * proxy, (c) express-gateway's own proxy policy alone in a pipeline. autocannon drives scenarios
 * S1 to S6; the ES512 verification ceiling of one core is measured with jose on the same token.
 * Prints one table with the ratios and writes bench/results/<date>.json. `--smoke` runs every
 * scenario for about a second on small data, so that `npm test` keeps the harness working.
 * `--requests N` sends N requests per scenario (S6 included, at its fixed rate) instead of running
 * each for `--duration` seconds (`--smoke` alone: 200, S6 300).
 * After S5, a webhook phase: a loopback receiver in this process, an endpoint for `card.updated`,
 * nickname changes one at a time (change answered → event received: p50/p99) and then a burst
 * (deliveries per second, the gateway's CPU per change and delivery).
 * After the memory figure, an authorization phase (bench/authorizations.ts): the
 * processor's signed authorization requests on cards with spend controls, decisions per second at
 * saturation in rounds alternating with S1 (CPU per decision beside S1's, PostgreSQL's CPU and the
 * statements per decision), then p50/p99 at a fixed `--authorization-rate` (default 200 decisions/s),
 * controls only and with a loopback partner decision endpoint.
 * After it, a tokenization phase (bench/tokenizations.ts): the processor's signed tokenization
 * requests at 100/s without a partner endpoint and with the loopback one (the gateway's own time),
 * and the cascade: cards of 10 tokens locked one at a time, the lock's answer to every token suspended.
 * `--profile S1` (or another gateway scenario, or `A`: the first controls-only saturation round of the authorization phase, or `AE`: its saturation round with the loopback endpoint) records a V8 CPU profile of the gateway over that
 * scenario only, in bench/results/profiles/ (`node dist/bench/profile-summary.js <file>` sums it up).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { compactVerify } from 'jose';
import { Client } from 'pg';
import { signPartnerToken } from '../scripts/token';
import { authorizationPhase, LATENCY_RATE, type AuthorizationResult } from './authorizations';
import { tokenizationLines, tokenizationPhase, tokenizationTargets, type TokenizationResult } from './tokenizations';
import { benchGatewayEnv, cpuTimeMs, peakRssMb, startNode, type BenchProcess } from './processes';
import { json, percentile } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');

interface ScenarioResult {
  name: string;
  description: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** CPU time of the serving process (the gateway, a baseline, or the sandbox for `direct`) per request, in µs. */
  cpuUsPerRequest?: number;
  peakRssMb?: number;
}

interface Options {
  smoke: boolean;
  duration: number;
  /** Requests per scenario instead of a duration (`--requests`); undefined: `--duration`, or the smoke's fixed counts. */
  requests?: number;
  connections: number;
  cards: number;
  rssRequests: number;
  /** Decisions per second of the authorization phase's latency measurements (`--authorization-rate`, default 200: the rate the latency target is stated at). */
  authorizationRate: number;
  serverUrl: string;
  /** The gateway scenario (S1 to S5) whose CPU profile is recorded (`--profile`). */
  profile?: string;
  /** Rounds of the engine comparison (`--engine-rounds`, default 5; the smoke 1). */
  engineRounds: number;
  /**
   * `--only authorizations`: the set-up, S1's warm-up and the authorization phase alone (its figures to stdout and bench/results/<date>-authorizations.json);
   * `--only tokenizations`: the set-up and the tokenization phase alone (bench/results/<date>-tokenizations.json).
   */
  only?: 'authorizations' | 'tokenizations';
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      duration: { type: 'string' },
      requests: { type: 'string' },
      connections: { type: 'string' },
      cards: { type: 'string' },
      'rss-requests': { type: 'string' },
      profile: { type: 'string' },
      'authorization-rate': { type: 'string' },
      'engine-rounds': { type: 'string' },
      only: { type: 'string' },
    },
  });
  if (values.only !== undefined && values.only !== 'authorizations' && values.only !== 'tokenizations') throw new Error(`--only takes authorizations or tokenizations, not ${values.only}`);
  const smoke = values.smoke ?? false;
  const requests = values.requests === undefined ? undefined : Number(values.requests);
  if (requests !== undefined && !(Number.isInteger(requests) && requests > 0)) throw new Error(`--requests must be a positive integer, not ${values.requests}`);
  const authorizationRate = Number(values['authorization-rate'] ?? LATENCY_RATE);
  if (!(Number.isInteger(authorizationRate) && authorizationRate > 0 && authorizationRate <= 5000)) throw new Error(`--authorization-rate must be an integer from 1 to 5000, not ${values['authorization-rate']}`);
  const engineRounds = Number(values['engine-rounds'] ?? (smoke ? 1 : 5));
  if (!(Number.isInteger(engineRounds) && engineRounds >= 1)) throw new Error(`--engine-rounds must be a positive integer, not ${values['engine-rounds']}`);
  return {
    smoke,
    engineRounds,
    duration: Number(values.duration ?? 10),
    requests,
    connections: Number(values.connections ?? (smoke ? '10' : '50')),
    cards: Number(values.cards ?? (smoke ? 1000 : 1_000_000)),
    rssRequests: Number(values['rss-requests'] ?? (smoke ? 300 : 1_000_000)),
    authorizationRate,
    serverUrl: process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    ...(values.profile ? { profile: values.profile } : {}),
    ...(values.only === 'authorizations' || values.only === 'tokenizations' ? { only: values.only } : {}),
  };
}

/**
 * autocannon samples the request rate every `sampleInt` ms (default 1,000) and ends a run only on a
 * sample: a fixed count of requests (`amount`: the smoke, `--requests`) would wait out the rest of
 * a second, so those runs sample every 100 ms (req/s scaled to match); `--duration` runs keep 1 s.
 */
const AMOUNT_SAMPLE_MS = 100;

/** Where `--profile` writes the gateway's CPU profile (bench/cpu-profile-on-signal). */
let profileFile: string | undefined;
let profiledScenario: string | undefined;

async function waitForFile(file: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** SIGUSR2 toggles the preloaded profiler; the marker file says the toggle took effect. */
async function toggleProfiler(server: BenchProcess, marker: string): Promise<void> {
  fs.rmSync(marker, { force: true });
  server.child.kill('SIGUSR2');
  await waitForFile(marker);
}

/**
 * Runs one autocannon scenario. `server`: the process that serves it, whose CPU time over the run
 * divided by the requests answered is the scenario's CPU per request. Unlike requests per second,
 * that figure barely moves with the load generator, which shares the cores.
 */
async function run(name: string, description: string, opts: autocannon.Options, server?: BenchProcess): Promise<ScenarioResult> {
  const sampleInt = opts.amount !== undefined ? AMOUNT_SAMPLE_MS : 1000;
  // autocannon refuses more connections than requests (a small `--requests`).
  const connections = Math.min(opts.connections ?? 50, opts.amount ?? Infinity);
  const profiled = server !== undefined && profileFile !== undefined && name === profiledScenario;
  if (profiled) await toggleProfiler(server, `${profileFile!}.started`);
  const cpuBefore = server ? cpuTimeMs(server.child.pid!) : 0;
  const result = await autocannon({ ...opts, connections, ...(sampleInt === 1000 ? {} : { sampleInt }) });
  const cpuMs = server ? cpuTimeMs(server.child.pid!) - cpuBefore : 0;
  if (profiled) {
    await toggleProfiler(server, `${profileFile!}.done`);
    process.stderr.write(`bench: CPU profile of ${name} (its CPU figure includes the profiler's cost): ${path.relative(ROOT, profileFile!)}\n`);
  }
  return {
    ...(server && result.requests.total > 0 ? { cpuUsPerRequest: Math.round((cpuMs * 1000) / result.requests.total) } : {}),
    name,
    description,
    rps: Math.round((result.requests.average * 1000) / sampleInt),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** ES512 verifications per second on one core, jose, the same token and key. */
async function es512Ceiling(seconds: number): Promise<number> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const token = await signPartnerToken({ partnerId: 'f'.repeat(24), issuer: 'https://bench.example', privateKey, ttlSeconds: 300 });
  for (let i = 0; i < 50; i++) await compactVerify(token, publicKey); // warm-up
  const started = process.hrtime.bigint();
  let count = 0;
  while (Number(process.hrtime.bigint() - started) / 1e9 < seconds) {
    await compactVerify(token, publicKey);
    count += 1;
  }
  return Math.round(count / (Number(process.hrtime.bigint() - started) / 1e9));
}


/** What the webhook phase measured (`report.webhooks`). */
interface WebhookResult {
  /** Deliveries a burst of nickname changes on `cards` cards produced, and how many per second reached the receiver. */
  deliveries: number;
  cards: number;
  deliveriesPerSecond: number;
  /** Gateway CPU per change and its delivery, and the same minus S4's CPU per change alone: the delivery's cost. */
  cpuUsPerChangeAndDelivery: number;
  addedCpuUsPerDelivery: number;
  /** One change at a time: from the PATCH's answer (the change committed) to the receiver holding the event, in ms. */
  latencySamples: number;
  addedLatencyP50Ms: number;
  addedLatencyP99Ms: number;
}

/** A loopback webhook receiver in the bench process: answers 200 and calls the waiters with each event's arrival. */
async function startReceiver(): Promise<{ url: string; received: () => number; next: (count: number) => Promise<number>; close: () => Promise<void> }> {
  let count = 0;
  const waiters: { count: number; resolve: (at: number) => void }[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      const at = performance.now();
      res.writeHead(200).end();
      for (const waiter of waiters.splice(0)) {
        if (count >= waiter.count) waiter.resolve(at);
        else waiters.push(waiter);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => count,
    // Resolves with the arrival time of the `count`-th event (at once when it has arrived).
    next: (wanted) =>
      new Promise((resolve, reject) => {
        if (count >= wanted) return resolve(performance.now());
        const timer = setTimeout(() => reject(new Error(`webhook receiver: ${count} of ${wanted} events after 60 s`)), 60_000);
        waiters.push({ count: wanted, resolve: (at) => (clearTimeout(timer), resolve(at)) });
      }),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}


async function main(): Promise<void> {
  const o = options();
  const duration = o.duration;
  const started = new Date();
  if (o.profile) {
    if (!/^(S[1-5]|A|AE)$/.test(o.profile)) throw new Error(`--profile takes a gateway scenario, S1 to S5, A (the first saturation round of authorization decisions) or AE (the saturation round with the loopback endpoint), not ${o.profile}`);
    const dir = path.join(ROOT, 'bench', 'results', 'profiles');
    fs.mkdirSync(dir, { recursive: true });
    profiledScenario = o.profile;
    profileFile = path.join(dir, `${started.toISOString().replace(/[:.]/g, '-')}-${o.profile}.cpuprofile`);
  }
  const database = `pgw_bench_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: o.serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const dbUrl = new URL(o.serverUrl);
  dbUrl.pathname = `/${database}`;
  const processes: BenchProcess[] = [];
  /** The statement count's directory (outside the checkout where /dev/shm exists), removed at the end. */
  let queryCountDir: string | undefined;
  const results: ScenarioResult[] = [];
  const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
  try {
    log('ES512 ceiling (one core, jose)...');
    const ceiling = await es512Ceiling(o.smoke ? 0.1 : 3);

    const sandbox = await startNode(path.join(DIST, 'sandbox', 'main.js'), {}, (l) => typeof l.issuer === 'string');
    processes.push(sandbox);
    const issuer = sandbox.ready.issuer as string;
    const adminToken = crypto.randomBytes(24).toString('base64url');
    // The processing system's secret: the notifications listener, and with it the authorization
    // requests' route, is up (the authorization phase signs its requests with it).
    const processingSecret = crypto.randomBytes(32).toString('base64url');
    // On a memory file system where there is one: the gateway writes it every 200 ms from its event
    // loop (bench/count-queries), and on the disk PostgreSQL's WAL is on, a write or rename can wait
    // behind the file system's journal commit when the disk stalls: 100 to 500 ms during which the
    // gateway would answer nothing.
    queryCountDir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : ROOT, '.data-bench-'));
    const queryCountFile = path.join(queryCountDir, 'queries');
    const gatewayEnv = (workers: number) => ({
      ...benchGatewayEnv({ databaseUrl: dbUrl.toString(), sandbox, adminToken, dataDir: fs.mkdtempSync(path.join(ROOT, '.data-bench-')) }),
      WORKERS: String(workers),
      // The scenarios measure the compiled engine; the engine phase sets the other beside it.
      PIPELINE_ENGINE: 'compiled',
      // One worker: the statement counter of the authorization phase (bench/count-queries).
      // BENCH_GATEWAY_NODE_FLAGS: more V8 flags for the one-worker gateway (a diagnostic: docs/performance.md "Diagnostics");
      // BENCH_GATEWAY_V8_FLAGS: those NODE_OPTIONS refuses (--trace-gc...), set at its start (bench/v8-flags-on-start).
      NODE_OPTIONS: `--max-old-space-size=160${workers === 1 && process.env.BENCH_GATEWAY_NODE_FLAGS ? ` ${process.env.BENCH_GATEWAY_NODE_FLAGS}` : ''}${workers === 1 && process.env.BENCH_GATEWAY_V8_FLAGS ? ` --require ${path.join(DIST, 'bench', 'v8-flags-on-start.js')}` : ''}${profileFile && workers === 1 ? ` --require ${path.join(DIST, 'bench', 'cpu-profile-on-signal.js')}` : ''}${workers === 1 ? ` --require ${path.join(DIST, 'bench', 'count-queries.js')}` : ''}`,
      ...(profileFile && workers === 1 ? { BENCH_PROFILE_FILE: profileFile } : {}),
      ...(workers === 1 ? { BENCH_QUERY_COUNT_FILE: queryCountFile } : {}),
      PROCESSING_NOTIFY_SECRET: processingSecret,
      // The decision-time diagnostic (docs/performance.md "Diagnostics"): the gateway's side of BENCH_AUTHORIZATION_TRACE_DIR.
      ...(process.env.BENCH_AUTHORIZATION_TRACE_DIR && workers === 1 ? { AUTHORIZATION_TRACE_FILE: path.join(process.env.BENCH_AUTHORIZATION_TRACE_DIR, 'gateway.jsonl') } : {}),
      // The webhook phase's receiver listens on loopback in this process.
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    });
    // The gateway and the two baselines boot side by side (nothing is measured yet); every one
    // that started is stopped at the end, also when another failed to start.
    const booted = await Promise.allSettled([
      // BENCH_GATEWAY_STDOUT_FILE: the gateway's stdout after it is ready (its V8 traces with BENCH_GATEWAY_NODE_FLAGS) in that file.
      startNode(path.join(DIST, 'gateway', 'main.js'), gatewayEnv(1), (l) => l.msg === 'gateway ready', undefined, process.env.BENCH_GATEWAY_STDOUT_FILE),
      startNode(path.join(DIST, 'bench', 'baselines', 'bare-proxy.js'), { TARGET: issuer }, (l) => typeof l.port === 'number'),
      startNode(path.join(DIST, 'bench', 'baselines', 'eg-proxy.js'), { TARGET: issuer }, (l) => typeof l.port === 'number'),
    ]);
    for (const outcome of booted) if (outcome.status === 'fulfilled') processes.push(outcome.value);
    for (const outcome of booted) if (outcome.status === 'rejected') throw outcome.reason;
    const [gateway, bare, eg] = booted.map((outcome) => (outcome as PromiseFulfilledResult<BenchProcess>).value);
    const base = `http://127.0.0.1:${String(gateway.ready.port)}`;
    const adminBase = `http://127.0.0.1:${String(gateway.ready.adminPort)}`;

    log('partner, individual, card...');
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
    const partner = await json(`${adminBase}/admin/partners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ name: 'bench', issuer: 'https://bench.example', publicKey: publicKey.export({ type: 'spki', format: 'pem' }) }),
    });
    const token = (ttlSeconds = 300) => signPartnerToken({ partnerId: partner._id, issuer: 'https://bench.example', privateKey, ttlSeconds });
    const auth = async () => ({ authorization: `Bearer ${await token()}`, 'content-type': 'application/json' });
    const individual = await json(`${base}/api/partner/individual/accounts`, {
      method: 'POST',
      headers: await auth(),
      body: JSON.stringify({
        firstName: 'Bench', middleName: 'Mark', lastName: 'Runner', country: 'DE', city: 'Berlin', zipCode: '10115', buildingNumber: '1',
        idType: 'PASSPORT', address1: 'Main 1', passportNumber: 'C01X00T47', issuingDate: '2020-01-01', validityDate: '2030-01-01',
        passportCountry: 'DE', birthCountry: 'DE', birthDate: '1990-01-01', nationality: 'DE', phone: '+4915112345678', email: 'bench@example.com',
      }),
    });
    const expDate = `12/${new Date().getUTCFullYear() + 3}`;
    const card = await json(`${base}/api/partner/individual/accounts/${individual._id}/cards/virtual`, {
      method: 'POST',
      headers: await auth(),
      body: JSON.stringify({ expDate, clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD', embossedName: 'BENCH.RUNNER' }),
    });
    const statusPath = `/cards/${card.cardKey}/status`;

    log(`seeding ${o.cards} cards...`);
    execFileSync(process.execPath, [path.join(DIST, 'scripts', 'seed-cards.js'), '--partner', partner._id, '--count', String(o.cards), '--database-url', dbUrl.toString()], { stdio: 'ignore' });

    // The smoke (run by the test suite) only proves the harness works: a fixed 200 requests per
    // scenario (autocannon's duration has a 1 s granularity), not a measurement. `--requests`
    // sets that count (also outside the smoke).
    const amount = o.requests ?? (o.smoke ? 200 : undefined);
    const common = amount !== undefined ? { amount, connections: o.connections } : { duration, connections: o.connections };
    const newCard = async (): Promise<string> =>
      (
        await json(`${base}/api/partner/individual/accounts/${individual._id}/cards/virtual`, {
          method: 'POST',
          headers: await auth(),
          body: JSON.stringify({ expDate, clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD', embossedName: 'BENCH.RUNNER' }),
        })
      ).cardKey as string;
    const authorizationRun = (): Promise<AuthorizationResult> =>
      authorizationPhase({
        gateway,
        partnerApi: `${base}/api/partner`,
        notifyBase: `http://127.0.0.1:${String(gateway.ready.notifyPort)}`,
        auth,
        newCard,
        dbUrl: dbUrl.toString(),
        secret: processingSecret,
        queryCountFile,
        smoke: o.smoke,
        ...(o.requests !== undefined ? { requests: o.requests } : {}),
        duration,
        connections: o.connections,
        rate: o.authorizationRate,
        ...(profileFile && (profiledScenario === 'A' || profiledScenario === 'AE')
          ? {
              [profiledScenario === 'A' ? 'profile' : 'profileEndpoint']: async (on: boolean) => {
                await toggleProfiler(gateway, `${profileFile!}.${on ? 'started' : 'done'}`);
                if (!on) process.stderr.write(`bench: CPU profile of the authorization decisions (its CPU figure includes the profiler's cost): ${path.relative(ROOT, profileFile!)}\n`);
              },
            }
          : {}),
        s1Round: async () => run('S1-auth-round', 'S1 round of the authorization phase', { ...common, url: `${base}/api/partner${statusPath}`, headers: await auth() }, gateway),
        log,
      });

    const tokenizationRun = (): Promise<TokenizationResult> =>
      tokenizationPhase({
        gateway,
        partnerApi: `${base}/api/partner`,
        notifyBase: `http://127.0.0.1:${String(gateway.ready.notifyPort)}`,
        processing: sandbox.ready.processing as string,
        auth,
        newCard,
        expDate,
        dbUrl: dbUrl.toString(),
        secret: processingSecret,
        queryCountFile,
        smoke: o.smoke,
        ...(o.requests !== undefined ? { requests: o.requests } : {}),
        log,
      });

    // Not measured: the first requests of the card-status route compile its code paths (JIT, the
    // route's first use), which S1 would pay alone and S2 not at all; with the smoke's 50 requests
    // that made S1 look as costly as S2. The same count as a measured run, at most 2,000.
    const warmS1 = async () => autocannon({ url: `${base}/api/partner${statusPath}`, headers: await auth(), connections: Math.min(o.connections, amount ?? 2000), amount: Math.min(amount ?? 2000, 2000), sampleInt: AMOUNT_SAMPLE_MS });

    if (o.only === 'authorizations') {
      // The phase's S1 rounds then measure warm code.
      await warmS1();
      log('authorizations (issue 21) only...');
      const authorizations = await authorizationRun();
      process.stdout.write(`${authorizationLines(authorizations)}\n`);
      const resultsDir = path.join(ROOT, 'bench', 'results');
      fs.mkdirSync(resultsDir, { recursive: true });
      const file = path.join(resultsDir, `${started.toISOString().slice(0, 10)}-authorizations${o.smoke ? '-smoke' : ''}.json`);
      fs.writeFileSync(file, `${JSON.stringify({ date: started.toISOString(), options: o, authorizations }, null, 2)}\n`);
      process.stdout.write(`written ${path.relative(ROOT, file)}\n`);
      return;
    }
    if (o.only === 'tokenizations') {
      log('tokenizations (issue 35) only...');
      const tokenizations = await tokenizationRun();
      const targets = tokenizationTargets(tokenizations);
      process.stdout.write(`${tokenizationLines(tokenizations)}\n${Object.entries(targets).map(([target, met]) => `${met ? 'met   ' : 'MISSED'} ${target}`).join('\n')}\n`);
      const resultsDir = path.join(ROOT, 'bench', 'results');
      fs.mkdirSync(resultsDir, { recursive: true });
      const file = path.join(resultsDir, `${started.toISOString().slice(0, 10)}-tokenizations${o.smoke ? '-smoke' : ''}.json`);
      fs.writeFileSync(file, `${JSON.stringify({ date: started.toISOString(), options: o, tokenizations, targets }, null, 2)}\n`);
      process.stdout.write(`written ${path.relative(ROOT, file)}\n`);
      return;
    }
    log('baselines...');
    results.push(await run('direct', '(a) the issuer sandbox called directly', { ...common, url: `${issuer}${statusPath}` }, sandbox));
    results.push(await run('bare-proxy', '(b) bare Node keep-alive proxy', { ...common, url: `http://127.0.0.1:${String(bare.ready.port)}${statusPath}` }, bare));
    results.push(await run('eg-proxy', "(c) express-gateway's proxy policy alone", { ...common, url: `http://127.0.0.1:${String(eg.ready.port)}${statusPath}` }, eg));

    log('S1..S5...');
    await warmS1();
    results.push(await run('S1', 'GET /cards/{id}/status, one token reused', { ...common, url: `${base}/api/partner${statusPath}`, headers: await auth() }, gateway));
    const freshCount = o.requests !== undefined ? o.requests + 100 : o.smoke ? 300 : Math.ceil(Math.min(ceiling, 2000) * duration * 1.5) + 100;
    log(`signing ${freshCount} fresh tokens for S2...`);
    const fresh: string[] = [];
    for (let i = 0; i < freshCount; i++) fresh.push(await token());
    let next = 0;
    results.push(
      await run('S2', 'S1 with a fresh token on every request', {
        ...common,
        url: `${base}/api/partner${statusPath}`,
        requests: [
          {
            setupRequest: (request: any) => {
              request.headers = { ...request.headers, authorization: `Bearer ${fresh[next++ % fresh.length]}` };
              return request;
            },
          },
        ],
      }, gateway)
    );
    const body = JSON.stringify({ expDate, reason: 'bench' });
    results.push(
      await run('S3', 'POST /cards/{id}/lock then /unlock (validation, issuer, PostgreSQL write)', {
        ...common,
        url: base,
        headers: await auth(),
        requests: [
          { method: 'POST', path: `/api/partner/cards/${card.cardKey}/lock`, body },
          { method: 'POST', path: `/api/partner/cards/${card.cardKey}/unlock`, body },
        ],
      }, gateway)
    );
    results.push(
      await run('S4', 'PATCH /cards/{id}/nickname (local handler, PostgreSQL write)', {
        ...common,
        url: `${base}/api/partner/cards/${card.cardKey}/nickname`,
        method: 'PATCH',
        headers: await auth(),
        body: JSON.stringify({ nickname: 'bench nickname' }),
      }, gateway)
    );
    results.push(
      await run('S5', `GET /cards?search=...&status=ACTIVE, ${o.cards.toLocaleString('en')} cards`, {
        ...common,
        url: `${base}/api/partner/cards?search=4821&status=ACTIVE`,
        headers: await auth(),
      }, gateway)
    );

    const engines = await enginePhase({ o, common, gateway, base, statusPath, auth, bare, eg, log, env: () => ({ ...gatewayEnv(1), PIPELINE_ENGINE: 'express-gateway', NODE_OPTIONS: '--max-old-space-size=160', BENCH_PROFILE_FILE: undefined, BENCH_QUERY_COUNT_FILE: undefined }), cardKey: card.cardKey, body: JSON.stringify({ expDate, reason: 'bench' }), processes });

    log('webhooks: deliveries per second and added latency...');
    // After S1 to S5, so that their figures carry no delivery: the endpoint exists from here on.
    const receiver = await startReceiver();
    let webhooks: WebhookResult;
    try {
      await json(`${base}/api/partner/webhooks/endpoints`, { method: 'POST', headers: await auth(), body: JSON.stringify({ url: receiver.url, events: ['card.updated'] }) });
      // A card's events go out one at a time (in order), so the burst spreads over several cards.
      const webhookCards = [card.cardKey];
      for (let i = 1; i < 8; i++) {
        const more = await json(`${base}/api/partner/individual/accounts/${individual._id}/cards/virtual`, {
          method: 'POST',
          headers: await auth(),
          body: JSON.stringify({ expDate, clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD', embossedName: 'BENCH.RUNNER' }),
        });
        webhookCards.push(more.cardKey);
      }
      const nickname = (cardKey: string, i: number) => ({ method: 'PATCH' as const, path: `/api/partner/cards/${cardKey}/nickname`, body: JSON.stringify({ nickname: `bench ${i}` }) });
      const samples = o.requests ?? (o.smoke ? 20 : 300);
      const latencies: number[] = [];
      for (let i = 0; i < samples; i++) {
        const waiting = receiver.next(receiver.received() + 1);
        const change = nickname(webhookCards[0], i);
        await json(`${base}${change.path}`, { method: change.method, headers: await auth(), body: change.body });
        const committed = performance.now();
        latencies.push((await waiting) - committed);
      }
      latencies.sort((a, b) => a - b);
      const burst = o.requests ?? (o.smoke ? 200 : 5000);
      const before = receiver.received();
      const cpuBefore = cpuTimeMs(gateway.child.pid!);
      const burstStarted = performance.now();
      await autocannon({
        url: base,
        headers: await auth(),
        connections: Math.min(o.connections, burst),
        amount: burst,
        sampleInt: AMOUNT_SAMPLE_MS,
        requests: webhookCards.map((cardKey, i) => nickname(cardKey, i)),
      });
      const lastAt = await receiver.next(before + burst);
      const cpuMs = cpuTimeMs(gateway.child.pid!) - cpuBefore;
      const cpuPer = Math.round((cpuMs * 1000) / burst);
      webhooks = {
        deliveries: burst,
        cards: webhookCards.length,
        deliveriesPerSecond: Math.round(burst / ((lastAt - burstStarted) / 1000)),
        cpuUsPerChangeAndDelivery: cpuPer,
        addedCpuUsPerDelivery: cpuPer - (results.find((r) => r.name === 'S4')?.cpuUsPerRequest ?? 0),
        latencySamples: latencies.length,
        addedLatencyP50Ms: +percentile(latencies, 50).toFixed(2),
        addedLatencyP99Ms: +percentile(latencies, 99).toFixed(2),
      };
    } finally {
      await receiver.close();
    }

    log('S6 (fixed 1,000 requests/s)...');
    const s6Amount = o.requests ?? (o.smoke ? 300 : undefined);
    const fixed = { ...(s6Amount !== undefined ? { amount: s6Amount } : { duration }), connections: 20, overallRate: 1000 };
    const s6direct = await run('S6-direct', 'direct at 1,000 requests/s', { ...fixed, url: `${issuer}${statusPath}` });
    const s6gateway = await run('S6-S1', 'S1 at 1,000 requests/s', { ...fixed, url: `${base}/api/partner${statusPath}`, headers: await auth() });
    results.push(s6direct, s6gateway);

    log(`memory: ${o.rssRequests.toLocaleString('en')} requests of S1...`);
    await autocannon({ url: `${base}/api/partner${statusPath}`, headers: await auth(), connections: o.connections, amount: o.rssRequests, sampleInt: AMOUNT_SAMPLE_MS });
    const singleRss = peakRssMb(gateway.child.pid!).process;

    // After the memory figure (its peak is S1's alone), before the cluster replaces this gateway.
    log('authorizations (issue 21)...');
    const authorizations = await authorizationRun();

    log('tokenizations (issue 35)...');
    const tokenizations = await tokenizationRun();

    log('cluster of 2 workers, S1...');
    await gateway.stop();
    const cluster = await startNode(path.join(DIST, 'gateway', 'main.js'), gatewayEnv(2), (l) => l.msg === 'gateway ready');
    processes.push(cluster);
    const clusterBase = `http://127.0.0.1:${String(cluster.ready.port)}`;
    const s1cluster = await run('S1-cluster2', 'S1 on a cluster of 2 workers', { ...common, url: `${clusterBase}/api/partner${statusPath}`, headers: await auth() });
    s1cluster.peakRssMb = Math.max(...peakRssMb(cluster.child.pid!).children, 0);
    results.push(s1cluster);

    const by = (name: string) => results.find((r) => r.name === name)!;
    const s1 = by('S1');
    s1.peakRssMb = singleRss;
    const ratios = {
      s1VsEgProxy: +(s1.rps / by('eg-proxy').rps).toFixed(2),
      s1VsBareProxy: +(s1.rps / by('bare-proxy').rps).toFixed(2),
      s2VsEs512Ceiling: +(by('S2').rps / ceiling).toFixed(2),
      s6AddedP50Ms: +(s6gateway.p50 - s6direct.p50).toFixed(2),
      s6AddedP99Ms: +(s6gateway.p99 - s6direct.p99).toFixed(2),
      cluster2VsOne: +(s1cluster.rps / s1.rps).toFixed(2),
      // CPU per request of the serving process: S1 against express-gateway's proxy-only pipeline,
      // S2 against one raw ES512 verification (1 s / the ceiling).
      s1CpuVsEgProxyCpu: +((s1.cpuUsPerRequest ?? 0) / Math.max(1, by('eg-proxy').cpuUsPerRequest ?? 0)).toFixed(2),
      s2CpuVsEs512: +((by('S2').cpuUsPerRequest ?? 0) / (1e6 / ceiling)).toFixed(2),
    };
    const report = {
      date: started.toISOString(),
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version, note: 'the load generator (autocannon) runs on the same cores' },
      options: o,
      es512CeilingPerSecond: ceiling,
      results,
      ratios,
      webhooks,
      authorizations,
      tokenizations,
      engines,
      targets: {
        'S1 >= 1.0x express-gateway proxy': ratios.s1VsEgProxy >= 1,
        'S1 >= 40% of bare proxy': ratios.s1VsBareProxy >= 0.4,
        'S2 >= 85% of ES512 ceiling': ratios.s2VsEs512Ceiling >= 0.85,
        'S1 CPU per request <= 1.0x express-gateway proxy': ratios.s1CpuVsEgProxyCpu <= 1,
        'S2 CPU per request <= 1.25x one ES512 verification': ratios.s2CpuVsEs512 <= 1.25,
        'S6 added p99 <= 2 ms': ratios.s6AddedP99Ms <= 2,
        'cluster of 2 >= 1.6x one worker': ratios.cluster2VsOne >= 1.6,
        'peak RSS per worker <= 200 MB': Math.max(singleRss, s1cluster.peakRssMb ?? 0) <= 200,
        'no error or non-2xx answer': results.every((r) => r.errors === 0 && r.non2xx === 0),
        [`authorizations: p99 <= 20 ms at ${o.authorizationRate}/s, controls only`]: authorizations.latencyControlsOnly.p99Ms <= 20,
        [`authorizations: p99 <= 20 ms at ${o.authorizationRate}/s, loopback partner endpoint, the gateway's own time (less the partner's)`]: authorizations.latencyWithEndpoint.ownP99Ms <= 20,
        [`authorizations: p99 <= 20 ms at ${o.authorizationRate}/s, loopback partner endpoint, at the client (informative: the partner's time included)`]: authorizations.latencyWithEndpoint.p99Ms <= 20,
        'authorizations: >= 500 decisions/s per worker, controls only': authorizations.decisionsPerSecond >= 500,
        ...Object.fromEntries(
          authorizations.deadline.map((d) => [
            `authorizations: every answer before the processor's deadline (${d.deadlineMs} ms), ${d.cause === 'endpoint' ? 'a hanging partner endpoint' : 'the recordings held by the database'}, ${d.busyProcesses} other processes busy`,
            d.pastDeadline === 0 && d.other === 0 && d.samples > 0,
          ])
        ),
        'authorizations: every decision answered 200 and recorded':
          [...authorizations.rounds, ...(authorizations.saturationWithEndpoint ? [authorizations.saturationWithEndpoint] : [])].every((r) => r.errors === 0) &&
          authorizations.latencyControlsOnly.errors === 0 &&
          authorizations.latencyWithEndpoint.errors === 0 &&
          // Every answer recorded; more recorded only for what a timed round left unanswered at its end.
          authorizations.unrecorded <= 0 &&
          -authorizations.unrecorded <= authorizations.abandoned,
        ...tokenizationTargets(tokenizations),
      },
    };

    const rows = results.map((r) => `| ${r.name.padEnd(12)} | ${String(r.rps).padStart(7)} | ${String(r.cpuUsPerRequest ?? '').padStart(6)} | ${String(r.p50).padStart(6)} | ${String(r.p99).padStart(6)} | ${String(r.peakRssMb ?? '').padStart(8)} | ${String(r.non2xx + r.errors).padStart(6)} | ${r.description}`);
    const table = [
      `ES512 ceiling (one core): ${ceiling} verifications/s (${Math.round(1e6 / ceiling)} µs of CPU each)`,
      '| scenario     |   req/s | CPU µs | p50 ms | p99 ms | peak RSS | errors | what',
      '|--------------|---------|--------|--------|--------|----------|--------|-----',
      ...rows,
      '',
      `S1 / express-gateway proxy: ${ratios.s1VsEgProxy}x   S1 / bare proxy: ${ratios.s1VsBareProxy}x   S2 / ES512 ceiling: ${ratios.s2VsEs512Ceiling}`,
      `CPU per request (serving process): S1 / express-gateway proxy ${ratios.s1CpuVsEgProxyCpu}x   S2 / one ES512 verification ${ratios.s2CpuVsEs512}x`,
      `S6 added latency at 1,000 req/s: p50 ${ratios.s6AddedP50Ms} ms, p99 ${ratios.s6AddedP99Ms} ms   cluster of 2 / one worker: ${ratios.cluster2VsOne}x`,
      `webhooks: ${webhooks.deliveriesPerSecond} deliveries/s (${webhooks.deliveries} nickname changes on ${webhooks.cards} cards), CPU ${webhooks.cpuUsPerChangeAndDelivery} µs per change and delivery (${webhooks.addedCpuUsPerDelivery} µs above S4); change to receiver: p50 ${webhooks.addedLatencyP50Ms} ms, p99 ${webhooks.addedLatencyP99Ms} ms (${webhooks.latencySamples} changes, one at a time)`,
      authorizationLines(authorizations),
      tokenizationLines(tokenizations),
      engineLines(engines),
      ...Object.entries(report.targets).map(([target, met]) => `${met ? 'met   ' : 'MISSED'} ${target}`),
    ].join('\n');
    process.stdout.write(`${table}\n`);
    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `${started.toISOString().slice(0, 10)}${o.smoke ? '-smoke' : ''}.json`);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`written ${path.relative(ROOT, file)}\n`);
  } finally {
    for (const p of processes.reverse()) await p.stop().catch(() => undefined);
    for (const dir of fs.readdirSync(ROOT).filter((d) => d.startsWith('.data-bench-'))) fs.rmSync(path.join(ROOT, dir), { recursive: true, force: true });
    if (queryCountDir) fs.rmSync(queryCountDir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** CPU per request of one scenario in each round of the engine phase, and their median. */
interface EngineSeries {
  rounds: number[];
  median: number;
}

/** The engine phase's result: the same scenarios on a gateway of each engine, in alternating rounds. */
interface EngineResult {
  rounds: number;
  requestsPerRound: number | string;
  s1: { compiled: EngineSeries; expressGateway: EngineSeries };
  s3: { compiled: EngineSeries; expressGateway: EngineSeries };
  egProxy: EngineSeries;
  bareProxy: EngineSeries;
  /** Medians of the per-round ratios. */
  ratios: {
    s1CompiledVsExpressGateway: number;
    s3CompiledVsExpressGateway: number;
    s1CompiledVsEgProxy: number;
    s1ExpressGatewayVsEgProxy: number;
    s1CompiledVsBareProxy: number;
    s1ExpressGatewayVsBareProxy: number;
  };
  errors: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 100) / 100;
};
const series = (rounds: number[]): EngineSeries => ({ rounds, median: median(rounds) });

/**
 * The two pipeline engines side by side (docs/decisions.md, "Pipeline engine"): a second gateway
 * (one worker, same database, sandbox and partner) runs express-gateway's own pipeline builder
 * (`PIPELINE_ENGINE=express-gateway`) beside the measured one (compiled). Each round runs S1 and S3
 * on both, the order swapped every round, and the two baseline proxies once; CPU per request of the
 * serving process as in the scenarios; medians of the rounds. The second gateway stops afterwards.
 */
async function enginePhase(p: {
  o: Options;
  common: Record<string, unknown>;
  gateway: BenchProcess;
  base: string;
  statusPath: string;
  auth: () => Promise<Record<string, string>>;
  bare: BenchProcess;
  eg: BenchProcess;
  log: (message: string) => void;
  env: () => NodeJS.ProcessEnv;
  cardKey: string;
  body: string;
  processes: BenchProcess[];
}): Promise<EngineResult> {
  const { o, common, log } = p;
  log(`pipeline engines: ${o.engineRounds} rounds, compiled and express-gateway alternating...`);
  const reference = await startNode(path.join(DIST, 'gateway', 'main.js'), p.env(), (l) => l.msg === 'gateway ready');
  p.processes.push(reference);
  const referenceBase = `http://127.0.0.1:${String(reference.ready.port)}`;
  const bases = { compiled: p.base, expressGateway: referenceBase };
  const servers = { compiled: p.gateway, expressGateway: reference };
  const amount = (common.amount as number | undefined) ?? 2000;
  const s3 = (base: string) => ({
    url: base,
    requests: [
      { method: 'POST' as const, path: `/api/partner/cards/${p.cardKey}/lock`, body: p.body },
      { method: 'POST' as const, path: `/api/partner/cards/${p.cardKey}/unlock`, body: p.body },
    ],
  });
  // Warm-up of the second gateway, as S1's (the first gateway is warm from S1 to S5).
  const warm = { connections: Math.min(p.o.connections, amount, 2000), amount: Math.min(amount, 2000), sampleInt: AMOUNT_SAMPLE_MS };
  await autocannon({ ...warm, url: `${referenceBase}/api/partner${p.statusPath}`, headers: await p.auth() });
  await autocannon({ ...warm, ...s3(referenceBase), headers: await p.auth() });
  const cpu = { s1: { compiled: [] as number[], expressGateway: [] as number[] }, s3: { compiled: [] as number[], expressGateway: [] as number[] }, eg: [] as number[], bare: [] as number[] };
  let errors = 0;
  const note = (r: ScenarioResult): number => {
    errors += r.errors;
    return r.cpuUsPerRequest ?? 0;
  };
  for (let round = 0; round < o.engineRounds; round++) {
    const order = round % 2 === 0 ? (['compiled', 'expressGateway'] as const) : (['expressGateway', 'compiled'] as const);
    for (const engine of order) {
      cpu.s1[engine].push(note(await run(`S1-${engine}`, 'S1', { ...common, url: `${bases[engine]}/api/partner${p.statusPath}`, headers: await p.auth() }, servers[engine])));
    }
    cpu.eg.push(note(await run('eg-proxy', 'eg-proxy', { ...common, url: `http://127.0.0.1:${String(p.eg.ready.port)}${p.statusPath}` }, p.eg)));
    cpu.bare.push(note(await run('bare-proxy', 'bare-proxy', { ...common, url: `http://127.0.0.1:${String(p.bare.ready.port)}${p.statusPath}` }, p.bare)));
    for (const engine of order) {
      cpu.s3[engine].push(note(await run(`S3-${engine}`, 'S3', { ...common, ...s3(bases[engine]), headers: await p.auth() }, servers[engine])));
    }
    log(`  round ${round + 1}: S1 compiled ${cpu.s1.compiled[round]} µs, express-gateway ${cpu.s1.expressGateway[round]} µs; S3 ${cpu.s3.compiled[round]} / ${cpu.s3.expressGateway[round]} µs; eg-proxy ${cpu.eg[round]}, bare ${cpu.bare[round]}`);
  }
  await reference.stop();
  const ratio = (a: number[], b: number[]) => median(a.map((x, i) => +(x / Math.max(1, b[i]!)).toFixed(3)));
  return {
    rounds: o.engineRounds,
    requestsPerRound: (common.amount as number | undefined) ?? `${String(common.duration)} s`,
    s1: { compiled: series(cpu.s1.compiled), expressGateway: series(cpu.s1.expressGateway) },
    s3: { compiled: series(cpu.s3.compiled), expressGateway: series(cpu.s3.expressGateway) },
    egProxy: series(cpu.eg),
    bareProxy: series(cpu.bare),
    ratios: {
      s1CompiledVsExpressGateway: ratio(cpu.s1.compiled, cpu.s1.expressGateway),
      s3CompiledVsExpressGateway: ratio(cpu.s3.compiled, cpu.s3.expressGateway),
      s1CompiledVsEgProxy: ratio(cpu.s1.compiled, cpu.eg),
      s1ExpressGatewayVsEgProxy: ratio(cpu.s1.expressGateway, cpu.eg),
      s1CompiledVsBareProxy: ratio(cpu.s1.compiled, cpu.bare),
      s1ExpressGatewayVsBareProxy: ratio(cpu.s1.expressGateway, cpu.bare),
    },
    errors,
  };
}

/** The engine phase's lines of the printed summary. */
function engineLines(e: EngineResult): string {
  return [
    `pipeline engines (${e.rounds} alternating rounds, medians of CPU µs per request): S1 compiled ${e.s1.compiled.median}, express-gateway ${e.s1.expressGateway.median} (${e.ratios.s1CompiledVsExpressGateway}x); S3 compiled ${e.s3.compiled.median}, express-gateway ${e.s3.expressGateway.median} (${e.ratios.s3CompiledVsExpressGateway}x)`,
    `  eg-proxy ${e.egProxy.median}, bare proxy ${e.bareProxy.median}: S1 / eg-proxy compiled ${e.ratios.s1CompiledVsEgProxy}x, express-gateway ${e.ratios.s1ExpressGatewayVsEgProxy}x; S1 / bare proxy compiled ${e.ratios.s1CompiledVsBareProxy}x, express-gateway ${e.ratios.s1ExpressGatewayVsBareProxy}x`,
  ].join('\n');
}

/** The authorization phase's lines of the printed summary. */
function authorizationLines(a: AuthorizationResult): string {
  const mix = Object.entries(a.mix.saturation ?? {})
    .filter(([k]) => !k.startsWith('decidedBy:'))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const e = a.latencyWithEndpoint;
  return [
    `authorizations (${a.cards} cards with spend controls, ${a.connections} connections, ${a.rounds.length} rounds alternating with S1): ${a.decisionsPerSecond} decisions/s per worker; CPU ${a.cpuUsPerDecision} µs per decision (S1 ${a.s1CpuUsPerRequest} µs: ${a.cpuVsS1}x), PostgreSQL ${a.postgresCpuUsPerDecision} µs, ${a.queriesPerDecision} statements per decision; p50 ${a.rounds[0]?.p50Ms} ms, p99 ${a.rounds[0]?.p99Ms} ms (round 1)`,
    `  mix at saturation: ${mix}`,
    `  at ${a.latencyControlsOnly.rate}/s, controls only: p50 ${a.latencyControlsOnly.p50Ms} ms, p99 ${a.latencyControlsOnly.p99Ms} ms, max ${a.latencyControlsOnly.maxMs} ms (${a.latencyControlsOnly.samples} decisions, CPU ${a.latencyControlsOnly.cpuUsPerDecision} µs each)`,
    `  at ${e.rate}/s, loopback partner endpoint: p50 ${e.p50Ms} ms, p99 ${e.p99Ms} ms, max ${e.maxMs} ms (${e.samples} decisions, CPU ${e.cpuUsPerDecision} µs each); partner latency as recorded p50 ${e.partnerLatencyP50Ms} ms, p99 ${e.partnerLatencyP99Ms} ms; endpoint's own handling p50 ${e.endpointHandlingP50Ms} ms, p99 ${e.endpointHandlingP99Ms} ms; the gateway's own time (less the partner's as recorded) p50 ${e.ownP50Ms} ms, p99 ${e.ownP99Ms} ms; less the endpoint's own handling only p50 ${e.beyondEndpointP50Ms} ms, p99 ${e.beyondEndpointP99Ms} ms`,
    ...(a.saturationWithEndpoint
      ? [`  with the endpoint at saturation: ${a.saturationWithEndpoint.decisionsPerSecond} decisions/s, CPU ${a.saturationWithEndpoint.cpuUsPerDecision} µs per decision, ${a.saturationWithEndpoint.queriesPerDecision} statements`]
      : []),
    ...a.deadline.map(
      (d) =>
        `  the answer at the deadline, ${d.cause === 'endpoint' ? 'the endpoint hanging' : 'the recordings held by the database'}, ${d.busyProcesses} other processes busy, ${d.rate}/s: p50 ${d.p50Ms} ms, p99 ${d.p99Ms} ms, max ${d.maxMs} ms (${d.samples} decisions: ${d.defaults} answered 200, ${d.unavailable} 503, ${d.other} other); ${d.pastDeadline} at or past the processor's ${d.deadlineMs} ms`
    ),
  ].join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
