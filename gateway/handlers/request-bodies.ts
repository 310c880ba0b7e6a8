import type { SchemaName, Validated } from '../schemas';
import type { CardIssueBody } from '../schemas/card-issue';
import type { IndividualCreateBody } from '../schemas/individual-create';

/**
 * A card status change's body (`card-status-change`, `card-restrict`): sent on to the issuer as it
 * is. The restriction's schema, every field optional, admits both: a status change's body (expDate
 * required) is one of its values.
 */
export type CardStatusChangeBody = Validated<'card-restrict'>;

/** A replacement's or re-issue's body (`card-replace`). */
export type CardReplaceBody = Validated<'card-replace'>;

/** One limit as `limit-set` and each item of `limits-patch` validate it. */
export type LimitBody = Validated<'limit-set'>;

/**
 * The TypeScript type of the body each request schema of gateway/schemas validates, as the
 * handlers read it: the handler context's `body` of an entry with that body schema
 * (gateway/handlers/context.ts). Each is derived from the schema itself (`Validated`), so a field
 * the schema adds, drops or bounds differently changes the type with it. A schema not listed
 * gives `unknown` (no handler reads it: the fee checks end in the proxy). A key that is not a
 * schema's name does not compile (`BodySchemaName`).
 */
export interface RequestBodies {
  'individual-create': IndividualCreateBody;
  'card-issue': CardIssueBody;
  'card-status-change': Validated<'card-status-change'>;
  'card-restrict': Validated<'card-restrict'>;
  'card-nickname': Validated<'card-nickname'>;
  'three-ds-phone': Validated<'three-ds-phone'>;
  'card-emboss-name': Validated<'card-emboss-name'>;
  'card-replace': CardReplaceBody;
  'three-ds-answer': Validated<'three-ds-answer'>;
  'card-authorize': Validated<'card-authorize'>;
  'pin-change': Validated<'pin-change'>;
  'pin-force-lock': Validated<'pin-force-lock'>;
  'empty-body': Validated<'empty-body'>;
  'limits-patch': Validated<'limits-patch'>;
  'limit-set': LimitBody;
  'spend-controls': Validated<'spend-controls'>;
  'webhook-endpoint-create': Validated<'webhook-endpoint-create'>;
  'webhook-endpoint-update': Validated<'webhook-endpoint-update'>;
  'authorization-endpoint-create': Validated<'authorization-endpoint-create'>;
  'authorization-endpoint-update': Validated<'authorization-endpoint-update'>;
  'simulate-transaction': Validated<'simulate-transaction'>;
  'simulate-authorization': Validated<'simulate-authorization'>;
  'simulate-transaction-step': Validated<'simulate-transaction-step'>;
  'simulate-issuer-status': Validated<'simulate-issuer-status'>;
  'wallet-provisioning-apple-pay': Validated<'wallet-provisioning-apple-pay'>;
  'wallet-provisioning-google-pay': Validated<'wallet-provisioning-google-pay'>;
  'token-change': Validated<'token-change'>;
  'simulate-tokenization': Validated<'simulate-tokenization'>;
  'simulate-token-verification': Validated<'simulate-token-verification'>;
}

type OneOf<Name extends SchemaName> = Name;
/** The body schemas typed here: each is a name of gateway/schemas. */
export type BodySchemaName = OneOf<keyof RequestBodies>;

/** The validated body of a schema, typed. */
export type BodyOf<Schema> = Schema extends keyof RequestBodies ? RequestBodies[Schema] : unknown;
