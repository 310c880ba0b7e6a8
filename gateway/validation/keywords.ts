import crypto from 'node:crypto';

let isoAlpha2: Set<string> | undefined;

/**
 * ISO 3166-1 alpha-2 codes, from i18n-iso-countries. `XK` (Kosovo) is a user-assigned code, not
 * part of ISO 3166-1, and is refused. Loaded at the first check, not at start: the package's data
 * costs about 20 ms of CPU, which a boot (a refused one above all) need not pay.
 */
function isoAlpha2Codes(): Set<string> {
  if (!isoAlpha2) {
    const countries = require('i18n-iso-countries') as typeof import('i18n-iso-countries');
    isoAlpha2 = new Set(Object.keys(countries.getAlpha2Codes()).filter((code) => code !== 'XK'));
  }
  return isoAlpha2;
}

/** True for an upper-case ISO 3166-1 alpha-2 country code. */
export function isCountryCode(value: unknown): boolean {
  return typeof value === 'string' && /^[A-Z]{2}$/.test(value) && isoAlpha2Codes().has(value);
}

/** Today's date as yyyy-mm-dd in UTC. */
export function todayUtc(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** `MM/YYYY` with month 01..12. */
export const EXP_DATE_PATTERN = '^(0[1-9]|1[0-2])/[0-9]{4}$';

/** True when an `MM/YYYY` expiry is this month or later (a card is valid through its expiry month). */
export function expDateNotPast(value: string, now = new Date()): boolean {
  const match = /^(0[1-9]|1[0-2])\/([0-9]{4})$/.exec(value);
  if (!match) return true; // the pattern reports the format error
  const month = Number(match[1]);
  const year = Number(match[2]);
  return year > now.getUTCFullYear() || (year === now.getUTCFullYear() && month >= now.getUTCMonth() + 1);
}

/**
 * True when `value` is base64 of an RSA public key in SPKI DER form of at least 2048 bits: the
 * `securityKey` a partner sends to receive CVV or PAN encrypted (RSA-OAEP-256) under it.
 */
export function isRsaSecurityKey(value: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 !== 0) return false;
  try {
    const key = crypto.createPublicKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048;
  } catch {
    return false;
  }
}
