import type { PolicySchema } from '../policy-schema';

/** Action params of the rate-limit policy. */
export interface RateLimitParams {
  limit: number;
  windowSeconds: number;
}

/** Defaults of the params (docs/rate-limits.md). */
export const RATE_LIMIT_DEFAULTS: RateLimitParams = { limit: 600, windowSeconds: 60 };

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/rate-limit.json',
  type: 'object',
  description:
    'Limits requests per partner and route (per client IP on the public routes): over `limit` requests in a window of `windowSeconds`, 429 rate_limited with RateLimit-Policy, RateLimit and Retry-After. Counts in memory, or in Redis when REDIS_URL is set (while Redis is unreachable, each process counts in its own memory).',
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000_000,
      default: RATE_LIMIT_DEFAULTS.limit,
      description: 'Requests allowed per window, per partner (or client IP) and route.',
    },
    windowSeconds: {
      type: 'integer',
      minimum: 1,
      maximum: 86_400,
      default: RATE_LIMIT_DEFAULTS.windowSeconds,
      description: "Length of the window in seconds; it starts at the partner's first request on the route.",
    },
  },
};
