import type { Database } from './db/database';
import { createTokenCascade } from './tokens/cascade';
import { tokenOutboxHandlers } from './tokens/operations';
import type { Logger } from './logging/logger';
import { IndividualStore } from './individuals/individual-store';
import { OutboxDeliverer } from './outbox/outbox';
import { listenForPartnerChanges } from './partners/change-feed';
import { PartnerStore } from './partners/partner-store';
import { createUpstreamClients } from './upstreams';
import { createWebhookServices } from './webhooks';
import { createAuthorizationEndpointServices } from './authorizations';
import { createOutbound, OwnListeners } from './outbound';
import { VerifiedTokenCache } from '../policies/es512-jwt/verified-token-cache';
import { FailedAuthLimiter, failedAuthLimitsFrom } from '../policies/es512-jwt/failed-auth-limiter';
import { evictEverywhere } from '../policies/es512-jwt/cluster-eviction';
import { OwnershipCache, isInvalidatedKind } from './ownership';
import { createRateLimitStore } from '../policies/rate-limit/stores';
import type { GatewayServices } from '../policies';
import type { UpstreamUrls } from './upstreams';
import type { Settings } from './settings';

/** What the gateway's services are made from. */
export interface GatewayServicesOptions {
  settings: Settings;
  log: Logger;
  /** Opened and migrated by the caller (it may be the embedded database). */
  db: Database;
  upstreams: UpstreamUrls;
  /**
   * The database URL on which other instances announce their partner and ownership changes
   * (LISTEN). Omitted with the embedded database (one process, which makes every change itself)
   * and in tests that build pipelines in-process.
   */
  changeFeedUrl?: string;
  /**
   * This gateway's own listeners, which no partner URL may point at (gateway/outbound): serve.ts
   * adds each port once it listens. A registry of none when omitted (in-process tests).
   */
  ownListeners?: OwnListeners;
}

/** The services of one gateway, and what stops them (the change feed, the upstream pools, Redis). */
export interface ComposedServices {
  services: GatewayServices;
  close(): Promise<void>;
}

/**
 * Builds the services of one gateway once: the stores, the upstream clients, the caches and
 * limiters of the policies, and the wiring between them (a partner change drops the partner's
 * verified tokens; another instance's change, through the change feed, drops tokens and owners).
 * `gateway/serve.ts` calls it at start, and the tests' in-process helper with short TTLs, a silent
 * logger or fake upstream URLs; nothing else builds services. The bundle reaches every policy
 * factory through its context, and each handler through the `operation` policy; background jobs
 * take what they need from it in their constructors.
 *
 * @example
 * const { services, close } = createGatewayServices({ settings, log, db, upstreams });
 * const router = await runtime.buildPipelines(gatewayConfig, file, services);
 */
export function createGatewayServices(options: GatewayServicesOptions): ComposedServices {
  const { settings, log, db, upstreams } = options;
  const partners = new PartnerStore(db);
  const individuals = new IndividualStore(db);
  const clients = createUpstreamClients(upstreams, { timeoutMs: settings.upstreamTimeoutMs, log });
  // ttl 0 would mean "forever" to lru-cache: a zero setting disables caching instead.
  const ownership = new OwnershipCache({ ttlMs: Math.max(1, settings.ownershipCacheTtlMs), negativeTtlMs: Math.min(5000, Math.max(1, settings.ownershipCacheTtlMs)) });
  // The cascade's and the partners' token operations go through the outbox, sent by the tokens
  // domain's handlers (the outbox cannot import it: docs/architecture.md "Layers").
  const outbox = new OutboxDeliverer(db, clients, log, tokenOutboxHandlers({ db, processing: clients.processing, log }));
  // A card's state governs its tokens (docs/tokens.md "The cascade"): every card change tells it.
  const cardState = createTokenCascade();
  const tokenCache = new VerifiedTokenCache();
  const authFailures = new FailedAuthLimiter(failedAuthLimitsFrom(settings));
  const rateLimits = createRateLimitStore(settings, log);
  // The one guard and transport of every partner-supplied URL: webhooks and decision endpoints.
  const outbound = createOutbound({ allowPrivate: settings.webhooksAllowPrivate || settings.sandboxMode, ownListeners: options.ownListeners ?? new OwnListeners() });
  // Its dispatcher is started by serve.ts: in-process tests build services without sending webhooks.
  const webhooks = createWebhookServices(settings, db, log, outbound);
  const authorizationEndpoints = createAuthorizationEndpointServices(settings, db, log, webhooks, outbound);
  // A change made through this process's admin API: dropped here, then in every cluster worker
  // (through the primary) before the admin call answers, then on other instances through NOTIFY.
  partners.onChange((partnerId, change) => evictEverywhere(tokenCache, partnerId, log, change));
  let feed: { stop(): Promise<void> } | undefined;
  if (options.changeFeedUrl) {
    // Other instances announce their partner changes through NOTIFY. While the feed is down, cached
    // verifications are trusted for FEED_DOWN_TRUST_MS after their database read only.
    feed = listenForPartnerChanges(
      options.changeFeedUrl,
      {
        onChange: (id) => tokenCache.evictPartner(id),
        // Replace and re-issue on any instance: the old and new cardKey are read again here at once.
        onOwnershipChange: (kind, id) => {
          if (isInvalidatedKind(kind)) ownership.invalidate(kind, id);
        },
        onConnected: () => {
          ownership.clear();
          tokenCache.clear();
          tokenCache.feedUp();
        },
        onDisconnected: () => tokenCache.feedDown(),
        onPartnerEvents: () => webhooks.dispatcher.wake(),
      },
      log
    );
  }
  const services: GatewayServices = { settings, log, db, partners, individuals, upstreams, clients, ownership, outbox, outbound, webhooks, authorizationEndpoints, cardState, sandboxMode: settings.sandboxMode, tokenCache, authFailures, rateLimits: rateLimits.store };
  return {
    services,
    close: async () => {
      await feed?.stop();
      clients.close();
      outbound.close();
      await rateLimits.close();
    },
  };
}
