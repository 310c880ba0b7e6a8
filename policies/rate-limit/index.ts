import type { PolicyDefinition } from '../policy';
import { rateLimit } from './rate-limit';
import { schema, type RateLimitParams } from './schema';

/**
 * Per-partner, per-route rate limits (docs/rate-limits.md). Registered as `rate-limit`, the name of
 * an express-gateway built-in that is never loaded: ours takes its place.
 */
const definition: PolicyDefinition<Partial<RateLimitParams>> = { name: 'rate-limit', schema, policy: rateLimit };
export = definition;
