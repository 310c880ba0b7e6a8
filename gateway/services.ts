import type { FailedAuthLimiter } from '../policies/es512-jwt/failed-auth-limiter';
import type { VerifiedTokenCache } from '../policies/es512-jwt/verified-token-cache';
import type { Database } from './db/database';
import type { OutboxDeliverer } from './outbox/outbox';
import type { OwnershipCache } from '../policies/ownership/ownership-cache';
import type { UpstreamClients } from './upstreams';
import type { IndividualStore } from './individuals/individual-store';
import type { Logger } from './logging/logger';
import type { PartnerStore } from './partners/partner-store';
import type { RateLimitStore } from '../policies/rate-limit/store';
import type { Settings } from './settings';

/** Base URLs of the three upstream systems (real ones, or the sandboxes started by main). */
export interface UpstreamUrls {
  issuer: string;
  processing: string;
  accounts: string;
}

/**
 * What policies and handlers need at pipeline-build time: one bundle per gateway, built once by the
 * composition root (`createGatewayServices` of gateway/compose-services.ts) and handed to every
 * policy factory through its context (policies/policy.ts), and by the `operation` policy to its
 * handler. A hot reload builds its pipelines with the same bundle.
 */
export interface GatewayServices {
  settings: Settings;
  log: Logger;
  db: Database;
  partners: PartnerStore;
  individuals: IndividualStore;
  upstreams: UpstreamUrls;
  /** Typed clients of the three upstreams (keep-alive, timeouts, failure mapping). */
  clients: UpstreamClients;
  /** Owners of individuals and cards, read through an LRU. */
  ownership: OwnershipCache;
  /** Delivers the transactional outbox (webhooks and status updates to the processing system). */
  outbox: OutboxDeliverer;
  /** Tokens already verified, until their exp. */
  tokenCache: VerifiedTokenCache;
  /** Failed token verifications per client address and claimed partner (429 over the limits). */
  authFailures: FailedAuthLimiter;
  /** The rate-limit counts (Redis with REDIS_URL, else memory), shared by every rate-limit step and kept across reloads. */
  rateLimits: RateLimitStore;
}
