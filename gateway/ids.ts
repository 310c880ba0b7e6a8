import crypto from 'node:crypto';

/** Random bytes in each new object id: 64 bits from the CSPRNG (docs/decisions.md, "Object ids"). */
export const OBJECT_ID_RANDOM_BYTES = 8;

/**
 * A new 24-hex-char object id (the shape partners see as `_id`): 4 bytes of seconds since the
 * epoch, then 8 bytes from `crypto.randomBytes` (64 bits, drawn anew for every id). The time prefix
 * keeps ids roughly in creation order; the random part makes an id unguessable from any other id
 * (there is no per-process part and no counter to step through).
 */
export function newObjectId(now = Date.now()): string {
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0').slice(-8);
  return `${seconds}${crypto.randomBytes(OBJECT_ID_RANDOM_BYTES).toString('hex')}`;
}

/** A 24-hex-char object id (individuals, partners, tenants). */
export const OBJECT_ID = /^[0-9a-f]{24}$/;
/** A partner event's id: `evt_` and an object id (gateway/outbox/partner-events.ts). */
export const EVENT_ID = /^evt_[0-9a-f]{24}$/;
/** A webhook endpoint id: `we_` and a 24-hex object id. */
export const WEBHOOK_ENDPOINT_ID = /^we_[0-9a-f]{24}$/;
/** A transaction id as the card processing system makes them: opaque, 1 to 64 of A-Z a-z 0-9 _ -. */
export const TRANSACTION_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A cardKey as the issuer makes them: opaque, 1 to 64 of A-Z a-z 0-9 _ -. */
export const CARD_KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** True for a well-formed 24-hex-char object id (lower case). */
export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID.test(value);
}

/** A network token's id as partners see it (`_id`): `tok_` and a 24-hex object id (docs/tokens.md). */
export const TOKEN_ID = /^tok_[0-9a-f]{24}$/;

/** A new token id: drawn by the tokenization's first claim (or a token the processor made alone). */
export function newTokenId(now = Date.now()): string {
  return `tok_${newObjectId(now)}`;
}
