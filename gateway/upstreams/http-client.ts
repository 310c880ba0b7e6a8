import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { Logger } from '../logging/logger';
import { recordUpstreamCall } from '../metrics';
import { createUpstreamPool, MAX_SOCKETS_PER_ORIGIN, OriginGate, type ConnectionAware, type UpstreamPool, type WaitingExchange } from './agents';
import { cardDataIn } from './card-data';
import { mapUpstreamFailure, type UpstreamFailure } from './failures';
import { encodeQuery, upstreamHeaders, upstreamPath } from './request-parts';
import type { UpstreamName } from '../../contracts/upstreams';
import type { CallContext } from './call-context';

export { upstreamPath };

/** HTTP methods the upstream contracts use. */
export type UpstreamMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One call to an upstream. */
export interface UpstreamRequest {
  method: UpstreamMethod;
  /** Path below the base URL, already encoded: build it with {@link upstreamPath} or `compilePath` (request-parts.ts). */
  path: string;
  /** Query parameters ({@link encodeQuery}); `undefined` values are left out. */
  query?: Readonly<Record<string, unknown>>;
  /** Sent as JSON (`content-type: application/json`); `undefined` = no body. */
  body?: unknown;
  /**
   * The operation id, sent as the `Idempotency-Key` header: the upstream answers a repeat of the
   * same key and body with its first result (docs/upstreams.md, "Operation ids").
   */
  idempotencyKey?: string;
  /**
   * Members of the answer (at any depth) the caller never reads, left out of the card-data check
   * ({@link cardDataIn}); the caller must not read them.
   */
  unread?: readonly string[];
  /**
   * The caller takes only documented fields from the answer and checks each for card data itself
   * (the response transforms of `upstream-proxy`): the walk over the whole answer is skipped, and
   * undocumented members are dropped rather than refused.
   */
  fieldsCheckedByCaller?: boolean;
  /** Whole-call budget of this call in ms; default: the client's. */
  timeoutMs?: number;
  /** Aborts the call (the partner left): the request is destroyed and the call rejects as `connection`. */
  signal?: CallSignal;
}

/**
 * What can abort a call: an `AbortSignal`, or anything with its `aborted` flag and `abort` listener
 * (the proxy's one-listener `PartnerGone`, which costs a request less than an `AbortController`).
 * A call adds one listener while an exchange is in flight and removes it when the exchange settles.
 */
export interface CallSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** Options of {@link UpstreamHttpClient}. */
export interface UpstreamHttpClientOptions {
  /** Default whole-call budget in ms: connect, request, response headers and body. */
  timeoutMs: number;
  /** Receives one debug line per call. */
  log: Logger;
  /** The keep-alive pool of the upstream's origin (`UpstreamPools`, agents.ts); by default one of its own. */
  pool?: UpstreamPool;
  /** Bound on the connections of a pool of its own; default {@link MAX_SOCKETS_PER_ORIGIN}. */
  maxSockets?: number;
}

/** Largest upstream answer read, for every upstream and caller; a bigger one is unusable (`malformed`). */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** Methods retried once when a reused keep-alive connection turned out to be closed by the upstream. */
const IDEMPOTENT: ReadonlySet<UpstreamMethod> = new Set(['GET']);

/**
 * Whether undici's error says the peer closed or reset the connection, the only failures after which
 * a GET sent on a reused keep-alive connection is sent once more (node:http's rule: ECONNRESET or
 * EPIPE, "socket hang up" included): a reset or broken pipe, or undici's `SocketError` "other side
 * closed" (a FIN) or "closed". Never a malformed answer, which undici also reports as a
 * `SocketError` ("bad response", "bad upgrade") or a content-length mismatch.
 */
function peerClosed(err: unknown): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (code === 'ECONNRESET' || code === 'EPIPE') return true;
  return code === 'UND_ERR_SOCKET' && (message === 'other side closed' || message === 'closed');
}

/**
 * The 502 detail of a malformed answer whose parser failure undici does not name: an answer head
 * llhttp refused after a `content-length` header (undici then reports a content-length mismatch
 * and drops llhttp's reason), an unsolicited `100 Continue` or `101` ("bad response", "bad
 * upgrade"), or a reason missing from {@link PARSER_CODES}. docs/decisions.md lists these.
 */
export const UNNAMED_PARSER_FAILURE = 'HPE_INVALID_RESPONSE';

/**
 * llhttp's reasons (undici puts them in its `HTTPParserError` message, without a code: undici 7
 * looks the code up in a name-to-number table) and the `HPE_*` code node:http's client named for
 * each, which the 502 detail keeps: pairs read from node:http's client on malformed answers
 * (its llhttp 9 gives the same reasons; a unit test compares the two clients on 36 answers),
 * `Invalid HTTP version` and the `Transfer-Encoding` value from llhttp's source, and `Invalid EOF
 * state`, a body cut short, compared in a unit test too. The request-only reasons (method, URL,
 * `Expected CRLF after version` and `Expected CRLF` after a request line's version) cannot occur
 * in an answer.
 */
const PARSER_CODES: ReadonlyMap<string, string> = new Map([
  ['Invalid status code', 'HPE_INVALID_STATUS'],
  ['Invalid response status', 'HPE_INVALID_STATUS'],
  ['Invalid HTTP version', 'HPE_INVALID_VERSION'],
  ['Invalid major version', 'HPE_INVALID_VERSION'],
  ['Invalid minor version', 'HPE_INVALID_VERSION'],
  ['Expected dot', 'HPE_INVALID_VERSION'],
  ['Expected space after version', 'HPE_INVALID_VERSION'],
  ['Expected HTTP/, RTSP/ or ICE/', 'HPE_INVALID_CONSTANT'],
  ['Unexpected space after start line', 'HPE_UNEXPECTED_SPACE'],
  ['Missing expected CR after response line', 'HPE_CR_EXPECTED'],
  ['Missing expected CR after header value', 'HPE_CR_EXPECTED'],
  ['Missing expected LF after header value', 'HPE_LF_EXPECTED'],
  ['Expected LF after CR', 'HPE_STRICT'],
  ['Expected LF after headers', 'HPE_STRICT'],
  ['Expected LF after chunk size', 'HPE_STRICT'],
  ['Expected LF after chunk data', 'HPE_STRICT'],
  ['Invalid character in chunk extensions', 'HPE_STRICT'],
  ['Invalid character in chunk extensions name', 'HPE_STRICT'],
  ['Invalid character in chunk extensions value', 'HPE_STRICT'],
  ['Invalid character in chunk extensions quoted value', 'HPE_STRICT'],
  ['Invalid character in chunk extensions quote value', 'HPE_STRICT'],
  ['Invalid quoted-pair in chunk extensions quoted value', 'HPE_STRICT'],
  ['Missing expected CR after chunk size', 'HPE_CR_EXPECTED'],
  ['Missing expected CR after chunk data', 'HPE_CR_EXPECTED'],
  ['Missing expected CR after chunk extension name', 'HPE_CR_EXPECTED'],
  ['Missing expected CR after chunk extension value', 'HPE_CR_EXPECTED'],
  ['Invalid header token', 'HPE_INVALID_HEADER_TOKEN'],
  ['Invalid header value char', 'HPE_INVALID_HEADER_TOKEN'],
  // A space before the colon of a header llhttp reads itself (content-length, transfer-encoding, connection, upgrade).
  ['Invalid header field char', 'HPE_INVALID_HEADER_TOKEN'],
  // A folded (obsolete line-folding) header line.
  ['Unexpected whitespace after header value', 'HPE_INVALID_HEADER_TOKEN'],
  ['Empty Content-Length', 'HPE_INVALID_CONTENT_LENGTH'],
  ['Invalid character in Content-Length', 'HPE_INVALID_CONTENT_LENGTH'],
  ['Content-Length overflow', 'HPE_INVALID_CONTENT_LENGTH'],
  ["Content-Length can't be present with Transfer-Encoding", 'HPE_INVALID_CONTENT_LENGTH'],
  ['Duplicate Content-Length', 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  ["Transfer-Encoding can't be present with Content-Length", 'HPE_INVALID_TRANSFER_ENCODING'],
  ['Invalid `Transfer-Encoding` header value', 'HPE_INVALID_TRANSFER_ENCODING'],
  ['Invalid character in chunk size', 'HPE_INVALID_CHUNK_SIZE'],
  ['Chunk size overflow', 'HPE_INVALID_CHUNK_SIZE'],
  // At the connection's end (undici asks llhttp to finish an answer that had `Connection: close`):
  // a body cut short, which node:http named ECONNRESET.
  ['Invalid EOF state', 'ECONNRESET'],
  ['Data after `Connection: close`', 'HPE_CLOSED_CONNECTION'],
]);

/** The prefix of undici's `HTTPParserError` message; llhttp's reason follows in parentheses. */
const PARSER_MESSAGE = 'Response does not match the HTTP/1.1 protocol (';

/** A failure observed by one exchange, with the low-level error kept for the logs only. */
class ExchangeFailure extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(`upstream ${failure.kind}`, options);
  }
}

interface RawAnswer {
  status: number;
  /** The `Retry-After` header of a non-2xx answer (the only header read). */
  retryAfter: string | undefined;
  body: Buffer;
}

/**
 * The failure of an undici error, with the codes the node:http client named (partners read them in
 * a 502's detail): a connection the peer closed is `ECONNRESET` (a body cut short
 * included), a malformed answer the parser's `HPE_*` code ({@link PARSER_CODES}, else
 * {@link UNNAMED_PARSER_FAILURE}), a header block over 16 KiB `HPE_HEADER_OVERFLOW`, a TLS protocol
 * failure (OpenSSL's `ERR_SSL_*`) `EPROTO`, a destroyed pool `CLIENT_CLOSED`, an abort `ABORTED`;
 * undici's timeouts are a `timeout` as the whole-call timer's is. Other codes (ECONNREFUSED,
 * ENOTFOUND, certificate errors) pass through. `answered`: the answer's head was read.
 */
function failureOf(err: unknown, answered: boolean): UpstreamFailure {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') {
    if (typeof message === 'string' && message.startsWith(PARSER_MESSAGE)) {
      return { kind: 'connection', code: PARSER_CODES.get(message.slice(PARSER_MESSAGE.length, -1)) ?? UNNAMED_PARSER_FAILURE };
    }
    return { kind: 'connection', code: 'ECONNRESET' };
  }
  switch (code) {
    case 'UND_ERR_SOCKET':
      return { kind: 'connection', code: message === 'bad response' || message === 'bad upgrade' ? UNNAMED_PARSER_FAILURE : 'ECONNRESET' };
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      // After the head: the body was cut short (node:http: ECONNRESET). Before it: llhttp refused
      // the head after a content-length header, and undici kept only the mismatch.
      return { kind: 'connection', code: answered ? 'ECONNRESET' : UNNAMED_PARSER_FAILURE };
    case 'UND_ERR_HEADERS_OVERFLOW':
      return { kind: 'connection', code: 'HPE_HEADER_OVERFLOW' };
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return { kind: 'connection', code: 'CLIENT_CLOSED' };
    case 'UND_ERR_ABORTED':
      return { kind: 'connection', code: 'ABORTED' };
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return { kind: 'timeout' };
    default:
      return { kind: 'connection', code: code.startsWith('ERR_SSL_') ? 'EPROTO' : code };
  }
}

/** The first `Retry-After` value of undici's raw header list (name, value, name, value...). */
function retryAfterIn(rawHeaders: Buffer[] | string[] | null | undefined): string | undefined {
  if (!rawHeaders) return undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toString().toLowerCase() === 'retry-after') return rawHeaders[i + 1]!.toString();
  }
  return undefined;
}

/** The upstream's `errorCode` from a JSON error body, if any; the rest of the body is dropped. */
function upstreamErrorCode(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const code = (parsed as { errorCode?: unknown } | null)?.errorCode;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The one HTTP client of an upstream, used by its typed client methods and by the `upstream-proxy`
 * policy alike: the keep-alive pool of the upstream's origin (undici's `Pool`, agents.ts),
 * `x-request-id` forwarding, a whole-call timeout, one retry rule (a GET sent on a reused keep-alive
 * connection that the upstream closed or reset before the answer's head is sent again once, within
 * the same deadline; never one on a fresh connection), a size cap ({@link MAX_ANSWER_BYTES}), and every failure
 * thrown as the GatewayError of {@link mapUpstreamFailure}. Logs one debug line per call
 * (upstream, method, path without its query string, status, ms); never bodies nor query strings,
 * which carry security keys, PIN blocks and personal data.
 *
 * @example
 * const issuerHttp = new UpstreamHttpClient('issuer', 'http://127.0.0.1:4101', { timeoutMs: 5000, log, pool: pools.poolFor(url) });
 * const card = await issuerHttp.request<IssuerCard>(ctx, { method: 'GET', path: upstreamPath`/cards/${cardKey}` });
 */
export class UpstreamHttpClient {
  /** The keep-alive pool of this upstream's origin (exposed for tests). */
  readonly pool: UpstreamPool;
  /** The origin's bound on exchanges in flight, in front of the pool (agents.ts): every request goes through it. */
  private readonly gate: OriginGate;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly timeoutMs: number;
  private readonly log: Logger;
  /** The `Host` header's value, as Node builds it for a header object (ClientRequest): the port when it is not the protocol's. */
  private readonly hostHeader: string;
  private closed = false;
  /** The pool is this client's own (none given): close() destroys it; a shared one is the pools' to destroy. */
  private readonly ownsPool: boolean;

  constructor(
    readonly upstream: UpstreamName,
    baseUrl: string,
    options: UpstreamHttpClientOptions,
  ) {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`${upstream} base URL must be http(s), got ${url.protocol}`);
    }
    if (!(options.timeoutMs > 0)) throw new TypeError('timeoutMs must be positive');
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs;
    this.log = options.log;
    // URL.host leaves out the protocol's default port and keeps an IPv6 address's brackets.
    this.hostHeader = url.host;
    this.ownsPool = options.pool === undefined;
    this.pool = options.pool ?? createUpstreamPool(baseUrl, options.maxSockets ?? MAX_SOCKETS_PER_ORIGIN);
    this.gate = this.pool.gate;
  }

  /**
   * Sends one request and answers the parsed JSON of a 2xx (`undefined` for 204). Throws a
   * GatewayError (see {@link mapUpstreamFailure}) for a timeout, a broken connection, a 2xx that
   * is not JSON, or a non-2xx. The call's duration is added to `ctx.timing.upstreamLatencyMs`.
   */
  async request<T>(ctx: CallContext, request: UpstreamRequest): Promise<T> {
    const started = performance.now();
    let status: number | undefined;
    let failure: UpstreamFailure | undefined;
    let attempts = 0;
    try {
      if (this.closed) throw new ExchangeFailure({ kind: 'connection', code: 'CLIENT_CLOSED' }, false);
      const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body), 'utf8');
      const headers = upstreamHeaders(request.method, ctx.requestId, payload, request.idempotencyKey, this.hostHeader);
      const target = this.basePath + request.path + encodeQuery(request.query);
      const deadline = started + (request.timeoutMs ?? this.timeoutMs);
      let answer: RawAnswer | undefined;
      while (answer === undefined) {
        attempts += 1;
        try {
          answer = await this.exchange(request, target, headers, payload, deadline - performance.now());
        } catch (err) {
          // A reused keep-alive connection the upstream closed while idle fails before the answer;
          // retrying is safe for an idempotent read, and stays inside the same deadline.
          const again = err instanceof ExchangeFailure && err.retryable && attempts === 1 && IDEMPOTENT.has(request.method);
          if (!again || this.closed || deadline - performance.now() <= 0) throw err;
        }
      }
      status = answer.status;
      return this.interpret<T>(answer, request);
    } catch (err) {
      if (!(err instanceof ExchangeFailure)) throw err;
      failure = err.failure;
      throw mapUpstreamFailure(this.upstream, err.failure, { cause: err.cause });
    } finally {
      const ms = Math.round((performance.now() - started) * 100) / 100;
      if (ctx.timing) ctx.timing.upstreamLatencyMs = (ctx.timing.upstreamLatencyMs ?? 0) + ms;
      recordUpstreamCall(this.upstream, ms / 1000, failure?.kind, status);
      // The line's object is not even built at the usual level (info): every proxied read passes here.
      if (this.log.isLevelEnabled('debug')) {
        this.log.debug(
          {
            upstream: this.upstream,
            method: request.method,
            path: this.basePath + request.path,
            status: status ?? null,
            ms,
            requestId: ctx.requestId,
            ...(failure && failure.kind !== 'status' ? { failure: failure.kind } : {}),
            ...(attempts > 1 ? { attempts } : {}),
          },
          'upstream call',
        );
      }
    }
  }

  /**
   * Later calls fail as `upstream_error` (CLIENT_CLOSED) without connecting, and a pool of its own is
   * destroyed (its connections closed at once). A pool shared with the other upstreams of its origin
   * (`UpstreamPools`) is left to them: `UpstreamClients.close()` destroys every pool at shutdown.
   */
  close(): void {
    this.closed = true;
    if (this.ownsPool) this.pool.destroy();
  }

  private interpret<T>(answer: RawAnswer, request: UpstreamRequest): T {
    const { status, body } = answer;
    if (status >= 200 && status < 300) {
      if (status === 204) return undefined as T;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        // No cause: a JSON.parse message quotes the body, which may hold card data.
        throw new ExchangeFailure({ kind: 'malformed' }, false);
      }
      if (request.fieldsCheckedByCaller) return parsed as T;
      // A PAN where none belongs (a full cardMask, a number in a name) is never handed to a
      // handler, so it can neither be answered nor stored. The cause names the member only.
      const cardData = cardDataIn(parsed, request.unread);
      if (cardData !== undefined) throw new ExchangeFailure({ kind: 'malformed', cardData: true }, false, { cause: new Error(`upstream answer refused: ${cardData}`) });
      return parsed as T;
    }
    throw new ExchangeFailure(
      { kind: 'status', status, errorCode: upstreamErrorCode(body), retryAfter: answer.retryAfter },
      false,
    );
  }

  /**
   * One HTTP exchange on the origin's pool (undici's `dispatch` with a handler of its own: no
   * stream, no promise per chunk): resolves with status, `Retry-After` and the whole body, or
   * rejects with an ExchangeFailure.
   */
  private exchange(request: UpstreamRequest, target: string, headers: string[], payload: Buffer | undefined, budgetMs: number): Promise<RawAnswer> {
    return new Promise<RawAnswer>((resolve, reject) => {
      const { signal } = request;
      if (signal?.aborted) {
        reject(new ExchangeFailure({ kind: 'connection', code: 'ABORTED' }, false));
        return;
      }
      let settled = false;
      let answered = false;
      /** The request went out on a keep-alive connection that had answered before (set in onConnect). */
      let reused = false;
      let abortExchange: ((err?: Error) => void) | undefined;
      const { gate } = this;
      /** The call's place in the origin's queue while it waits for a slot (the origin at its limit). */
      let waiting: WaitingExchange | undefined;
      /** The exchange's slot was given back (once: undici ends an exchange with onComplete or onError). */
      let released = false;
      const releaseSlot = (): void => {
        if (released) return;
        released = true;
        gate.release();
      };
      let status = 0;
      let retryAfter: string | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const settle = (): void => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (failure: UpstreamFailure, retryable: boolean, cause?: unknown): void => {
        if (settled) return;
        settle();
        // Still waiting for a slot: never dispatched. Dispatched, before undici handed the request to a
        // connection: nothing to abort yet, onConnect does it then.
        if (waiting !== undefined) gate.withdraw(waiting);
        abortExchange?.(new Error(`upstream ${failure.kind}`));
        reject(new ExchangeFailure(failure, retryable, cause === undefined ? undefined : { cause }));
      };
      const onAbort = (): void => fail({ kind: 'connection', code: 'ABORTED' }, false);
      const timer = setTimeout(() => fail({ kind: 'timeout' }, false), Math.max(0, budgetMs));
      // Removed when the exchange settles (either way): one listener per call in flight.
      signal?.addEventListener('abort', onAbort, { once: true });
      const handler: Dispatcher.DispatchHandler & ConnectionAware = {
        // Set by the pool's connection (CountingClient) as it takes the request; declared here so the object keeps one shape.
        connection: undefined,
        onConnect(abort) {
          // The call ended (timeout, abort) while the request waited for a connection: throwing
          // fails the request without sending it and keeps the healthy keep-alive connection open
          // (abort() would destroy it, one new connection per call that timed out in the queue).
          if (settled) throw new Error('upstream call ended');
          abortExchange = abort;
          // One request at a time per connection: a count above 0 means this socket answered before.
          reused = (handler.connection?.answers ?? 0) > 0;
        },
        onHeaders(statusCode, rawHeaders) {
          // An informational answer (103 Early Hints) is not the answer's head: the final one follows
          // (node:http's rule too: a reused connection closed after a 1xx still allows the retry).
          if (statusCode < 200) return true;
          answered = true;
          status = statusCode;
          if (statusCode >= 300) retryAfter = retryAfterIn(rawHeaders);
          return true;
        },
        onData(chunk) {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) fail({ kind: 'malformed' }, false);
          else chunks.push(chunk);
          return true;
        },
        onComplete() {
          if (handler.connection) handler.connection.answers += 1;
          releaseSlot();
          if (settled) return;
          settle();
          resolve({ status, retryAfter, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
        },
        onError(err) {
          releaseSlot();
          if ((err as { code?: unknown }).code === 'UND_ERR_INVALID_ARG') {
            // A programming error (e.g. an invalid header value), which undici reports here: not an upstream failure.
            if (settled) return;
            settle();
            reject(err);
            return;
          }
          // A reused keep-alive connection the upstream closed or reset before the answer's head
          // (typically one it was closing while idle as the request went out): the caller may send a
          // GET again. Never a fresh connection, nor a malformed answer (node:http's rule).
          fail(failureOf(err, answered), reused && !answered && peerClosed(err), err);
        },
      };
      try {
        waiting = gate.dispatch({ origin: this.origin, method: request.method, path: target, headers, body: payload ?? null }, handler);
      } catch (err) {
        // A programming error (e.g. an invalid header value): not an upstream failure.
        releaseSlot();
        settle();
        reject(err);
      }
    });
  }
}
