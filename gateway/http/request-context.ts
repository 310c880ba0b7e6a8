import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import type { Logger } from '../logging/logger';
import { REDACTED, redactUrl } from '../logging/redaction';
import { requestMetrics } from '../metrics';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare global {
  namespace Express {
    interface Locals {
      /** Set by the sensitive-data policy: the access log records the route pattern, not the URL. */
      sensitive?: boolean;
      /** Facts a handler adds to its request's access-log line (never a secret: they are scrubbed like every field, but name none). */
      logFields?: Record<string, string | number | boolean>;
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
      const route: string | undefined = res.locals.route ?? req.route?.path;
      const entry = {
        // First, so that none of them can stand in for a field of the line itself.
        ...res.locals.logFields,
        component,
        requestId: req.requestId,
        partnerId: req.partner?._id,
        method: req.method,
        // Card data routes: the URL holds the card key and secrets' parameters; the pattern is enough.
        url: res.locals.sensitive ? (route ?? REDACTED) : redactUrl(req.originalUrl),
        route,
        status: res.statusCode,
        latencyMs: Math.round(latencyMs * 100) / 100,
        upstreamLatencyMs: res.locals.upstreamLatencyMs,
      };
      if (res.statusCode >= 500) log.error(entry, 'request');
      else log.info(entry, 'request');
    });
    next();
  };
}
