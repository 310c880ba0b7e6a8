// Loaded by mocha before every spec file (see .mocharc.json): one fresh PostgreSQL database per
// run, created before the first test and dropped after the last, so no run sees another's rows.
// TEST_DB=embedded runs the whole suite on the embedded PostgreSQL (PGlite) instead.
import { createEmbeddedRunDatabase, createRunDatabase, type RunDatabase } from './support/test-database';

process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';

let runDatabase: RunDatabase | undefined;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    runDatabase = process.env.TEST_DB === 'embedded' ? await createEmbeddedRunDatabase() : await createRunDatabase();
    process.env.TEST_RUN_DATABASE_URL = runDatabase.url;
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await runDatabase?.drop();
  },
};
