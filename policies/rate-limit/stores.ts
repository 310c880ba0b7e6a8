import type { Logger } from '../../gateway/logging/logger';
import type { Settings } from '../../gateway/settings';
import { MemoryRateLimitStore } from './memory-store';
import { RedisRateLimitStore } from './redis-store';
import type { RateLimitStore } from './store';

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
