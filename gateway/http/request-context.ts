import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler, Response } from 'express';
import { templatedLines, type Logger } from '../logging/logger';
import { isRedactedKey, REDACTED, redactUrl, redactValue, scrubText } from '../logging/redaction';
import { requestMetrics } from '../metrics';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare global {
  namespace Express {
    interface Locals {
      /** Set by the sensitive-data policy: the access log records the route pattern, not the URL. */
      sensitive?: boolean;
      /** Facts a handler adds to its request's access-log line (never a secret: they are scrubbed like every field, but name none). */
      logFields?: Record<string, string | number | boolean>;
      /**
       * Whose fault a 5xx answer is when it is not the gateway's: `partner` (a partner's decision
       * endpoint took the budget, and the handler logged that once, rate-limited): the access line
       * is then written at info, not error.
       */
      faultOf?: 'partner';
    }
  }
}

/**
 * First middleware of both listeners: accepts a well-formed `x-request-id` (or makes one), echoes it,
 * sets the headers every response carries (`X-Content-Type-Options: nosniff`, and
 * `Cache-Control: no-store`: every answer is about one partner's cardholders and cards, or the
 * operator's configuration), and writes one access-log line per request when the
 * response is finished (requestId, partnerId, route, status, latency, upstream latency). For a
 * request the sensitive-data policy marked, the logged `url` is the route pattern.
 */
export function requestContext(log: Logger, component: string): RequestHandler {
  const metrics = requestMetrics(component);
  const writeLine = templatedLines(log, 'request');
  return function requestContextMiddleware(req, res, next) {
    const started = performance.now();
    const offered = req.headers['x-request-id'];
    req.requestId = typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : crypto.randomUUID();
    req.headers['x-request-id'] = req.requestId;
    res.setHeader('X-Request-Id', req.requestId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    res.on('finish', () => {
      const latencyMs = performance.now() - started;
      metrics.record(req, res.statusCode, latencyMs / 1000);
      writeLine(res.statusCode >= 500 && res.locals.faultOf === undefined ? 'error' : 'info', accessLogFields(req, res, component, latencyMs));
    });
    next();
  };
}

/** The access line's own fields: a handler's `logFields` of the same name never stand in for them. */
const LINE_FIELDS = new Set(['component', 'requestId', 'partnerId', 'method', 'url', 'route', 'status', 'latencyMs', 'upstreamLatencyMs']);

/** A string member of the line, JSON-escaped (`undefined`: the member is left out, as JSON.stringify does). */
function member(name: string, value: string | undefined): string {
  return value === undefined ? '' : `,"${name}":${JSON.stringify(value)}`;
}

/** A number member; pino writes a non-finite one as null. */
function numberMember(name: string, value: number | undefined): string {
  return value === undefined ? '' : `,"${name}":${Number.isFinite(value) ? String(value) : 'null'}`;
}

/**
 * The members of a request's access-log line, in the order the line has always had them: a
 * handler's `logFields` first, then component, requestId, partnerId, method, url, route, status,
 * latencyMs, upstreamLatencyMs. Only what can carry a secret is scrubbed: the request id (the
 * partner's `x-request-id`: a JWT or a card number passes its pattern), the partner id, the URL
 * ({@link redactUrl}: query secrets, JWTs, PANs, the 2 KB cap), and the `logFields` (a listed key
 * is redacted, strings scrubbed). `component` is the code's, `method` one of the methods Node's
 * parser accepts, `route` a pattern of the configuration or the code, `status` and the latencies
 * numbers. Before issue 22 item 5 the whole object went through pino's formatter, a deep copy that
 * scrubbed every string (docs/performance.md, "The hot path").
 */
export function accessLogFields(req: Request, res: Response, component: string, latencyMs: number): string {
  let extra = '';
  const logFields = res.locals.logFields;
  const route: unknown = res.locals.route ?? req.route?.path;
  if (logFields !== undefined) {
    const names = Object.keys(logFields);
    // A log field named like one of the line's keeps its place in the line, as the spread of the
    // line's object did: such a line is built the old way (no handler names one today).
    if (names.some((name) => LINE_FIELDS.has(name))) return oldStyleFields(req, res, component, latencyMs, route);
    for (const name of names) {
      const value = logFields[name];
      if (value === undefined) continue;
      extra += `,${JSON.stringify(name)}:${JSON.stringify(isRedactedKey(name) ? REDACTED : redactValue(value, 1, name))}`;
    }
  }
  // A route pattern is a string; an Express route declared with a RegExp was logged as `{}`, and still is.
  const routeJson = route === undefined ? undefined : typeof route === 'string' ? JSON.stringify(route) : JSON.stringify(redactValue(route, 1, 'route'));
  const partnerId: unknown = req.partner?._id;
  const upstreamLatencyMs: unknown = res.locals.upstreamLatencyMs;
  const fields =
    `${extra},"component":${JSON.stringify(component)}` +
    member('requestId', req.requestId === undefined ? undefined : scrubText(req.requestId)) +
    member('partnerId', typeof partnerId === 'string' ? scrubText(partnerId) : undefined) +
    member('method', req.method) +
    // Card data routes: the URL holds the card key and secrets' parameters; the pattern is enough.
    `,"url":${res.locals.sensitive ? (routeJson ?? `"${REDACTED}"`) : JSON.stringify(redactUrl(req.originalUrl))}` +
    (routeJson === undefined ? '' : `,"route":${routeJson}`) +
    numberMember('status', res.statusCode) +
    numberMember('latencyMs', Math.round(latencyMs * 100) / 100) +
    numberMember('upstreamLatencyMs', typeof upstreamLatencyMs === 'number' ? upstreamLatencyMs : undefined);
  return fields.slice(1);
}

/** The line's object scrubbed whole, as pino's formatter did before the template: for a `logFields` member named like a field of the line. */
function oldStyleFields(req: Request, res: Response, component: string, latencyMs: number, route: unknown): string {
  const entry = {
    ...res.locals.logFields,
    component,
    requestId: req.requestId,
    partnerId: req.partner?._id,
    method: req.method,
    url: res.locals.sensitive ? (route ?? REDACTED) : redactUrl(req.originalUrl),
    route,
    status: res.statusCode,
    latencyMs: Math.round(latencyMs * 100) / 100,
    upstreamLatencyMs: res.locals.upstreamLatencyMs,
  };
  return JSON.stringify(redactValue(entry)).slice(1, -1);
}
