import { performance } from 'node:perf_hooks';
import type { LRUCache } from 'lru-cache';
import { boundedLru } from '../../gateway/bounded-lru';
import type { RateLimitHit, RateLimitKey, RateLimitStore } from './store';

interface Counter {
  count: number;
  resetAt: number;
}

/**
 * Counts in this process only (each instance or cluster worker counts for itself): bounded LRUs
 * whose entries expire with their window. Partners and client IPs have separate LRUs, so that a
 * flood of public requests from many addresses cannot evict (and so reset) partners' counts.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly kind = 'memory' as const;
  private readonly counters: Record<RateLimitKey['subject'], LRUCache<string, Counter>>;
  private readonly now: () => number;

  /**
   * @param options.maxPartnerKeys most (partner, route) counters kept (default 50,000)
   * @param options.maxClientKeys most (client IP, route) counters kept (default 50,000)
   * @param options.now monotonic clock in ms (tests)
   */
  constructor(options: { maxPartnerKeys?: number; maxClientKeys?: number; now?: () => number } = {}) {
    this.now = options.now ?? (() => performance.now());
    const lru = (max: number) => boundedLru<string, Counter>(max, { ttl: 60_000, ttlAutopurge: false, now: this.now });
    this.counters = { partner: lru(options.maxPartnerKeys ?? 50_000), client: lru(options.maxClientKeys ?? 50_000) };
  }

  async hit(key: RateLimitKey, windowMs: number): Promise<RateLimitHit> {
    const lru = this.counters[key.subject];
    const id = `${key.route}\u0000${key.id}`;
    const now = this.now();
    let counter = lru.get(id);
    if (!counter || counter.resetAt <= now) {
      counter = { count: 0, resetAt: now + windowMs };
      lru.set(id, counter, { ttl: windowMs });
    }
    counter.count += 1;
    // Whole milliseconds: performance.now() is fractional, and (now + 60000) - now can come out as
    // 60000.00000000012, which the RateLimit header rounded up to t=61 on a 60 s window.
    return { count: counter.count, resetMs: Math.max(0, Math.round(counter.resetAt - now)) };
  }

  /** Number of counters held (tests). */
  size(): number {
    return this.counters.partner.size + this.counters.client.size;
  }
}
