import { STATUS_CODE_VALUES } from '../issuer/status-codes';
import { CUSTOMER_TYPES, OPERATION_TYPES, PRODUCT_TYPES } from './fees';

const nonEmpty = { type: 'string', minLength: 1, maxLength: 64 } as const;

/** `POST /fees` (the rule "at least one of cardKey, clientId, iban" is checked in the route). */
export const feeRequestSchema = {
  $id: 'processing-fee-request',
  type: 'object',
  required: ['OperationType', 'CustomerType', 'ProductType'],
  properties: {
    OperationType: { type: 'string', enum: OPERATION_TYPES },
    CustomerType: { type: 'string', enum: CUSTOMER_TYPES },
    ProductType: { type: 'string', enum: PRODUCT_TYPES },
    cardKey: nonEmpty,
    clientId: nonEmpty,
    iban: { type: 'string', pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$' },
  },
} as const;

/** `POST /cards/status-update`. */
export const statusUpdateSchema = {
  $id: 'processing-status-update',
  type: 'object',
  required: ['cardKey', 'statusCode'],
  properties: {
    cardKey: nonEmpty,
    statusCode: { type: 'string', enum: STATUS_CODE_VALUES },
    reason: { type: 'string', maxLength: 500 },
  },
} as const;

/** `POST /webhooks/card-created`. */
export const cardCreatedSchema = {
  $id: 'processing-card-created',
  type: 'object',
  required: ['event', 'cardKey', 'cardMask', 'type', 'ownerType', 'ownerId', 'partnerId', 'occurredAt'],
  properties: {
    event: { type: 'string', const: 'card_created' },
    cardKey: nonEmpty,
    previousCardKey: nonEmpty,
    cardMask: { type: 'string', minLength: 1, maxLength: 32 },
    type: { type: 'string', enum: ['virtual', 'physical'] },
    ownerType: { type: 'string', enum: ['individual', 'b2b'] },
    ownerId: nonEmpty,
    partnerId: nonEmpty,
    occurredAt: { type: 'string', format: 'date-time' },
    accountId: nonEmpty,
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  },
} as const;

/** `POST /__sandbox/cards` (test-only): makes a card known without a webhook. */
export const registerCardSchema = {
  $id: 'processing-register-card',
  type: 'object',
  required: ['cardKey'],
  properties: {
    cardKey: nonEmpty,
    accountId: nonEmpty,
    ownerType: { type: 'string', enum: ['individual', 'b2b'] },
    ownerId: nonEmpty,
    partnerId: nonEmpty,
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    type: { type: 'string', enum: ['virtual', 'physical'] },
    cardMask: { type: 'string', minLength: 1, maxLength: 32 },
    historyEnd: { type: 'string', format: 'date-time' },
  },
} as const;
