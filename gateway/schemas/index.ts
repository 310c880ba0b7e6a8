import type { FromSchema } from 'json-schema-to-ts';
import { cardIssue } from './card-issue';
import {
  cardAuthorize,
  cardEmbossName,
  cardNickname,
  cardReplace,
  cardRestrict,
  cardSecretQuery,
  cardsListQuery,
  cardStatusChange,
  deliveryMethodsQuery,
  emptyBody,
  feeCheck,
  limitParams,
  limitSet,
  limitsPatch,
  pinChange,
  pinForceLock,
  simulateIssuerStatus,
  simulateTransaction,
  threeDsAnswer,
  threeDsPhone,
} from './cards';
import type { JsonSchema } from './common';
import { eventsQuery, webhookDeliveriesQuery, webhookEndpointCreate, webhookEndpointUpdate } from './events';
import { authorizationEndpointCreate, authorizationEndpointUpdate } from './authorization-endpoint';
import { individualCreate } from './individual-create';
import { individualCardsQuery, paginationQuery, transactionsQuery } from './pagination-query';
import { spendControls } from './spend-controls';
import { simulateAuthorization, simulateTransactionStep, transactionsSearchQuery } from './transactions';
import { simulateTokenization, simulateTokenVerification, tokenChange, tokensSearchQuery, walletProvisioningApplePay, walletProvisioningGooglePay } from './tokens';

/**
 * Every request schema a pipeline's `validate` policy can name, by name. One source of truth: the
 * same objects feed validation and the OpenAPI document.
 */
export const SCHEMAS = {
  'pagination-query': paginationQuery,
  'individual-cards-query': individualCardsQuery,
  'transactions-query': transactionsQuery,
  'individual-create': individualCreate,
  'card-issue': cardIssue,
  'card-status-change': cardStatusChange,
  'card-restrict': cardRestrict,
  'card-nickname': cardNickname,
  'card-emboss-name': cardEmbossName,
  'card-replace': cardReplace,
  'card-secret-query': cardSecretQuery,
  'three-ds-answer': threeDsAnswer,
  'three-ds-phone': threeDsPhone,
  'pin-change': pinChange,
  'pin-force-lock': pinForceLock,
  'card-authorize': cardAuthorize,
  'empty-body': emptyBody,
  'limits-patch': limitsPatch,
  'limit-set': limitSet,
  'limit-params': limitParams,
  'spend-controls': spendControls,
  'delivery-methods-query': deliveryMethodsQuery,
  'fee-check': feeCheck,
  'cards-list-query': cardsListQuery,
  'events-query': eventsQuery,
  'webhook-endpoint-create': webhookEndpointCreate,
  'webhook-endpoint-update': webhookEndpointUpdate,
  'webhook-deliveries-query': webhookDeliveriesQuery,
  'authorization-endpoint-create': authorizationEndpointCreate,
  'authorization-endpoint-update': authorizationEndpointUpdate,
  'simulate-transaction': simulateTransaction,
  'simulate-issuer-status': simulateIssuerStatus,
  'transactions-search-query': transactionsSearchQuery,
  'simulate-authorization': simulateAuthorization,
  'simulate-transaction-step': simulateTransactionStep,
  'wallet-provisioning-apple-pay': walletProvisioningApplePay,
  'wallet-provisioning-google-pay': walletProvisioningGooglePay,
  'token-change': tokenChange,
  'tokens-search-query': tokensSearchQuery,
  'simulate-tokenization': simulateTokenization,
  'simulate-token-verification': simulateTokenVerification,
} satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;

/**
 * The TypeScript type of what a schema admits, derived from the schema itself (json-schema-to-ts,
 * docs/decisions.md "Request types derived from the schemas"): the value after validation, so a
 * property with a `default` is present (the validators fill defaults in), and a query's integers
 * are numbers (the query validator coerces them).
 */
export type Validated<Name extends SchemaName> = FromSchema<(typeof SCHEMAS)[Name]>;

/** The validated query of a paginated route. */
export type PaginationQuery = Validated<'pagination-query'>;
/** The validated query of an individual's card list. */
export type IndividualCardsQuery = Validated<'individual-cards-query'>;
/** The validated query of an individual's transactions. */
export type TransactionsQuery = Validated<'transactions-query'>;
/** The validated query of the CVV and PAN reads. */
export type CardSecretQuery = Validated<'card-secret-query'>;
/** The validated query of the delivery-method lookup. */
export type DeliveryMethodsQuery = Validated<'delivery-methods-query'>;
/** The validated query of the partner-wide card list. */
export type CardsListQuery = Validated<'cards-list-query'>;
/** The validated query of the event log. */
export type EventsQuery = Validated<'events-query'>;
/** The validated query of an endpoint's webhook deliveries. */
export type WebhookDeliveriesQuery = Validated<'webhook-deliveries-query'>;
/** The validated query of `GET /transactions`. */
export type TransactionsSearchQuery = Validated<'transactions-search-query'>;
/** The validated query of `GET /tokens`. */
export type TokensSearchQuery = Validated<'tokens-search-query'>;
/** The validated path parameters of the single-limit routes. */
export type LimitParams = Validated<'limit-params'>;
