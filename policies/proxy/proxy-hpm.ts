import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';
import { recordAudit } from '../../gateway/audit/audit-log';
import { CARD_COLUMNS, toCard, type CardRow } from '../../gateway/cards/card-store';
import { GatewayError } from '../../gateway/errors';
import { RESPONSE_TRANSFORM_TABLE, UnusableAnswerError, type TransformContext } from '../../gateway/upstreams/transforms';
import { compilePath, encodeQuery, pickQuery, proxiedBody, upstreamHeaders } from '../../gateway/upstreams/request-parts';
import { recordUpstreamCall } from '../../gateway/metrics';
import { services } from '../../gateway/services';
import { rsaModulusBytes } from '../../gateway/upstreams/card-data';
import { mapUpstreamFailure, type UpstreamFailure } from '../../gateway/upstreams/failures';
import type { ProxyParams } from './schema';

/** Largest upstream answer buffered; a bigger one is unusable (502). */
export const MAX_PROXY_RESPONSE_BYTES = 1024 * 1024;

/** Node's code of a low-level error; "socket hang up" and "aborted" count as a reset. */
function errorCodeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const message = err instanceof Error ? err.message : '';
  return message === 'socket hang up' || message === 'aborted' ? 'ECONNRESET' : undefined;
}

/** The upstream's `errorCode` from a JSON error body; the rest of the body is dropped unread. */
function upstreamErrorCode(body: Buffer): string | undefined {
  try {
    const code = (JSON.parse(body.toString('utf8')) as { errorCode?: unknown } | null)?.errorCode;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** One partner request's upstream exchange: what is sent, and the once-only outcome. */
interface Exchange {
  req: Request;
  res: Response;
  next: NextFunction;
  /** Upstream path and query: base path, encoded path, selected query. */
  targetPath: string;
  /** Path only, for the debug log (the query may hold a securityKey). */
  logPath: string;
  method: string;
  headers: IncomingHttpHeaders;
  payload: Buffer | undefined;
  started: number;
  attempts: number;
  timer?: NodeJS.Timeout;
  proxyReq?: ClientRequest;
  proxyRes?: IncomingMessage;
  /** The upstream part is over (answered, failed, timed out, or the partner left). */
  settled: boolean;
}

/**
 * The proxy policy (`upstream-proxy` in YAML): ends a read-only pipeline in one upstream call made
 * with http-proxy-middleware. Set-up happens once here: the path template, the transform, the
 * shared keep-alive agent of the upstream and one proxy middleware for this route step.
 *
 * Per request: only `accept`, `x-request-id`, and `content-type`/`content-length` for a body go
 * upstream; only the listed query parameters; the validated body re-serialised with `setBody`
 * over it. The upstream answer is buffered (at most 1 MiB), passed through the named transform and
 * answered as JSON; failures become the GatewayError of `mapUpstreamFailure` (never the upstream
 * body). With `audit`, an audit entry is written before the answer, and a failed write fails it.
 */
export function upstreamProxy(params: ProxyParams): RequestHandler {
  const { upstreams, settings, db, log, clients } = services();
  const upstream = params.upstream;
  const baseUrl = upstreams[upstream];
  if (typeof baseUrl !== 'string') throw new Error(`upstream-proxy: no URL for upstream "${String(upstream)}"`);
  const base = baseUrl.replace(/\/+$/, '');
  const baseParsed = new URL(base);
  const basePath = baseParsed.pathname.replace(/\/+$/, '');
  /** http-proxy's target shape (url.parse-like); `path` is set per exchange. */
  const baseTarget: UpstreamTarget = {
    protocol: baseParsed.protocol,
    host: baseParsed.host,
    hostname: baseParsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: baseParsed.port || (baseParsed.protocol === 'https:' ? '443' : '80'),
  };
  const path = compilePath(params.path);
  const queryNames = params.query ?? [];
  const bodyMode = params.body ?? 'forward';
  const setBody = params.setBody;
  const timeoutMs = params.timeoutMs ?? settings.upstreamTimeoutMs;
  const transform = RESPONSE_TRANSFORM_TABLE[params.response];
  if (!transform) throw new Error(`upstream-proxy: unknown response transform "${String(params.response)}"`);
  const audit = params.audit;

  const exchanges = new WeakMap<IncomingMessage, Exchange>();

  /**
   * Ends the upstream part of an exchange (answered, failed, timed out, partner gone): stops the
   * timer, adds the call's duration to `res.locals.upstreamLatencyMs` and logs one debug line
   * (path without its query string, which may hold a securityKey).
   */
  function settle(exchange: Exchange, status: number | null, failure?: UpstreamFailure['kind']): void {
    exchange.settled = true;
    clearTimeout(exchange.timer);
    const ms = Math.round((performance.now() - exchange.started) * 100) / 100;
    exchange.res.locals.upstreamLatencyMs = (exchange.res.locals.upstreamLatencyMs ?? 0) + ms;
    recordUpstreamCall(upstream, ms / 1000, failure, status);
    log.debug(
      {
        upstream,
        method: exchange.method,
        path: exchange.logPath,
        status,
        ms,
        requestId: exchange.req.requestId,
        ...(failure && failure !== 'status' ? { failure } : {}),
        ...(exchange.attempts > 1 ? { attempts: exchange.attempts } : {}),
      },
      'upstream call',
    );
  }

  /** Ends the exchange with an error for the partner (one problem writer: next(err)). */
  function fail(exchange: Exchange, failure: UpstreamFailure, cause?: unknown): void {
    if (exchange.settled) return;
    settle(exchange, failure.kind === 'status' ? failure.status : null, failure.kind);
    exchange.proxyRes?.destroy();
    exchange.proxyReq?.destroy();
    exchange.next(mapUpstreamFailure(upstream, failure, cause === undefined ? {} : { cause }));
  }

  function send(exchange: Exchange): void {
    exchange.attempts += 1;
    exchange.proxyReq = undefined;
    void proxyMiddleware(exchange.req, exchange.res, (err?: unknown) => {
      // Only a throw inside http-proxy's set-up lands here (e.g. an invalid target): a bug.
      if (exchange.settled) return;
      settle(exchange, null, 'connection');
      exchange.next(err ?? new GatewayError('internal_error'));
    });
  }

  function onUpstreamError(exchange: Exchange, err: unknown): void {
    if (exchange.settled) return;
    const code = errorCodeOf(err);
    // A keep-alive socket the upstream closed while idle fails at once: an idempotent read is
    // retried once, inside the same deadline.
    const retry =
      exchange.proxyRes === undefined &&
      exchange.proxyReq?.reusedSocket === true &&
      (code === 'ECONNRESET' || code === 'EPIPE') &&
      exchange.attempts === 1 &&
      exchange.method === 'GET';
    if (retry) {
      send(exchange);
      return;
    }
    fail(exchange, { kind: 'connection', code }, err);
  }

  async function answer(exchange: Exchange, status: number, headers: IncomingHttpHeaders, body: Buffer): Promise<void> {
    const { req, res } = exchange;
    if (status < 200 || status > 299) {
      const failure: UpstreamFailure = { kind: 'status', status, errorCode: upstreamErrorCode(body), retryAfter: headerValue(headers['retry-after']) };
      throw mapUpstreamFailure(upstream, failure);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      // No cause: a JSON.parse message quotes the body, which may hold card data.
      throw mapUpstreamFailure(upstream, { kind: 'malformed' });
    }
    const context: TransformContext = {};
    if (transform.needsSecurityKey) {
      const securityKey = (req.query as Record<string, unknown>).securityKey;
      context.revealKeyBytes = typeof securityKey === 'string' ? rsaModulusBytes(securityKey) : undefined;
    }
    if (transform.needsStoredCard) {
      const rows = await db.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_key = $1`, [req.params.id]);
      if (rows.rows.length === 0) throw new GatewayError('not_found', 'No card has this id');
      context.storedCard = toCard(rows.rows[0]);
    }
    let result: unknown;
    try {
      result = transform.apply(parsed, context);
    } catch (err) {
      if (err instanceof UnusableAnswerError) throw mapUpstreamFailure(upstream, { kind: 'malformed', cardData: err.cardData }, { cause: err });
      throw err;
    }
    if (audit) {
      const owner = req.ownership;
      if (!owner) throw new Error(`upstream-proxy: audit "${audit}" needs the ownership policy before the proxy`);
      // Before the answer: a card secret the gateway could not audit is not revealed.
      await recordAudit(db, {
        partnerId: owner.partnerId,
        individualId: owner.individualId,
        tenantId: owner.tenantId,
        operation: audit,
        targetType: 'card',
        targetId: req.params.id,
        requestId: req.requestId,
        outcome: 'success',
      });
    }
    res.status(200).set('Cache-Control', 'no-store').json(result);
  }

  function onUpstreamResponse(exchange: Exchange, proxyRes: IncomingMessage): void {
    if (exchange.settled) {
      proxyRes.destroy();
      return;
    }
    exchange.proxyRes = proxyRes;
    const chunks: Buffer[] = [];
    let size = 0;
    proxyRes.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_PROXY_RESPONSE_BYTES) fail(exchange, { kind: 'malformed' });
      else chunks.push(chunk);
    });
    proxyRes.on('error', (err) => fail(exchange, { kind: 'connection', code: errorCodeOf(err) ?? 'ECONNRESET' }, err));
    proxyRes.on('close', () => {
      // The upstream dropped the connection mid-body (content-length not reached).
      if (!proxyRes.complete) fail(exchange, { kind: 'connection', code: 'ECONNRESET' });
    });
    proxyRes.on('end', () => {
      if (exchange.settled) return;
      const status = proxyRes.statusCode ?? 0;
      settle(exchange, status);
      answer(exchange, status, proxyRes.headers, Buffer.concat(chunks)).catch((err: unknown) => exchange.next(err));
    });
  }

  /** Adapts http-proxy to the exchange: its upstream request, events and errors. */
  const exchangePlugin: Plugin<Request, Response> = (proxyServer) => {
    // http-proxy copies `req.headers` verbatim and pipes `req` (already consumed by the JSON
    // parser). Just before its `stream` pass, the exchange's own header set and body take their
    // place. The `proxyReq` event is too late for this: when the agent queues the request (all
    // sockets busy), http-proxy has already ended it and its headers are fixed.
    // The full URL is set here too, not through HPM's `router`: HPM's debug output (DEBUG=...)
    // prints router targets, and this one's query holds the partner's securityKey.
    (proxyServer as unknown as StreamPasses).before('web', 'stream', function upstreamRequest(req, _res, options) {
      const exchange = exchanges.get(req);
      if (!exchange) return;
      req.headers = exchange.headers;
      options.target = { ...baseTarget, path: exchange.targetPath };
      options.buffer = Readable.from(exchange.payload ? [exchange.payload] : []);
    });
    proxyServer.on('proxyReq', (proxyReq, req) => {
      const exchange = exchanges.get(req);
      if (!exchange) return;
      exchange.proxyReq = proxyReq;
      // Timed out (or the partner left) while the agent had the request queued: never send it.
      if (exchange.settled) proxyReq.destroy();
    });
    proxyServer.on('proxyRes', (proxyRes, req) => {
      const exchange = exchanges.get(req);
      if (exchange) onUpstreamResponse(exchange, proxyRes);
      else proxyRes.destroy();
    });
    proxyServer.on('error', (err, req) => {
      const exchange = exchanges.get(req);
      if (exchange) onUpstreamError(exchange, err);
    });
    // The partner's connection broke: http-proxy aborts the upstream request; nobody to answer.
    proxyServer.on('econnreset', (_err, req) => {
      const exchange = exchanges.get(req);
      if (exchange && !exchange.settled) settle(exchange, null, 'connection');
    });
  };

  const proxyMiddleware = createProxyMiddleware<Request, Response>({
    target: base,
    // The partner's path is never used: the exchange's own path is set just before sending.
    ignorePath: true,
    method: params.method,
    agent: clients.http[upstream].agent,
    selfHandleResponse: true,
    followRedirects: false,
    xfwd: false,
    // Our own handlers only: no default error page, no logging of URLs (they hold securityKeys).
    ejectPlugins: true,
    plugins: [exchangePlugin],
  });

  /**
   * An audited read that fails (wrong expDate, upstream down, ...) is audited too, with outcome
   * `failure`: a security reviewer sees every attempt to read card data. Best effort: the partner
   * gets the original problem whatever happens to the audit write.
   */
  function auditFailures(req: Request, next: NextFunction): NextFunction {
    return (err?: unknown) => {
      const owner = req.ownership;
      if (err === undefined || !owner || !audit) return next(err);
      recordAudit(db, {
        partnerId: owner.partnerId,
        individualId: owner.individualId,
        tenantId: owner.tenantId,
        operation: audit,
        targetType: 'card',
        targetId: req.params.id,
        requestId: req.requestId,
        outcome: 'failure',
        details: { reason: err instanceof GatewayError ? err.code : 'error' },
      })
        .catch((auditError: unknown) => log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written'))
        .finally(() => next(err));
    };
  }

  return function upstreamProxyStep(req, res, next) {
    let upstreamPath: string;
    try {
      upstreamPath = path.build(req.params);
    } catch (err) {
      next(new GatewayError('internal_error', undefined, { cause: err }));
      return;
    }
    const method = params.method ?? req.method;
    const body = proxiedBody(method, bodyMode, req.body, setBody);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    const query = encodeQuery(pickQuery(req.query as Record<string, unknown>, queryNames));
    const exchange: Exchange = {
      req,
      res,
      next: audit ? auditFailures(req, next) : next,
      targetPath: `${basePath}${upstreamPath}${query}`,
      logPath: `${basePath}${upstreamPath}`,
      method,
      headers: upstreamHeaders(method, req.requestId, payload) as IncomingHttpHeaders,
      payload,
      started: performance.now(),
      attempts: 0,
      settled: false,
    };
    exchanges.set(req, exchange);
    exchange.timer = setTimeout(() => fail(exchange, { kind: 'timeout' }), timeoutMs);
    res.once('close', () => {
      // The partner left before the upstream answered: stop waiting, free the socket.
      if (exchange.settled) return;
      settle(exchange, null, 'connection');
      exchange.proxyRes?.destroy();
      exchange.proxyReq?.destroy();
    });
    send(exchange);
  };
}

/** A target as http-proxy reads it (the fields of a legacy `url.parse` result it uses). */
interface UpstreamTarget {
  protocol: string;
  host: string;
  hostname: string;
  port: string;
  path?: string;
}

/** The part of http-proxy's server API used to hook its `stream` pass (untyped in @types/http-proxy). */
interface StreamPasses {
  before(
    type: 'web',
    passName: 'stream',
    pass: (req: Request, res: Response, options: { target?: unknown; buffer?: NodeJS.ReadableStream }) => void,
  ): void;
}
