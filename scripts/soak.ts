/**
 * `npm run soak [-- --smoke] [--requests 50000 | --duration 600] [--concurrency 64] [--slice 30] [--warmup 60]`
 *
 * Holds a gateway under a long mixed load and checks that it stays correct:
 *
 * - starts, on this machine, a PostgreSQL database of its own (created on TEST_DATABASE_URL's
 *   server and dropped at the end, like the test suite's), the sandbox upstreams (their own
 *   process) and one gateway process (WORKERS=1) whose output goes to
 *   `test-output/soak-<time>/gateway.log`;
 * - sends `--requests` requests (default 50,000; `--smoke` 2,000), or load for `--duration`
 *   seconds, at `--concurrency` (default 64; `--smoke` 16) over all 47 routes: every operation
 *   once first (also past a lower `--requests`), then by weight; mostly valid requests, about 8 %
 *   invalid ones;
 * - samples, every `--slice` seconds (default 30; `--smoke` 2), the CPU time of the sandbox and
 *   gateway processes and the requests sent, and reports CPU µs per request per slice with the
 *   sandbox's RSS: after `--warmup` seconds (default 60; `--smoke` 0) the median of the last
 *   third of the slices may exceed the first third's by 25 % at most, and the sandbox's RSS
 *   must not keep growing (same rule as the gateway's below); enforced from 3 slices after the
 *   warm-up, reported only in `--smoke` (a sandbox whose work grows with its state shows here);
 * - fails when the sandbox or the gateway process exits during the run (reported with its code,
 *   signal and stderr tail);
 * - checks: no 5xx (the documented PIN change / force PIN lock limitation aside); one audit entry
 *   per acknowledged state change (2xx answers counted by audit operation = `audit_log` success
 *   rows by operation); the gateway's resident memory (VmRSS, sampled at the start and end of the
 *   load and every 250 ms) does not grow over the last third of the run: its peak there exceeds the middle third's peak by at most
 *   max(32 MB, 10 %) (reported, not enforced, in `--smoke`: too short to warm up); and none of the secrets it used (tokens, passport numbers,
 *   PANs, CVVs, PIN blocks, securityKeys, 3DS answers, card ciphertexts) is in the gateway log;
 * - prints a summary and writes it to `bench/results/soak-<time>.json` (`-smoke.json` in smoke
 *   mode, gitignored). Exit code 1 when a check fails.
 *
 * The rate limits are raised (RATE_LIMIT_*_PER_MINUTE) so that the soak measures the gateway, not
 * the limiter; 429 answers are counted and reported all the same.
 *
 * `--mix steady` (cost that stays flat as a partner's data grows) runs instead a steady
 * mix of valid requests only, 60 % reads and 40 % writes, over the routes whose data grows (the
 * individual list and `/me`, an individual's cards, audit log and status history, the card list,
 * card reads; individual creations, retried now and then with their Idempotency-Key, card issuance,
 * nicknames and status changes, 3DS phones, emboss names and limits), and reports each
 * `--minute` (default 60 s; smoke 5 s) after `--warmup` (steady: default 30 s; smoke 0): the
 * requests answered and the p99 latency at the client. Checked (not in smoke mode): every whole
 * minute's throughput within 10 % of the first's, and its p99 at most 1.3 times the first's.
 * `npm run soak -- --mix steady --duration 630 --concurrency 8` is the run docs/performance.md names
 * ("The steady soak").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { cpuTimeMs, isRunning, startNode, type BenchProcess } from '../bench/processes';
import { describeHits, recordSecret, recordedSecrets, scanForSecrets, secretCounts } from '../test/support/secrets';
import { createRunDatabase, type RunDatabase } from '../test/support/test-database';
import { signPartnerToken } from './token';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');

/**
 * The Node options `npm run sandbox` starts the sandboxes with (package.json, e.g. its heap
 * limit, which also keeps V8's heap headroom small: docs/performance.md, "The sandboxes"), so that the soak measures the
 * sandbox process as it is run.
 */
function sandboxNodeOptions(): string {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const run = /\bnode((?: --[^\s]+)*) dist\/sandbox\/main\.js/.exec(scripts.sandbox ?? '');
  if (!run) throw new Error(`package.json's "sandbox" script does not run node dist/sandbox/main.js: ${scripts.sandbox}`);
  return run[1].trim();
}

interface Options {
  smoke: boolean;
  /** `all`: every route by weight, invalid requests among them; `steady`: a 60/40 mix of valid reads and writes. */
  mix: 'all' | 'steady';
  /** Seconds of one measured window of the steady mix. */
  minuteSeconds: number;
  requests: number;
  /** Seconds of load; when set, the run is timed instead of counted. */
  durationSeconds: number | undefined;
  concurrency: number;
  sliceSeconds: number;
  warmupSeconds: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      requests: { type: 'string' },
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      slice: { type: 'string' },
      warmup: { type: 'string' },
      mix: { type: 'string' },
      minute: { type: 'string' },
    },
  });
  const smoke = values.smoke ?? false;
  const durationSeconds = values.duration === undefined ? undefined : Number(values.duration);
  if (durationSeconds !== undefined && !(durationSeconds > 0)) throw new Error(`--duration must be a number of seconds, got ${values.duration}`);
  const mix = values.mix ?? 'all';
  if (mix !== 'all' && mix !== 'steady') throw new Error(`--mix must be all or steady, got ${values.mix}`);
  return {
    smoke,
    mix,
    minuteSeconds: Number(values.minute ?? (smoke ? 5 : 60)),
    requests: durationSeconds !== undefined && values.requests === undefined ? 0 : Number(values.requests ?? (smoke ? 2000 : 50_000)),
    durationSeconds,
    concurrency: Number(values.concurrency ?? (smoke ? 16 : 64)),
    sliceSeconds: Number(values.slice ?? (smoke ? 2 : 30)),
    warmupSeconds: Number(values.warmup ?? (smoke ? 0 : mix === 'steady' ? 30 : 60)),
  };
}

/** The median of some numbers (0 for none). */
function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** One slice of the load: requests sent and CPU used by each process during it. */
interface Slice {
  /** Seconds into the load at the slice's start and end (the last slice may be shorter). */
  startS: number;
  endS: number;
  requests: number;
  sandboxCpuMs: number;
  sandboxUsPerRequest: number;
  gatewayUsPerRequest: number;
  sandboxRssMb: number;
}

const log = (message: string) => process.stderr.write(`soak: ${message}\n`);

// --- HTTP -------------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

interface Answer {
  status: number;
  body: any;
  replayed: boolean;
}

/** One measured window of the steady mix: the requests answered in it and their latency at the client. */
interface Minute {
  /** Seconds after the warm-up at the window's start. */
  startS: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** The value at the `q` quantile (0..1) of sorted numbers (0 for none). */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function request(base: string, method: string, urlPath: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const url = new URL(base);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: urlPath,
        agent,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            // keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, replayed: res.headers['idempotent-replayed'] === 'true' });
        });
      }
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// --- processes --------------------------------------------------------------------------------

interface Gateway {
  child: ChildProcess;
  base: string;
  adminBase: string;
  adminToken: string;
  logFile: string;
  stop(): Promise<void>;
}

function startGateway(env: NodeJS.ProcessEnv, logFile: string): Promise<Gateway> {
  const adminToken = crypto.randomBytes(24).toString('base64url');
  const child = spawn(process.execPath, [path.join(DIST, 'gateway', 'main.js')], {
    env: { ...process.env, ...env, ADMIN_TOKEN: adminToken, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', NOTIFICATIONS_PORT: '0', WORKERS: '1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const fd = fs.openSync(logFile, 'a');
  let buffer = '';
  let announced = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not become ready in 60 s')), 60_000);
    const onData = (chunk: Buffer) => {
      fs.writeSync(fd, chunk);
      if (announced) return;
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.includes('"gateway ready"'));
      if (!line) return;
      const ready = JSON.parse(line) as { port: number; adminPort: number };
      clearTimeout(timer);
      announced = true;
      buffer = '';
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      resolve({
        child,
        base: `http://127.0.0.1:${ready.port}`,
        adminBase: `http://127.0.0.1:${ready.adminPort}`,
        adminToken,
        logFile,
        stop: async () => {
          if (child.exitCode === null) {
            child.kill('SIGTERM');
            const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
            await exited;
            clearTimeout(kill);
          }
        },
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => fs.writeSync(fd, chunk));
    child.once('close', () => fs.closeSync(fd));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with ${code} (see ${logFile})`));
    });
  });
}

/** Resident set size (VmRSS) of a process in MB, or undefined once it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : undefined;
  } catch {
    return undefined;
  }
}

// --- the workload -----------------------------------------------------------------------------

interface Partner {
  id: string;
  issuer: string;
  privateKey: crypto.KeyObject;
  token: string;
  signedAt: number;
}

interface Card {
  cardKey: string;
  expDate: string;
  individualId: string;
  clientID: string;
  type: 'virtual' | 'physical';
}

/** One counted request: its route, whether it was meant to be valid, and what came back. */
interface Tally {
  requests: number;
  byRoute: Record<string, Record<string, number>>;
  fiveXxValid: { route: string; status: number; code?: string }[];
  fiveXxInvalid: { route: string; status: number; code?: string }[];
  knownLimitation: number;
  rateLimited: number;
  /** 2xx answers of state-changing routes, by the audit operation they must have written. */
  acknowledged: Record<string, number>;
  valid: number;
  invalid: number;
}

/** The audit operation a 2xx of each state-changing route writes (docs/individuals.md, docs/cards.md). */
const AUDITED: Record<string, string> = {
  'create-individual': 'individual.create',
  'issue-virtual-card': 'card.issue.virtual',
  'issue-physical-card': 'card.issue.physical',
  'lock-card': 'card.lock',
  'unlock-card': 'card.unlock',
  'activate-card': 'card.activate',
  'temporary-lock-card': 'card.temporary-lock',
  'restrict-card': 'card.restrict',
  'restrict-card-lost': 'card.restrict.lost',
  'restrict-card-stolen': 'card.restrict.stolen',
  'restrict-card-closed': 'card.restrict.closed',
  'restrict-card-fraud': 'card.restrict.fraud',
  'restrict-card-mobile-lost': 'card.restrict.mobile-lost',
  'set-card-nickname': 'card.nickname.update',
  'set-card-3ds-phone': 'card.3ds-phone.update',
  'set-card-emboss-name': 'card.emboss-name.update',
  'replace-card': 'card.replace',
  'reissue-card': 'card.reissue',
  'set-card-3ds-answer': 'card.3ds-answer.update',
  'reset-card-pin-tries': 'card.pin.reset-tries',
  'authorize-cardholder': 'card.authorize',
  'patch-card-limits': 'card.limits.update',
  'set-card-limit': 'card.limits.update',
  'get-card-cvv': 'card.cvv.read',
  'get-card-pan': 'card.pan.read',
  'change-card-pin': 'card.pin.change',
  'force-card-pin-lock': 'card.pin.force-lock',
};

const LIMIT_NAMES = ['dailyPurchase', 'monthlyPurchase', 'dailyWithdrawal', 'monthlyWithdrawal', 'singleTransaction'];
const pick = <T>(items: T[]): T => items[crypto.randomInt(items.length)];
const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

function individualBody(tag: string): Record<string, unknown> {
  const passportNumber = `SK${crypto.randomInt(10_000_000, 99_999_999)}`;
  recordSecret('passportNumber', passportNumber);
  return {
    firstName: 'Soak',
    middleName: 'Load',
    lastName: `Runner-${tag}`,
    country: 'DE',
    city: 'Berlin',
    zipCode: '10115',
    buildingNumber: '1',
    idType: 'PASSPORT',
    address1: 'Main 1',
    passportNumber,
    issuingDate: '2020-01-15',
    validityDate: '2030-01-14',
    passportCountry: 'DE',
    birthCountry: 'DE',
    birthDate: '1990-12-10',
    nationality: 'DE',
    phone: '+4915112345678',
    email: `soak-${tag}@example.com`,
  };
}

async function main(): Promise<number> {
  const o = options();
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const outputDir = path.join(ROOT, 'test-output', `soak-${stamp}`);
  fs.mkdirSync(outputDir, { recursive: true });
  const logFile = path.join(outputDir, 'gateway.log');
  let database: RunDatabase | undefined;
  let sandbox: BenchProcess | undefined;
  let gateway: Gateway | undefined;
  let db: Client | undefined;
  try {
    database = await createRunDatabase('pgw_soak');
    log(`database ${database.name}; sandboxes...`);
    sandbox = await startNode(path.join(DIST, 'sandbox', 'main.js'), { NODE_OPTIONS: sandboxNodeOptions() }, (l) => typeof l.issuer === 'string');
    const upstreams = sandbox.ready as { issuer: string; processing: string; accounts: string };
    gateway = await startGateway(
      {
        DATABASE_URL: database.url,
        ISSUER_URL: upstreams.issuer,
        PROCESSING_URL: upstreams.processing,
        ACCOUNTS_URL: upstreams.accounts,
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-soak-')),
        RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000000',
        RATE_LIMIT_READS_PER_MINUTE: '1000000000',
        RATE_LIMIT_WRITES_PER_MINUTE: '1000000000',
      },
      logFile
    );
    const gw = gateway;
    const pid = gw.child.pid!;
    log(`gateway pid ${pid} on ${gw.base}; log ${path.relative(ROOT, logFile)}`);

    const tally: Tally = { requests: 0, byRoute: {}, fiveXxValid: [], fiveXxInvalid: [], knownLimitation: 0, rateLimited: 0, acknowledged: {}, valid: 0, invalid: 0 };
    /** Each answered request of the load: when it ended (ms after the load started) and how long it took (ms). */
    const answered: { endMs: number; ms: number }[] = [];
    let loadStartedAt: number | undefined;

    // Partners: the one under load, and another whose resources the first must not reach.
    const register = async (name: string): Promise<Partner> => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
      const issuer = `https://${name}.example`;
      const created = await request(gw.adminBase, 'POST', '/admin/partners', { authorization: `Bearer ${gw.adminToken}` }, { name, issuer, publicKey: publicKey.export({ type: 'spki', format: 'pem' }) });
      if (created.status !== 201) throw new Error(`partner registration: ${created.status} ${JSON.stringify(created.body)}`);
      return { id: created.body._id, issuer, privateKey, token: '', signedAt: 0 };
    };
    const tokenOf = async (partner: Partner) => {
      // One token per partner (the gateway caches verified tokens), renewed before its 300 s lifetime ends.
      if (Date.now() - partner.signedAt > 240_000) {
        partner.token = await signPartnerToken({ partnerId: partner.id, issuer: partner.issuer, privateKey: partner.privateKey, ttlSeconds: 300 });
        recordSecret('jwt', partner.token);
        partner.signedAt = Date.now();
      }
      return partner.token;
    };
    const acme = await register('soak-acme');
    const globex = await register('soak-globex');

    /** Sends one request and counts it. `valid: false` marks a deliberately invalid request. */
    const call = async (route: string, method: string, urlPath: string, options: { body?: unknown; partner?: Partner | null; valid?: boolean; headers?: Record<string, string> } = {}): Promise<Answer> => {
      const partner = options.partner === undefined ? acme : options.partner;
      const headers: Record<string, string> = { 'x-request-id': `soak-${hex(6)}`, ...options.headers };
      if (partner) headers.authorization = `Bearer ${await tokenOf(partner)}`;
      const valid = options.valid ?? true;
      let answer: Answer;
      const sentAt = performance.now();
      try {
        answer = await request(gw.base, method, `/api/partner${urlPath}`, headers, options.body);
      } catch (err) {
        answer = { status: 0, body: { code: (err as Error).message }, replayed: false };
      }
      if (loadStartedAt !== undefined) answered.push({ endMs: Date.now() - loadStartedAt, ms: performance.now() - sentAt });
      tally.requests += 1;
      if (valid) tally.valid += 1;
      else tally.invalid += 1;
      const byStatus = (tally.byRoute[route] ??= {});
      byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
      if (answer.status === 429) tally.rateLimited += 1;
      const known = (route === 'change-card-pin' || route === 'force-card-pin-lock') && answer.status === 502 && answer.body?.upstreamCode === 'OPERATION_NOT_SUPPORTED';
      if (known) tally.knownLimitation += 1;
      else if (answer.status >= 500 || answer.status === 0) (valid ? tally.fiveXxValid : tally.fiveXxInvalid).push({ route, status: answer.status, code: answer.body?.code });
      if (answer.status >= 200 && answer.status < 300 && !answer.replayed && AUDITED[route]) {
        tally.acknowledged[AUDITED[route]] = (tally.acknowledged[AUDITED[route]] ?? 0) + 1;
      }
      return answer;
    };

    // Fixtures: individuals, a pool of cards, PIN blocks, a securityKey, the other partner's card.
    log('fixtures...');
    const individuals: { _id: string; clientID: string }[] = [];
    for (let i = 0; i < 8; i++) {
      const created = await call('create-individual', 'POST', '/individual/accounts', { body: individualBody(`fixture-${i}`) });
      if (created.status !== 201) throw new Error(`individual: ${created.status} ${JSON.stringify(created.body)}`);
      individuals.push(created.body);
    }
    const expDate = `12/${new Date().getUTCFullYear() + 4}`;
    const issue = async (type: 'virtual' | 'physical', individual = pick(individuals)): Promise<Card | undefined> => {
      const created = await call(`issue-${type}-card`, 'POST', `/individual/accounts/${individual._id}/cards/${type}`, {
        body: { expDate, clientCode: individual.clientID, currency: pick(['EUR', 'USD', 'PLN']), productCode: 'P-STD', embossedName: 'SOAK.RUNNER' },
      });
      return created.status === 201 ? { cardKey: created.body.cardKey, expDate: created.body.expDate, individualId: individual._id, clientID: individual.clientID, type } : undefined;
    };
    const pool: Card[] = [];
    for (let i = 0; i < 32; i++) pool.push((await issue(i % 4 === 0 ? 'physical' : 'virtual'))!);
    for (const card of pool.filter((c) => c.type === 'physical')) await call('activate-card', 'POST', `/cards/${card.cardKey}/activate`, { body: { expDate: card.expDate } });
    // The card numbers and CVVs the issuer holds for some of them: none may be logged.
    for (const card of pool.slice(0, 12)) {
      const secrets = (await (await fetch(`${upstreams.issuer}/__sandbox/cards/${card.cardKey}/secrets`)).json()) as { cardNumber: string; cvv: string };
      recordSecret('pan', secrets.cardNumber);
      recordSecret('cvv', secrets.cvv);
    }
    const otherIndividual = (await call('create-individual', 'POST', '/individual/accounts', { body: individualBody('other'), partner: globex })).body;
    const otherCard = (await call('issue-virtual-card', 'POST', `/individual/accounts/${otherIndividual._id}/cards/virtual`, { body: { expDate, clientCode: otherIndividual.clientID, currency: 'EUR', productCode: 'P-STD' }, partner: globex })).body;
    const pinKey = (await (await fetch(`${upstreams.issuer}/pin-encryption-key`)).json()) as { publicKey: string };
    const pinBlocks = ['4921', '1234', '550055', '73021984'].map((pin) => {
      const block = crypto.publicEncrypt({ key: pinKey.publicKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(pin)).toString('base64');
      recordSecret('pinBlock', block);
      return block;
    });
    const securityKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    recordSecret('securityKey', securityKey);

    // The operations, weighted. Each is a small script of one or more requests.
    const card = () => pick(pool);
    const individual = () => pick(individuals);
    const cardKeyOf = () => card().cardKey;
    type Op = { weight: number; run: () => Promise<unknown> };
    const status = (route: string, action: string) => async () => {
      const c = card();
      await call(route, 'POST', `/cards/${c.cardKey}/${action}`, { body: { expDate: c.expDate, reason: 'soak' } });
    };
    /** Actions that end a card's useful life run on a card issued for them. */
    const disposable = (route: string, run: (c: Card) => Promise<unknown>, type: 'virtual' | 'physical' = 'virtual') => async () => {
      const c = await issue(type);
      if (c) await run(c);
    };
    const createIndividual = async () => {
      const key = `soak-${hex(8)}`;
      const body = individualBody(hex(4));
      const created = await call('create-individual', 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
      // Now and then the partner retries with the same key: a replay, not a second individual.
      if (created.status === 201 && Math.random() < 0.3) await call('create-individual', 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
    };
    const ops: Op[] = [
      // service and reads
      { weight: 2, run: () => call('health-check', 'GET', '/health-check', { partner: null }) },
      { weight: 1, run: () => call('openapi-document', 'GET', '/openapi.json', { partner: null }) },
      { weight: 1, run: () => call('api-docs', 'GET', '/docs', { partner: null }) },
      { weight: 4, run: () => call('me', 'GET', '/me') },
      { weight: 4, run: () => call('list-individuals', 'GET', `/individual/accounts?page=1&limit=${crypto.randomInt(1, 50)}`) },
      { weight: 4, run: () => call('get-individual', 'GET', `/individual/accounts/${individual()._id}`) },
      { weight: 4, run: () => call('list-individual-cards', 'GET', `/individual/accounts/${individual()._id}/cards`) },
      { weight: 3, run: () => call('list-individual-audit-logs', 'GET', `/individual/accounts/${individual()._id}/audit-logs?limit=20`) },
      { weight: 3, run: () => call('list-individual-card-status-history', 'GET', `/individual/accounts/${individual()._id}/card-status-history`) },
      { weight: 4, run: () => call('list-individual-transactions', 'GET', `/individual/accounts/${individual()._id}/transactions?limit=10`) },
      { weight: 4, run: () => call('list-cards', 'GET', `/cards?limit=20${Math.random() < 0.3 ? '&search=soak' : ''}${Math.random() < 0.3 ? '&status=ACTIVE' : ''}`) },
      { weight: 8, run: () => call('get-card', 'GET', `/cards/${cardKeyOf()}`) },
      { weight: 8, run: () => call('get-card-status', 'GET', `/cards/${cardKeyOf()}/status`) },
      {
        weight: 2,
        run: async () => {
          const c = card();
          const answer = await call('get-card-cvv', 'GET', `/cards/${c.cardKey}/cvv?${new URLSearchParams({ expDate: c.expDate, securityKey })}`);
          recordSecret('cardCiphertext', answer.body?.cvv);
        },
      },
      {
        weight: 2,
        run: async () => {
          const c = card();
          const answer = await call('get-card-pan', 'GET', `/cards/${c.cardKey}/pan?${new URLSearchParams({ expDate: c.expDate, securityKey })}`);
          recordSecret('cardCiphertext', answer.body?.cardNumber);
        },
      },
      { weight: 4, run: () => call('get-card-limits', 'GET', `/cards/${cardKeyOf()}/limits`) },
      { weight: 3, run: () => call('get-card-limit', 'GET', `/cards/${cardKeyOf()}/limits/${pick(LIMIT_NAMES)}`) },
      { weight: 3, run: () => call('get-card-limit-available', 'GET', `/cards/${cardKeyOf()}/limits/${pick(LIMIT_NAMES)}/available`) },
      { weight: 2, run: () => call('get-pin-encryption-key', 'GET', '/pin-encryption-key') },
      { weight: 3, run: () => call('list-delivery-methods', 'GET', `/delivery-methods?country=${pick(['DE', 'FR', 'GB', 'US', 'BR'])}`) },
      { weight: 2, run: () => call('check-card-issuing-fee', 'POST', '/fees/card-issuing', { body: { CustomerType: 'Consumer Debit', ProductType: pick(['R001', 'R002', 'R003']), cardKey: cardKeyOf() } }) },
      { weight: 2, run: () => call('check-card-delivery-fee', 'POST', '/fees/card-delivery', { body: { CustomerType: 'Business Debit', ProductType: 'R005', clientId: individual().clientID } }) },
      // writes
      { weight: 1, run: createIndividual },
      { weight: 1, run: () => issue('virtual') },
      { weight: 1, run: () => issue('physical') },
      { weight: 4, run: status('lock-card', 'lock') },
      { weight: 4, run: status('unlock-card', 'unlock') },
      { weight: 2, run: status('temporary-lock-card', 'temporary-lock') },
      { weight: 2, run: status('restrict-card', 'restrict') },
      { weight: 1, run: disposable('activate-card', (c) => call('activate-card', 'POST', `/cards/${c.cardKey}/activate`, { body: { expDate: c.expDate } }), 'physical') },
      ...(['lost', 'stolen', 'closed', 'fraud', 'mobile-lost'] as const).map((kind) => ({
        weight: 0.4,
        run: disposable(`restrict-card-${kind}`, (c) => call(`restrict-card-${kind}`, 'POST', `/cards/${c.cardKey}/restrict/${kind}`, { body: { reason: 'soak', cardLocation: 'Berlin' } })),
      })),
      { weight: 5, run: () => call('set-card-nickname', 'PATCH', `/cards/${cardKeyOf()}/nickname`, { body: { nickname: `soak ${hex(3)}` } }) },
      { weight: 2, run: () => call('set-card-3ds-phone', 'PUT', `/cards/${cardKeyOf()}/3ds/phone`, { body: { phoneNumber: `+49151${crypto.randomInt(1_000_000, 9_999_999)}` } }) },
      { weight: 2, run: () => call('set-card-emboss-name', 'PATCH', `/cards/${cardKeyOf()}/emboss-name`, { body: { embossedName: `SOAK.${hex(3).toUpperCase()}` } }) },
      { weight: 0.7, run: disposable('replace-card', (c) => call('replace-card', 'POST', `/cards/${c.cardKey}/replace`, { body: { expDate: c.expDate, reason: 'soak' } }), 'physical') },
      { weight: 0.7, run: disposable('reissue-card', (c) => call('reissue-card', 'POST', `/cards/${c.cardKey}/reissue`, { body: { expDate: c.expDate, reason: 'soak' } })) },
      {
        weight: 2,
        run: () => {
          const answer = `soak3ds-${hex(6)}`;
          recordSecret('threeDsAnswer', answer);
          return call('set-card-3ds-answer', 'PUT', `/cards/${cardKeyOf()}/3ds/answer`, { body: { answer } });
        },
      },
      { weight: 2, run: () => call('reset-card-pin-tries', 'POST', `/cards/${cardKeyOf()}/pin/reset-tries`, { body: {} }) },
      { weight: 0.5, run: () => call('change-card-pin', 'POST', `/cards/${cardKeyOf()}/pin/change`, { body: { expDate: card().expDate, pin: pick(pinBlocks) } }) },
      { weight: 0.5, run: () => call('force-card-pin-lock', 'POST', `/cards/${cardKeyOf()}/pin/force-lock`, { body: { expDate: card().expDate } }) },
      { weight: 2, run: () => call('authorize-cardholder', 'POST', `/cards/${cardKeyOf()}/authorize`, { body: { pin: pick(pinBlocks) } }) },
      { weight: 2, run: () => call('patch-card-limits', 'PATCH', `/cards/${cardKeyOf()}/limits`, { body: [{ name: pick(LIMIT_NAMES), value: crypto.randomInt(100, 5000) }] }) },
      {
        weight: 2,
        run: () => {
          const name = pick(LIMIT_NAMES);
          return call('set-card-limit', 'PUT', `/cards/${cardKeyOf()}/limits/${name}`, { body: { name, value: crypto.randomInt(100, 5000) } });
        },
      },
      // invalid requests (about 8 % of the operations): refused by the gateway with a 4xx
      { weight: 1, run: () => call('me', 'GET', '/me', { partner: null, valid: false }) },
      { weight: 1, run: () => call('get-card', 'GET', `/cards/${otherCard.cardKey}`, { valid: false }) },
      { weight: 1, run: () => call('get-card-status', 'GET', '/cards/CK0000000000000000/status', { valid: false }) },
      { weight: 1, run: () => call('get-individual', 'GET', '/individual/accounts/not-an-id', { valid: false }) },
      { weight: 1, run: () => call('lock-card', 'POST', `/cards/${cardKeyOf()}/lock`, { body: { expDate: '13/2030' }, valid: false }) },
      { weight: 1, run: () => call('create-individual', 'POST', '/individual/accounts', { body: { ...individualBody('invalid'), country: 'XX', email: 'nope' }, valid: false }) },
      { weight: 1, run: () => call('set-card-nickname', 'PATCH', `/cards/${cardKeyOf()}/nickname`, { body: { nickname: 'x'.repeat(65) }, valid: false }) },
      { weight: 1, run: () => call('patch-card-limits', 'PATCH', `/cards/${cardKeyOf()}/limits`, { body: [{ name: 'coffee', value: -1 }], valid: false }) },
      { weight: 1, run: () => call('list-delivery-methods', 'GET', '/delivery-methods?country=XX', { valid: false }) },
      { weight: 1, run: () => call('check-card-issuing-fee', 'POST', '/fees/card-issuing', { body: { CustomerType: 'Consumer Debit', ProductType: 'R001' }, valid: false }) },
    ];
    // The steady mix: valid requests only, 60 % reads and 40 % writes, on the routes whose
    // data grows with the partner's (its weights sum to 100).
    const steady: Op[] = [
      { weight: 6, run: () => call('me', 'GET', '/me') },
      { weight: 8, run: () => call('list-individuals', 'GET', '/individual/accounts') },
      { weight: 6, run: () => call('get-individual', 'GET', `/individual/accounts/${individual()._id}`) },
      { weight: 8, run: () => call('list-individual-cards', 'GET', `/individual/accounts/${individual()._id}/cards`) },
      { weight: 6, run: () => call('list-individual-audit-logs', 'GET', `/individual/accounts/${individual()._id}/audit-logs`) },
      { weight: 6, run: () => call('list-individual-card-status-history', 'GET', `/individual/accounts/${individual()._id}/card-status-history`) },
      { weight: 8, run: () => call('list-cards', 'GET', `/cards${Math.random() < 0.3 ? '?status=ACTIVE' : ''}`) },
      { weight: 6, run: () => call('get-card', 'GET', `/cards/${cardKeyOf()}`) },
      { weight: 6, run: () => call('get-card-status', 'GET', `/cards/${cardKeyOf()}/status`) },
      { weight: 8, run: createIndividual },
      { weight: 6, run: () => issue('virtual') },
      { weight: 2, run: () => issue('physical') },
      { weight: 8, run: () => call('set-card-nickname', 'PATCH', `/cards/${cardKeyOf()}/nickname`, { body: { nickname: `soak ${hex(3)}` } }) },
      { weight: 4, run: status('lock-card', 'lock') },
      { weight: 4, run: status('unlock-card', 'unlock') },
      { weight: 2, run: status('temporary-lock-card', 'temporary-lock') },
      { weight: 2, run: () => call('set-card-3ds-phone', 'PUT', `/cards/${cardKeyOf()}/3ds/phone`, { body: { phoneNumber: `+49151${crypto.randomInt(1_000_000, 9_999_999)}` } }) },
      { weight: 2, run: () => call('set-card-emboss-name', 'PATCH', `/cards/${cardKeyOf()}/emboss-name`, { body: { embossedName: `SOAK.${hex(3).toUpperCase()}` } }) },
      { weight: 2, run: () => call('patch-card-limits', 'PATCH', `/cards/${cardKeyOf()}/limits`, { body: [{ name: pick(LIMIT_NAMES), value: crypto.randomInt(100, 5000) }] }) },
    ];
    if (o.mix === 'steady' && steady.reduce((sum, op) => sum + op.weight, 0) !== 100) throw new Error('the steady mix\'s weights must sum to 100');
    const mixed = o.mix === 'steady' ? steady : ops;
    const totalWeight = mixed.reduce((sum, op) => sum + op.weight, 0);
    // Every operation once first, in a random order, so that every route is exercised however few
    // requests a run makes (a rare one could otherwise be missed: seen once in a smoke run; the load
    // goes on until the first round is done, also past `--requests`); then by weight.
    const firstRound = o.mix === 'steady' ? [] : [...ops].sort(() => Math.random() - 0.5);
    const draw = () => {
      const next = firstRound.pop();
      if (next) return next;
      let r = Math.random() * totalWeight;
      for (const op of mixed) if ((r -= op.weight) < 0) return op;
      return mixed[mixed.length - 1];
    };

    // RSS sampling during the load: at its start, every 250 ms and at its end (a short run has a
    // sample all the same).
    const sandboxPid = sandbox.child.pid!;
    const samples: { atMs: number; rssMb: number; sandboxRssMb: number; requests: number }[] = [];
    const loadStarted = Date.now();
    loadStartedAt = loadStarted;
    const sample = () => {
      const value = rssMb(pid);
      const sandboxValue = rssMb(sandboxPid);
      if (value !== undefined && sandboxValue !== undefined) samples.push({ atMs: Date.now() - loadStarted, rssMb: value, sandboxRssMb: sandboxValue, requests: tally.requests });
    };
    sample();
    const sampler = setInterval(sample, 250);

    // CPU per request, slice by slice: the sandbox's cost must not grow with what it holds.
    const slices: Slice[] = [];
    let sliceStart = { atMs: 0, requests: 0, sandboxCpuMs: cpuTimeMs(sandboxPid), gatewayCpuMs: cpuTimeMs(pid) };
    const closeSlice = () => {
      if (!isRunning(sandbox!.child) || !isRunning(gw.child)) return;
      const now = { atMs: Date.now() - loadStarted, requests: tally.requests, sandboxCpuMs: cpuTimeMs(sandboxPid), gatewayCpuMs: cpuTimeMs(pid) };
      const requests = now.requests - sliceStart.requests;
      if (requests > 0) {
        slices.push({
          startS: Math.round(sliceStart.atMs / 100) / 10,
          endS: Math.round(now.atMs / 100) / 10,
          requests,
          sandboxCpuMs: Math.round(now.sandboxCpuMs - sliceStart.sandboxCpuMs),
          sandboxUsPerRequest: Math.round(((now.sandboxCpuMs - sliceStart.sandboxCpuMs) * 1000) / requests),
          gatewayUsPerRequest: Math.round(((now.gatewayCpuMs - sliceStart.gatewayCpuMs) * 1000) / requests),
          sandboxRssMb: rssMb(sandboxPid) ?? 0,
        });
      }
      sliceStart = now;
    };
    const slicer = setInterval(closeSlice, o.sliceSeconds * 1000);

    const deadline = o.durationSeconds === undefined ? undefined : loadStarted + o.durationSeconds * 1000;
    const more = () => (deadline === undefined ? tally.requests < o.requests : Date.now() < deadline) || firstRound.length > 0;
    log(`load: ${deadline === undefined ? `${o.requests} requests` : `${o.durationSeconds} s`} at concurrency ${o.concurrency}...`);
    let lastReport = Date.now();
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (more() && isRunning(gw.child) && isRunning(sandbox!.child)) {
          await draw().run();
          if (Date.now() - lastReport > 10_000) {
            lastReport = Date.now();
            const last = samples[samples.length - 1];
            log(`${tally.requests} requests, RSS gateway ${last?.rssMb ?? '?'} MB, sandbox ${last?.sandboxRssMb ?? '?'} MB; sandbox µs/request in the last slice ${slices[slices.length - 1]?.sandboxUsPerRequest ?? '?'}`);
          }
        }
      })
    );
    clearInterval(sampler);
    clearInterval(slicer);
    sample();
    const loadMs = Date.now() - loadStarted;
    // The last, partial slice counts when it is at least half a slice long.
    if (loadMs - sliceStart.atMs >= (o.sliceSeconds * 1000) / 2) closeSlice();
    if (!isRunning(gw.child)) throw new Error(`the gateway exited with ${gw.child.exitCode ?? gw.child.signalCode} during the load (see ${logFile})`);
    if (!isRunning(sandbox.child)) throw new Error(sandbox.unexpectedExit ?? 'the sandbox exited during the load');

    // Let the outbox deliver what the last requests queued, then compare acknowledgements with the audit log.
    await new Promise((r) => setTimeout(r, 500));
    db = new Client({ connectionString: database.url });
    await db.connect();
    const auditRows = await db.query<{ operation: string; n: number }>("SELECT operation, count(*)::int AS n FROM audit_log WHERE outcome = 'success' GROUP BY operation ORDER BY operation");
    const audited: Record<string, number> = Object.fromEntries(auditRows.rows.map((r) => [r.operation, r.n]));
    const operations = [...new Set([...Object.keys(audited), ...Object.keys(tally.acknowledged)])].sort();
    const auditMismatches = operations
      .filter((op) => (audited[op] ?? 0) !== (tally.acknowledged[op] ?? 0))
      .map((op) => ({ operation: op, acknowledged: tally.acknowledged[op] ?? 0, audited: audited[op] ?? 0 }));
    const writesChecked = Object.values(tally.acknowledged).reduce((a, b) => a + b, 0);

    // Memory: the last third of the run must not keep growing. RSS saws up and down with the
    // garbage collector, so the peaks are compared: the last third's peak may exceed the middle
    // third's by max(32 MB, 10 %) at most.
    /** One process's RSS under the rule: the last third's peak may exceed the middle third's by max(32 MB, 10 %). */
    const rssTrend = (of: (s: (typeof samples)[number]) => number) => {
      const peakOf = (from: number, to: number) => Math.max(0, ...samples.filter((s) => s.atMs >= loadMs * from && s.atMs < loadMs * to + 1).map(of));
      const middlePeak = peakOf(1 / 3, 2 / 3);
      const lastPeak = peakOf(2 / 3, 1);
      return {
        firstMb: samples[0] ? of(samples[0]) : 0,
        peakMb: Math.max(0, ...samples.map(of)),
        lastMb: samples.length > 0 ? of(samples[samples.length - 1]!) : 0,
        middleThirdPeakMb: middlePeak,
        lastThirdPeakMb: lastPeak,
        lastThirdGrowthMb: Math.round((lastPeak - middlePeak) * 10) / 10,
        marginMb: Math.max(32, Math.round(middlePeak * 0.1)),
        enforced: !o.smoke,
      };
    };
    const step = Math.max(1, Math.ceil(samples.length / 120));
    const rss = {
      samples: samples.length,
      ...rssTrend((s) => s.rssMb),
      /** At most 120 samples: [seconds into the load, MB, requests so far]. */
      series: samples.filter((_, i) => i % step === 0).map((s) => [Math.round(s.atMs / 100) / 10, s.rssMb, s.requests]),
    };

    // The sandbox: CPU per request of the slices after the warm-up, first third against last
    // third (medians: one slice with a GC pause or a noisy neighbour must not decide), and its RSS
    // by the gateway's rule.
    const measured = slices.filter((s) => s.startS >= o.warmupSeconds - 0.5);
    const third = Math.ceil(measured.length / 3);
    const firstThird = median(measured.slice(0, third).map((s) => s.sandboxUsPerRequest));
    const lastThird = median(measured.slice(measured.length - third).map((s) => s.sandboxUsPerRequest));
    const sandboxCpu = {
      sliceSeconds: o.sliceSeconds,
      warmupSeconds: o.warmupSeconds,
      slicesMeasured: measured.length,
      firstSliceUsPerRequest: measured[0]?.sandboxUsPerRequest ?? 0,
      lastSliceUsPerRequest: measured[measured.length - 1]?.sandboxUsPerRequest ?? 0,
      firstThirdMedianUsPerRequest: firstThird,
      lastThirdMedianUsPerRequest: lastThird,
      growth: firstThird > 0 ? Math.round((lastThird / firstThird - 1) * 1000) / 1000 : 0,
      maxGrowth: 0.25,
      gatewayFirstThirdMedianUsPerRequest: median(measured.slice(0, third).map((s) => s.gatewayUsPerRequest)),
      gatewayLastThirdMedianUsPerRequest: median(measured.slice(measured.length - third).map((s) => s.gatewayUsPerRequest)),
      enforced: !o.smoke && measured.length >= 3,
      slices,
    };
    const sandboxRss = rssTrend((s) => s.sandboxRssMb);

    // The steady mix, window by window after the warm-up: requests answered and p99 at the client.
    // Only whole windows count (the last, partial one is left out).
    const minutes: Minute[] = [];
    if (o.mix === 'steady') {
      const windowMs = o.minuteSeconds * 1000;
      const fromMs = o.warmupSeconds * 1000;
      for (let start = fromMs; start + windowMs <= loadMs; start += windowMs) {
        const latencies = answered.filter((a) => a.endMs >= start && a.endMs < start + windowMs).map((a) => a.ms).sort((a, b) => a - b);
        minutes.push({
          startS: Math.round((start - fromMs) / 1000),
          requests: latencies.length,
          requestsPerSecond: Math.round(latencies.length / o.minuteSeconds),
          p50Ms: Math.round(quantile(latencies, 0.5) * 10) / 10,
          p99Ms: Math.round(quantile(latencies, 0.99) * 10) / 10,
        });
      }
    }
    const first = minutes[0];
    const steadyFigures = {
      minuteSeconds: o.minuteSeconds,
      warmupSeconds: o.warmupSeconds,
      minutes,
      /** Each window's requests over the first's, and its p99 over the first's. */
      throughputRatios: minutes.map((m) => (first && first.requests > 0 ? Math.round((m.requests / first.requests) * 1000) / 1000 : 0)),
      p99Ratios: minutes.map((m) => (first && first.p99Ms > 0 ? Math.round((m.p99Ms / first.p99Ms) * 1000) / 1000 : 0)),
      maxThroughputDeviation: 0.1,
      maxP99Ratio: 1.3,
      enforced: o.mix === 'steady' && !o.smoke && minutes.length >= 2,
    };

    // Secrets: stop the gateway first so that its log is complete.
    await gw.stop();
    const secrets = recordedSecrets();
    const scan = scanForSecrets([logFile], secrets);

    const checks = {
      noFiveXxOnValidRequests: tally.fiveXxValid.length === 0,
      noFiveXxOnInvalidRequests: tally.fiveXxInvalid.length === 0,
      oneAuditEntryPerAcknowledgedWrite: auditMismatches.length === 0,
      rssStable: !rss.enforced || rss.lastThirdGrowthMb <= rss.marginMb,
      sandboxCpuFlat: !sandboxCpu.enforced || sandboxCpu.growth <= sandboxCpu.maxGrowth,
      sandboxRssStable: !sandboxRss.enforced || sandboxRss.lastThirdGrowthMb <= sandboxRss.marginMb,
      sandboxAlive: isRunning(sandbox.child) && sandbox.unexpectedExit === undefined,
      noSecretInLog: scan.hits.length === 0,
      requestsHeld: deadline === undefined ? tally.requests >= o.requests : loadMs >= o.durationSeconds! * 1000,
      throughputFlat: !steadyFigures.enforced || steadyFigures.throughputRatios.every((r) => Math.abs(r - 1) <= steadyFigures.maxThroughputDeviation),
      p99Flat: !steadyFigures.enforced || steadyFigures.p99Ratios.every((r) => r <= steadyFigures.maxP99Ratio),
    };
    const summary = {
      kind: 'soak',
      mode: o.smoke ? 'smoke' : 'full',
      mix: o.mix,
      startedAt: started.toISOString(),
      durationSeconds: Math.round(loadMs / 100) / 10,
      node: process.version,
      cpus: os.cpus().length,
      concurrency: o.concurrency,
      requests: tally.requests,
      requestsPerSecond: Math.round(tally.requests / (loadMs / 1000)),
      validRequests: tally.valid,
      invalidRequests: tally.invalid,
      routesExercised: Object.keys(tally.byRoute).length,
      statusesByRoute: tally.byRoute,
      fiveXxOnValidRequests: tally.fiveXxValid.slice(0, 20),
      fiveXxOnInvalidRequests: tally.fiveXxInvalid.slice(0, 20),
      knownLimitation502: tally.knownLimitation,
      rateLimited429: tally.rateLimited,
      writesChecked,
      acknowledgedByOperation: tally.acknowledged,
      auditedByOperation: audited,
      auditMismatches,
      rss,
      sandboxCpu,
      sandboxRss,
      ...(o.mix === 'steady' ? { steady: steadyFigures } : {}),
      secrets: { recorded: secretCounts(secrets), logBytes: scan.bytes, hits: scan.hits.length, detail: scan.hits.length ? describeHits(scan.hits) : undefined },
      gatewayLog: path.relative(ROOT, logFile),
      checks,
      passed: Object.values(checks).every(Boolean),
    };
    const resultsDir = path.join(ROOT, 'bench', 'results');
    fs.mkdirSync(resultsDir, { recursive: true });
    const resultFile = path.join(resultsDir, `soak-${stamp}${o.smoke ? '-smoke' : ''}.json`);
    fs.writeFileSync(resultFile, `${JSON.stringify(summary, null, 2)}\n`);

    const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(34)} ${value}\n`);
    process.stdout.write(`\nsoak (${summary.mode}, mix ${o.mix}) — ${summary.requests} requests in ${summary.durationSeconds} s at concurrency ${o.concurrency} (${summary.requestsPerSecond} req/s), ${summary.routesExercised} routes\n`);
    line('valid / invalid requests', `${tally.valid} / ${tally.invalid}`);
    line('5xx on valid / invalid requests', `${tally.fiveXxValid.length} / ${tally.fiveXxInvalid.length} (known PIN limitation 502s: ${tally.knownLimitation})`);
    line('429 rate_limited', String(tally.rateLimited));
    line('acknowledged writes checked', `${writesChecked} over ${operations.length} audit operations, ${auditMismatches.length} mismatch(es)`);
    line('gateway RSS first / peak / last', `${rss.firstMb} / ${rss.peakMb} / ${rss.lastMb} MB`);
    line('RSS peak, middle → last third', `${rss.middleThirdPeakMb} → ${rss.lastThirdPeakMb} MB: ${rss.lastThirdGrowthMb} MB (margin ${rss.marginMb} MB${rss.enforced ? '' : ', not enforced in smoke mode'})`);
    line('sandbox CPU µs/request by slice', sandboxCpu.slices.map((s) => s.sandboxUsPerRequest).join(' '));
    line('sandbox µs/request first → last', `${sandboxCpu.firstSliceUsPerRequest} → ${sandboxCpu.lastSliceUsPerRequest} (slices of ${o.sliceSeconds} s after ${o.warmupSeconds} s)`);
    line('sandbox median, first → last third', `${sandboxCpu.firstThirdMedianUsPerRequest} → ${sandboxCpu.lastThirdMedianUsPerRequest} µs: ${Math.round(sandboxCpu.growth * 100)} % (at most ${sandboxCpu.maxGrowth * 100} %${sandboxCpu.enforced ? '' : ', not enforced'})`);
    line('gateway median, first → last third', `${sandboxCpu.gatewayFirstThirdMedianUsPerRequest} → ${sandboxCpu.gatewayLastThirdMedianUsPerRequest} µs`);
    line('sandbox RSS first / peak / last', `${sandboxRss.firstMb} / ${sandboxRss.peakMb} / ${sandboxRss.lastMb} MB; middle → last third peak +${sandboxRss.lastThirdGrowthMb} MB (margin ${sandboxRss.marginMb} MB${sandboxRss.enforced ? '' : ', not enforced'})`);
    if (o.mix === 'steady') {
      line(`per ${o.minuteSeconds} s after ${o.warmupSeconds} s`, 'requests/s, p50 and p99 ms at the client; requests and p99 against the first window');
      minutes.forEach((m, i) => line(`  ${m.startS}–${m.startS + o.minuteSeconds} s`, `${m.requestsPerSecond}/s, p50 ${m.p50Ms}, p99 ${m.p99Ms}; ×${steadyFigures.throughputRatios[i]}, p99 ×${steadyFigures.p99Ratios[i]}`));
    }
    line('secrets in the gateway log', `${scan.hits.length} (searched ${Object.entries(scan.searched).map(([k, v]) => `${k} ${v}`).join(', ')}; ${(scan.bytes / 1e6).toFixed(1)} MB)`);
    for (const [name, ok] of Object.entries(checks)) line(`  ${ok ? 'ok  ' : 'FAIL'} ${name}`, '');
    process.stdout.write(`written ${path.relative(ROOT, resultFile)}\n`);
    return summary.passed ? 0 : 1;
  } finally {
    await db?.end().catch(() => undefined);
    await gateway?.stop().catch(() => undefined);
    await sandbox?.stop().catch(() => undefined);
    agent.destroy();
    await database?.drop().catch((err: unknown) => log(`could not drop ${database?.name}: ${(err as Error).message}`));
  }
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`soak: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    }
  );
}
