import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Settings } from '../settings';
import type { WebhookServices } from '../webhooks';
import { AuthorizationEndpointStore } from './endpoint-store';
import { MAX_IN_FLIGHT_PER_PARTNER, PartnerCallState, type PartnerEndpointDeps } from './partner-endpoint';

/**
 * The partners' decision endpoints of one gateway (docs/authorization-endpoint.md): the store, the
 * webhook target guard with this gateway's allowance, and the per-process call state (in-flight
 * caps, health, keep-alive agents). It is what `askPartner` takes.
 */
export type AuthorizationEndpointServices = PartnerEndpointDeps;

/**
 * Builds them on the webhooks' services: the same target guard (sandbox mode and
 * WEBHOOKS_ALLOW_PRIVATE admit http and private addresses) and the same keyring (secrets sealed
 * under WEBHOOKS_SECRET_KEY, rotated with the webhooks' overlap, 24 h by default).
 */
export function createAuthorizationEndpointServices(
  settings: Settings,
  db: Database,
  log: Logger,
  webhooks: Pick<WebhookServices, 'checkTarget' | 'keyring'>,
  options: { maxInFlightPerPartner?: number } = {}
): AuthorizationEndpointServices {
  return {
    endpoints: new AuthorizationEndpointStore(db, { secretOverlapSeconds: settings.webhooksSecretOverlapSeconds, keyring: webhooks.keyring }),
    checkTarget: webhooks.checkTarget,
    calls: new PartnerCallState(options.maxInFlightPerPartner ?? MAX_IN_FLIGHT_PER_PARTNER),
    log,
  };
}
