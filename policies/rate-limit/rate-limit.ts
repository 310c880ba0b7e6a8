import type { Request, RequestHandler } from 'express';
import { GatewayError } from '../../gateway/errors';
import { rateLimitHeaders, secondsToReset } from './headers';
import type { RateLimitKey, RateLimitStore } from './store';
import type { Settings } from '../../gateway/settings';
import { clientAddressOf } from '../../gateway/http/client-address';
import type { PolicyContext } from '../policy';
import { RATE_LIMIT_DEFAULTS, type RateLimitParams } from './schema';

/** What the rate-limit policy needs of the gateway's services. */
export interface RateLimitServices {
  settings: Settings;
  rateLimits: RateLimitStore;
}

/** The route a count is for: the apiEndpoint's name (stable across instances, restarts and reloads). */
function routeOf(req: Request): string {
  return req.apiEndpointName ?? `${req.method} ${req.route?.path ?? '*'}`;
}

/**
 * The rate-limit policy: runs right after es512-jwt (before nothing else on the public routes, where
 * there is no partner). Counts the request for (partner, route), or (client IP, route) without a
 * partner; the client IP is the TCP peer, or with TRUST_PROXY the nearest untrusted address of X-Forwarded-For (gateway/http/client-address.ts).
 * Within the limit: `RateLimit-Policy` and `RateLimit` headers, then the next step. Over it: 429
 * `rate_limited` with the same headers and `Retry-After`. With Redis unreachable, this process
 * counts in its own memory (see redis-store.ts).
 */
export function rateLimit(params: Partial<RateLimitParams>, { services }: PolicyContext<RateLimitServices>): RequestHandler {
  const { settings, rateLimits: store } = services;
  const clientAddress = clientAddressOf(settings.trustProxy);
  const limit = params.limit ?? RATE_LIMIT_DEFAULTS.limit;
  const windowSeconds = params.windowSeconds ?? RATE_LIMIT_DEFAULTS.windowSeconds;
  const windowMs = windowSeconds * 1000;
  return function rateLimitCheck(req, res, next) {
    const route = routeOf(req);
    const key: RateLimitKey = req.partner
      ? { route, subject: 'partner', id: req.partner._id }
      : { route, subject: 'client', id: clientAddress(req) };
    store.hit(key, windowMs).then(
      (hit) => {
        const headers = rateLimitHeaders({ name: route, limit, windowSeconds }, hit);
        if (hit.count > limit) {
          next(
            new GatewayError('rate_limited', `This route allows ${limit} requests per ${windowSeconds} s; retry in ${secondsToReset(hit)} s`, {
              headers,
            })
          );
          return;
        }
        res.set(headers);
        next();
      },
      (err: unknown) => next(err)
    );
  };
}
