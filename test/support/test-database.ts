import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../gateway/db/embedded';
import { Database } from '../../gateway/db/database';
import { migrate } from '../../gateway/db/migrate';
import { createLogger } from '../../gateway/logging/logger';
import { copyPgliteTemplate } from './pglite-template';

/**
 * The PostgreSQL server tests run against: TEST_DATABASE_URL, or this machine's
 * postgres://postgres@127.0.0.1:5432/test (trust auth), as CI provides.
 */
export const SERVER_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** A database made for this test run. */
export interface RunDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Creates `pgw_test_<time>_<random>` on the test server; `drop()` removes it (forcing connections off). */
export async function createRunDatabase(prefix = 'pgw_test'): Promise<RunDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(
      `tests need PostgreSQL at ${SERVER_URL} (set TEST_DATABASE_URL, or start it with ` +
        `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start): ${(err as Error).message}`
    );
  }
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabase(SERVER_URL, name),
    async drop() {
      const client = new Client({ connectionString: SERVER_URL });
      await client.connect();
      try {
        // With it, the databases of the run's gateways that had one of their own (`<name>_o_…`).
        const owned = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [`${name}\\_o\\_%`]);
        for (const { datname } of owned.rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** The database of the current run (made by the root hook in test/setup.ts). */
export function runDatabaseUrl(): string {
  const url = process.env.TEST_RUN_DATABASE_URL;
  if (!url) throw new Error('TEST_RUN_DATABASE_URL is not set: run the tests through mocha with test/setup');
  return url;
}

/**
 * `TEST_DB=embedded`: the whole run uses one embedded PostgreSQL (PGlite behind pglite-socket)
 * started in the test process, so every suite also proves the embedded default runs our SQL.
 */
export async function createEmbeddedRunDatabase(): Promise<RunDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-embedded-run-'));
  // From the initialised template (initdb done, no migration: the run's gateways apply them).
  await copyPgliteTemplate(dir);
  const log = createLogger({ level: 'silent' });
  const embedded = await startEmbeddedPostgres(dir, log, 20);
  // Migrated here, before any gateway starts: PGlite is one session, so the migrations' advisory
  // lock excludes nothing between the run's gateways, and two booting at once raced on an index.
  const db = new Database(embedded.url, { max: 1, log });
  try {
    await migrate(db, log);
  } finally {
    await db.close();
  }
  return {
    name: 'embedded',
    url: embedded.url,
    async drop() {
      await embedded.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A database of its own for one test's gateway(s), named after the run's (`<run>_o_…`) so that the
 * run's teardown drops any one a failed test left behind.
 */
export function createOwnDatabase(): Promise<RunDatabase> {
  return createRunDatabase(`${new URL(runDatabaseUrl()).pathname.slice(1)}_o`);
}
