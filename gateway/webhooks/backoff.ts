/**
 * The delay before attempt `attempt + 1`, after `attempt` failed ones: exponential from `baseMs`,
 * capped at `maxMs`, with jitter over its upper half (so that endpoints failing together do not
 * retry together).
 */
export function retryDelayMs(attempt: number, options: { baseMs: number; maxMs: number }, random = Math.random): number {
  const full = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 40));
  return Math.round(full / 2 + random() * (full / 2));
}
