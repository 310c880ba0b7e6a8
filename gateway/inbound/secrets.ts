import crypto from 'node:crypto';
import type { Settings } from '../settings';

/** The secrets each upstream signs its notifications with; an upstream without any has no route (404). */
export type NotifySecrets = Record<'issuer' | 'processing', readonly string[]>;

/**
 * The secrets the upstreams sign their notifications with: the configured ones, or in sandbox mode a
 * random one per boot and upstream (handed to the sandboxes), since nothing outside this process
 * needs to know it. The cluster primary generates them once and passes them to its workers.
 */
export function notificationSecrets(settings: Settings): NotifySecrets {
  const generated = () => (settings.sandboxMode ? [crypto.randomBytes(32).toString('base64url')] : []);
  return {
    issuer: settings.issuerNotifySecrets.length ? settings.issuerNotifySecrets : generated(),
    processing: settings.processingNotifySecrets.length ? settings.processingNotifySecrets : generated(),
  };
}

