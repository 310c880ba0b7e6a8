import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import type { RateLimitServices } from './rate-limit';
import { schema, type RateLimitParams } from './schema';

/**
 * Per-partner, per-route rate limits (docs/rate-limits.md). Registered as `rate-limit`, the name of
 * an express-gateway built-in that is never loaded: ours takes its place.
 */
const definition: PolicyDefinition<Partial<RateLimitParams>, RateLimitServices> = { name: 'rate-limit', schema, policy: loadedOnFirstUse(() => (require('./rate-limit') as typeof import('./rate-limit')).rateLimit) };
export = definition;
