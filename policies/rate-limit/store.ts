/** Who a count is for: a partner (authenticated routes) or a client IP (the public routes). */
export interface RateLimitKey {
  /** The route's name (its apiEndpoint in gateway.config.yml). */
  route: string;
  subject: 'partner' | 'client';
  /** The partner's `_id`, or the client's IP address. */
  id: string;
}

/** The count after a request, and the milliseconds until its window ends. */
export interface RateLimitHit {
  count: number;
  resetMs: number;
}

/**
 * Where request counts live. A window starts at a key's first request and lasts `windowMs`; the
 * count restarts at 0 after it (a fixed window per key).
 */
export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  /** Counts one request (the Redis store counts in memory while Redis is unreachable). */
  hit(key: RateLimitKey, windowMs: number): Promise<RateLimitHit>;
}
