import { LRUCache } from 'lru-cache';

/** Options of a {@link boundedLru} besides its bound. */
export type BoundedLruOptions<K extends {}, V extends {}> = Pick<LRUCache.OptionsBase<K, V, unknown>, 'ttl' | 'ttlAutopurge' | 'perf'> & {
  /**
   * The clock TTLs are measured on, in ms (default lru-cache's: `performance.now()`): a cache's
   * owner passes its own, so that tests advance time instead of sleeping. Read on every TTL check
   * (lru-cache's `ttlResolution: 0`): a clock moved forward is seen at once.
   */
  now?: () => number;
};

const one = () => 1;

/**
 * An LRU cache of at most `max` entries that does not allocate them up front.
 *
 * lru-cache's `max` option allocates arrays for `max` entries when the cache is made: the gateway's
 * caches (10,000 to 100,000 entries each) cost about 0.1 s of CPU and some megabytes at every
 * start. `maxSize: max` with every entry of size 1 is the same bound (setting a new key when `max`
 * are held drops the least recently used one) with arrays that grow as entries come.
 *
 * @example const owners = boundedLru<string, Owner>(100_000, { ttl: 30_000 });
 * @example const counters = boundedLru<string, Counter>(50_000, { ttl: 60_000, now: clock }); // tests move `clock`
 */
export function boundedLru<K extends {}, V extends {}>(max: number, options: BoundedLruOptions<K, V> = {}): LRUCache<K, V> {
  const { now, ...lruOptions } = options;
  const clock = now ? { perf: { now }, ttlResolution: 0 } : {};
  return new LRUCache<K, V>({ ...lruOptions, ...clock, maxSize: max, sizeCalculation: one });
}
