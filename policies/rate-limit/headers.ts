import type { RateLimitHit } from './store';

/** A quota as partners see it in the headers. */
export interface RateLimitQuota {
  /** Name of the quota: the route's. */
  name: string;
  limit: number;
  windowSeconds: number;
}

/** An RFC 8941 sf-string: printable ASCII, `"` and `\` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** Whole seconds until the window ends (at least 1 while anything is left of it). */
export function secondsToReset(hit: RateLimitHit): number {
  return Math.max(hit.resetMs > 0 ? 1 : 0, Math.ceil(hit.resetMs / 1000));
}

/**
 * The rate-limit headers of draft-ietf-httpapi-ratelimit-headers (`RateLimit-Policy` and
 * `RateLimit`, structured fields), and `Retry-After` once over the limit.
 *
 * @example rateLimitHeaders({ name: 'me', limit: 600, windowSeconds: 60 }, { count: 600, resetMs: 29_500 })
 * // { 'RateLimit-Policy': '"me";q=600;w=60', RateLimit: '"me";r=0;t=30' }
 */
export function rateLimitHeaders(quota: RateLimitQuota, hit: RateLimitHit): Record<string, string> {
  const name = sfString(quota.name);
  const headers: Record<string, string> = {
    'RateLimit-Policy': `${name};q=${quota.limit};w=${quota.windowSeconds}`,
    RateLimit: `${name};r=${Math.max(0, quota.limit - hit.count)};t=${secondsToReset(hit)}`,
  };
  if (hit.count > quota.limit) headers['Retry-After'] = String(Math.max(1, secondsToReset(hit)));
  return headers;
}
