import { cardStatusOf } from '../../gateway/cards/card-status';
import type { Card } from '../../gateway/cards/card-store';
import type { ResponseTransformName } from './schema';
import { isMaskedCardNumber, looksLikeRsaCiphertext, memberHoldsCardNumber } from '../../gateway/upstreams/card-data';

/**
 * The response transforms of the proxy policy: each turns an upstream's 2xx JSON answer into the
 * partner's answer, picking only the documented fields (spec 2.3-2.6, 4.3, 4.4). Nothing else of
 * the upstream body reaches the partner: a PAN or CVV the issuer adds to a card can never leak.
 *
 * A transform throws {@link UnusableAnswerError} when the answer lacks a documented field or has
 * the wrong type; the policy answers that as 502 `upstream_error` (kind `malformed`). Every value a
 * transform takes from the answer is refused the same way when it holds a card number (a `cardMask`
 * that is not masked, a PAN in a name or a fee), and so is a CVV/PAN reveal that is not RSA-OAEP
 * ciphertext of the securityKey's size (docs/cards.md, "Card numbers from upstreams").
 */

/** The upstream answered 2xx with JSON that does not have the documented shape. */
export class UnusableAnswerError extends Error {
  constructor(
    reason: string,
    /** The field would have revealed card data in the clear (a plaintext CVV or PAN). */
    readonly cardData = false,
  ) {
    // The reason names a field, never a value: values may be card data.
    super(`unusable upstream answer: ${reason}`);
    this.name = 'UnusableAnswerError';
  }
}

/** What a transform may use besides the upstream body. */
export interface TransformContext {
  /** The card as stored in our PostgreSQL (`card-details` only; the policy loads it first). */
  storedCard?: Card;
  /** Bytes of the RSA modulus of the partner's securityKey (`cvv`, `card-number`): the ciphertext's exact size. */
  revealKeyBytes?: number;
}

/** One named transform. */
export interface ResponseTransform {
  /** True when the policy must load the stored card (`{id}` path parameter) before applying it. */
  needsStoredCard: boolean;
  /** True when the transform checks a ciphertext against the size of the `securityKey` query parameter. */
  needsSecurityKey?: boolean;
  apply(answer: unknown, context: TransformContext): unknown;
}

type Json = Record<string, unknown>;

function objectOf(value: unknown, what: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UnusableAnswerError(`${what} is not an object`);
  return value as Json;
}

/** A value taken from the answer is refused when it holds a card number (docs/cards.md). */
function withoutCardNumber<T extends string | number>(field: string, value: T): T {
  if (memberHoldsCardNumber(field, value)) throw new UnusableAnswerError(`${field} holds a card number`, true);
  return value;
}

function stringOf(source: Json, field: string): string {
  const value = source[field];
  if (typeof value !== 'string') throw new UnusableAnswerError(`${field} is not a string`);
  return withoutCardNumber(field, value);
}

/**
 * A reveal field: base64 of an RSA-OAEP ciphertext of exactly the size of the partner's key
 * (docs/cards.md). Anything else (a plaintext CVV or PAN, a short or odd string) is unusable.
 */
function ciphertextOf(source: Json, field: string, context: TransformContext): string {
  const value = source[field];
  if (typeof value !== 'string') throw new UnusableAnswerError(`${field} is not a string`);
  if (!looksLikeRsaCiphertext(value, context.revealKeyBytes)) throw new UnusableAnswerError(`${field} is not an RSA-OAEP ciphertext under the securityKey`, true);
  return value;
}

function numberOf(source: Json, field: string): number {
  const value = source[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new UnusableAnswerError(`${field} is not a number`);
  return withoutCardNumber(field, value);
}

function booleanOf(source: Json, field: string): boolean {
  const value = source[field];
  if (typeof value !== 'boolean') throw new UnusableAnswerError(`${field} is not a boolean`);
  return value;
}

function arrayOf(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new UnusableAnswerError(`${what} is not an array`);
  return value;
}

/** An issuer status code and the CardStatus it means; an unknown code is unusable (spec 3.1). */
function statusOf(source: Json): { status: NonNullable<ReturnType<typeof cardStatusOf>>; statusCode: string } {
  const statusCode = stringOf(source, 'statusCode');
  const status = cardStatusOf(statusCode);
  if (!status) throw new UnusableAnswerError('statusCode is not a known issuer status code');
  return { status, statusCode };
}

/** Card status result (spec 2.4) from the issuer's `{ cardKey, statusCode }`. */
export function cardStatusResult(answer: unknown): { cardKey: string; status: string; statusCode: string } {
  const body = objectOf(answer, 'answer');
  const { status, statusCode } = statusOf(body);
  return { cardKey: stringOf(body, 'cardKey'), status, statusCode };
}

/**
 * The full card (spec 2.3) built from OUR stored record, with `status`/`statusCode` (and
 * `embossedName`, `expDate`, `cardMask` when the issuer sent them as strings) from the issuer's
 * fresh answer. Every other issuer field is ignored.
 */
export function cardDetails(answer: unknown, storedCard: Card): Card {
  const body = objectOf(answer, 'answer');
  const { status, statusCode } = statusOf(body);
  const card: Card = { ...storedCard, status, statusCode };
  if (typeof body.cardMask === 'string') {
    if (!isMaskedCardNumber(body.cardMask)) throw new UnusableAnswerError('cardMask is not a masked card number', true);
    card.cardMask = body.cardMask;
  }
  if (typeof body.expDate === 'string') card.expDate = withoutCardNumber('expDate', body.expDate);
  // The issuer answers "" for "no emboss name"; we store and answer null (as at issuance).
  if (typeof body.embossedName === 'string') card.embossedName = withoutCardNumber('embossedName', body.embossedName) || null;
  return card;
}

/** Card limit (spec 2.5). */
export function cardLimit(answer: unknown): { name: string; value: number; currency: string; used: number; available: number } {
  const body = objectOf(answer, 'limit');
  return {
    name: stringOf(body, 'name'),
    value: numberOf(body, 'value'),
    currency: stringOf(body, 'currency'),
    used: numberOf(body, 'used'),
    available: numberOf(body, 'available'),
  };
}

/** Fee result (spec 2.6). */
export function feeResult(answer: unknown): { OperationType: string; CustomerType: string; ProductType: string; fee: number; currency: string } {
  const body = objectOf(answer, 'answer');
  return {
    OperationType: stringOf(body, 'OperationType'),
    CustomerType: stringOf(body, 'CustomerType'),
    ProductType: stringOf(body, 'ProductType'),
    fee: numberOf(body, 'fee'),
    currency: stringOf(body, 'currency'),
  };
}

/** One delivery method (docs/upstreams.md 6.4). */
function deliveryMethod(value: unknown): Json {
  const method = objectOf(value, 'delivery method');
  return {
    id: stringOf(method, 'id'),
    type: stringOf(method, 'type'),
    carrier: stringOf(method, 'carrier'),
    name: stringOf(method, 'name'),
    estimatedDays: numberOf(method, 'estimatedDays'),
    fee: numberOf(method, 'fee'),
    currency: stringOf(method, 'currency'),
  };
}

/** Delivery methods wrapped in `data` (spec 4.4). */
export function deliveryMethods(answer: unknown): { data: { success: boolean; country: string; deliveryMethods: Json[] } } {
  const body = objectOf(answer, 'answer');
  return {
    data: {
      success: booleanOf(body, 'success'),
      country: stringOf(body, 'country'),
      deliveryMethods: arrayOf(body.deliveryMethods, 'deliveryMethods').map(deliveryMethod),
    },
  };
}

const simple = (apply: (answer: unknown) => unknown): ResponseTransform => ({ needsStoredCard: false, apply: (answer) => apply(answer) });

/** Every named transform of `policies/proxy/schema.ts` (`response:` in YAML). */
export const RESPONSE_TRANSFORM_TABLE: Readonly<Record<ResponseTransformName, ResponseTransform>> = {
  'card-status': simple(cardStatusResult),
  'card-details': {
    needsStoredCard: true,
    apply(answer, context) {
      if (!context.storedCard) throw new Error('card-details needs the stored card');
      return cardDetails(answer, context.storedCard);
    },
  },
  // CVV and PAN are ciphertexts under the partner's securityKey: forwarded untouched, never logged,
  // and refused unless they look like one (a plaintext reveal would hand the partner the secret).
  cvv: { needsStoredCard: false, needsSecurityKey: true, apply: (answer, context) => ({ cvv: ciphertextOf(objectOf(answer, 'answer'), 'cvv', context) }) },
  'card-number': {
    needsStoredCard: false,
    needsSecurityKey: true,
    apply: (answer, context) => ({ cardNumber: ciphertextOf(objectOf(answer, 'answer'), 'cardNumber', context) }),
  },
  limits: simple((answer) => arrayOf(answer, 'answer').map(cardLimit)),
  limit: simple(cardLimit),
  'limit-available': simple((answer) => ({ available: numberOf(objectOf(answer, 'answer'), 'available') })),
  'pin-encryption-key': simple((answer) => {
    const body = objectOf(answer, 'answer');
    return { keyId: stringOf(body, 'keyId'), algorithm: stringOf(body, 'algorithm'), publicKey: stringOf(body, 'publicKey') };
  }),
  fee: simple(feeResult),
  'delivery-methods': simple(deliveryMethods),
};

/**
 * Applies the named transform.
 *
 * @example applyTransform('limit-available', { available: 12.5, extra: 1 }, {}) // { available: 12.5 }
 */
export function applyTransform(name: ResponseTransformName, answer: unknown, context: TransformContext): unknown {
  return RESPONSE_TRANSFORM_TABLE[name].apply(answer, context);
}
