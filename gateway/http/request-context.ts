import crypto from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../logging/logger';
import { redactUrl } from '../logging/redaction';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * First middleware of both listeners: accepts a well-formed `x-request-id` (or makes one), echoes it,
 * sets the headers every response carries, and writes one access-log line per request when the
 * response is finished (requestId, partnerId, route, status, latency, upstream latency).
 */
export function requestContext(log: Logger, component: string): RequestHandler {
  return function requestContextMiddleware(req, res, next) {
    const started = process.hrtime.bigint();
    const offered = req.headers['x-request-id'];
    req.requestId = typeof offered === 'string' && REQUEST_ID.test(offered) ? offered : crypto.randomUUID();
    req.headers['x-request-id'] = req.requestId;
    res.setHeader('X-Request-Id', req.requestId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.on('finish', () => {
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      const entry = {
        component,
        requestId: req.requestId,
        partnerId: req.partner?._id,
        method: req.method,
        url: redactUrl(req.originalUrl),
        route: res.locals.route ?? req.route?.path,
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
