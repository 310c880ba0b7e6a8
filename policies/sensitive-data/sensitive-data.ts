import type { RequestHandler } from 'express';

/**
 * The sensitive-data policy: runs right after ownership on routes that return card data (details,
 * CVV, PAN) or carry PINs and 3DS answers. Sets `Cache-Control: no-store` and `Pragma: no-cache`
 * (HTTP/1.0 caches) on whatever answer follows, errors included, and `res.locals.sensitive`, which
 * makes the access log (gateway/http/request-context.ts) record the route pattern, not the URL
 * with its card key and query.
 */
export function sensitiveData(): RequestHandler {
  return function markSensitive(_req, res, next) {
    res.locals.sensitive = true;
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    next();
  };
}
