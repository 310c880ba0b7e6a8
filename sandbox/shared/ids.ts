import { randomBytes, randomInt } from 'node:crypto';

/**
 * A 24-hex-character object id in the usual document-store layout:
 * 4 bytes of Unix seconds followed by 8 random bytes, so ids sort roughly by creation time.
 */
export function newObjectId(): string {
  const seconds = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0');
  return seconds + randomBytes(8).toString('hex');
}

/** True when `value` has the shape of an id made by {@link newObjectId}. */
export function isObjectId(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}

/** An opaque issuer card key: `CK` followed by 16 upper-case hex characters. */
export function newCardKey(): string {
  return 'CK' + randomBytes(8).toString('hex').toUpperCase();
}

/** A string of `length` random decimal digits whose first digit is not 0. */
export function newNumericId(length: number): string {
  let digits = String(randomInt(1, 10));
  for (let i = 1; i < length; i += 1) digits += String(randomInt(0, 10));
  return digits;
}
