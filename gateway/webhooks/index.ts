import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Settings } from '../settings';
import { WebhookDispatcher } from './dispatcher';
import { WebhookEndpointStore } from './endpoint-store';
import { secretKeyringFrom, type SecretKeyring } from './secret-box';
import { checkTarget, type Resolver, type TargetCheck } from './target-guard';

/** Webhook endpoints, the target guard and the delivery dispatcher of one gateway (docs/webhooks.md). */
export interface WebhookServices {
  endpoints: WebhookEndpointStore;
  /** Whether a URL may receive webhooks here (sandbox mode and WEBHOOKS_ALLOW_PRIVATE admit http and private addresses). */
  checkTarget(url: string): Promise<TargetCheck>;
  dispatcher: WebhookDispatcher;
  /** The keys endpoint secrets are sealed with (`WEBHOOKS_SECRET_KEY`); undefined: stored in plaintext. */
  keyring: SecretKeyring | undefined;
}

export function createWebhookServices(settings: Settings, db: Database, log: Logger, options: { resolve?: Resolver } = {}): WebhookServices {
  const allowPrivate = settings.webhooksAllowPrivate || settings.sandboxMode;
  const keyring = secretKeyringFrom(settings);
  return {
    keyring,
    endpoints: new WebhookEndpointStore(db, { maxEndpoints: settings.webhooksMaxEndpoints, secretOverlapSeconds: settings.webhooksSecretOverlapSeconds, keyring }),
    checkTarget: (url) => checkTarget(url, { allowPrivate, resolve: options.resolve }),
    dispatcher: new WebhookDispatcher(db, log, {
      allowPrivate,
      timeoutMs: settings.webhooksTimeoutMs,
      retryWindowSeconds: settings.webhooksRetryWindowSeconds,
      retryBaseMs: settings.webhooksRetryBaseMs,
      retryMaxDelayMs: settings.webhooksRetryMaxDelayMs,
      concurrency: settings.webhooksConcurrency,
      endpointConcurrency: settings.webhooksEndpointConcurrency,
      pollMs: settings.webhooksPollMs,
      keyring,
      resolve: options.resolve,
    }),
  };
}
