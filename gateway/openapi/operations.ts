import type { ErrorCode } from '../errors';
import type { LocalHandlerName, OrchestrationName } from '../handlers';
import type { ResponseSchemaName } from '../schemas/responses';
import type { ResponseTransformName } from '../../policies/proxy/schema';

/**
 * What the route table cannot say about an operation: its human summary and description, its tag,
 * and the success answer of each terminal step (handler, orchestration or proxy transform).
 * Keyed by the names the pipelines use, and typed against them, so a new handler, orchestration
 * or transform does not compile without its answer here.
 */

/** Tags (groups of operations in the rendered reference), in display order. */
export const TAGS = [
  { name: 'Partner', description: 'Who you are: the partner the token authenticates, its B2B tenants and newest individuals.' },
  { name: 'Individual accounts', description: 'Onboard individual cardholders, read them, their audit log, card status history and transactions, and issue cards under them (spec 4.2).' },
  { name: 'Cards', description: 'Read and list your cards; nickname, emboss name, 3-D Secure, replacement and re-issue (spec 4.3).' },
  { name: 'Card status', description: 'Lock, unlock, activate, temporarily lock and restrict a card. The gateway checks the transition first (409 `invalid_transition`); docs/cards.md has the table.' },
  { name: 'Card secrets and PIN', description: 'CVV and card number encrypted under your RSA key, and the PIN operations (PIN blocks encrypted under the issuer key). Every read is audited; nothing is logged.' },
  { name: 'Card limits', description: 'Spending and withdrawal limits of a card: dailyPurchase, monthlyPurchase, dailyWithdrawal, monthlyWithdrawal, singleTransaction.' },
  { name: 'Fees and delivery', description: 'Card issuing and delivery fees, and the delivery methods of a country (spec 4.4).' },
  { name: 'Service', description: 'Public routes without a token: liveness probe and this documentation.' },
] as const;
export type TagName = (typeof TAGS)[number]['name'];

/** Human documentation of one operation (apiEndpoint). */
export interface OperationDoc {
  summary: string;
  description?: string;
  tag: TagName;
  /** 409 codes beyond those the pipeline implies (idempotency, upstream conflicts). */
  conflicts?: ErrorCode[];
}

const STATUS_CHANGE = 'Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.';
const RESTRICT = (what: string) => `Restricts the card as ${what}. The card cannot be unlocked afterwards: close it, report it again, or replace / re-issue it. ${STATUS_CHANGE}`;

/** Documentation of every apiEndpoint of the shipped configuration, by name (the operationId). */
export const OPERATION_DOCS: Record<string, OperationDoc> = {
  'health-check': { summary: 'Health check', description: 'Liveness only: never touches the database; always 200 `OK` (spec 4.1).', tag: 'Service' },
  'openapi-document': { summary: 'OpenAPI document', description: 'This document (OpenAPI 3.1), generated at start from the gateway configuration and the validation schemas. Cacheable for 5 minutes.', tag: 'Service' },
  'api-docs': { summary: 'API reference page', description: 'This reference, rendered by Redoc from the OpenAPI document. Nothing is loaded from another origin.', tag: 'Service' },
  me: { summary: 'Get partner identity', description: 'The authenticated partner, its B2B tenants (`activeTenantId` is the first-created one) and its 100 newest individuals (spec 4.1).', tag: 'Partner' },
  'list-individuals': { summary: 'List individual accounts', description: "Every individual you own, newest first, as `{count, data}` (spec 4.2).", tag: 'Individual accounts' },
  'create-individual': {
    summary: 'Create individual account',
    description:
      'Validates the body, creates the account at the account-creation upstream, and answers 201 with the individual. If the upstream fails nothing is kept (no user, onboarding or audit record). Send an `Idempotency-Key` to retry safely.',
    tag: 'Individual accounts',
  },
  'get-individual': { summary: 'Get individual account', tag: 'Individual accounts' },
  'list-individual-cards': { summary: 'List cards for an individual', description: "The individual's ACTIVE cards, with the first nine fields of the card (spec 2.3).", tag: 'Individual accounts' },
  'issue-virtual-card': {
    summary: 'Create virtual card for an individual',
    description: "Issues a virtual card (ACTIVE, `00`). `clientCode` must be the individual's `clientID`. Send an `Idempotency-Key` to retry safely.",
    tag: 'Individual accounts',
  },
  'issue-physical-card': {
    summary: 'Create physical card for an individual',
    description: "Issues a physical card: LOCKED with `I1` until it is activated. `clientCode` must be the individual's `clientID`. Send an `Idempotency-Key` to retry safely.",
    tag: 'Individual accounts',
  },
  'list-individual-audit-logs': { summary: 'List audit logs for an individual', description: 'Every change on the individual and its cards, newest first.', tag: 'Individual accounts' },
  'list-individual-card-status-history': { summary: 'Card status history for an individual', description: "Every status change of the individual's cards, newest first.", tag: 'Individual accounts' },
  'list-individual-transactions': {
    summary: 'List transactions for an individual',
    description: "From the card processing system, by the individual's clientID and optionally one of its cards. Empty when the processing system is not configured for you.",
    tag: 'Individual accounts',
  },
  'list-cards': {
    summary: 'List all partner cards',
    description: 'Every card you own, individual and B2B (not tenant-scoped), newest first. `total` is exact up to 10,000; above, it is 10,000 with `X-Total-Capped: true`, and only the first 10,000 matches can be paged through (docs/card-search.md).',
    tag: 'Cards',
  },
  'get-card': { summary: 'Get card details', description: 'The card, fresh from the issuer for its status; never the card number or CVV.', tag: 'Cards' },
  'get-card-status': { summary: 'Get card status', tag: 'Card status' },
  'lock-card': { summary: 'Lock card', description: `The holder keeps the card; it cannot authorize transactions. ${STATUS_CHANGE}`, tag: 'Card status', conflicts: ['invalid_transition'] },
  'unlock-card': { summary: 'Unlock card', description: `For a locked, temporarily locked or restricted card. ${STATUS_CHANGE}`, tag: 'Card status', conflicts: ['invalid_transition'] },
  'activate-card': { summary: 'Activate card', description: `A freshly issued physical card (I1) becomes ACTIVE. ${STATUS_CHANGE}`, tag: 'Card status', conflicts: ['invalid_transition'] },
  'temporary-lock-card': { summary: 'Temporary lock card', description: STATUS_CHANGE, tag: 'Card status', conflicts: ['invalid_transition'] },
  'restrict-card': { summary: 'Restrict card', description: `Generic restriction (RESTRICTED, S1). ${STATUS_CHANGE}`, tag: 'Card status', conflicts: ['invalid_transition'] },
  'restrict-card-lost': { summary: 'Restrict card as lost', description: RESTRICT('lost'), tag: 'Card status', conflicts: ['invalid_transition'] },
  'restrict-card-stolen': { summary: 'Restrict card as stolen', description: RESTRICT('stolen'), tag: 'Card status', conflicts: ['invalid_transition'] },
  'restrict-card-closed': { summary: 'Restrict card as closed', description: `Closes the card for good (CLOSED is final). ${STATUS_CHANGE}`, tag: 'Card status', conflicts: ['invalid_transition'] },
  'restrict-card-fraud': { summary: 'Restrict card as fraud', description: RESTRICT('fraud'), tag: 'Card status', conflicts: ['invalid_transition'] },
  'restrict-card-mobile-lost': { summary: 'Restrict card as mobile-lost', description: RESTRICT('lost on a mobile device'), tag: 'Card status', conflicts: ['invalid_transition'] },
  'set-card-nickname': { summary: 'Change card nickname', description: 'Kept by the gateway only; never sent to the issuer.', tag: 'Cards' },
  'set-card-emboss-name': { summary: 'Change emboss name', description: "1 to 26 of `A-Z a-z 0-9 . ' - /`, no spaces (the issuer refuses them).", tag: 'Cards' },
  'replace-card': {
    summary: 'Replace card',
    description: 'Physical cards only (a virtual card is 409 `conflict`): the same card record moves to the new cardKey, which the answer carries; the old cardKey is 404 from then on. Send an `Idempotency-Key` to retry safely.',
    tag: 'Cards',
    conflicts: ['invalid_transition'],
  },
  'reissue-card': {
    summary: 'Re-issue card',
    description: 'A new card (201) replaces this one, which is closed. Nickname and 3DS phone carry over. Send an `Idempotency-Key` to retry safely.',
    tag: 'Cards',
    conflicts: ['invalid_transition'],
  },
  'get-card-cvv': {
    summary: 'Get card CVV',
    description: 'The CVV2, encrypted with RSA-OAEP (SHA-256) under `securityKey` (your RSA public key, base64 SPKI DER, at least 2048 bits); decrypt it with your private key. Audited as `card.cvv.read`; never logged.',
    tag: 'Card secrets and PIN',
  },
  'get-card-pan': {
    summary: 'Get full card number',
    description: 'The card number (PAN), encrypted with RSA-OAEP (SHA-256) under `securityKey`. Audited as `card.pan.read`; never logged.',
    tag: 'Card secrets and PIN',
  },
  'set-card-3ds-answer': { summary: 'Set 3DS answer', description: 'Forwarded to the issuer; never stored, answered or logged by the gateway.', tag: 'Cards' },
  'set-card-3ds-phone': { summary: 'Change 3DS phone number', description: 'E.164; kept by the gateway only.', tag: 'Cards' },
  'reset-card-pin-tries': { summary: 'Reset PIN tries', description: 'Resets the PIN-attempt counter. Takes no body (an empty object is accepted).', tag: 'Card secrets and PIN' },
  'change-card-pin': {
    summary: 'Change PIN',
    description: '`pin` is a PIN block encrypted with RSA-OAEP (SHA-256) under the key of `GET /pin-encryption-key`. Known limitation: the issuer platform refuses this operation today, which is 502 `upstream_error` with `upstreamCode: OPERATION_NOT_SUPPORTED`.',
    tag: 'Card secrets and PIN',
  },
  'force-card-pin-lock': {
    summary: 'Force PIN lock',
    description: 'Known limitation: the issuer platform refuses this operation today, which is 502 `upstream_error` with `upstreamCode: OPERATION_NOT_SUPPORTED`.',
    tag: 'Card secrets and PIN',
  },
  'authorize-cardholder': { summary: 'Authorize cardholder', description: 'PIN-less action authorized with an encrypted PIN block.', tag: 'Card secrets and PIN' },
  'get-card-limits': { summary: 'Get all card limits', tag: 'Card limits' },
  'patch-card-limits': { summary: 'Patch card limits', description: 'Sets 1 to 5 distinct limits at once; answers every limit of the card.', tag: 'Card limits' },
  'set-card-limit': { summary: 'Set a single card limit', description: "The body's `name` must be the path's `limitName`.", tag: 'Card limits' },
  'get-card-limit': { summary: 'Get a single card limit', tag: 'Card limits' },
  'get-card-limit-available': { summary: 'Get available limit', tag: 'Card limits' },
  'get-pin-encryption-key': { summary: 'Get PIN encryption key', description: "The issuer's RSA key to encrypt PIN blocks under (RSA-OAEP-256).", tag: 'Card secrets and PIN' },
  'list-delivery-methods': { summary: 'List delivery methods by country', tag: 'Fees and delivery' },
  'check-card-issuing-fee': { summary: 'Check card issuing fee', description: 'The gateway sets `OperationType` to `CARD_ISSUING_FEE`.', tag: 'Fees and delivery' },
  'check-card-delivery-fee': { summary: 'Check card delivery fee', description: 'The gateway sets `OperationType` to `CARD_DELIVERY_FEE`.', tag: 'Fees and delivery' },
};

/** The success answer of a terminal step. */
export interface SuccessAnswer {
  status: 200 | 201;
  description: string;
  /** A JSON body of this schema, or an array of it. */
  body?: { schema: ResponseSchemaName; array?: boolean };
  /** A body that is not JSON of a response schema (health check, this document, the page). */
  raw?: { mediaType: string; schema: Record<string, unknown>; example: unknown };
  /** Response headers worth documenting (components.headers names). */
  headers?: string[];
}

const json = (schema: ResponseSchemaName, description: string, status: 200 | 201 = 200): SuccessAnswer => ({ status, description, body: { schema } });
const jsonArray = (schema: ResponseSchemaName, description: string): SuccessAnswer => ({ status: 200, description, body: { schema, array: true } });

const CARD = json('Card', 'The card');
const STATUS_RESULT = json('CardStatusResult', 'The card status result');

/** Success answers of the local handlers (`local-handler` policy). */
export const LOCAL_HANDLER_ANSWERS: Record<LocalHandlerName, SuccessAnswer> = {
  'health-check': { status: 200, description: 'Alive', raw: { mediaType: 'text/plain', schema: { type: 'string', const: 'OK' }, example: 'OK' } },
  'openapi-document': {
    status: 200,
    description: 'The OpenAPI 3.1 document',
    raw: { mediaType: 'application/json', schema: { type: 'object', description: 'An OpenAPI 3.1 document' }, example: { openapi: '3.1.0' } },
    headers: ['ETag'],
  },
  'api-docs': {
    status: 200,
    description: 'The HTML page',
    raw: { mediaType: 'text/html', schema: { type: 'string' }, example: '<!DOCTYPE html>...' },
  },
  me: json('Me', 'The authenticated partner'),
  'list-individuals': json('IndividualList', 'A page of individuals'),
  'get-individual': json('IndividualAccount', 'The individual account'),
  'list-individual-cards': jsonArray('CardListItem', "The individual's active cards"),
  'list-individual-audit-logs': json('AuditLogPage', 'A page of audit entries'),
  'list-individual-card-status-history': json('CardStatusHistoryPage', 'A page of status changes'),
  'list-cards': { ...json('CardPage', 'A page of cards'), headers: ['X-Total-Capped'] },
  'set-card-nickname': CARD,
  'set-card-3ds-phone': CARD,
};

/** Success answers of the orchestrated operations (`orchestrate` policy). */
export const ORCHESTRATION_ANSWERS: Record<OrchestrationName, SuccessAnswer> = {
  'create-individual': json('IndividualAccount', 'The individual account was created', 201),
  'issue-virtual-card': json('Card', 'The card was issued', 201),
  'issue-physical-card': json('Card', 'The card was issued', 201),
  'list-individual-transactions': json('TransactionPage', 'A page of transactions'),
  'lock-card': STATUS_RESULT,
  'unlock-card': STATUS_RESULT,
  'activate-card': STATUS_RESULT,
  'temporary-lock-card': STATUS_RESULT,
  'restrict-card': STATUS_RESULT,
  'restrict-card-lost': STATUS_RESULT,
  'restrict-card-stolen': STATUS_RESULT,
  'restrict-card-closed': STATUS_RESULT,
  'restrict-card-fraud': STATUS_RESULT,
  'restrict-card-mobile-lost': STATUS_RESULT,
  'set-card-emboss-name': CARD,
  'replace-card': json('Card', 'The card under its new cardKey and cardMask'),
  'reissue-card': json('Card', 'The new card', 201),
  'set-card-3ds-answer': CARD,
  'reset-card-pin-tries': CARD,
  'change-card-pin': CARD,
  'force-card-pin-lock': STATUS_RESULT,
  'authorize-cardholder': CARD,
  'patch-card-limits': jsonArray('CardLimit', 'Every limit of the card'),
  'set-card-limit': json('CardLimit', 'The limit'),
};

/** Success answers of the proxy transforms (`upstream-proxy` policy, `response:`). */
export const TRANSFORM_ANSWERS: Record<ResponseTransformName, SuccessAnswer> = {
  'card-status': STATUS_RESULT,
  'card-details': CARD,
  cvv: json('EncryptedCvv', 'The encrypted CVV2'),
  'card-number': json('EncryptedCardNumber', 'The encrypted card number'),
  limits: jsonArray('CardLimit', 'Every limit of the card'),
  limit: json('CardLimit', 'The limit'),
  'limit-available': json('AvailableLimit', 'What is left of the limit'),
  'pin-encryption-key': json('PinEncryptionKey', 'The PIN encryption key'),
  fee: json('FeeResult', 'The fee'),
  'delivery-methods': json('DeliveryMethods', 'The delivery methods'),
};
