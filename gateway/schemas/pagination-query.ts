import type { JsonSchema } from './common';

/** Properties of every paginated route's query (spec section 4 and 8). */
export const PAGINATION_PROPERTIES = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' },
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' },
} as const;

/** Query of a paginated route: `page` (≥ 1, default 1), `limit` (1..100, default 20), nothing else. */
export const paginationQuery: JsonSchema = {
  $id: 'https://partner-gateway.dev/schemas/pagination-query.json',
  type: 'object',
  additionalProperties: false,
  properties: PAGINATION_PROPERTIES,
};

/** Query of the transactions route: pagination plus an optional card of the individual. */
export const transactionsQuery: JsonSchema = {
  $id: 'https://partner-gateway.dev/schemas/transactions-query.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    ...PAGINATION_PROPERTIES,
    cardKey: { type: 'string', minLength: 1, maxLength: 64, description: 'Only this card of the individual' },
  },
};
