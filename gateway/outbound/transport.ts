import net from 'node:net';
import type { buildConnector as BuildConnector } from 'undici';
import { buildConnector, Client } from '../upstreams/undici-core';
import type { VettedTarget } from './target-guard';

/** Why a connection may not carry a request ({@link PinnedTransport}'s check), or undefined when it may. */
export type ConnectionCheck = (remote: { address?: string; port?: number }, target: VettedTarget) => string | undefined;

/**
 * A connection the guard refused once connected (its remote end did not pass): the socket was
 * destroyed before anything was sent, a TLS handshake included. Callers report `target_refused`.
 */
export class TargetRefusedError extends Error {
  readonly code = 'ERR_OUTBOUND_TARGET_REFUSED';
  constructor(readonly reason: string) {
    super(`outbound connection refused: ${reason}`);
  }
}

/** What the transport trusts beyond the system's CAs (tests: a self-signed receiver). */
export interface TransportOptions {
  ca?: string | Buffer;
}

/** How one request kind reads its answer (docs/webhooks.md, docs/authorization-endpoint.md). */
export interface AnswerRules {
  /** The answer's body is read up to this many bytes; past it (declared or streamed) reading stops and the connection is dropped. */
  maxAnswerBytes: number;
  /** `always`: every answer's body is read (up to the cap); `success`: a non-2xx answer ends at its status line (its body is not waited for). */
  readBody: 'always' | 'success';
  /** The `User-Agent` sent. */
  userAgent: string;
}

/**
 * How one POST ended, in `durationMs`:
 * - `answer`: a status and the body read whole (empty when not read: a non-2xx under `readBody: 'success'`);
 * - `too_large`: a status, and a body over the cap (not read further);
 * - `failed`: `timeout` (no whole answer within the timeout), `connection` (refused, reset, a TLS
 *   failure: `code` names it; `status` when the answer's head had come), `target_refused` (the
 *   connection's remote end did not pass the guard; nothing was sent: `reason` says why).
 */
export type PostResult = { durationMs: number } & (
  | { kind: 'answer'; status: number; body: Buffer }
  | { kind: 'too_large'; status: number }
  | { kind: 'failed'; error: 'timeout' | 'connection' | 'target_refused'; status?: number; code?: string; reason?: string }
);

/** Idle kept-alive connections close after this (below the 5 s of Node's and many servers' keep-alive timeout, so the gateway rarely writes on a socket the receiver is closing). */
const IDLE_MS = 4000;
/** Idle connections kept per target; more are closed as they free up. */
const MAX_IDLE_PER_TARGET = 64;
/** The transport keeps the connections of this many most recently used targets. */
const MAX_TARGETS = 256;
/**
 * A connection attempt (TCP, then TLS) is abandoned after this long even when its request was given
 * up sooner (a caller's timeout ends its request, not the attempt): longer than any caller's timeout
 * (`WEBHOOKS_TIMEOUT_MS` is at most 60 s).
 */
const CONNECT_LIMIT_MS = 60_000;

/**
 * The connector of one vetted target: a TCP connection to the vetted address only (never a name:
 * nothing is resolved here), handed over once its remote end passed `check`; one that does not pass
 * is destroyed before any byte is written on it. https: TLS on that checked socket, the certificate
 * checked against the URL's host name (undici's connector: SNI, session cache).
 */
function pinnedConnector(target: VettedTarget, check: ConnectionCheck, options: TransportOptions): BuildConnector.connector {
  const secure = target.url.protocol === 'https:';
  const tls = secure ? buildConnector({ timeout: CONNECT_LIMIT_MS, ...(options.ca ? { ca: options.ca } : {}) }) : undefined;
  return (connect, callback) => {
    const port = Number(connect.port) || (secure ? 443 : 80);
    const socket = net.connect({ host: target.address, port, family: target.family, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 });
    const limit = setTimeout(() => socket.destroy(new Error(`connect timed out after ${CONNECT_LIMIT_MS} ms`)), CONNECT_LIMIT_MS);
    limit.unref();
    const failed = (err: Error) => {
      clearTimeout(limit);
      callback(err, null);
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      clearTimeout(limit);
      socket.off('error', failed);
      const reason = check({ address: socket.remoteAddress, port: socket.remotePort }, target);
      if (reason) {
        socket.destroy();
        callback(new TargetRefusedError(reason), null);
      } else if (tls) {
        tls({ ...connect, httpSocket: socket }, callback);
      } else {
        callback(null, socket);
      }
    });
  };
}

/** One connection (undici's `Client`: one socket at a time, one request at a time) and the answers completed on its current socket. */
class Connection extends Client {
  /** Answers read whole on the current socket; 0 on a fresh one. */
  answers = 0;
  connected = false;

  constructor(origin: string, connect: BuildConnector.connector) {
    super(origin, { connect, pipelining: 1, keepAliveTimeout: IDLE_MS, keepAliveMaxTimeout: IDLE_MS });
    this.on('connect', () => {
      this.connected = true;
      this.answers = 0;
    });
    this.on('disconnect', () => {
      this.connected = false;
      this.answers = 0;
    });
    this.on('connectionError', () => (this.connected = false));
  }

  /** Whether a request sent now goes out on a socket that answered before (a kept-alive one). */
  get reused(): boolean {
    return this.connected && this.answers > 0;
  }
}

/** The connections of one vetted target: idle ones reused last in, first out. */
class TargetConnections {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly connector: BuildConnector.connector;

  constructor(
    private readonly target: VettedTarget,
    check: ConnectionCheck,
    options: TransportOptions
  ) {
    this.connector = pinnedConnector(target, check, options);
  }

  /** An idle connection (the most recently used), or a new one; `fresh`: always a new one. */
  take(fresh: boolean): Connection {
    const idle = fresh ? undefined : this.idle.pop();
    if (idle) return idle;
    const made = new Connection(this.target.url.origin, this.connector);
    this.all.add(made);
    return made;
  }

  /**
   * Gives a connection back once its request ended: kept for reuse (under the idle cap) when its
   * answer was read whole; any other end closes it (a timed-out connection attempt is not waited on
   * by the next request).
   */
  give(connection: Connection, reusable: boolean): void {
    if (reusable && !connection.destroyed && !connection.closed && this.idle.length < MAX_IDLE_PER_TARGET) {
      this.idle.push(connection);
      return;
    }
    this.all.delete(connection);
    void connection.destroy().catch(() => undefined);
  }

  close(): void {
    for (const connection of this.all) void connection.destroy().catch(() => undefined);
    this.all.clear();
    this.idle.length = 0;
  }
}

/** Whether an error before any answer is the receiver having closed the connection (reset, closed, a broken pipe). */
function closedByReceiver(err: NodeJS.ErrnoException): boolean {
  return err.code === 'UND_ERR_SOCKET' || err.code === 'ECONNRESET' || err.code === 'EPIPE';
}

/**
 * The one transport of every POST to a partner's URL (gateway/outbound): undici connections, per
 * vetted target (protocol, host, address), that connect only to the address the guard vetted and
 * check each new connection's remote end before the request is sent ({@link TargetRefusedError});
 * a kept-alive connection is reused only for that same address, never for another the name
 * resolves to later. Idle connections close after 4 s; the connections of the 256 most recently
 * used targets are kept. No redirect is followed.
 */
export class PinnedTransport {
  private readonly targets = new Map<string, TargetConnections>();

  constructor(
    private readonly check: ConnectionCheck,
    private readonly options: TransportOptions = {}
  ) {}

  private connectionsOf(target: VettedTarget): TargetConnections {
    const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
    let connections = this.targets.get(key);
    if (connections) {
      this.targets.delete(key);
      this.targets.set(key, connections);
      return connections;
    }
    connections = new TargetConnections(target, this.check, this.options);
    this.targets.set(key, connections);
    if (this.targets.size > MAX_TARGETS) {
      const [oldestKey, oldest] = this.targets.entries().next().value as [string, TargetConnections];
      this.targets.delete(oldestKey);
      oldest.close();
    }
    return connections;
  }

  /**
   * One POST of `body` to the vetted target. `timeoutMs` covers everything: connecting (TCP, the
   * guard's check of the remote end, TLS), the answer's head and its body, and the one retry: a
   * request that fails before any answer on a reused keep-alive connection (the receiver had closed
   * it) goes once more, at once, on a new connection. The answer's body is read as `rules` say, up
   * to its cap; an answer read whole leaves its connection for reuse, any other end drops it.
   */
  async post(target: VettedTarget, body: string, headers: Record<string, string>, rules: AnswerRules, timeoutMs: number): Promise<PostResult> {
    const started = process.hrtime.bigint();
    const durationMs = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, Math.max(1, timeoutMs));
    const connections = this.connectionsOf(target);
    const request = {
      path: `${target.url.pathname}${target.url.search}`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': rules.userAgent, ...headers },
      body,
      signal: abort.signal,
    };
    try {
      for (let fresh = false; ; fresh = true) {
        const connection = connections.take(fresh);
        const reused = connection.reused;
        let status: number | undefined;
        let reusable = false;
        try {
          const answer = await connection.request(request);
          status = answer.statusCode;
          const read = await readAnswer(answer, rules);
          if (read.kind === 'answer' && (rules.readBody === 'always' || (status >= 200 && status < 300))) {
            connection.answers++;
            reusable = true;
          }
          return { ...read, durationMs: durationMs() };
        } catch (err) {
          if (timedOut) return { kind: 'failed', error: 'timeout', durationMs: durationMs() };
          if (err instanceof TargetRefusedError) return { kind: 'failed', error: 'target_refused', reason: err.reason, durationMs: durationMs() };
          const code = (err as NodeJS.ErrnoException).code;
          if (status === undefined && reused && !fresh && closedByReceiver(err as NodeJS.ErrnoException)) continue;
          return { kind: 'failed', error: 'connection', ...(status === undefined ? {} : { status }), ...(code ? { code } : {}), durationMs: durationMs() };
        } finally {
          connections.give(connection, reusable);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes every connection (at shutdown). */
  close(): void {
    for (const connections of this.targets.values()) connections.close();
    this.targets.clear();
  }
}

/** Stops reading an answer's body: the request is aborted and its connection closed (the abort's error is expected, not reported). */
function drop(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Reads an answer's body as `rules` say: whole up to the cap, or (a non-2xx under `success`) not at all. */
async function readAnswer(answer: { statusCode: number; headers: Record<string, string | string[] | undefined>; body: AsyncIterable<Buffer> & { on(event: 'error', listener: () => void): unknown; destroy(): unknown } }, rules: AnswerRules): Promise<{ kind: 'answer'; status: number; body: Buffer } | { kind: 'too_large'; status: number }> {
  const status = answer.statusCode;
  if (rules.readBody === 'success' && (status < 200 || status >= 300)) {
    drop(answer.body);
    return { kind: 'answer', status, body: Buffer.alloc(0) };
  }
  const declared = Number(answer.headers['content-length']);
  if (Number.isFinite(declared) && declared > rules.maxAnswerBytes) {
    drop(answer.body);
    return { kind: 'too_large', status };
  }
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of answer.body) {
    read += chunk.length;
    if (read > rules.maxAnswerBytes) {
      drop(answer.body);
      return { kind: 'too_large', status };
    }
    chunks.push(chunk);
  }
  return { kind: 'answer', status, body: Buffer.concat(chunks) };
}
