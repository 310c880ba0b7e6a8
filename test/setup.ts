// Loaded by mocha before the spec files (see .mocharc.js). Its global fixtures run once per run in
// mocha's main process, also when the files run in parallel workers:
//
// - one fresh PostgreSQL database per run, created before the first test and dropped after the
//   last, so no run sees another's rows (TEST_DB=embedded: one embedded PostgreSQL instead);
// - one shared gateway process (test/support/gateway-process.ts, `sharedGateway()`), started in the
//   background for the files that need no private one: each such file registers its own partners,
//   so no test sees another's rows;
// - after the last test, every gateway log of the run (test-output/<run>/gateway-*.log) is scanned
//   for every secret any process of the run recorded (test/support/secrets.ts): one hit fails the run;
// - one temporary directory per run (TMPDIR for every process of the run: workers, gateways, CLIs),
//   removed at the end: test gateways' data directories (an embedded one is about 40 MB) and copied
//   configs no longer pile up in /tmp.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSharedGateway, type GatewayProcess } from './support/gateway-process';
import { cpuWithChildrenMs, recordFileTime, reportRunFailure } from './support/run-failures';
import { describeHits, recordedSecrets, runGatewayLogs, runOutputDir, scanForSecrets, secretCounts } from './support/secrets';
import { createEmbeddedRunDatabase, createRunDatabase, type RunDatabase } from './support/test-database';

process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';

let runDatabase: RunDatabase | undefined;
let runTmpDir: string | undefined;
let shared: Promise<GatewayProcess | undefined> | undefined;

/**
 * Root hooks: in mocha's parallel mode they run around each test file in its worker, which is the
 * only place a file's wall time can be taken (the reporter sees a worker's events only once its
 * file is over); each file's span goes to the run's output directory for the reporter's
 * "slowest test files". In serial mode they run once around the whole run and record nothing.
 */
let fileStartedAt = 0;
let fileCpuAt: number | undefined;
export const mochaHooks = {
  beforeAll() {
    fileStartedAt = Date.now();
    fileCpuAt = cpuWithChildrenMs();
  },
  afterAll(this: Mocha.Context) {
    const files = new Set((this.test?.parent?.suites ?? []).map((suite) => suite.file).filter(Boolean));
    const cpu = cpuWithChildrenMs();
    const cpuMs = cpu !== undefined && fileCpuAt !== undefined ? cpu - fileCpuAt : undefined;
    if (files.size === 1) recordFileTime({ file: [...files][0]!, ms: Date.now() - fileStartedAt, cpuMs });
  },
};

export async function mochaGlobalSetup(): Promise<void> {
  runOutputDir();
  // os.tmpdir() reads TMPDIR on each call; the workers and every child process inherit it.
  runTmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-run-'));
  process.env.TMPDIR = runTmpDir;
  runDatabase = process.env.TEST_DB === 'embedded' ? await createEmbeddedRunDatabase() : await createRunDatabase();
  process.env.TEST_RUN_DATABASE_URL = runDatabase.url;
  // Not awaited: the first files (unit tests) run while it boots; `sharedGateway()` waits for it.
  shared = startSharedGateway().catch(() => undefined);
}

export async function mochaGlobalTeardown(): Promise<void> {
  try {
    await (await shared)?.stop();
    await runDatabase?.drop();
  } finally {
    if (runTmpDir) fs.rmSync(runTmpDir, { recursive: true, force: true });
    const files = runGatewayLogs();
    const secrets = recordedSecrets();
    const result = scanForSecrets(files, secrets);
    const searched = Object.entries(secretCounts(secrets))
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ');
    process.stdout.write(
      `\nsecrets scan: ${result.files} gateway log(s), ${(result.bytes / 1e6).toFixed(1)} MB, ${secrets.length} secret(s) recorded (${searched || 'none'}): ${result.hits.length} found\n`
    );
    // Counted as a failure by the reporter (test/support/summary-reporter.ts), which closes the run after this.
    if (result.hits.length > 0) reportRunFailure(`secrets scan failed: ${describeHits(result.hits)}`);
  }
}
