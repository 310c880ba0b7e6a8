import type Redis from 'ioredis';
import type { Logger } from '../../gateway/logging/logger';
import { rateLimitFallbackActive, rateLimitFallbackTotal } from '../../gateway/metrics';
import { MemoryRateLimitStore } from './memory-store';
import type { RateLimitHit, RateLimitKey, RateLimitStore } from './store';

/**
 * One atomic step per request: count it, and start the window on the key's first request (or if
 * the key somehow lost its expiry). Returns the count and the milliseconds left in the window.
 */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`;

/** Milliseconds a count may take in Redis before the request is counted in memory instead. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
/** Redis connection errors (ioredis retries) are logged at most once per this many ms. */
export const CONNECTION_ERROR_LOG_INTERVAL_MS = 30_000;

type RedisWithHit = Redis & { pgwRateLimitHit(key: string, windowMs: number): Promise<[number, number]> };

/** `host:port` of a Redis URL, for logs (never its password). */
export function redisTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return '(unparsable REDIS_URL)';
  }
}

/**
 * Counts in Redis, shared by every gateway instance and worker using the same `REDIS_URL` and key
 * prefix. Keys: `<prefix>rl:<route>:<partner|client>:<id>`, expiring with their window.
 *
 * Falls back to this process's memory: when Redis is down, reconnecting, or slower than
 * REDIS_COMMAND_TIMEOUT_MS, the request is counted in an in-memory store of this process (the same
 * windows and bounds as without Redis), so each process still enforces the limit on its own. One
 * warning when the fallback starts, one info line when Redis counts again (not one per request);
 * `rate_limit_fallback_total` counts the requests counted in memory and `rate_limit_fallback_active`
 * is 1 while it lasts (docs/rate-limits.md). Requests never wait for a reconnecting Redis.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly kind = 'redis' as const;
  private readonly client: RedisWithHit;
  private readonly fallback: MemoryRateLimitStore;
  /** Set while counting in memory: when the outage began, and what was counted since. */
  private outage: { since: number; reason: string; counted: number } | undefined;
  private fallbackTotal = 0;
  private lastConnectionErrorLogAt = -Infinity;
  /** Whether the client was ever ready: only the first connection is waited for. */
  private connectedOnce = false;

  constructor(
    readonly url: string,
    private readonly keyPrefix: string,
    private readonly log: Logger,
    fallback: MemoryRateLimitStore = new MemoryRateLimitStore()
  ) {
    this.fallback = fallback;
    // Loaded with the first Redis store: a gateway without REDIS_URL never loads ioredis (about
    // 30 ms of CPU a start).
    const IORedis = (require('ioredis') as typeof import('ioredis')).default;
    this.client = new IORedis(url, {
      // Commands wait for the first connection, but never longer than the timeout.
      enableOfflineQueue: true,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      // A command a lost connection interrupted fails (and is counted in memory); retried on the
      // next connection, it would be counted a second time, in Redis.
      maxRetriesPerRequest: 0,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    }) as RedisWithHit;
    this.client.defineCommand('pgwRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.client.once('ready', () => (this.connectedOnce = true));
    this.client.on('error', (err: Error) => {
      const now = Date.now();
      if (now - this.lastConnectionErrorLogAt < CONNECTION_ERROR_LOG_INTERVAL_MS) return;
      this.lastConnectionErrorLogAt = now;
      this.log.warn({ reason: err.message, redis: redisTarget(url) }, 'rate-limit store: Redis connection error');
    });
  }

  async hit(key: RateLimitKey, windowMs: number): Promise<RateLimitHit> {
    // While it reconnects, do not queue: count in memory at once. A command queued while the client
    // connects again would time out here (counted in memory) and still run once the connection is
    // back (counted in Redis as well): after the first connection, only a ready client is asked.
    const status = this.client.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end' || (this.connectedOnce && status !== 'ready')) {
      return this.countInMemory(key, windowMs, `Redis ${status}`);
    }
    let counted: [number, number];
    try {
      counted = await this.client.pgwRateLimitHit(`${this.keyPrefix}rl:${key.route}:${key.subject}:${key.id}`, windowMs);
    } catch (err) {
      return this.countInMemory(key, windowMs, (err as Error).message);
    }
    if (this.outage) this.endOutage();
    return { count: Number(counted[0]), resetMs: Math.max(0, Number(counted[1])) };
  }

  /** Requests counted in memory (Redis unreachable) since this store was made. */
  fallbackCount(): number {
    return this.fallbackTotal;
  }

  /** True while requests are counted in memory. */
  fallingBack(): boolean {
    return this.outage !== undefined;
  }

  /** Closes the connection (at shutdown, or in tests). */
  async close(): Promise<void> {
    if (this.outage) {
      this.outage = undefined;
      rateLimitFallbackActive.dec();
    }
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private countInMemory(key: RateLimitKey, windowMs: number, reason: string): Promise<RateLimitHit> {
    if (!this.outage) {
      this.outage = { since: Date.now(), reason, counted: 0 };
      rateLimitFallbackActive.inc();
      this.log.warn(
        { reason, redis: redisTarget(this.url) },
        "rate-limit store: Redis unreachable, counting in this process's memory until it is back (each process enforces the limits on its own)"
      );
    }
    this.outage.counted += 1;
    this.fallbackTotal += 1;
    rateLimitFallbackTotal.inc();
    return this.fallback.hit(key, windowMs);
  }

  private endOutage(): void {
    const outage = this.outage!;
    this.outage = undefined;
    rateLimitFallbackActive.dec();
    this.log.info(
      { redis: redisTarget(this.url), outageMs: Date.now() - outage.since, countedInMemory: outage.counted, firstReason: outage.reason },
      'rate-limit store: Redis is back, counting in Redis again'
    );
  }
}
