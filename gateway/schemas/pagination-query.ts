import type { JsonSchema } from './common';

/** Properties of every paginated route's query (spec section 4 and 8). */
export const PAGINATION_PROPERTIES = {
  page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' },
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' },
} as const;

/** Query of a paginated route: `page` (≥ 1, default 1), `limit` (1..100, default 20), nothing else. */
export const paginationQuery = {
  $id: 'https://partner-gateway.dev/schemas/pagination-query.json',
  type: 'object',
  additionalProperties: false,
  properties: PAGINATION_PROPERTIES,
} as const satisfies JsonSchema;

/** Query of the transactions route: pagination plus an optional card of the individual. */
export const transactionsQuery = {
  $id: 'https://partner-gateway.dev/schemas/transactions-query.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    ...PAGINATION_PROPERTIES,
    cardKey: { type: 'string', minLength: 1, maxLength: 64, description: 'Only this card of the individual' },
  },
} as const satisfies JsonSchema;

/**
 * The most cards `GET /individual/accounts/{id}/cards` answers at once, and its default page size:
 * every realistic individual's active cards in one answer, as the spec's bare array has them, and
 * a cost that does not grow past it (docs/decisions.md, "An individual's cards").
 */
export const INDIVIDUAL_CARDS_PAGE_MAX = 100;

/**
 * Query of an individual's card list: optional `page` and `limit` (1..100, default 100: the whole
 * list for every individual with at most 100 active cards); the answer stays the spec's array, and
 * a `Link` header with `rel="next"` names the next page when there is one.
 */
export const individualCardsQuery = {
  $id: 'https://partner-gateway.dev/schemas/individual-cards-query.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    page: PAGINATION_PROPERTIES.page,
    limit: { ...PAGINATION_PROPERTIES.limit, maximum: INDIVIDUAL_CARDS_PAGE_MAX, default: INDIVIDUAL_CARDS_PAGE_MAX, description: `Page size, 1 to ${INDIVIDUAL_CARDS_PAGE_MAX} (default ${INDIVIDUAL_CARDS_PAGE_MAX})` },
  },
} as const satisfies JsonSchema;
