import { Pool, type Dispatcher } from 'undici';

/** Bound on concurrent connections to one upstream origin, shared by every caller of that origin. */
export const MAX_SOCKETS_PER_ORIGIN = 64;

/**
 * Idle keep-alive connections are closed after this many ms: below the usual 5 s keep-alive timeout
 * of Node servers, so the gateway rarely reuses a connection the upstream is closing at the same
 * moment. A shorter `Keep-Alive: timeout=` hint from the upstream is honoured (undici subtracts 2 s
 * from it); a longer one is capped to this.
 */
export const IDLE_SOCKET_MS = 4000;

/**
 * One upstream origin's keep-alive pool (undici's `Pool`): at most `connections` connections, one
 * request at a time on each (no pipelining), idle ones closed after {@link IDLE_SOCKET_MS}, the first
 * free connection in the pool's order taken (the later ones can idle out). undici's own header and
 * body timeouts are off: the client's whole-call timer bounds every call (http-client.ts).
 */
export interface UpstreamPool {
  readonly dispatcher: Dispatcher;
  /** The pool's bound on connections. */
  readonly connections: number;
  /** Closes the pool's connections at once; later calls fail without connecting. */
  destroy(): void;
}

/** A keep-alive pool for one upstream origin (see {@link UpstreamPool}). */
export function createUpstreamPool(baseUrl: string, connections = MAX_SOCKETS_PER_ORIGIN): UpstreamPool {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`upstream URL must be http(s), got ${url.protocol}`);
  const pool = new Pool(url.origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: IDLE_SOCKET_MS,
    keepAliveMaxTimeout: IDLE_SOCKET_MS,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  return {
    dispatcher: pool,
    connections,
    destroy() {
      // Rejects the requests still queued or in flight with ClientDestroyedError; nothing awaits the promise.
      pool.destroy().catch(() => undefined);
    },
  };
}

/**
 * The keep-alive pools of one set of upstream clients: one pool per origin, so two upstreams
 * served by one origin (a path prefix each) share one bounded pool, and every caller (typed client
 * methods and the `upstream-proxy` policy alike) goes through the same connections.
 *
 * @example
 * const pools = new UpstreamPools();
 * pools.poolFor('http://issuer:4101') === pools.poolFor('http://issuer:4101/api/'); // true
 */
export class UpstreamPools {
  private readonly pools = new Map<string, UpstreamPool>();

  /**
   * @param connections each origin's bound on connections
   * @param dispatcher in tests, one dispatcher that answers for every origin (undici's `MockAgent`)
   *   in place of a pool per origin
   */
  constructor(
    private readonly connections = MAX_SOCKETS_PER_ORIGIN,
    private readonly dispatcher?: Dispatcher,
  ) {}

  /** The pool of `baseUrl`'s origin, created on first use. */
  poolFor(baseUrl: string): UpstreamPool {
    const origin = new URL(baseUrl).origin;
    let pool = this.pools.get(origin);
    if (!pool) {
      const { dispatcher } = this;
      pool = dispatcher ? { dispatcher, connections: this.connections, destroy: () => undefined } : createUpstreamPool(baseUrl, this.connections);
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** Destroys every pool's connections (shutdown); later calls through a closed client fail without connecting. */
  destroy(): void {
    for (const pool of this.pools.values()) pool.destroy();
    this.pools.clear();
  }
}
