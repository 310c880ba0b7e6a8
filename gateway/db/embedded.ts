import fs from 'node:fs';
import path from 'node:path';
import type { Extension } from '@electric-sql/pglite';
import type { Logger } from '../logging/logger';

/** A running embedded PostgreSQL (PGlite behind pglite-socket). */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite persisted under `dataDir/pgdata` and exposes it on a loopback port through
 * pglite-socket, so that the gateway talks to it with the same `pg` pool and SQL as to a real
 * PostgreSQL. PGlite is a single connection: pglite-socket multiplexes the pool's connections onto
 * it, which is why the gateway never holds a transaction across an upstream call. The pg_trgm
 * extension is loaded so that the migrations run here as on PostgreSQL (card search, 002).
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, maxConnections = 10): Promise<EmbeddedPostgres> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dir = path.join(dataDir, 'pgdata');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A subpath export: `moduleResolution: node` (tsconfig) does not read package exports, so it is
  // required by name and typed here.
  const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension };
  const db = await PGlite.create(dir, { extensions: { pg_trgm } });
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections });
  await server.start();
  const conn = server.getServerConn();
  const url = `postgres://postgres@${conn}/postgres?sslmode=disable`;
  log.info({ dataDir: dir }, 'embedded PostgreSQL (PGlite) started');
  return {
    url,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
