import Redis from 'ioredis';
import { Counter } from 'prom-client';
import type { Logger } from '../logging/logger';
import { registry } from '../metrics';
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

/** Requests let through because Redis could not count them. */
const failOpenTotal = new Counter({
  name: 'rate_limit_fail_open_total',
  help: 'Requests let through without a rate-limit count because Redis (REDIS_URL) was unreachable or too slow.',
  registers: [registry],
});

/** Milliseconds a count may take before the request is let through uncounted. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
/** A warning is logged at the first fail-open, then at most once per this many ms (with the count since). */
export const FAIL_OPEN_LOG_INTERVAL_MS = 30_000;

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
 * Fails open: when Redis is down, reconnecting, or slower than REDIS_COMMAND_TIMEOUT_MS, the
 * request goes through uncounted, `rate_limit_fail_open_total` grows and a warning is logged
 * (throttled). Availability of the partner API wins over strict limits (docs/rate-limits.md).
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly kind = 'redis' as const;
  private readonly client: RedisWithHit;
  private failOpen = 0;
  private failOpenSinceLog = 0;
  private readonly lastWarnAt = { error: -Infinity, failOpen: -Infinity };

  constructor(
    readonly url: string,
    private readonly keyPrefix: string,
    private readonly log: Logger
  ) {
    this.client = new Redis(url, {
      // Commands wait for the first connection, but never longer than the timeout.
      enableOfflineQueue: true,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    }) as RedisWithHit;
    this.client.defineCommand('pgwRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.client.on('error', (err: Error) => {
      if (this.due('error')) this.log.warn({ reason: err.message, redis: redisTarget(url) }, 'rate-limit store: Redis connection error');
    });
  }

  async hit(key: RateLimitKey, windowMs: number): Promise<RateLimitHit | null> {
    // While it reconnects, do not queue: let the request through at once.
    const status = this.client.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end') return this.letThrough(`Redis ${status}`);
    try {
      const [count, ttl] = await this.client.pgwRateLimitHit(`${this.keyPrefix}rl:${key.route}:${key.subject}:${key.id}`, windowMs);
      return { count: Number(count), resetMs: Math.max(0, Number(ttl)) };
    } catch (err) {
      return this.letThrough((err as Error).message);
    }
  }

  /** Requests let through uncounted since this store was made. */
  failOpenCount(): number {
    return this.failOpen;
  }

  /** Closes the connection (at shutdown, or in tests). */
  async close(): Promise<void> {
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private letThrough(reason: string): null {
    this.failOpen += 1;
    this.failOpenSinceLog += 1;
    failOpenTotal.inc();
    if (this.due('failOpen')) {
      this.log.warn(
        { reason, redis: redisTarget(this.url), failOpenSinceLastWarning: this.failOpenSinceLog, failOpenTotal: this.failOpen },
        'rate-limit store unreachable: requests go through uncounted (fail open)'
      );
      this.failOpenSinceLog = 0;
    }
    return null;
  }

  /** Throttles warnings: true at most once per FAIL_OPEN_LOG_INTERVAL_MS for each kind. */
  private due(kind: 'error' | 'failOpen'): boolean {
    const now = Date.now();
    if (now - this.lastWarnAt[kind] < FAIL_OPEN_LOG_INTERVAL_MS) return false;
    this.lastWarnAt[kind] = now;
    return true;
  }
}
