import type { Logger } from '../../gateway/logging/logger';
import type { Settings } from '../../gateway/settings';
import { MemoryRateLimitStore } from './memory-store';
import { RedisRateLimitStore } from './redis-store';
import type { RateLimitStore } from './store';

/**
 * The gateway's rate-limit store: Redis when `REDIS_URL` is set (counts shared by every instance),
 * else in memory (each process counts for itself). Made once with the gateway's services and
 * shared by every rate-limit step, across pipeline rebuilds (a reload does not reset the counts);
 * `close` ends its Redis connection.
 */
export function createRateLimitStore(settings: Pick<Settings, 'redisUrl' | 'redisKeyPrefix'>, log: Logger): { store: RateLimitStore; close(): Promise<void> } {
  if (!settings.redisUrl) return { store: new MemoryRateLimitStore(), close: async () => undefined };
  const store = new RedisRateLimitStore(settings.redisUrl, settings.redisKeyPrefix, log);
  return { store, close: () => store.close() };
}
