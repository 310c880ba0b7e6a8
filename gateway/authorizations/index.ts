import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Outbound } from '../outbound';
import type { Settings } from '../settings';
import type { WebhookServices } from '../webhooks';
import { AuthorizationEndpointStore } from './endpoint-store';
import { MAX_IN_FLIGHT_PER_PARTNER, PartnerCallState, type PartnerEndpointDeps } from './partner-endpoint';

/**
 * The partners' decision endpoints of one gateway (docs/authorization-endpoint.md): the store, the
 * gateway's guard and transport of partner URLs, and the per-process call state (in-flight caps,
 * health). It is what `askPartner` takes.
 */
export type AuthorizationEndpointServices = PartnerEndpointDeps;

/**
 * Builds them with the webhooks' keyring (secrets sealed under WEBHOOKS_SECRET_KEY, rotated with
 * the webhooks' overlap, 24 h by default) and the gateway's one guard of partner URLs (sandbox mode
 * and WEBHOOKS_ALLOW_PRIVATE admit http and private addresses).
 */
export function createAuthorizationEndpointServices(
  settings: Settings,
  db: Database,
  log: Logger,
  webhooks: Pick<WebhookServices, 'keyring'>,
  outbound: Outbound,
  options: { maxInFlightPerPartner?: number } = {}
): AuthorizationEndpointServices {
  return {
    endpoints: new AuthorizationEndpointStore(db, { secretOverlapSeconds: settings.webhooksSecretOverlapSeconds, keyring: webhooks.keyring }),
    outbound,
    calls: new PartnerCallState(options.maxInFlightPerPartner ?? MAX_IN_FLIGHT_PER_PARTNER),
    log,
  };
}
