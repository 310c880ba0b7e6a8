import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Settings } from '../settings';
import { secretKeyringFrom } from '../webhooks/secret-box';
import { checkTarget, type Resolver, type TargetCheck } from '../webhooks/target-guard';
import { AuthorizationEndpointStore } from './endpoint-store';
import { MAX_IN_FLIGHT_PER_PARTNER, PartnerCallState, type PartnerEndpointDeps } from './partner-endpoint';

/**
 * The partners' decision endpoints of one gateway (docs/authorization-endpoint.md): the store, the
 * webhook target guard with this gateway's allowance, and the per-process call state (in-flight
 * caps, health, keep-alive agents). It is what `askPartner` takes.
 */
export interface AuthorizationEndpointServices extends PartnerEndpointDeps {
  endpoints: AuthorizationEndpointStore;
  /** Whether a URL may be a decision endpoint here (the webhooks' guard: sandbox mode and WEBHOOKS_ALLOW_PRIVATE admit http and private addresses). */
  checkTarget(url: string): Promise<TargetCheck>;
  calls: PartnerCallState;
}

export function createAuthorizationEndpointServices(settings: Settings, db: Database, log: Logger, options: { resolve?: Resolver; maxInFlightPerPartner?: number } = {}): AuthorizationEndpointServices {
  const allowPrivate = settings.webhooksAllowPrivate || settings.sandboxMode;
  return {
    // Secrets sealed under WEBHOOKS_SECRET_KEY and rotated with the webhooks' overlap (24 h by default).
    endpoints: new AuthorizationEndpointStore(db, { secretOverlapSeconds: settings.webhooksSecretOverlapSeconds, keyring: secretKeyringFrom(settings) }),
    checkTarget: (url) => checkTarget(url, { allowPrivate, resolve: options.resolve }),
    calls: new PartnerCallState(options.maxInFlightPerPartner ?? MAX_IN_FLIGHT_PER_PARTNER),
    log,
  };
}
