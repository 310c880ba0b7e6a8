import type { FailedAuthLimiter } from '../policies/es512-jwt/failed-auth-limiter';
import type { VerifiedTokenCache } from '../policies/es512-jwt/verified-token-cache';
import type { Database } from './db/database';
import type { OutboxDeliverer } from './outbox/outbox';
import type { OwnershipCache } from '../policies/ownership/ownership-cache';
import type { UpstreamClients } from './upstreams';
import type { IndividualStore } from './individuals/individual-store';
import type { Logger } from './logging/logger';
import type { PartnerStore } from './partners/partner-store';
import type { Settings } from './settings';

/** Base URLs of the three upstream systems (real ones, or the sandboxes started by main). */
export interface UpstreamUrls {
  issuer: string;
  processing: string;
  accounts: string;
}

/**
 * What policies and handlers need at pipeline-build time. Express Gateway calls a policy factory
 * with `(actionParams, config)` only, so the gateway publishes its services here once at start,
 * before any pipeline is built.
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
}

let current: GatewayServices | undefined;

/** Publishes the services (main, or a test building pipelines in-process). */
export function setServices(services: GatewayServices): void {
  current = services;
}

/** The published services; throws if a policy is built before main published them. */
export function services(): GatewayServices {
  if (!current) throw new Error('gateway services are not initialised: policies must be built after setServices()');
  return current;
}
