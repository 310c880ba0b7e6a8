import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logging/logger';
import { recordUpstreamCall } from '../metrics';
import { cardDataIn } from './card-data';
import { mapUpstreamFailure, type UpstreamFailure } from './failures';
import type { CallContext, UpstreamName } from './types';

/** HTTP methods the upstream contracts use. */
export type UpstreamMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One call to an upstream. */
export interface UpstreamRequest {
  method: UpstreamMethod;
  /** Path below the base URL, already encoded: build it with {@link upstreamPath}. */
  path: string;
  /** Query parameters; `undefined` values are left out. Encoded with URLSearchParams. */
  query?: Record<string, string | number | undefined>;
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
}

/** Options of {@link UpstreamHttpClient}. */
export interface UpstreamHttpClientOptions {
  /** Whole-call budget in ms: connect, request, response headers and body. */
  timeoutMs: number;
  /** Receives one debug line per call. */
  log: Logger;
  /** Bound on the agent's concurrent sockets; default {@link DEFAULT_MAX_SOCKETS}. */
  maxSockets?: number;
}

/** Default bound on concurrent sockets per upstream. */
export const DEFAULT_MAX_SOCKETS = 64;

/** Largest upstream answer read; a bigger one is treated as unusable (`malformed`). */
export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

/** Methods retried once when a reused keep-alive socket turned out to be closed by the upstream. */
const IDEMPOTENT: ReadonlySet<UpstreamMethod> = new Set(['GET']);

/** Encodes one path segment; `.` and `..` are escaped too, so no proxy can normalise them away. */
function encodeSegment(segment: string | number): string {
  const text = String(segment);
  if (text.length === 0) throw new TypeError('upstream path segment must not be empty');
  if (text === '.' || text === '..') return text.replace(/\./g, '%2E');
  return encodeURIComponent(text);
}

/**
 * Builds an upstream path, URL-encoding every interpolated value as one path segment.
 *
 * @example upstreamPath`/cards/${cardKey}/limits/${name}` // '/cards/CK1/limits/daily%2FPurchase' for name 'daily/Purchase'
 */
export function upstreamPath(strings: TemplateStringsArray, ...segments: Array<string | number>): string {
  let out = strings[0];
  segments.forEach((segment, i) => {
    out += encodeSegment(segment) + strings[i + 1];
  });
  return out;
}

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
 * The one JSON-over-HTTP client of an upstream: a keep-alive agent with bounded sockets created
 * once, `x-request-id` forwarding, a whole-call timeout, and every failure thrown as the
 * GatewayError of {@link mapUpstreamFailure}. Logs one debug line per call (upstream, method,
 * path without its query string, status, ms); never bodies nor query strings, which carry
 * security keys, PIN blocks and personal data.
 *
 * @example
 * const issuerHttp = new UpstreamHttpClient('issuer', 'http://127.0.0.1:4101', { timeoutMs: 5000, log });
 * const card = await issuerHttp.request<IssuerCard>(ctx, { method: 'GET', path: upstreamPath`/cards/${cardKey}` });
 */
export class UpstreamHttpClient {
  /** The keep-alive agent of this upstream (exposed for tests and metrics). */
  readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;
  private readonly origin: URL;
  private readonly basePath: string;
  private readonly timeoutMs: number;
  private readonly log: Logger;
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
    this.origin = url;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs;
    this.log = options.log;
    this.transport = url.protocol === 'https:' ? https : http;
    const agentOptions: http.AgentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? DEFAULT_MAX_SOCKETS };
    this.agent = url.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
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
      const deadline = started + this.timeoutMs;
      let answer: RawAnswer | undefined;
      while (answer === undefined) {
        attempts += 1;
        try {
          answer = await this.exchange(ctx, request, payload, deadline - performance.now());
        } catch (err) {
          // A keep-alive socket the upstream closed while idle fails at once with ECONNRESET;
          // retrying is safe for an idempotent read, and stays inside the same deadline.
          const again = err instanceof ExchangeFailure && err.retryable && attempts === 1 && IDEMPOTENT.has(request.method);
          if (!again || deadline - performance.now() <= 0) throw err;
        }
      }
      status = answer.status;
      return this.interpret<T>(answer, request.unread);
    } catch (err) {
      if (!(err instanceof ExchangeFailure)) throw err;
      failure = err.failure;
      throw mapUpstreamFailure(this.upstream, err.failure, { cause: err.cause });
    } finally {
      const ms = Math.round((performance.now() - started) * 100) / 100;
      if (ctx.timing) ctx.timing.upstreamLatencyMs = (ctx.timing.upstreamLatencyMs ?? 0) + ms;
      recordUpstreamCall(this.upstream, ms / 1000, failure?.kind, status);
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

  /** Destroys the agent's sockets; later calls fail as `upstream_error` without connecting. */
  close(): void {
    this.closed = true;
    this.agent.destroy();
  }

  private interpret<T>(answer: RawAnswer, unread?: readonly string[]): T {
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
      // A PAN where none belongs (a full cardMask, a number in a name) is never handed to a
      // handler, so it can neither be answered nor stored. The cause names the member only.
      const cardData = cardDataIn(parsed, unread);
      if (cardData !== undefined) throw new ExchangeFailure({ kind: 'malformed', cardData: true }, false, { cause: new Error(`upstream answer refused: ${cardData}`) });
      return parsed as T;
    }
    throw new ExchangeFailure(
      { kind: 'status', status, errorCode: upstreamErrorCode(body), retryAfter: headerValue(answer.headers['retry-after']) },
      false,
    );
  }

  private target(request: UpstreamRequest): string {
    let target = this.basePath + request.path;
    if (request.query) {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(request.query)) {
        if (value !== undefined) params.append(name, String(value));
      }
      const query = params.toString();
      if (query.length > 0) target += `?${query}`;
    }
    return target;
  }

  /** One HTTP exchange: resolves with status, headers and the whole body, or rejects with an ExchangeFailure. */
  private exchange(ctx: CallContext, request: UpstreamRequest, payload: Buffer | undefined, budgetMs: number): Promise<RawAnswer> {
    return new Promise<RawAnswer>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
      if (ctx.requestId) headers['x-request-id'] = ctx.requestId;
      if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
      if (payload !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = payload.length;
      }
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let req: http.ClientRequest;
      const fail = (failure: UpstreamFailure, retryable: boolean, cause?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(new ExchangeFailure(failure, retryable, cause === undefined ? undefined : { cause }));
      };
      try {
        req = this.transport.request({
          protocol: this.origin.protocol,
          hostname: this.origin.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: this.origin.port || undefined,
          method: request.method,
          path: this.target(request),
          headers,
          agent: this.agent,
        });
      } catch (err) {
        // A programming error (e.g. an invalid header value): not an upstream failure.
        reject(err);
        return;
      }
      timer = setTimeout(() => fail({ kind: 'timeout' }, false), Math.max(0, budgetMs));
      req.on('error', (err) => {
        const code = errorCodeOf(err);
        fail({ kind: 'connection', code }, req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE'), err);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) fail({ kind: 'malformed' }, false);
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
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
        });
      });
      req.end(payload);
    });
  }
}
