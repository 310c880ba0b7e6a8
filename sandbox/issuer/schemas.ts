import { EXP_DATE_PATTERN } from '../shared/validation';
import { STATUS_ACTIONS } from './status-codes';

const expDate = { type: 'string', pattern: EXP_DATE_PATTERN } as const;
const shortText = (maxLength: number) => ({ type: 'string', maxLength }) as const;

/** `POST /cards`. */
export const createCardSchema = {
  $id: 'issuer-create-card',
  type: 'object',
  required: ['type', 'clientCode', 'expDate', 'currency', 'productCode'],
  properties: {
    type: { type: 'string', enum: ['virtual', 'physical'] },
    clientCode: { type: 'string', minLength: 1, maxLength: 32 },
    expDate,
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    productCode: { type: 'string', minLength: 1, maxLength: 32 },
    embossedName: shortText(26),
    shippingAddressId: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

/** `POST /cards/{cardKey}/status`. */
export const statusChangeSchema = {
  $id: 'issuer-status-change',
  type: 'object',
  required: ['action'],
  properties: {
    action: { type: 'string', enum: STATUS_ACTIONS },
    expDate,
    reason: shortText(500),
    description: shortText(500),
    cardLocation: shortText(200),
  },
} as const;

/** `PATCH /cards/{cardKey}/emboss-name` (length and spaces are checked separately). */
export const embossNameSchema = {
  $id: 'issuer-emboss-name',
  type: 'object',
  required: ['embossedName'],
  properties: { embossedName: { type: 'string' } },
} as const;

/** `POST /cards/{cardKey}/replace` and `/reissue`. */
export const successorSchema = {
  $id: 'issuer-successor',
  type: 'object',
  required: ['expDate'],
  properties: { expDate, reason: shortText(500), pinMailer: shortText(100) },
} as const;

/** `PUT /cards/{cardKey}/3ds/answer`. */
export const threeDSAnswerSchema = {
  $id: 'issuer-3ds-answer',
  type: 'object',
  required: ['answer'],
  properties: { answer: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

/** `POST /cards/{cardKey}/pin/change`. */
export const pinChangeSchema = {
  $id: 'issuer-pin-change',
  type: 'object',
  required: ['expDate', 'pin'],
  properties: { expDate, pin: { type: 'string', minLength: 1, maxLength: 4096 } },
} as const;

/** `POST /cards/{cardKey}/pin/force-lock`. */
export const forcePinLockSchema = {
  $id: 'issuer-force-pin-lock',
  type: 'object',
  required: ['expDate'],
  properties: { expDate },
} as const;

/** `POST /cards/{cardKey}/authorize`. */
export const authorizeSchema = {
  $id: 'issuer-authorize',
  type: 'object',
  required: ['pin'],
  properties: { pin: { type: 'string', minLength: 1, maxLength: 4096 } },
} as const;

const limitUpdate = {
  type: 'object',
  required: ['name', 'value'],
  properties: { name: { type: 'string', minLength: 1 }, value: { type: 'number' } },
} as const;

/** `PATCH /cards/{cardKey}/limits`. */
export const patchLimitsSchema = {
  $id: 'issuer-patch-limits',
  type: 'array',
  minItems: 1,
  items: limitUpdate,
} as const;

/** `PUT /cards/{cardKey}/limits/{name}`. */
export const putLimitSchema = { $id: 'issuer-put-limit', ...limitUpdate } as const;

/** `PUT /__sandbox/cards/{cardKey}/limits/{name}` (test-only). */
export const setLimitUsedSchema = {
  $id: 'issuer-set-limit-used',
  type: 'object',
  required: ['used'],
  properties: { used: { type: 'number', minimum: 0 } },
} as const;
