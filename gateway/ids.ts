import crypto from 'node:crypto';

let counter = crypto.randomInt(0, 0xffffff);
const processRandom = crypto.randomBytes(5).toString('hex');

/**
 * A new 24-hex-char object id (the shape partners see as `_id`): 4 bytes of seconds since the
 * epoch, 5 random bytes per process and a 3-byte counter, like a MongoDB ObjectId, so ids sort
 * roughly by creation time.
 */
export function newObjectId(now = Date.now()): string {
  counter = (counter + 1) % 0x1000000;
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0').slice(-8);
  return `${seconds}${processRandom}${counter.toString(16).padStart(6, '0')}`;
}

/** A 24-hex-char object id (individuals, partners, tenants). */
export const OBJECT_ID = /^[0-9a-f]{24}$/;
/** A cardKey as the issuer makes them: opaque, 1 to 64 of A-Z a-z 0-9 _ -. */
export const CARD_KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** True for a well-formed 24-hex-char object id (lower case). */
export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID.test(value);
}
