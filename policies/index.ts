import es512Jwt from './es512-jwt';
import idempotency from './idempotency';
import operation from './operation';
import ownership from './ownership';
import type { PolicyDefinition } from './policy';
import type { HandlerServices } from '../gateway/handlers/services';
import type { Settings } from '../gateway/settings';
import type { UpstreamUrls } from '../gateway/upstreams';
import type { FailedAuthLimiter } from './es512-jwt/failed-auth-limiter';
import type { VerifiedTokenCache } from './es512-jwt/verified-token-cache';
import type { OwnershipCache } from '../gateway/ownership';
import type { RateLimitStore } from './rate-limit/store';
import rateLimit from './rate-limit';
import sensitiveData from './sensitive-data';
import validate from './validate';

/**
 * The gateway's services: one bundle per gateway, built once by the composition root
 * (`createGatewayServices`, gateway/compose-services.ts) and handed by the runtime to every policy
 * factory of the plugin (each declares the part it needs: `PolicyContext<Es512JwtServices>`...);
 * the `operation` policy hands the handlers theirs (HandlerServices). A hot reload builds its
 * pipelines with the same bundle. The compiler checks below that it holds what every policy needs.
 */
export interface GatewayServices extends HandlerServices {
  settings: Settings;
  upstreams: UpstreamUrls;
  /** Owners of individuals and cards, read through an LRU. */
  ownership: OwnershipCache;
  /** Tokens already verified, until their exp. */
  tokenCache: VerifiedTokenCache;
  /** Failed token verifications per client address and claimed partner (429 over the limits). */
  authFailures: FailedAuthLimiter;
  /** The rate-limit counts (Redis with REDIS_URL, else memory), shared by every rate-limit step and kept across reloads. */
  rateLimits: RateLimitStore;
}

/** Every policy of the Partner Gateway plugin, in the order a pipeline runs them. */
export const POLICIES: PolicyDefinition<any, GatewayServices>[] = [
  es512Jwt,
  rateLimit,
  ownership,
  sensitiveData,
  validate,
  idempotency,
  operation,
];

/** Name of the authentication policy every protected route must run. */
export const JWT_POLICY = es512Jwt.name;
