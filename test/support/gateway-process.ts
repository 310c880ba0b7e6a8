import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nextGatewayLogPath } from './secrets';
import { runDatabaseUrl } from './test-database';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAIN = path.join(ROOT, 'dist', 'gateway', 'main.js');

/** A gateway process started by a test, with everything it logged. */
export interface GatewayProcess {
  baseUrl: string;
  adminUrl: string;
  adminToken: string;
  dataDir: string;
  child: ChildProcess;
  /** The file its output is appended to (`test-output/<run>/gateway-N.log`), scanned for secrets after the run. */
  logFile: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Parsed JSON log lines so far. */
  logLines(): Record<string, unknown>[];
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

/** Options of a gateway start; `env` is merged over the defaults below. */
export interface StartOptions {
  env?: Record<string, string | undefined>;
  /** Use the embedded database (DATABASE_URL unset) instead of the run's PostgreSQL database. */
  embedded?: boolean;
  configDir?: string;
  dataDir?: string;
  timeoutMs?: number;
}

function baseEnv(options: StartOptions, adminToken: string, dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    WORKERS: '1',
    DATABASE_URL: options.embedded ? '' : runDatabaseUrl(),
    // On the run's embedded database (TEST_DB=embedded) one connection per process, as the gateway's own embedded mode uses.
    ...(process.env.TEST_DB === 'embedded' ? { DATABASE_POOL_MAX: '1' } : {}),
    CONFIG_DIR: options.configDir ?? '',
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
export async function startGatewayProcess(options: StartOptions = {}): Promise<GatewayProcess> {
  const adminToken = crypto.randomBytes(24).toString('base64url');
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-test-'));
  const child = spawn(process.execPath, [MAIN], { env: baseEnv(options, adminToken, dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
  const logFile = teeToLogFile(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const parse = () =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return {};
        }
      });

  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not become ready:\n${output}`)), options.timeoutMs ?? 30_000);
    const check = () => {
      const line = parse().find((l) => l.msg === 'gateway ready');
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before it was ready:\n${output}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    baseUrl: `http://127.0.0.1:${String(ready.port)}`,
    adminUrl: `http://127.0.0.1:${String(ready.adminPort)}`,
    adminToken,
    dataDir,
    child,
    logFile,
    output: () => output,
    logLines: parse,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Runs the gateway expecting it to refuse to start; resolves with its exit code and output. */
export async function runGatewayExpectingFailure(options: StartOptions = {}): Promise<{ code: number | null; output: string }> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-test-'));
  const child = spawn(process.execPath, [MAIN], {
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
    child.once('exit', (code) => {
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
