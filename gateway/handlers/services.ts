import type { AuthorizationEndpointServices } from '../authorizations';
import type { CardStateListener } from '../cards/card-state-listener';
import type { Operation } from '../catalog';
import type { OwnershipInvalidation } from '../ownership';
import type { Database } from '../db/database';
import type { IndividualStore } from '../individuals/individual-store';
import type { Logger } from '../logging/logger';
import type { Outbound } from '../outbound';
import type { OutboxDeliverer } from '../outbox/outbox';
import type { PartnerStore } from '../partners/partner-store';
import type { UpstreamClients } from '../upstreams';
import type { WebhookServices } from '../webhooks';

/**
 * What the handlers need, handed to each handler factory by the `operation` policy when a pipeline
 * is built: the part of the gateway's services (gateway/compose-services.ts) that the domain uses.
 */
export interface HandlerServices {
  log: Logger;
  db: Database;
  partners: PartnerStore;
  individuals: IndividualStore;
  /** Typed clients of the three upstreams (keep-alive, timeouts, failure mapping). */
  clients: UpstreamClients;
  /** Owners of individuals and cards, as the ownership policy caches them. */
  ownership: OwnershipInvalidation;
  /** Delivers the transactional outbox (webhooks and status updates to the processing system). */
  outbox: OutboxDeliverer;
  /** The one guard of every partner-supplied URL (webhook endpoints, the decision endpoint), and its transport. */
  outbound: Outbound;
  /** Webhook endpoints and the delivery dispatcher. */
  webhooks: WebhookServices;
  /** The partners' decision endpoints: their store, the guard and per-process call state (docs/authorization-endpoint.md). */
  authorizationEndpoints: AuthorizationEndpointServices;
  /** Whether the upstreams are the built-in sandboxes (SANDBOX_MODE). */
  sandboxMode: boolean;
  /** What follows a card's state (its network tokens: gateway/tokens/cascade.ts); absent, cards change alone. */
  cardState?: CardStateListener;
}

/**
 * What a handler is built for, besides the services: its operation (the catalog's name and entry,
 * typed as the entry it is registered against: the handler writes the entry's audit action, never
 * a name of its own, and makes the status change the entry references) and the configuration being
 * built (only the OpenAPI document reads it).
 */
export interface HandlerBuild<Entry extends Operation = Operation> {
  name: string;
  operation: Entry;
  gatewayConfig: Record<string, unknown>;
}

/** The audit action of the operation a handler is built for; a handler that writes audit entries refuses to build without one. */
export function auditActionOf(build: HandlerBuild): string {
  const { audit } = build.operation;
  if (!audit) throw new Error(`${build.name}: its catalog entry declares no audit action, and its handler writes audit entries`);
  return audit;
}
