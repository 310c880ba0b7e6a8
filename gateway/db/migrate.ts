import fs from 'node:fs';
import path from 'node:path';
import type { Database } from './database';
import type { Logger } from '../logging/logger';

/** Folder of the versioned SQL migrations: `NNN_name.sql`, applied in order, each once. */
export const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', '..', 'db', 'migrations');

// Arbitrary constant key: only one instance migrates at a time when several start together.
const MIGRATION_LOCK_KEY = 727_450_011;

/** A migration file on disk. */
export interface Migration {
  version: string;
  name: string;
  sql: string;
}

/**
 * Reads the migration files in version order. Two files with one version number are refused: the
 * second would never run (a version is recorded once), silently.
 */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => ({ version: file.slice(0, 3), name: file.slice(4, -4), sql: fs.readFileSync(path.join(dir, file), 'utf8') }));
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i].version === migrations[i - 1].version) {
      throw new Error(`two migrations share version ${migrations[i].version} (${migrations[i - 1].name}, ${migrations[i].name}): renumber one`);
    }
  }
  return migrations;
}

/**
 * Applies every migration not yet recorded in `schema_migrations`, each in its own transaction,
 * under an advisory lock. Returns the versions applied by this call.
 */
export async function migrate(db: Database, log: Logger, dir = MIGRATIONS_DIR): Promise<string[]> {
  const client = await db.pool.connect();
  const applied: string[] = [];
  // A lost connection then fails the migration query (and the start) instead of crashing the process.
  client.on('error', (err) => log.warn({ err }, 'database connection lost during migration'));
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const migration of readMigrations(dir)) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${migration.version}_${migration.name} failed: ${(err as Error).message}`);
      }
      applied.push(migration.version);
      log.info({ version: migration.version, name: migration.name }, 'migration applied');
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
  return applied;
}
