import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Extension } from '@electric-sql/pglite';
import type { Logger } from '../logging/logger';

/** A running embedded PostgreSQL (PGlite behind pglite-socket). */
export interface EmbeddedPostgres {
  /** A `pg` connection string naming the Unix socket's directory (`host=/…`), never a TCP address. */
  url: string;
  /** The private directory (mode 0700) that holds the socket. */
  socketDir: string;
  stop(): Promise<void>;
}

// The file name libpq and `pg` look for in a socket directory: `<dir>/.s.PGSQL.<port>`.
const SOCKET_PORT = 5432;
// sun_path holds 108 bytes on Linux, 104 on macOS (terminator included).
const MAX_SOCKET_PATH = 103;

/**
 * Starts PGlite persisted under `dataDir/pgdata` and exposes it through pglite-socket, so that the
 * gateway talks to it with the same `pg` pool and SQL as to a real PostgreSQL.
 *
 * PGlite has no authentication: whoever reaches the listener is the superuser. So the listener is
 * a Unix socket in a fresh directory of mode 0700 (`mkdtemp` under the system temporary
 * directory), never a TCP port: only this user (and root) can enter the directory, and other local
 * users and processes in other network namespaces cannot connect at all. The directory is removed
 * on stop. PGlite is a single connection: pglite-socket multiplexes the pool's connections onto
 * it, which is why the gateway never holds a transaction across an upstream call. The pg_trgm
 * and btree_gin extensions are loaded so that the migrations run here as on PostgreSQL (card
 * search, 002 and 022).
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, maxConnections = 10): Promise<EmbeddedPostgres> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dir = path.join(dataDir, 'pgdata');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A subpath export: `moduleResolution: node` (tsconfig) does not read package exports, so it is
  // required by name and typed here.
  const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension };
  const { btree_gin } = require('@electric-sql/pglite/contrib/btree_gin') as { btree_gin: Extension };
  const db = await PGlite.create(dir, { extensions: { pg_trgm, btree_gin } });
  // mkdtemp creates the directory with mode 0700 whatever the umask, under a name nobody can guess.
  const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-db-'));
  fs.chmodSync(socketDir, 0o700);
  const socketPath = path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
  const removeSocketDir = () => fs.rmSync(socketDir, { recursive: true, force: true });
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    removeSocketDir();
    await db.close();
    throw new Error(`the embedded database's socket path "${socketPath}" is too long for a Unix socket: set TMPDIR to a shorter directory`);
  }
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections });
  try {
    await server.start();
  } catch (err) {
    removeSocketDir();
    await db.close();
    throw err;
  }
  // `pg` reads a host that starts with "/" as a socket directory and appends `.s.PGSQL.<port>`.
  const url = `postgres://postgres@${encodeURIComponent(socketDir)}:${SOCKET_PORT}/postgres?sslmode=disable`;
  log.info({ dataDir: dir, socketDir }, 'embedded PostgreSQL (PGlite) started on a private Unix socket');
  return {
    url,
    socketDir,
    async stop() {
      await server.stop();
      await db.close();
      removeSocketDir();
    },
  };
}
