import { apiDocsPage, openApiDocument } from './api-docs';
import {
  createAuthorizationEndpoint,
  deleteAuthorizationEndpoint,
  getAuthorizationEndpoint,
  rotateAuthorizationEndpointSecret,
  updateAuthorizationEndpoint,
} from './authorization-endpoint';
import { issueCard } from './card-issue';
import { setCard3dsPhone, setCardNickname } from './card-local';
import {
  authorizeCardholder,
  changeCardPin,
  changeCardStatus,
  forceCardPinLock,
  patchCardLimits,
  resetCardPinTries,
  setCard3dsAnswer,
  setCardEmbossName,
  setCardLimit,
} from './card-operations';
import { reissueCard, replaceCard } from './card-replacement';
import { listCards } from './cards-list';
import { getPartnerEvent, listPartnerEvents } from './events';
import { healthCheck } from './health-check';
import { createIndividual } from './individual-create';
import { getIndividual, listIndividualAuditLogs, listIndividualCards, listIndividualCardStatusHistory, listIndividuals } from './individuals';
import { me } from './me';
import { getCardSpendControls, getSpendControls, setCardSpendControls, setSpendControls } from './spend-controls';
import { simulateCardAuthorization, simulateCardIssuerStatus, simulateCardTransaction, simulateTransactionStep } from './simulations';
import { getPartnerTransaction, listIndividualTransactions, listPartnerTransactions } from './transactions';
import { simulateCardTokenization, simulateTokenPurchase, simulateTokenVerification } from './token-simulations';
import { changeToken, getToken, listCardTokens, listTokens } from './tokens';
import { provisionApplePay, provisionGooglePay } from './wallet-provisioning';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  resendEvent,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from './webhooks';
import type { HandledOperationName, Operation, OPERATIONS } from '../catalog';
import type { HandlerBuild, HandlerServices } from './services';
import type { FactsOf, OperationHandler } from './context';

/**
 * How a handler is made, once per pipeline build: from the gateway's services (everything it
 * reads or calls) and what it is built for (its operation's name and catalog entry, typed as the
 * entries it may serve, and the configuration being built). The handler it makes takes the typed
 * facts its entry implies (gateway/handlers/context.ts): a handler asking for a fact its entry does
 * not imply (a card's owner on an individual's route, a body where no schema validates one) does
 * not compile here.
 */
export type HandlerFactory<Entry extends Operation = Operation> = (services: HandlerServices, build: HandlerBuild<Entry>) => OperationHandler<FactsOf<Entry>>;

/** The handler of each handled operation, typed by its own catalog entry. */
type HandlerTable = { readonly [Name in HandledOperationName]: HandlerFactory<(typeof OPERATIONS)[Name]> };

/**
 * The handler of each operation of the catalog that a handler ends (`ends: local` or
 * `orchestration`), registered against its catalog key: the `operation` policy builds it when a
 * pipeline is built (each factory runs once then) with the gateway's services, the operation's
 * entry and the configuration being built (the OpenAPI document describes the routes of the config
 * that serves it, including after a hot reload). The compiler checks that every such operation has
 * one, nothing else, and that each handler fits its entry: `changeCardStatus` only where the entry
 * references a status change. Loaded only then: reading the catalog (boot guards, policy audit)
 * loads no handler.
 */
export const HANDLERS: HandlerTable = {
  // Answered by the gateway itself (PostgreSQL, or memory).
  'health-check': healthCheck,
  'openapi-document': openApiDocument,
  'api-docs': apiDocsPage,
  me,
  'list-individuals': listIndividuals,
  'get-individual': getIndividual,
  'list-individual-cards': listIndividualCards,
  'list-individual-audit-logs': listIndividualAuditLogs,
  'list-individual-card-status-history': listIndividualCardStatusHistory,
  'list-cards': listCards,
  'set-card-nickname': setCardNickname,
  'set-card-3ds-phone': setCard3dsPhone,
  'get-card-spend-controls': getCardSpendControls,
  'set-card-spend-controls': setCardSpendControls,
  'get-spend-controls': getSpendControls,
  'set-spend-controls': setSpendControls,
  'list-events': listPartnerEvents,
  'get-event': getPartnerEvent,
  'resend-event': resendEvent,
  'list-webhook-endpoints': listWebhookEndpoints,
  'create-webhook-endpoint': createWebhookEndpoint,
  'get-webhook-endpoint': getWebhookEndpoint,
  'update-webhook-endpoint': updateWebhookEndpoint,
  'delete-webhook-endpoint': deleteWebhookEndpoint,
  'rotate-webhook-secret': rotateWebhookSecret,
  'list-webhook-deliveries': listWebhookDeliveries,
  'create-authorization-endpoint': createAuthorizationEndpoint,
  'get-authorization-endpoint': getAuthorizationEndpoint,
  'update-authorization-endpoint': updateAuthorizationEndpoint,
  'delete-authorization-endpoint': deleteAuthorizationEndpoint,
  'rotate-authorization-endpoint-secret': rotateAuthorizationEndpointSecret,
  'list-transactions': listPartnerTransactions,
  'get-transaction': getPartnerTransaction,
  'list-card-tokens': listCardTokens,
  'list-tokens': listTokens,
  'get-token': getToken,
  // Orchestrations: they call upstreams through the typed clients and keep PostgreSQL consistent with them.
  'create-individual': createIndividual,
  'issue-virtual-card': issueCard('virtual'),
  'issue-physical-card': issueCard('physical'),
  'list-individual-transactions': listIndividualTransactions,
  'lock-card': changeCardStatus,
  'unlock-card': changeCardStatus,
  'activate-card': changeCardStatus,
  'temporary-lock-card': changeCardStatus,
  'restrict-card': changeCardStatus,
  'restrict-card-lost': changeCardStatus,
  'restrict-card-stolen': changeCardStatus,
  'restrict-card-closed': changeCardStatus,
  'restrict-card-fraud': changeCardStatus,
  'restrict-card-mobile-lost': changeCardStatus,
  'set-card-emboss-name': setCardEmbossName,
  'replace-card': replaceCard,
  'reissue-card': reissueCard,
  'set-card-3ds-answer': setCard3dsAnswer,
  'reset-card-pin-tries': resetCardPinTries,
  'change-card-pin': changeCardPin,
  'force-card-pin-lock': forceCardPinLock,
  'authorize-cardholder': authorizeCardholder,
  'patch-card-limits': patchCardLimits,
  'set-card-limit': setCardLimit,
  'provision-card-apple-pay': provisionApplePay,
  'provision-card-google-pay': provisionGooglePay,
  'suspend-token': changeToken('suspend'),
  'resume-token': changeToken('resume'),
  'deactivate-token': changeToken('deactivate'),
  // Sandbox mode only (404 elsewhere): they drive the sandboxes' control routes.
  'simulate-card-transaction': simulateCardTransaction,
  'simulate-card-issuer-status': simulateCardIssuerStatus,
  'simulate-card-authorization': simulateCardAuthorization,
  'simulate-transaction-clearing': simulateTransactionStep('clearing'),
  'simulate-transaction-reversal': simulateTransactionStep('reversal'),
  'simulate-transaction-expiry': simulateTransactionStep('expiry'),
  'simulate-transaction-refund': simulateTransactionStep('refund'),
  'simulate-card-tokenization': simulateCardTokenization,
  'simulate-token-verification': simulateTokenVerification,
  'simulate-token-authorization': simulateTokenPurchase,
};

/** The handler factory registered against a handled operation, typed by its entry. */
export function handlerOf<Name extends HandledOperationName>(name: Name): HandlerFactory<(typeof OPERATIONS)[Name]> {
  return HANDLERS[name];
}
