import type { SchemaName, Validated } from '../schemas';

/**
 * The TypeScript type of the query each query schema of gateway/schemas validates, as the handlers
 * read it: the handler context's `query` of an entry with that query schema
 * (gateway/handlers/context.ts). Derived from the schema itself (`Validated`: a property with a
 * `default` is present, an integer is a number, as the query validator coerces and fills it in). A
 * schema not listed gives `unknown` (no handler reads it: those routes end in the proxy). A key
 * that is not a schema's name does not compile (`QuerySchemaName`).
 */
export interface RequestQueries {
  'pagination-query': Validated<'pagination-query'>;
  'individual-cards-query': Validated<'individual-cards-query'>;
  'transactions-query': Validated<'transactions-query'>;
  'cards-list-query': Validated<'cards-list-query'>;
  'events-query': Validated<'events-query'>;
  'webhook-deliveries-query': Validated<'webhook-deliveries-query'>;
  'transactions-search-query': Validated<'transactions-search-query'>;
  'tokens-search-query': Validated<'tokens-search-query'>;
}

type OneOf<Name extends SchemaName> = Name;
/** The query schemas typed here: each is a name of gateway/schemas. */
export type QuerySchemaName = OneOf<keyof RequestQueries>;

/** The validated query of a schema, typed. */
export type QueryOf<Schema> = Schema extends keyof RequestQueries ? RequestQueries[Schema] : unknown;
