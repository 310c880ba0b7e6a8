import { LRUCache } from 'lru-cache';

/** Options of a {@link boundedLru} besides its bound. */
export type BoundedLruOptions<K extends {}, V extends {}> = Pick<LRUCache.OptionsBase<K, V, unknown>, 'ttl' | 'ttlAutopurge' | 'perf'>;

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
 */
export function boundedLru<K extends {}, V extends {}>(max: number, options: BoundedLruOptions<K, V> = {}): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: max, sizeCalculation: one });
}
