import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Outbound } from '../outbound';
import type { Settings } from '../settings';
import { WebhookDispatcher } from './dispatcher';
import { WebhookEndpointStore } from './endpoint-store';
import { secretKeyringFrom, type SecretKeyring } from '../outbound/secret-box';

/** Webhook endpoints and the delivery dispatcher of one gateway (docs/webhooks.md); their URLs are guarded by the gateway's {@link Outbound}. */
export interface WebhookServices {
  endpoints: WebhookEndpointStore;
  dispatcher: WebhookDispatcher;
  /** The keys endpoint secrets are sealed with (`WEBHOOKS_SECRET_KEY`); undefined: stored in plaintext. */
  keyring: SecretKeyring | undefined;
}

/** Builds them; the dispatcher checks each URL with `outbound` before its deliveries and sends through its agents. */
export function createWebhookServices(settings: Settings, db: Database, log: Logger, outbound: Outbound): WebhookServices {
  const keyring = secretKeyringFrom(settings);
  return {
    keyring,
    endpoints: new WebhookEndpointStore(db, { maxEndpoints: settings.webhooksMaxEndpoints, secretOverlapSeconds: settings.webhooksSecretOverlapSeconds, keyring }),
    dispatcher: new WebhookDispatcher(db, log, {
      outbound,
      timeoutMs: settings.webhooksTimeoutMs,
      retryWindowSeconds: settings.webhooksRetryWindowSeconds,
      retryBaseMs: settings.webhooksRetryBaseMs,
      retryMaxDelayMs: settings.webhooksRetryMaxDelayMs,
      concurrency: settings.webhooksConcurrency,
      endpointConcurrency: settings.webhooksEndpointConcurrency,
      pollMs: settings.webhooksPollMs,
      keyring,
    }),
  };
}
