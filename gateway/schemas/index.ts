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
} satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;
