import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logging/logger';
import { recordUpstreamCall } from '../metrics';
import { createUpstreamAgent, MAX_SOCKETS_PER_ORIGIN } from './agents';
import { cardDataIn } from './card-data';
import { mapUpstreamFailure, type UpstreamFailure } from './failures';
import { encodeQuery, upstreamHeaders, upstreamPath } from './request-parts';
import type { CallContext, UpstreamName } from './types';

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
  /** The keep-alive agent of the upstream's origin (`UpstreamPools`, agents.ts); by default one of its own. */
  agent?: http.Agent;
  /** Bound on the sockets of an agent of its own; default {@link MAX_SOCKETS_PER_ORIGIN}. */
  maxSockets?: number;
}

/** Largest upstream answer read, for every upstream and caller; a bigger one is unusable (`malformed`). */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** Methods retried once when a reused keep-alive socket turned out to be closed by the upstream. */
const IDEMPOTENT: ReadonlySet<UpstreamMethod> = new Set(['GET']);

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
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function errorCodeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // Node reports a server that closed before answering as "socket hang up" with ECONNRESET;
  // keep the message-only variants recognisable too.
  const message = err instanceof Error ? err.message : '';
  if (message === 'socket hang up' || message === 'aborted') return 'ECONNRESET';
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

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The one HTTP client of an upstream, used by its typed client methods and by the `upstream-proxy`
 * policy alike: the keep-alive agent of the upstream's origin, `x-request-id` forwarding, a
 * whole-call timeout, one retry rule (a GET that failed at once on a reused keep-alive socket is
 * sent again, within the same deadline), a size cap ({@link MAX_ANSWER_BYTES}), and every failure
 * thrown as the GatewayError of {@link mapUpstreamFailure}. Logs one debug line per call
 * (upstream, method, path without its query string, status, ms); never bodies nor query strings,
 * which carry security keys, PIN blocks and personal data.
 *
 * @example
 * const issuerHttp = new UpstreamHttpClient('issuer', 'http://127.0.0.1:4101', { timeoutMs: 5000, log, agent: pools.agentFor(url) });
 * const card = await issuerHttp.request<IssuerCard>(ctx, { method: 'GET', path: upstreamPath`/cards/${cardKey}` });
 */
export class UpstreamHttpClient {
  /** The keep-alive agent of this upstream's origin (exposed for tests and metrics). */
  readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;
  private readonly hostname: string;
  private readonly port: string | undefined;
  private readonly protocol: string;
  private readonly basePath: string;
  private readonly timeoutMs: number;
  private readonly log: Logger;
  /** The `Host` header's value, as Node builds it for a header object (ClientRequest): the port when it is not the protocol's. */
  private readonly hostHeader: string;
  private closed = false;

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
    this.protocol = url.protocol;
    this.hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = url.port || undefined;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs;
    this.log = options.log;
    this.transport = url.protocol === 'https:' ? https : http;
    const host = this.hostname.includes(':') ? `[${this.hostname}]` : this.hostname;
    const defaultPort = url.protocol === 'https:' ? 443 : 80;
    this.hostHeader = this.port !== undefined && Number(this.port) !== defaultPort ? `${host}:${this.port}` : host;
    this.agent = options.agent ?? createUpstreamAgent(baseUrl, options.maxSockets ?? MAX_SOCKETS_PER_ORIGIN);
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
      const headers = this.headerList(upstreamHeaders(request.method, ctx.requestId, payload, request.idempotencyKey));
      const target = this.basePath + request.path + encodeQuery(request.query);
      const deadline = started + (request.timeoutMs ?? this.timeoutMs);
      let answer: RawAnswer | undefined;
      while (answer === undefined) {
        attempts += 1;
        try {
          answer = await this.exchange(request, target, headers, payload, deadline - performance.now());
        } catch (err) {
          // A keep-alive socket the upstream closed while idle fails at once with ECONNRESET;
          // retrying is safe for an idempotent read, and stays inside the same deadline.
          const again = err instanceof ExchangeFailure && err.retryable && attempts === 1 && IDEMPOTENT.has(request.method);
          if (!again || deadline - performance.now() <= 0) throw err;
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
   * The request's headers as the flat list `http.request` takes without a `setHeader` per header
   * (its fast path: the list goes straight to the request head, each name and value still
   * validated), ending with the `Host` header Node adds itself to a header object, prebuilt per
   * client: the same bytes on the wire, in the same order.
   */
  private headerList(headers: http.OutgoingHttpHeaders): string[] {
    const list: string[] = [];
    for (const name in headers) list.push(name, String(headers[name]));
    list.push('Host', this.hostHeader);
    return list;
  }

  /** Destroys the agent's sockets; later calls fail as `upstream_error` without connecting. */
  close(): void {
    this.closed = true;
    this.agent.destroy();
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
      { kind: 'status', status, errorCode: upstreamErrorCode(body), retryAfter: headerValue(answer.headers['retry-after']) },
      false,
    );
  }

  /** One HTTP exchange: resolves with status, headers and the whole body, or rejects with an ExchangeFailure. */
  private exchange(request: UpstreamRequest, target: string, headers: string[], payload: Buffer | undefined, budgetMs: number): Promise<RawAnswer> {
    return new Promise<RawAnswer>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let req: http.ClientRequest;
      const { signal } = request;
      const onAbort = (): void => fail({ kind: 'connection', code: 'ABORTED' }, false);
      const fail = (failure: UpstreamFailure, retryable: boolean, cause?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        req.destroy();
        reject(new ExchangeFailure(failure, retryable, cause === undefined ? undefined : { cause }));
      };
      if (signal?.aborted) {
        reject(new ExchangeFailure({ kind: 'connection', code: 'ABORTED' }, false));
        return;
      }
      try {
        req = this.transport.request({
          protocol: this.protocol,
          hostname: this.hostname,
          port: this.port,
          method: request.method,
          path: target,
          headers,
          agent: this.agent,
        });
      } catch (err) {
        // A programming error (e.g. an invalid header value): not an upstream failure.
        reject(err);
        return;
      }
      timer = setTimeout(() => fail({ kind: 'timeout' }, false), Math.max(0, budgetMs));
      // Removed when the exchange settles (either way), not on the request's 'close': one listener less per call.
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => {
        const code = errorCodeOf(err);
        fail({ kind: 'connection', code }, req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE'), err);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) fail({ kind: 'malformed' }, false);
          else chunks.push(chunk);
        });
        res.on('error', (err) => fail({ kind: 'connection', code: errorCodeOf(err) ?? 'ECONNRESET' }, false, err));
        res.on('close', () => {
          // The upstream dropped the connection mid-body (content-length not reached).
          if (!res.complete) fail({ kind: 'connection', code: 'ECONNRESET' }, false);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
        });
      });
      req.end(payload);
    });
  }
}
