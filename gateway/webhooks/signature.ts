import crypto from 'node:crypto';

/** A new endpoint secret: `whsec_` and the base64url of 32 random bytes (43 characters). */
export function newSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64url')}`;
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
