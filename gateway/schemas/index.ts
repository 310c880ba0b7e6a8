import { cardIssue } from './card-issue';
import type { JsonSchema } from './common';
import { individualCreate } from './individual-create';
import { paginationQuery, transactionsQuery } from './pagination-query';

/**
 * Every request schema a pipeline's `validate` policy can name, by name. One source of truth: the
 * same objects feed validation (and the OpenAPI document of a later issue).
 */
export const SCHEMAS = {
  'pagination-query': paginationQuery,
  'transactions-query': transactionsQuery,
  'individual-create': individualCreate,
  'card-issue': cardIssue,
} satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;
