import crypto from 'node:crypto';

/**
 * The signatures of everything the gateway POSTs to a partner (webhook deliveries, decision
 * requests: docs/webhooks.md, "Signatures"), two side by side, made with the same secrets:
 * - `Partner-Gateway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` of `"<t>.<raw body>"`,
 *   keyed with the whole `whsec_…` string (UTF-8);
 * - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
 *   `webhook-signature: v1,<base64 HMAC-SHA256>` of `"<id>.<timestamp>.<raw body>"`, keyed with the
 *   32 bytes the secret encodes after `whsec_` ({@link standardKey}).
 * Each carries one signature per live secret, newest first (two during a rotation's overlap).
 */

/** The prefix of every endpoint secret. */
const PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64url of 32 random bytes (43 characters). */
export function newSecret(): string {
  return `${PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
}

/** The hex HMAC-SHA256 of `"<t>.<raw body>"`, keyed with the whole `whsec_…` string (UTF-8). */
export function signPayload(secret: string, t: number, body: string): string {
  return crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

/**
 * The `Partner-Gateway-Signature` header: `t=<unix seconds>,v1=<hex>`, one `v1=` per live secret,
 * newest first (two during a rotation's overlap, so a receiver holding either secret verifies).
 */
export function signatureHeader(secrets: readonly string[], t: number, body: string): string {
  return [`t=${t}`, ...secrets.map((secret) => `v1=${signPayload(secret, t, body)}`)].join(',');
}

/**
 * The Standard Webhooks key of a secret: the bytes its text after `whsec_` encodes (base64url, 32
 * bytes for every secret {@link newSecret} makes; Node's base64 decoder reads both alphabets). A
 * Standard Webhooks library given `whsec_` and the standard base64 of these bytes, or the bytes
 * themselves as a raw key, verifies (docs/webhooks.md, "Standard Webhooks").
 */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** The base64 HMAC-SHA256 of `"<id>.<timestamp>.<raw body>"` keyed with {@link standardKey}. */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return crypto.createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/**
 * Every signature header of one message: `Partner-Gateway-Signature` and the three of Standard
 * Webhooks (`webhook-signature`: one `v1,<sig>` per live secret, newest first, space-separated).
 * `id` is the message's id, the same on every retry of it; `t` is now, in unix seconds.
 *
 * @example signedHeaders(['whsec_…'], 'evt_…', 1767225600, body)
 * // { 'Partner-Gateway-Signature': 't=1767225600,v1=…', 'webhook-id': 'evt_…', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,…' }
 */
export function signedHeaders(secrets: readonly string[], id: string, t: number, body: string): Record<string, string> {
  return {
    'Partner-Gateway-Signature': signatureHeader(secrets, t, body),
    'webhook-id': id,
    'webhook-timestamp': String(t),
    'webhook-signature': secrets.map((secret) => `v1,${standardSignature(secret, id, t, body)}`).join(' '),
  };
}

/**
 * Whether `header` signs `body` with one of `secrets`, at most `toleranceSeconds` from `nowSeconds`
 * (a replayed old delivery is refused). Compared in constant time.
 */
export function verifySignature(header: string, body: string, secrets: readonly string[], toleranceSeconds: number, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const parts = header.split(',').map((part) => part.trim());
  const t = Number(parts.find((part) => part.startsWith('t='))?.slice(2));
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const given = parts.filter((part) => part.startsWith('v1=')).map((part) => Buffer.from(part.slice(3), 'hex'));
  return secrets.some((secret) => {
    const expected = Buffer.from(signPayload(secret, t, body), 'hex');
    return given.some((value) => value.length === expected.length && crypto.timingSafeEqual(value, expected));
  });
}
