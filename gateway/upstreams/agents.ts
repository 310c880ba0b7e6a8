import type { Client as UndiciClient, Dispatcher } from 'undici';
import { Client, Pool } from './undici-core';

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
 * undici's connect timeout (its default is 10 s): the longest whole-call budget any call can have
 * (`UPSTREAM_TIMEOUT_MS` and a step's `timeoutMs` are both bounded to 120 s, gateway/settings.ts and
 * the policies' schemas), so that the client's own timer always ends a call first (node:http has
 * no connect timeout of its own). It still bounds a connection attempt that
 * outlives the call it was opened for (undici does not drop it when that call ends), about as the
 * kernel's SYN retries would.
 */
export const CONNECT_TIMEOUT_MS = 120_000;

/**
 * Where a request went out: the connection (undici's `Client`, one socket at a time) that took it,
 * set by {@link CountingClient} before undici calls the handler's `onConnect`.
 */
export interface ConnectionAware {
  connection?: CountingClient;
}

/**
 * One connection of an upstream pool (undici's `Client`) that counts the answers completed on its
 * current socket, so that the upstream client knows whether a request went out on a reused
 * keep-alive connection (its retry rule, http-client.ts) with undici's public API only: the count
 * restarts at each 'connect' and 'disconnect', and with one request at a time per connection (no
 * pipelining) a count above 0 when the request is handed to the socket means the socket answered
 * before. The handler adds 1 when its answer completes.
 */
export class CountingClient extends Client {
  /** Answers completed on the current socket; 0 on a fresh one. */
  answers = 0;

  constructor(origin: string | URL, options?: UndiciClient.Options) {
    super(origin, options);
    const restart = (): void => {
      this.answers = 0;
    };
    this.on('connect', restart);
    this.on('disconnect', restart);
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    (handler as ConnectionAware).connection = this;
    return super.dispatch(options, handler);
  }
}

/** A call waiting in an {@link OriginGate} for a free exchange slot (a doubly linked list: O(1) removal). */
export interface WaitingExchange {
  readonly options: Dispatcher.DispatchOptions;
  readonly handler: Dispatcher.DispatchHandler;
  prev: WaitingExchange | undefined;
  next: WaitingExchange | undefined;
}

/**
 * The bound on one origin's exchanges, in front of its undici pool: a request is handed to undici
 * only while fewer than `limit` exchanges of the origin are outstanding (dispatched, and not yet
 * ended by undici's `onComplete` or `onError`); the others wait here, first in first out, and a
 * waiting call that ends (its timer, the partner leaving) is withdrawn and never dispatched. So
 * undici holds at most `limit` requests at once, and never opens more than `limit` connection
 * attempts: undici's Pool alone does not hold its `connections` bound when connections fail (a
 * client whose connection attempt failed leaves the pool's list but still takes the pool's queued
 * requests on 'drain' and connects again, while the pool makes new clients), and keeps in its
 * queue every request whose call already ended. A slot is released by undici's end of the
 * exchange, never by the call's own timer: an exchange undici still works on (a connection attempt
 * to a black-holed upstream, up to {@link CONNECT_TIMEOUT_MS}) keeps its slot.
 *
 * Under the limit a call costs a comparison and a count (no allocation); the waiting entry is made
 * only when the origin is at its limit.
 */
export class OriginGate {
  /** Exchanges handed to undici and not yet ended (exposed for tests). */
  outstanding = 0;
  /** Calls waiting for a slot (exposed for tests). */
  waiting = 0;
  private head: WaitingExchange | undefined;
  private tail: WaitingExchange | undefined;
  /** release() is handing slots out: a release inside it (an exchange that failed at once) only counts. */
  private releasing = false;

  constructor(
    private readonly dispatcher: Dispatcher,
    readonly limit: number,
  ) {}

  /**
   * Hands the request to undici now if a slot is free and nobody waits (answers `undefined`), else
   * queues it (answers the entry, for {@link withdraw}). The handler must call {@link release} once
   * when undici ends the exchange (`onComplete` or `onError`), and once if `dispatch` throws.
   */
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): WaitingExchange | undefined {
    if (this.outstanding < this.limit && this.head === undefined) {
      this.outstanding += 1;
      this.dispatcher.dispatch(options, handler);
      return undefined;
    }
    const entry: WaitingExchange = { options, handler, prev: this.tail, next: undefined };
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
    this.waiting += 1;
    return entry;
  }

  /** Removes a waiting call that ended before its turn: it is never dispatched. */
  withdraw(entry: WaitingExchange): void {
    if (entry.prev) entry.prev.next = entry.next;
    else if (this.head === entry) this.head = entry.next;
    else return; // already taken out
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = undefined;
    this.waiting -= 1;
  }

  /** An exchange ended: its slot goes to the first waiting call. */
  release(): void {
    this.outstanding -= 1;
    if (this.head === undefined || this.releasing) return;
    this.releasing = true;
    try {
      // A loop, not recursion: a request that fails at once (a destroyed pool calls onError
      // synchronously) releases inside dispatch, and the next waiting call goes out here.
      while (this.head !== undefined && this.outstanding < this.limit) {
        const entry = this.head;
        this.withdraw(entry);
        this.outstanding += 1;
        try {
          this.dispatcher.dispatch(entry.options, entry.handler);
        } catch (err) {
          // undici reports its own failures through onError; a throw is a programming error, failed the same way.
          entry.handler.onError?.(err as Error);
        }
      }
    } finally {
      this.releasing = false;
    }
  }
}

/**
 * One upstream origin's keep-alive pool (undici's `Pool` of {@link CountingClient}s) behind its
 * {@link OriginGate}: at most `connections` exchanges in flight, hence at most as many connections
 * busy or connecting, one request at a time on each (no pipelining), idle ones closed after
 * {@link IDLE_SOCKET_MS}, the first free connection in the pool's order taken (the later ones can
 * idle out). undici's own header and body timeouts are off and its connect timeout is
 * {@link CONNECT_TIMEOUT_MS}: the client's whole-call timer bounds every call (http-client.ts).
 */
export interface UpstreamPool {
  readonly dispatcher: Dispatcher;
  /** The pool's bound on connections. */
  readonly connections: number;
  /** undici's connect timeout ({@link CONNECT_TIMEOUT_MS}); absent for a test's dispatcher. */
  readonly connectTimeoutMs?: number;
  /** The origin's bound on exchanges in front of undici ({@link OriginGate}), shared by every client of the pool. */
  readonly gate: OriginGate;
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
    connectTimeout: CONNECT_TIMEOUT_MS,
    factory: (origin, options) => new CountingClient(origin, options as UndiciClient.Options),
  });
  return {
    dispatcher: pool,
    connections,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    gate: new OriginGate(pool, connections),
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
      pool = dispatcher
        ? { dispatcher, connections: this.connections, gate: new OriginGate(dispatcher, this.connections), destroy: () => undefined } : createUpstreamPool(baseUrl, this.connections);
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
