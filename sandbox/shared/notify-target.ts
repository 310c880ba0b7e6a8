import type { Router } from 'express';
import type { Notifier } from './notifier';
import { upstreamError } from './sandbox-error';

/** Where the issuer and processing sandboxes send their notifications: the gateway's listener and each one's secret. */
export interface SandboxNotifyTarget {
  url: string;
  issuerSecret?: string;
  processingSecret?: string;
}

/** Longest notification listener URL accepted. */
const MAX_URL_LENGTH = 2048;

/**
 * The base URL of a gateway's notification listener, normalised (no trailing slash), or undefined
 * when it is not an absolute `http`/`https` URL without credentials, query or fragment: the
 * notifier appends `/upstream-notifications/<upstream>` to it, and a URL holding a password would
 * reach the logs, which name the target.
 */
export function checkNotifyUrl(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URL_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || raw.includes('?') || raw.includes('#')) return undefined;
  return url.toString().replace(/\/+$/, '');
}

/**
 * Whether `secret` is one the gateway can hold as `ISSUER_NOTIFY_SECRET` / `PROCESSING_NOTIFY_SECRET`:
 * 32 to 512 characters, no comma (the gateway splits its variable on commas) and no surrounding
 * white space (it trims).
 */
export function isNotifySecret(secret: unknown): secret is string {
  return typeof secret === 'string' && secret.length >= 32 && secret.length <= 512 && !secret.includes(',') && secret.trim() === secret;
}

/**
 * The notify target of `npm run sandbox` from its environment: `GATEWAY_NOTIFY_URL` and the secrets
 * under the names the gateway reads (`ISSUER_NOTIFY_SECRET`, `PROCESSING_NOTIFY_SECRET`; of two
 * comma-separated ones, the rotation form, the first signs). Undefined without `GATEWAY_NOTIFY_URL`
 * (secrets alone are ignored: they may be the gateway's own environment). Throws, naming the
 * variable and never its value, on a bad URL, a bad secret, or a URL without any secret.
 */
export function notifyTargetFromEnv(env: NodeJS.ProcessEnv): SandboxNotifyTarget | undefined {
  const rawUrl = env.GATEWAY_NOTIFY_URL;
  if (rawUrl === undefined || rawUrl === '') return undefined;
  const url = checkNotifyUrl(rawUrl);
  if (!url) throw new Error('GATEWAY_NOTIFY_URL must be an http or https URL without credentials, query or fragment (the gateway\'s notification listener, e.g. http://127.0.0.1:9877)');
  const secretOf = (name: 'ISSUER_NOTIFY_SECRET' | 'PROCESSING_NOTIFY_SECRET'): string | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const secrets = raw.split(',').map((s) => s.trim());
    // The value is a secret: never echoed.
    if (secrets.length > 2 || !secrets.every(isNotifySecret)) throw new Error(`${name} must be one secret of 32 to 512 characters, or two comma-separated during a rotation`);
    return secrets[0];
  };
  const issuerSecret = secretOf('ISSUER_NOTIFY_SECRET');
  const processingSecret = secretOf('PROCESSING_NOTIFY_SECRET');
  if (!issuerSecret && !processingSecret) throw new Error('GATEWAY_NOTIFY_URL is set but neither ISSUER_NOTIFY_SECRET nor PROCESSING_NOTIFY_SECRET is: nothing could be signed');
  return { url, ...(issuerSecret ? { issuerSecret } : {}), ...(processingSecret ? { processingSecret } : {}) };
}

/**
 * `GET`, `PUT {url, secret}` and `DELETE /__sandbox/notify-target` on a notifying sandbox (issuer,
 * processing): where its notifications go, changed at run time. The secret is never answered, logged
 * or recorded (control routes are not in the request log); a refusal names the field, not its value.
 */
export function mountNotifyTargetRoutes(router: Router, sandbox: 'issuer' | 'processing', notifier: Notifier): void {
  const view = () => ({ sandbox, url: notifier.targetUrl, backlog: notifier.backlog });
  router.get('/notify-target', (_req, res) => {
    res.json(view());
  });
  router.put('/notify-target', (req, res) => {
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw upstreamError('VALIDATION_ERROR', 'Invalid request: the body must be {url, secret}', [{ path: '/', message: 'must be an object' }]);
    }
    const { url: rawUrl, secret, ...rest } = body as Record<string, unknown>;
    const details = [];
    const url = checkNotifyUrl(rawUrl);
    if (!url) details.push({ path: '/url', message: `must be an http or https URL without credentials, query or fragment, at most ${MAX_URL_LENGTH} characters` });
    if (!isNotifySecret(secret)) details.push({ path: '/secret', message: 'must be 32 to 512 characters, without a comma or surrounding white space' });
    for (const name of Object.keys(rest)) details.push({ path: `/${name}`, message: 'is not allowed' });
    if (details.length > 0) throw upstreamError('VALIDATION_ERROR', `Invalid request: ${details[0].path} ${details[0].message}`, details);
    notifier.setTarget({ url: url!, secret: secret as string });
    notifier.report({ msg: 'notify target set', url, backlog: notifier.backlog });
    res.json(view());
  });
  router.delete('/notify-target', (_req, res) => {
    notifier.setTarget(undefined);
    notifier.report({ msg: 'notify target removed', backlog: notifier.backlog });
    res.status(204).end();
  });
}
