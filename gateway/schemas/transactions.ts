import { CARD_KEY, OBJECT_ID } from '../ids';
import { TRANSACTION_CURSOR_PATTERN } from '../transactions/list-cursor';
import { RFC3339 } from '../transactions/validate';
import { DECLINE_REASON_CODES, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../upstreams/partner-transaction';
import { COUNTRY, CURRENCY, type JsonSchema } from './common';

const id = (name: string) => `https://partner-gateway.dev/schemas/${name}.json`;
const AMOUNT = { type: 'number', exclusiveMinimum: 0, maximum: 1_000_000_000, 'x-max-decimals': 2, description: 'In the card currency, at most 2 decimals' } as const;

/** Query of `GET /transactions` (docs/transactions.md). */
export const transactionsSearchQuery = {
  $id: id('transactions-search-query'),
  type: 'object',
  additionalProperties: false,
  properties: {
    cardKey: { type: 'string', pattern: CARD_KEY.source, description: 'Only this card\'s transactions' },
    individualId: { type: 'string', pattern: OBJECT_ID.source, description: 'Only the transactions of this individual\'s cards' },
    status: { type: 'string', enum: TRANSACTION_STATUSES, description: 'Only transactions in this status' },
    type: { type: 'string', enum: TRANSACTION_TYPES, description: 'Only transactions of this type' },
    from: { type: 'string', format: 'date-time', pattern: RFC3339.source, description: 'Only transactions created at or after this instant (RFC 3339, with `Z` or `±hh:mm`)' },
    to: { type: 'string', format: 'date-time', pattern: RFC3339.source, description: 'Only transactions created before this instant (RFC 3339, with `Z` or `±hh:mm`); not before `from`' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' },
    cursor: { type: 'string', pattern: TRANSACTION_CURSOR_PATTERN, description: 'The `nextCursor` of the previous page, with the same filters' },
  },
} as const satisfies JsonSchema;

/** A simulated merchant: each field optional, the sandbox's defaults fill the rest. */
export const SIMULATED_MERCHANT = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    mcc: { type: 'string', pattern: '^[0-9]{4}$', description: 'Merchant category code' },
    city: { type: 'string', minLength: 1, maxLength: 100 },
    country: COUNTRY,
  },
} as const;

/** Sandbox mode only: an authorization the processing sandbox makes on the card (docs/sandbox.md). */
export const simulateAuthorization = {
  $id: id('simulate-authorization'),
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: {
    amount: AMOUNT,
    currency: { ...CURRENCY, description: 'The card currency when left out' },
    type: { type: 'string', enum: ['PURCHASE', 'WITHDRAWAL'], description: 'PURCHASE (the default) or WITHDRAWAL' },
    merchant: SIMULATED_MERCHANT,
    authorizationId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: "The processor's id of the authorization; the same one again is its retry: the same transaction" },
  },
} as const satisfies JsonSchema;

/** Sandbox mode only: a clearing, reversal or refund of a transaction, in full (no amount) or for `amount`. */
export const simulateTransactionStep = {
  $id: id('simulate-transaction-step'),
  type: 'object',
  additionalProperties: false,
  properties: { amount: { ...AMOUNT, description: 'Less than the whole, in the transaction currency; the whole when left out' } },
} as const satisfies JsonSchema;

/** A decline's reason, as the shortcut simulation takes it. */
export const DECLINE_REASON = { type: 'string', enum: DECLINE_REASON_CODES, description: 'For a decline; default do_not_honor' } as const;
