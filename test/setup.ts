// Loaded by mocha before every spec file (see .mocharc.json): one fresh PostgreSQL database per
// run, created before the first test and dropped after the last, so no run sees another's rows.
// TEST_DB=embedded runs the whole suite on the embedded PostgreSQL (PGlite) instead.
//
// After the last test, every gateway log of the run (test-output/<run>/gateway-N.log, written by
// test/support/gateway-process.ts) is scanned for every secret the run recorded
// (test/support/secrets.ts): one hit fails the run.
import { describeHits, recordedSecrets, runGatewayLogs, runOutputDir, scanForSecrets, secretCounts } from './support/secrets';
import { createEmbeddedRunDatabase, createRunDatabase, type RunDatabase } from './support/test-database';

process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';

let runDatabase: RunDatabase | undefined;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    runOutputDir();
    runDatabase = process.env.TEST_DB === 'embedded' ? await createEmbeddedRunDatabase() : await createRunDatabase();
    process.env.TEST_RUN_DATABASE_URL = runDatabase.url;
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(120_000);
    try {
      await runDatabase?.drop();
    } finally {
      const files = runGatewayLogs();
      const secrets = recordedSecrets();
      const result = scanForSecrets(files, secrets);
      const searched = Object.entries(secretCounts(secrets))
        .map(([kind, n]) => `${kind} ${n}`)
        .join(', ');
      process.stdout.write(
        `\nsecrets scan: ${result.files} gateway log(s), ${(result.bytes / 1e6).toFixed(1)} MB, ${secrets.length} secret(s) recorded (${searched || 'none'}): ${result.hits.length} found\n`
      );
      if (result.hits.length > 0) throw new Error(`secrets scan failed: ${describeHits(result.hits)}`);
    }
  },
};
