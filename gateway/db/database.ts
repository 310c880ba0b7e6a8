import { escapeLiteral, Pool, type PoolClient, type QueryResult, type QueryResultRow } from './pg';
import { GatewayError } from '../errors';
import type { Logger } from '../logging/logger';

/** Anything that runs SQL: the pool-backed Database or a transaction's client. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, params?: unknown[]): Promise<QueryResult<R>>;
}

// SQLSTATE classes and Node socket codes that mean "the database cannot be reached right now".
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

/**
 * True when an error from `pg` means the database is unreachable (as opposed to a bad query).
 * Such errors become a 503 `database_unavailable` problem.
 */
export function isUnavailableError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(
    err.message
  );
}

function translate(err: unknown): unknown {
  return isUnavailableError(err)
    ? new GatewayError('database_unavailable', 'The database is unavailable; retry shortly', {
        headers: { 'Retry-After': '1' },
        cause: err,
      })
    : err;
}

/** pg's literal quoting, for the few statements sent in the simple query protocol (no parameters there): the webhook dispatcher's step. */
export { escapeLiteral };

/**
 * The gateway's access to PostgreSQL: a `pg` pool against real PostgreSQL or against the embedded
 * one. Connection failures surface as `GatewayError('database_unavailable')`; the pool reconnects
 * by itself when the database is back, so service resumes without a restart.
 */
export class Database implements Queryable {
  readonly pool: Pool;
  private readonly log: Logger;
  /** Whether {@link named} and {@link statement} send named (prepared) statements (`namedStatements`; never on the embedded database). */
  readonly namedStatements: boolean;

  /**
   * @param options.queryTimeoutMs how long a query may run before the client gives up on it (15 s,
   *   the gateway's); 0 for none (bulk work such as the seed scripts, which a loaded machine can
   *   take longer than that over).
   * @param options.namedStatements send the statements given a name as prepared statements, so that
   *   each connection parses them once and PostgreSQL can reuse their plan (the authorization
   *   decision's, docs/performance.md "Authorization decisions"). Not for the embedded database: pglite-socket keeps
   *   one PGlite session under every connection, so a reconnected client's first Parse of a name would
   *   find it prepared already. Default false.
   */
  constructor(connectionString: string, options: { max: number; log: Logger; queryTimeoutMs?: number; namedStatements?: boolean }) {
    this.log = options.log;
    this.namedStatements = options.namedStatements ?? false;
    this.pool = new Pool({
      connectionString,
      max: options.max,
      connectionTimeoutMillis: 3000,
      idleTimeoutMillis: 30000,
      // A query that runs longer than this is a bug or a stuck database: fail it.
      ...(options.queryTimeoutMs === 0 ? {} : { query_timeout: options.queryTimeoutMs ?? 15000 }),
    });
    // An idle client losing its connection emits 'error' on the pool; without a listener Node
    // would crash the process. The next query simply gets a fresh connection.
    this.pool.on('error', (err) => options.log.warn({ err }, 'idle database connection lost'));
  }

  async query<R extends QueryResultRow = QueryResultRow>(text: string, params?: unknown[]): Promise<QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, params);
    } catch (err) {
      throw translate(err);
    }
  }

  /**
   * {@link query} of a statement whose text never changes, under `name`: a prepared statement when
   * this database prepares them (`namedStatements`), otherwise an ordinary query.
   */
  async named<R extends QueryResultRow = QueryResultRow>(name: string, text: string, params: unknown[]): Promise<QueryResult<R>> {
    if (!this.namedStatements) return this.query<R>(text, params);
    try {
      return await this.pool.query<R>({ name, text, values: params });
    } catch (err) {
      throw translate(err);
    }
  }

  /**
   * One statement, on its own (autocommit), built by `build` once a connection is had: a deadline
   * or budget it computes excludes the wait for a connection. `name` as in {@link named}. An error
   * `build` throws is thrown as it is, and nothing is sent.
   */
  async statement<R extends QueryResultRow = QueryResultRow>(build: () => { name?: string; text: string; values: unknown[] }): Promise<QueryResult<R>> {
    return this.withClient('a statement', (client) => {
      const { name, text, values } = build();
      return client.query<R>(name !== undefined && this.namedStatements ? { name, text, values } : { text, values });
    });
  }

  /**
   * Runs `work` inside one transaction on one connection; commits when it resolves, rolls back
   * when it throws. Never call an upstream or a second connection from inside `work`: on the
   * embedded database every other query waits while a transaction is open.
   */
  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.withClient(
      'a transaction',
      async (client) => {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      },
      async (client) => {
        await client.query('ROLLBACK');
      }
    );
  }

  /**
   * `work` on one connection of the pool, checked out for it alone. A connection lost meanwhile
   * emits 'error' on its client, which pg's pool does not listen to then: without the listener here
   * the process would crash (the failed query rejects too). Such a connection, or one whose query
   * failed as unavailable, is released as broken (the pool closes it); otherwise `cleanUp` runs
   * after a failed `work` (the rollback), its own failure ignored.
   */
  async withClient<T>(during: string, work: (client: PoolClient) => Promise<T>, cleanUp?: (client: PoolClient) => Promise<void>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw translate(err);
    }
    let broken = false;
    const onClientError = (err: Error) => {
      broken = true;
      this.log.warn({ err }, `database connection lost during ${during}`);
    };
    client.on('error', onClientError);
    try {
      return await work(client);
    } catch (err) {
      broken ||= isUnavailableError(err);
      if (!broken && cleanUp) await cleanUp(client).catch(() => undefined);
      throw translate(err);
    } finally {
      client.off('error', onClientError);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
