import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { recordGatewayBoot } from './gateway-boots';
import { copyPgliteTemplate, EMBEDDED_TEST_NODE_FLAGS } from './pglite-template';
import { nextGatewayLogPath, recordSecret, runOutputDir } from './secrets';
import { createOwnDatabase, runDatabaseUrl } from './test-database';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAIN = path.join(ROOT, 'dist', 'gateway', 'main.js');

/** A running gateway a test calls: its URLs, admin token and everything it logged. */
export interface Gateway {
  baseUrl: string;
  adminUrl: string;
  adminToken: string;
  dataDir: string;
  /** The file its output is appended to (`test-output/<run>/gateway-*.log`), scanned for secrets after the run. */
  logFile: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Parsed JSON log lines so far. */
  logLines(): Record<string, unknown>[];
}

/** A gateway process started by a test (a private one: the test may stop, kill or reconfigure it). */
export interface GatewayProcess extends Gateway {
  child: ChildProcess;
  /** The upstream-notification listener, when started (sandbox mode or a notify secret set). */
  notifyUrl?: string;
  /** Its PostgreSQL database (the run's, or its own: StartOptions.ownDatabase); undefined when embedded. */
  databaseUrl?: string;
  stop(): Promise<number | null>;
}

/**
 * Rate limits far above what a load test sends (`RATE_LIMIT_*_PER_MINUTE`, docs/rate-limits.md, and
 * `AUTH_FAILURES_*_PER_MINUTE`):
 * for the fault, fuzz and soak harnesses, whose hundreds of requests per route and minute would
 * otherwise be answered 429 by the default limits.
 */
export const HIGH_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000000',
  RATE_LIMIT_READS_PER_MINUTE: '1000000000',
  RATE_LIMIT_WRITES_PER_MINUTE: '1000000000',
  // The failed-authentication limits (docs/authentication.md): a harness's hostile tokens would otherwise be answered 429.
  AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '1000000000',
  AUTH_FAILURES_PER_PARTNER_PER_MINUTE: '1000000000',
};

/**
 * Short webhook retries, timeouts and polling for the webhook test files: they wait for deliveries
 * and retries, and these make them come quickly.
 */
export const FAST_WEBHOOKS: Record<string, string> = { WEBHOOKS_RETRY_BASE_MS: '200', WEBHOOKS_RETRY_MAX_DELAY_MS: '1000', WEBHOOKS_TIMEOUT_MS: '1500', WEBHOOKS_POLL_MS: '100' };

/** Options of a gateway start; `env` is merged over the defaults below. */
export interface StartOptions {
  env?: Record<string, string | undefined>;
  /**
   * Use the embedded database (DATABASE_URL unset) instead of the run's PostgreSQL database. A
   * DATA_DIR without one gets a copy of the pre-initialised template (test/support/pglite-template.ts:
   * initdb done, no migration applied) unless {@link firstStart} is set.
   */
  embedded?: boolean;
  /**
   * Embedded only: start on an empty DATA_DIR, so that the gateway initialises its database itself
   * (PGlite's initdb, about 5 s of CPU): for the test of that first start.
   */
  firstStart?: boolean;
  /**
   * Give the process a database of its own (made now, dropped when it stops) instead of the run's:
   * for files whose gateway talks to upstreams of its own and counts what they received, since
   * every gateway on a database delivers that database's outbox (to its own upstreams).
   */
  ownDatabase?: boolean;
  /** A PostgreSQL URL to use instead of the run's database. */
  databaseUrl?: string;
  configDir?: string;
  dataDir?: string;
  timeoutMs?: number;
}

function nodeArgs(options: StartOptions): string[] {
  return options.embedded ? [...EMBEDDED_TEST_NODE_FLAGS, MAIN] : [MAIN];
}

/** The test's DATA_DIR (a fresh one unless given), holding a copy of the PGlite template where the start needs one. */
async function prepareDataDir(options: StartOptions): Promise<string> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-test-'));
  if (options.embedded && !options.firstStart && !fs.existsSync(path.join(dataDir, 'pgdata'))) await copyPgliteTemplate(dataDir);
  return dataDir;
}

function baseEnv(options: StartOptions, adminToken: string, dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    NOTIFICATIONS_PORT: '0',
    ADMIN_TOKEN: adminToken,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    WORKERS: '1',
    DATABASE_URL: options.embedded ? '' : (options.databaseUrl ?? runDatabaseUrl()),
    // On the run's embedded database (TEST_DB=embedded) one connection per process, as the gateway's own embedded mode uses.
    ...(process.env.TEST_DB === 'embedded' ? { DATABASE_POOL_MAX: '1' } : {}),
    CONFIG_DIR: options.configDir ?? '',
    // The card reconciler reads every non-closed card of the database from the gateway's own issuer:
    // in a run where gateways share a database it would call its sandbox for other files' cards
    // (and count against their issuer-call assertions). Tests of the reconciler set their interval.
    CARD_RECONCILE_INTERVAL_MS: '3600000',
    // Likewise the transaction reconciler reads its own processing sandbox's change feed: a file that
    // counts that sandbox's requests must not see its passes. The shared gateway reads it every second.
    TRANSACTION_RECONCILE_INTERVAL_MS: '3600000',
    // And the token reconciler: it reads the tokens marked for a check from its own sandbox, which
    // does not know another file's (a 404 clears the mark).
    TOKEN_RECONCILE_INTERVAL_MS: '3600000',
    ISSUER_URL: '',
    PROCESSING_URL: '',
    ACCOUNTS_URL: '',
  };
  for (const [key, value] of Object.entries(options.env ?? {})) env[key] = value;
  return env;
}

/**
 * Copies everything the child writes to a new `test-output/<run>/gateway-N.log` (synchronously, so
 * the file is complete when the run's secrets scan reads it; test/setup.ts) and returns its path.
 */
function teeToLogFile(child: ChildProcess): string {
  const file = nextGatewayLogPath();
  const fd = fs.openSync(file, 'a');
  const write = (chunk: Buffer) => fs.writeSync(fd, chunk);
  child.stdout!.on('data', write);
  child.stderr!.on('data', write);
  child.once('close', () => fs.closeSync(fd));
  return file;
}

/**
 * Starts `node dist/gateway/main.js` on free ports and resolves once it logged "gateway ready".
 * Sandbox upstreams start inside it unless the env names real ones.
 */
export async function startGatewayProcess(startOptions: StartOptions = {}): Promise<GatewayProcess> {
  // First, before any await: the stack still holds the calling test file.
  recordGatewayBoot('started');
  const own = startOptions.ownDatabase ? await createOwnDatabase() : undefined;
  const options: StartOptions = own ? { ...startOptions, databaseUrl: own.url } : startOptions;
  const adminToken = crypto.randomBytes(24).toString('base64url');
  const dataDir = await prepareDataDir(options);
  const child = spawn(process.execPath, nodeArgs(options), { env: baseEnv(options, adminToken, dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  const logFile = teeToLogFile(child);
  const log = new LogCollector();
  child.stdout!.on('data', (chunk: Buffer) => log.append(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => log.append(chunk.toString()));

  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not become ready:\n${log.text}`)), options.timeoutMs ?? 30_000);
    // Only until it is ready: a listener that re-read the whole output on every chunk made long
    // runs quadratic (the fuzz test spent 30 s of CPU here).
    const check = () => {
      const line = log.lines().find((l) => l.msg === 'gateway ready');
      if (line) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(line);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before it was ready:\n${log.text}`));
    });
  }).catch(async (err: unknown) => {
    child.kill('SIGKILL');
    await own?.drop().catch(() => undefined);
    throw err;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    baseUrl: `http://127.0.0.1:${String(ready.port)}`,
    adminUrl: `http://127.0.0.1:${String(ready.adminPort)}`,
    ...(ready.notifyPort === undefined ? {} : { notifyUrl: `http://127.0.0.1:${String(ready.notifyPort)}` }),
    adminToken,
    dataDir,
    child,
    logFile,
    output: () => log.text,
    logLines: () => log.lines(),
    databaseUrl: options.embedded ? undefined : (options.databaseUrl ?? runDatabaseUrl()),
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      await own?.drop();
      return code;
    },
  };
}

/** Runs the gateway expecting it to refuse to start; resolves with its exit code and output. */
export async function runGatewayExpectingFailure(options: StartOptions = {}): Promise<{ code: number | null; output: string }> {
  recordGatewayBoot('refused');
  const dataDir = await prepareDataDir(options);
  const child = spawn(process.execPath, nodeArgs(options), {
    env: baseEnv(options, crypto.randomBytes(24).toString('base64url'), dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  teeToLogFile(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway did not exit: it started despite the broken config\n${output}`));
    }, options.timeoutMs ?? 20_000);
    // 'close', not 'exit': the last output can arrive after 'exit' (a refusal once read as empty).
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdout!.on('data', () => {
      if (output.includes('"gateway ready"')) {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new Error(`gateway started despite the broken config\n${output}`));
      }
    });
  });
}

/**
 * Everything a gateway wrote, and its JSON lines parsed once each: `lines()` parses only what was
 * appended since the last call, so polling for a log line stays cheap however long the run.
 */
class LogCollector {
  text = '';
  private parsedUpTo = 0;
  private readonly parsed: Record<string, unknown>[] = [];

  append(chunk: string): void {
    this.text += chunk;
  }

  lines(): Record<string, unknown>[] {
    const end = this.text.lastIndexOf('\n') + 1;
    if (end > this.parsedUpTo) {
      this.parsed.push(...parseLogLines(this.text.slice(this.parsedUpTo, end)));
      this.parsedUpTo = end;
    }
    return this.parsed;
  }
}

function parseLogLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}

/**
 * Waits until `gateway` has logged a line matching `predicate` (access-log lines are written once a
 * response has finished, so a test polls for them); resolves with it, or throws after `timeoutMs`
 * with the output so far.
 */
export async function waitForLogLine(
  gateway: Gateway,
  predicate: (line: Record<string, unknown>) => boolean,
  timeoutMs = 5000
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = gateway.logLines().find(predicate);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no matching log line within ${timeoutMs} ms:\n${gateway.output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits for the access-log line of the request with this `x-request-id`. */
export function waitForRequestLog(gateway: Gateway, requestId: string, timeoutMs = 5000): Promise<Record<string, unknown>> {
  return waitForLogLine(gateway, (line) => line.msg === 'request' && line.requestId === requestId, timeoutMs);
}

/**
 * Environment of the shared gateway (`sharedGateway()`): the rate limits of {@link HIGH_RATE_LIMITS},
 * because every file that shares it calls the public routes from the same address, and notification
 * secrets made for the run ({@link SharedGateway}), so that a test can sign notifications as the
 * upstreams do, and the transaction reconciler every second; everything else is the default configuration (WORKERS=1, the run's database, the
 * sandboxes).
 */
const SHARED_ENV: Record<string, string> = { ...HIGH_RATE_LIMITS, TRANSACTION_RECONCILE_INTERVAL_MS: '1000' };

const SHARED_FILE = 'shared-gateway.json';

/**
 * The run's shared gateway, with what a test needs to act as its upstreams: the notification
 * listener and the secrets the issuer and the processing system sign their notifications with
 * (made for the run; in sandbox mode the gateway's own sandboxes sign with them too).
 */
export interface SharedGateway extends Gateway {
  notifyUrl: string;
  notifySecrets: { issuer: string; processing: string };
}

/**
 * Starts the run's shared gateway (mocha's global setup, test/setup.ts) and publishes where it
 * listens in the run's output directory, where `sharedGateway()` in any worker finds it.
 */
export async function startSharedGateway(): Promise<GatewayProcess> {
  const file = path.join(runOutputDir(), SHARED_FILE);
  try {
    const notifySecrets = { issuer: crypto.randomBytes(32).toString('base64url'), processing: crypto.randomBytes(32).toString('base64url') };
    recordSecret('notifySecret', notifySecrets.issuer);
    recordSecret('notifySecret', notifySecrets.processing);
    const env = { ...SHARED_ENV, ISSUER_NOTIFY_SECRET: notifySecrets.issuer, PROCESSING_NOTIFY_SECRET: notifySecrets.processing };
    const gateway = await startGatewayProcess({ env, timeoutMs: 60_000 });
    const { baseUrl, adminUrl, adminToken, dataDir, logFile, notifyUrl } = gateway;
    fs.writeFileSync(`${file}.tmp`, JSON.stringify({ baseUrl, adminUrl, adminToken, dataDir, logFile, notifyUrl, notifySecrets }));
    fs.renameSync(`${file}.tmp`, file);
    return gateway;
  } catch (err) {
    fs.writeFileSync(file, JSON.stringify({ error: (err as Error).message }));
    throw err;
  }
}

/**
 * The run's shared gateway (default configuration, see {@link SHARED_ENV}), for test files that need
 * no private one. Each file registers its own partners, so no test sees another's rows; a file that
 * stops, kills, reconfigures or counts everything a gateway did starts its own with
 * {@link startGatewayProcess} instead.
 */
export async function sharedGateway(timeoutMs = 60_000): Promise<SharedGateway> {
  const dir = process.env.TEST_OUTPUT_DIR;
  if (!dir) throw new Error('TEST_OUTPUT_DIR is not set: run the tests through mocha with test/setup');
  const file = path.join(dir, SHARED_FILE);
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the shared gateway did not start within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const published = JSON.parse(fs.readFileSync(file, 'utf8')) as Omit<SharedGateway, 'output' | 'logLines'> & { error?: string };
  if (published.error) throw new Error(`the shared gateway failed to start: ${published.error}`);
  // Its log file is read from where the last read stopped.
  const log = new LogCollector();
  let offset = 0;
  const readNew = () => {
    const size = fs.statSync(published.logFile).size;
    if (size <= offset) return;
    const fd = fs.openSync(published.logFile, 'r');
    try {
      const buffer = Buffer.alloc(size - offset);
      fs.readSync(fd, buffer, 0, buffer.length, offset);
      // Whole lines only, so that a character is never split across two reads.
      const end = buffer.lastIndexOf(0x0a) + 1;
      offset += end;
      log.append(buffer.subarray(0, end).toString('utf8'));
    } finally {
      fs.closeSync(fd);
    }
  };
  return {
    ...published,
    output: () => {
      readNew();
      return log.text;
    },
    logLines: () => {
      readNew();
      return log.lines();
    },
  };
}

/**
 * Resolves once every line `gateway` logged for requests answered before this call is in its
 * output: sends a health check with a fresh request id and waits for that request's access-log
 * line, which the gateway writes after the lines of earlier requests.
 */
export async function logsSettled(gateway: Gateway): Promise<void> {
  const requestId = `logs-settled-${crypto.randomBytes(6).toString('hex')}`;
  await (await fetch(`${gateway.baseUrl}/api/partner/health-check`, { headers: { 'x-request-id': requestId } })).text();
  await waitForRequestLog(gateway, requestId);
}
