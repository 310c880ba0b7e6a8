import { FEE_CUSTOMER_TYPES, FEE_PRODUCT_TYPES, LIMIT_NAMES } from '../../contracts/upstreams';
import { CARD_STATUSES } from '../shapes/card';
import { COUNTRY, CURRENCY, EMBOSS_NAME, EXP_DATE, type JsonSchema } from './common';
import { PAGINATION_PROPERTIES } from './pagination-query';
import { DECLINE_REASON, SIMULATED_MERCHANT } from './transactions';

const id = (name: string) => `https://partner-gateway.dev/schemas/${name}.json`;
const REASON = { type: 'string', maxLength: 500, description: 'Free-form reason, kept in the audit log and status history' } as const;
/** base64 of an RSA-OAEP (SHA-256) ciphertext: a PIN block or similar. */
const RSA_CIPHERTEXT = { type: 'string', minLength: 16, maxLength: 2048, pattern: '^[A-Za-z0-9+/]+={0,2}$', description: 'base64 of RSA-OAEP-256 ciphertext' } as const;

/** Card limit names the issuer knows (docs/cards.md; contracts/upstreams.ts). */
export { LIMIT_NAMES };
const LIMIT_NAME = { type: 'string', enum: LIMIT_NAMES } as const;
const LIMIT_VALUE = { type: 'number', minimum: 0, maximum: 1_000_000_000, description: 'Amount in the card currency' } as const;

/** Lock, unlock, activate, temporary lock (spec 4.3). */
export const cardStatusChange = {
  $id: id('card-status-change'),
  type: 'object',
  additionalProperties: false,
  required: ['expDate'],
  properties: { expDate: EXP_DATE, reason: REASON },
} as const satisfies JsonSchema;

/** Restrict (generic, lost, stolen, closed, fraud, mobile-lost): every field optional. */
export const cardRestrict = {
  $id: id('card-restrict'),
  type: 'object',
  additionalProperties: false,
  properties: {
    expDate: EXP_DATE,
    reason: REASON,
    description: { type: 'string', maxLength: 500 },
    cardLocation: { type: 'string', maxLength: 200, description: 'Where the card was last seen' },
  },
} as const satisfies JsonSchema;

/** Change nickname (local only). */
export const cardNickname = {
  $id: id('card-nickname'),
  type: 'object',
  additionalProperties: false,
  required: ['nickname'],
  properties: { nickname: { type: 'string', minLength: 1, maxLength: 64 } },
} as const satisfies JsonSchema;

/** Change emboss name. */
export const cardEmbossName = {
  $id: id('card-emboss-name'),
  type: 'object',
  additionalProperties: false,
  required: ['embossedName'],
  properties: { embossedName: EMBOSS_NAME },
} as const satisfies JsonSchema;

/** Replace and re-issue. */
export const cardReplace = {
  $id: id('card-replace'),
  type: 'object',
  additionalProperties: false,
  required: ['expDate'],
  properties: {
    expDate: { ...EXP_DATE, 'x-exp-date-not-past': true, description: "MM/YYYY, the new card's expiry" },
    reason: REASON,
    pinMailer: { type: 'string', minLength: 1, maxLength: 100, description: 'Postal pin-mailer reference' },
  },
} as const satisfies JsonSchema;

/** Query of the CVV and PAN reads. */
export const cardSecretQuery = {
  $id: id('card-secret-query'),
  type: 'object',
  additionalProperties: false,
  required: ['expDate', 'securityKey'],
  properties: {
    expDate: EXP_DATE,
    securityKey: { type: 'string', maxLength: 4096, 'x-rsa-security-key': true, description: 'base64 of your RSA public key (SPKI DER, ≥ 2048 bits)' },
  },
} as const satisfies JsonSchema;

/** Set the 3-D Secure answer (forwarded, never logged). */
export const threeDsAnswer = {
  $id: id('three-ds-answer'),
  type: 'object',
  additionalProperties: false,
  required: ['answer'],
  properties: { answer: { type: 'string', minLength: 1, maxLength: 200 } },
} as const satisfies JsonSchema;

/** Change the 3-D Secure phone number (local only). */
export const threeDsPhone = {
  $id: id('three-ds-phone'),
  type: 'object',
  additionalProperties: false,
  required: ['phoneNumber'],
  properties: { phoneNumber: { type: 'string', maxLength: 32, pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, at most 32 characters' } },
} as const satisfies JsonSchema;

/** Change PIN. */
export const pinChange = {
  $id: id('pin-change'),
  type: 'object',
  additionalProperties: false,
  required: ['expDate', 'pin'],
  properties: { expDate: EXP_DATE, pin: RSA_CIPHERTEXT },
} as const satisfies JsonSchema;

/** Force PIN lock. */
export const pinForceLock = {
  $id: id('pin-force-lock'),
  type: 'object',
  additionalProperties: false,
  required: ['expDate'],
  properties: { expDate: EXP_DATE },
} as const satisfies JsonSchema;

/** Authorize cardholder (PIN-less action). */
export const cardAuthorize = {
  $id: id('card-authorize'),
  type: 'object',
  additionalProperties: false,
  required: ['pin'],
  properties: { pin: RSA_CIPHERTEXT },
} as const satisfies JsonSchema;

/**
 * Operations that take no field (reset PIN tries, resend an event, rotate a secret, a simulated
 * expiry): an empty object, which the request carries like any other body.
 */
export const emptyBody = {
  $id: id('empty-body'),
  type: 'object',
  description: 'An empty object: the operation takes no field, but the request carries this body (without one: 400 `body_required`)',
  additionalProperties: false,
  properties: {},
} as const satisfies JsonSchema;

/** Patch several card limits at once. */
export const limitsPatch = {
  $id: id('limits-patch'),
  type: 'array',
  minItems: 1,
  maxItems: LIMIT_NAMES.length,
  'x-unique-names': true,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'value'],
    properties: { name: LIMIT_NAME, value: LIMIT_VALUE },
  },
} as const satisfies JsonSchema;

/** Set one card limit. */
export const limitSet = {
  $id: id('limit-set'),
  type: 'object',
  additionalProperties: false,
  required: ['name', 'value'],
  properties: { name: LIMIT_NAME, value: LIMIT_VALUE },
} as const satisfies JsonSchema;

/** Path parameters of the single-limit routes. */
export const limitParams = {
  $id: id('limit-params'),
  type: 'object',
  required: ['limitName'],
  properties: { id: { type: 'string' }, limitName: LIMIT_NAME },
} as const satisfies JsonSchema;

/** Query of the delivery-method lookup. */
export const deliveryMethodsQuery = {
  $id: id('delivery-methods-query'),
  type: 'object',
  additionalProperties: false,
  required: ['country'],
  properties: { country: COUNTRY },
} as const satisfies JsonSchema;

/** CustomerType values of the fee checks (spec 4.4.1): the processor's (contracts/upstreams.ts). */
export const CUSTOMER_TYPES = FEE_CUSTOMER_TYPES;
/** ProductType values of the fee checks (spec 4.4.1): the processor's (contracts/upstreams.ts). */
export const PRODUCT_TYPES = FEE_PRODUCT_TYPES;

/** The one body of both fee checks (spec 4.4.1): at least one of cardKey, clientId, iban. */
export const feeCheck = {
  $id: id('fee-check'),
  type: 'object',
  additionalProperties: false,
  required: ['CustomerType', 'ProductType'],
  properties: {
    CustomerType: { type: 'string', enum: CUSTOMER_TYPES },
    ProductType: { type: 'string', enum: PRODUCT_TYPES },
    cardKey: { type: 'string', minLength: 1, maxLength: 64 },
    clientId: { type: 'string', minLength: 1, maxLength: 64 },
    iban: { type: 'string', pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$', description: 'IBAN without spaces' },
  },
  anyOf: [{ required: ['cardKey'] }, { required: ['clientId'] }, { required: ['iban'] }],
} as const satisfies JsonSchema;

/** Query of the partner-wide card list. */
export const cardsListQuery = {
  $id: id('cards-list-query'),
  type: 'object',
  additionalProperties: false,
  properties: {
    ...PAGINATION_PROPERTIES,
    status: { type: 'string', enum: CARD_STATUSES },
    type: { type: 'string', enum: ['virtual', 'physical'] },
    search: { type: 'string', minLength: 3, maxLength: 64, description: 'Case-insensitive, on cardMask, nickname and embossedName; at least 3 characters (docs/card-search.md)' },
  },
} as const satisfies JsonSchema;

/** Sandbox mode only: a transaction the processing sandbox records on the card (docs/sandbox.md). */
export const simulateTransaction = {
  $id: id('simulate-transaction'),
  type: 'object',
  additionalProperties: false,
  required: ['amount', 'currency'],
  properties: {
    amount: { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000, description: 'Amount in `currency`' },
    currency: CURRENCY,
    type: { type: 'string', enum: ['authorization', 'clearing', 'decline'], description: 'authorization (PENDING, the default), clearing (SETTLED) or decline (DECLINED)' },
    merchant: SIMULATED_MERCHANT,
    declineReason: DECLINE_REASON,
  },
} as const satisfies JsonSchema;

/** Sandbox mode only: the status the issuer sandbox sets on its own (docs/sandbox.md). */
export const simulateIssuerStatus = {
  $id: id('simulate-issuer-status'),
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { type: 'string', enum: CARD_STATUSES }, reason: REASON },
} as const satisfies JsonSchema;
