/**
 * The retry rules, as pure functions (the client applies them; tests check them as a table).
 *
 * - A read (GET, HEAD) is retried on a network error and on 502, 503, 504: nothing changed.
 * - A write sent with an Idempotency-Key is retried on a network error, 409
 *   `idempotency_in_progress`, 429, 502, 503 and 504, always with the same key: the gateway runs it
 *   at most once and replays its first answer.
 * - A write the gateway takes no Idempotency-Key on is retried only on 429, which the gateway
 *   answers before it acts: after a network error or a 5xx it may have acted, and a second call
 *   could act twice.
 */

/** How many times and how far apart calls are retried. */
export interface RetryOptions {
  /** Retries after the first attempt; default 2 (0: never retry). */
  maxRetries?: number;
  /** The first backoff, doubled at each retry (with jitter: half of it to all of it); default 500 ms. */
  baseDelayMs?: number;
  /** The longest backoff; default 8000 ms. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown (its `retryAfter` says how long); default 60 s. */
  maxRetryAfterSeconds?: number;
}

/** What an attempt ended with: an answer's status and problem code, or a network failure. */
export type AttemptOutcome = { status: number; code?: string } | 'network';

/** Whether an attempt with this outcome may be sent again. */
export function isRetryable(method: string, withIdempotencyKey: boolean, outcome: AttemptOutcome): boolean {
  const read = method === 'GET' || method === 'HEAD';
  if (outcome === 'network') return read || withIdempotencyKey;
  const { status, code } = outcome;
  if (read) return status === 502 || status === 503 || status === 504;
  if (!withIdempotencyKey) return status === 429;
  return status === 429 || status === 502 || status === 503 || status === 504 || (status === 409 && code === 'idempotency_in_progress');
}

/**
 * How long to wait before retry number `retry` (1 for the first): `Retry-After` when the answer
 * had one, else exponential backoff with jitter. Undefined: do not retry (a `Retry-After` beyond
 * `maxRetryAfterSeconds`).
 */
export function retryDelayMs(retry: number, retryAfterSeconds: number | undefined, options: RetryOptions = {}, random: () => number = Math.random): number | undefined {
  if (retryAfterSeconds !== undefined) {
    return retryAfterSeconds > (options.maxRetryAfterSeconds ?? 60) ? undefined : retryAfterSeconds * 1000;
  }
  const backoff = Math.min(options.maxDelayMs ?? 8000, (options.baseDelayMs ?? 500) * 2 ** (retry - 1));
  return Math.round(backoff / 2 + (random() * backoff) / 2);
}
