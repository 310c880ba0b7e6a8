import type { Logger } from '../../gateway/logging/logger';
import type { Settings } from '../../gateway/settings';
import { MemoryRateLimitStore } from './memory-store';
import { RedisRateLimitStore } from './redis-store';
import type { RateLimitHit, RateLimitStore } from './store';

export { MemoryRateLimitStore } from './memory-store';
export { RedisRateLimitStore, redisTarget, REDIS_COMMAND_TIMEOUT_MS } from './redis-store';
export type { RateLimitHit, RateLimitKey, RateLimitStore } from './store';

// One store per process, shared by every rate-limit step and kept across pipeline rebuilds (a
// reload does not reset the counts).
let memoryStore: MemoryRateLimitStore | undefined;
const redisStores = new Map<string, RedisRateLimitStore>();

/**
 * The process's rate-limit store: Redis when `REDIS_URL` is set (counts shared by every instance),
 * else in memory (each process counts for itself).
 */
export function rateLimitStore(settings: Pick<Settings, 'redisUrl' | 'redisKeyPrefix'>, log: Logger): RateLimitStore {
  if (!settings.redisUrl) {
    memoryStore ??= new MemoryRateLimitStore();
    return memoryStore;
  }
  const id = `${settings.redisUrl}\u0000${settings.redisKeyPrefix}`;
  let store = redisStores.get(id);
  if (!store) {
    store = new RedisRateLimitStore(settings.redisUrl, settings.redisKeyPrefix, log);
    redisStores.set(id, store);
  }
  return store;
}

/** Closes the Redis connections and forgets every count (shutdown, tests). */
export async function closeRateLimitStores(): Promise<void> {
  const stores = [...redisStores.values()];
  redisStores.clear();
  memoryStore = undefined;
  await Promise.all(stores.map((s) => s.close()));
}

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
