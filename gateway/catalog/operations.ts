import type { Ending, Operation, OwnershipCheck, SuccessAnswer } from './operation';
import type { ResponseSchemaName } from '../schemas/responses';
import { STATUS_CHANGES, type StatusChange } from '../cards/transitions';

const LOCAL = { kind: 'local' } as const;
const ORCHESTRATION = { kind: 'orchestration' } as const;

type UpstreamEnding = Extract<Ending, { kind: 'upstream' }>;
/** One issuer call, answered through a named transform. */
const issuer = (method: UpstreamEnding['method'], path: string, response: UpstreamEnding['response'], more: Pick<UpstreamEnding, 'query'> = {}): UpstreamEnding => ({
  kind: 'upstream',
  upstream: 'issuer',
  method,
  path,
  ...more,
  response,
});

// Typed as written (as const): a handler's context types the owned resource by its kind (gateway/handlers/context.ts).
const OWNS_INDIVIDUAL = [{ resource: 'individual', param: 'id', in: 'path' }] as const satisfies readonly OwnershipCheck[];
const OWNS_CARD = [{ resource: 'card', param: 'id', in: 'path' }] as const satisfies readonly OwnershipCheck[];
const OWNS_EVENT = [{ resource: 'event', param: 'id', in: 'path' }] as const satisfies readonly OwnershipCheck[];
const OWNS_WEBHOOK_ENDPOINT = [{ resource: 'webhook-endpoint', param: 'id', in: 'path' }] as const satisfies readonly OwnershipCheck[];
const OWNS_TRANSACTION = [{ resource: 'transaction', param: 'id', in: 'path' }] as const satisfies readonly OwnershipCheck[];
const OWNS_TOKEN = [{ resource: 'token', param: 'id', in: 'path' }] as const satisfies readonly OwnershipCheck[];
// A cardKey or clientId named in a fee check's body must be the caller's (docs/ownership.md); iban
// is passed through unchecked (docs/decisions.md).
const OWNS_BODY_CARD_AND_CLIENT = [
  { resource: 'card', param: 'cardKey', in: 'body' },
  { resource: 'client', param: 'clientId', in: 'body' },
] as const satisfies readonly OwnershipCheck[];

const json = (schema: ResponseSchemaName, description: string, status: 200 | 201 | 202 = 200): SuccessAnswer => ({ status, description, body: { schema } });
const jsonArray = (schema: ResponseSchemaName, description: string): SuccessAnswer => ({ status: 200, description, body: { schema, array: true } });
const CARD = json('Card', 'The card');
const STATUS_RESULT = json('CardStatusResult', 'The card status result');
const SPEND_CONTROLS = json('SpendControls', 'The spend controls');

const STATUS_CHANGE = 'Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.';
const RESTRICT = (what: string) => `Restricts the card as ${what}. The card cannot be unlocked afterwards: close it, report it again, or replace / re-issue it. ${STATUS_CHANGE}`;
// Spend controls are cleared only on purpose: a dropped body must not remove every limit.
const CLEARING_CONTROLS = '`{}` clears it, on purpose only: a request without a body (none, zero bytes or only whitespace) is 400 `body_required` and changes nothing.';
const TOKEN = json('Token', 'The token');
// Wallet provisioning (docs/tokens.md, "Provisioning"): no Idempotency-Key, whose replay store would keep the payload.
const PROVISIONING = (wallet: string, sdk: string) =>
  `Takes what ${sdk} gave your app and answers what ${wallet} needs to add the card, made by the card processing system and encrypted for the wallet: pass it on unchanged. The card must be ACTIVE (or a physical card not yet activated where your settings allow it), else 409 \`card_not_active\` and the processor is not called. Answered \`Cache-Control: no-store\`; the gateway writes neither the inputs nor the payload to any log, table or replay store (the audit entry \`card.wallet.provision\` names the card and the wallet only). Takes no \`Idempotency-Key\`: calling again simply makes another payload. In sandbox mode the payload has the right encoding and size but is not a real wallet cryptogram.`;
const TOKEN_CHANGE = (what: string, table: string) =>
  `${what} The processor makes the change first (with your \`Idempotency-Key\`'s operation id: a retry is applied once), then the gateway records its answer, the token's history, the audit entry and a \`token.updated\` event, before the 200. ${table} A processor that does not answer is 504 \`upstream_timeout\`: retry with the same \`Idempotency-Key\` (docs/tokens.md).`;
const PLATFORM_REFUSES = 'Known limitation: the issuer platform refuses this operation today, which is 502 `upstream_error` with `upstreamCode: OPERATION_NOT_SUPPORTED`.';

/** A card status change (lock, unlock, activate, temporary lock, the restrict family). */
const statusChange = <Change extends StatusChange>(change: Change, path: string, body: 'card-status-change' | 'card-restrict', audit: string, summary: string, description: string) =>
  ({
    method: 'POST',
    path: `/api/partner/cards/:id/${path}`,
    ownership: OWNS_CARD,
    schemas: { body },
    ends: ORCHESTRATION,
    audit,
    statusChange: change,
    doc: { summary, description, tag: 'Card status', conflicts: ['invalid_transition'], answer: STATUS_RESULT },
  }) satisfies Operation;

/**
 * Every partner operation, declared once, by name (the apiEndpoint, the pipeline and the
 * operationId): its route, its protection (public shape, ownership, request schemas, sensitive
 * data), how it ends and what it answers. gateway.config.yml stays the route map operators edit: the
 * boot guards refuse a pipeline that contradicts its operation's entry (gateway/boot/config-guards.ts),
 * and the policy audit, the OpenAPI document and the `operation` policy read their facts here.
 *
 * Order: the OpenAPI document's, and gateway.config.yml's.
 */
export const OPERATIONS = {
  'health-check': {
    method: 'GET',
    path: '/api/partner/health-check',
    // The health check always answers 200 (spec): not even rate limited.
    public: { rateLimited: false },
    ends: LOCAL,
    doc: {
      summary: 'Health check',
      description: 'Liveness only: never touches the database; always 200 `OK` (spec 4.1).',
      tag: 'Service',
      answer: { status: 200, description: 'Alive', raw: { mediaType: 'text/plain', schema: { type: 'string', const: 'OK' }, example: 'OK' } },
    },
  },
  'openapi-document': {
    method: 'GET',
    path: '/api/partner/openapi.json',
    public: { rateLimited: true },
    ends: LOCAL,
    doc: {
      summary: 'OpenAPI document',
      description: 'This document (OpenAPI 3.1), generated at start from the gateway configuration and the validation schemas. Cacheable for 5 minutes.',
      tag: 'Service',
      answer: {
        status: 200,
        description: 'The OpenAPI 3.1 document',
        raw: { mediaType: 'application/json', schema: { type: 'object', description: 'An OpenAPI 3.1 document' }, example: { openapi: '3.1.0' } },
        headers: ['ETag'],
      },
    },
  },
  'api-docs': {
    method: 'GET',
    path: '/api/partner/docs',
    public: { rateLimited: true },
    ends: LOCAL,
    doc: {
      summary: 'API reference page',
      description: 'This reference, rendered by Redoc from the OpenAPI document. Nothing is loaded from another origin.',
      tag: 'Service',
      answer: { status: 200, description: 'The HTML page', raw: { mediaType: 'text/html', schema: { type: 'string' }, example: '<!DOCTYPE html>...' } },
    },
  },
  me: {
    method: 'GET',
    path: '/api/partner/me',
    ends: LOCAL,
    doc: {
      summary: 'Get partner identity',
      description: 'The authenticated partner, its B2B tenants (`activeTenantId` is the first-created one) and its 100 newest individuals (spec 4.1).',
      tag: 'Partner',
      answer: json('Me', 'The authenticated partner'),
    },
  },

  // Individual accounts (spec 4.2)
  'list-individuals': {
    method: 'GET',
    path: '/api/partner/individual/accounts',
    schemas: { query: 'pagination-query' },
    ends: LOCAL,
    doc: { summary: 'List individual accounts', description: 'Every individual you own, newest first, as `{count, data}` (spec 4.2).', tag: 'Individual accounts', answer: json('IndividualList', 'A page of individuals') },
  },
  'create-individual': {
    method: 'POST',
    path: '/api/partner/individual/accounts',
    schemas: { body: 'individual-create' },
    ends: ORCHESTRATION,
    audit: 'individual.create',
    doc: {
      summary: 'Create individual account',
      description:
        'Validates the body, creates the account at the account-creation upstream, and answers 201 with the individual. If the upstream fails nothing is kept (no user, onboarding or audit record). Send an `Idempotency-Key` to retry safely.',
      tag: 'Individual accounts',
      answer: json('IndividualAccount', 'The individual account was created', 201),
    },
  },
  'get-individual': {
    method: 'GET',
    path: '/api/partner/individual/accounts/:id',
    ownership: OWNS_INDIVIDUAL,
    ends: LOCAL,
    doc: { summary: 'Get individual account', tag: 'Individual accounts', answer: json('IndividualAccount', 'The individual account') },
  },
  'list-individual-cards': {
    method: 'GET',
    path: '/api/partner/individual/accounts/:id/cards',
    ownership: OWNS_INDIVIDUAL,
    schemas: { query: 'individual-cards-query' },
    ends: LOCAL,
    doc: {
      summary: 'List cards for an individual',
      description:
        "The individual's ACTIVE cards, newest first, with the first nine fields of the card (spec 2.3). At most `limit` (1 to 100, default 100) at once: every individual with up to 100 active cards gets them all in one answer; past that, a `Link` header with `rel=\"next\"` names the next page (`page`, from 1).",
      tag: 'Individual accounts',
      answer: { ...jsonArray('CardListItem', "The individual's active cards"), headers: ['Link'] },
    },
  },
  'issue-virtual-card': {
    method: 'POST',
    path: '/api/partner/individual/accounts/:id/cards/virtual',
    ownership: OWNS_INDIVIDUAL,
    schemas: { body: 'card-issue' },
    ends: ORCHESTRATION,
    audit: 'card.issue.virtual',
    doc: {
      summary: 'Create virtual card for an individual',
      description: "Issues a virtual card (ACTIVE, `00`). `clientCode` must be the individual's `clientID`. Send an `Idempotency-Key` to retry safely.",
      tag: 'Individual accounts',
      answer: json('Card', 'The card was issued', 201),
    },
  },
  'issue-physical-card': {
    method: 'POST',
    path: '/api/partner/individual/accounts/:id/cards/physical',
    ownership: OWNS_INDIVIDUAL,
    schemas: { body: 'card-issue' },
    ends: ORCHESTRATION,
    audit: 'card.issue.physical',
    doc: {
      summary: 'Create physical card for an individual',
      description: "Issues a physical card: LOCKED with `I1` until it is activated. `clientCode` must be the individual's `clientID`. Send an `Idempotency-Key` to retry safely.",
      tag: 'Individual accounts',
      answer: json('Card', 'The card was issued', 201),
    },
  },
  'list-individual-audit-logs': {
    method: 'GET',
    path: '/api/partner/individual/accounts/:id/audit-logs',
    ownership: OWNS_INDIVIDUAL,
    schemas: { query: 'pagination-query' },
    ends: LOCAL,
    doc: {
      summary: 'List audit logs for an individual',
      description: 'Every change on the individual and its cards, newest first. `total` is exact up to 1,000; above, it is 1,000 with `X-Total-Capped: true` (docs/pagination.md).',
      tag: 'Individual accounts',
      answer: { ...json('AuditLogPage', 'A page of audit entries'), headers: ['X-Total-Capped'] },
    },
  },
  'list-individual-card-status-history': {
    method: 'GET',
    path: '/api/partner/individual/accounts/:id/card-status-history',
    ownership: OWNS_INDIVIDUAL,
    schemas: { query: 'pagination-query' },
    ends: LOCAL,
    doc: {
      summary: 'Card status history for an individual',
      description: "Every status change of the individual's cards, newest first. `total` is exact up to 1,000; above, it is 1,000 with `X-Total-Capped: true` (docs/pagination.md).",
      tag: 'Individual accounts',
      answer: { ...json('CardStatusHistoryPage', 'A page of status changes'), headers: ['X-Total-Capped'] },
    },
  },
  'list-individual-transactions': {
    method: 'GET',
    path: '/api/partner/individual/accounts/:id/transactions',
    ownership: OWNS_INDIVIDUAL,
    schemas: { query: 'transactions-query' },
    ends: ORCHESTRATION,
    doc: {
      summary: 'List transactions for an individual',
      description: "From the card processing system, by the individual's clientID and optionally one of its cards. Empty when the processing system is not configured for you.",
      tag: 'Individual accounts',
      answer: json('TransactionPage', 'A page of transactions'),
    },
  },

  // Cards (spec 4.3); {id} is the cardKey
  'list-cards': {
    method: 'GET',
    path: '/api/partner/cards',
    schemas: { query: 'cards-list-query' },
    ends: LOCAL,
    doc: {
      summary: 'List all partner cards',
      description:
        'Every card you own, individual and B2B (not tenant-scoped), newest first. Without `search`, `total` is exact; with `search`, it is exact up to 10,000, and above 10,000 with `X-Total-Capped: true`. Only the first 10,000 matches can be paged through: `totalPages` counts their pages, and `hasMore` is false on the last of them (docs/card-search.md).',
      tag: 'Cards',
      answer: { ...json('CardPage', 'A page of cards'), headers: ['X-Total-Capped'] },
    },
  },
  'get-card': {
    method: 'GET',
    path: '/api/partner/cards/:id',
    ownership: OWNS_CARD,
    sensitive: true,
    ends: issuer('GET', '/cards/{id}', 'card-details'),
    doc: { summary: 'Get card details', description: 'The card, fresh from the issuer for its status; never the card number or CVV.', tag: 'Cards', answer: CARD },
  },
  'get-card-status': {
    method: 'GET',
    path: '/api/partner/cards/:id/status',
    ownership: OWNS_CARD,
    ends: issuer('GET', '/cards/{id}/status', 'card-status'),
    doc: { summary: 'Get card status', tag: 'Card status', answer: STATUS_RESULT },
  },
  'lock-card': statusChange(STATUS_CHANGES.lock, 'lock', 'card-status-change', 'card.lock', 'Lock card', `The holder keeps the card; it cannot authorize transactions. ${STATUS_CHANGE}`),
  'unlock-card': statusChange(STATUS_CHANGES.unlock, 'unlock', 'card-status-change', 'card.unlock', 'Unlock card', `For a locked, temporarily locked or restricted card. ${STATUS_CHANGE}`),
  'activate-card': statusChange(STATUS_CHANGES.activate, 'activate', 'card-status-change', 'card.activate', 'Activate card', `A freshly issued physical card (I1) becomes ACTIVE. ${STATUS_CHANGE}`),
  'temporary-lock-card': statusChange(STATUS_CHANGES['temporary-lock'], 'temporary-lock', 'card-status-change', 'card.temporary-lock', 'Temporary lock card', STATUS_CHANGE),
  'restrict-card': statusChange(STATUS_CHANGES.restrict, 'restrict', 'card-restrict', 'card.restrict', 'Restrict card', `Generic restriction (RESTRICTED, S1). ${STATUS_CHANGE}`),
  'restrict-card-lost': statusChange(STATUS_CHANGES.lost, 'restrict/lost', 'card-restrict', 'card.restrict.lost', 'Restrict card as lost', RESTRICT('lost')),
  'restrict-card-stolen': statusChange(STATUS_CHANGES.stolen, 'restrict/stolen', 'card-restrict', 'card.restrict.stolen', 'Restrict card as stolen', RESTRICT('stolen')),
  'restrict-card-closed': statusChange(STATUS_CHANGES.closed, 'restrict/closed', 'card-restrict', 'card.restrict.closed', 'Restrict card as closed', `Closes the card for good (CLOSED is final). ${STATUS_CHANGE}`),
  'restrict-card-fraud': statusChange(STATUS_CHANGES.fraud, 'restrict/fraud', 'card-restrict', 'card.restrict.fraud', 'Restrict card as fraud', RESTRICT('fraud')),
  'restrict-card-mobile-lost': statusChange(STATUS_CHANGES['mobile-lost'], 'restrict/mobile-lost', 'card-restrict', 'card.restrict.mobile-lost', 'Restrict card as mobile-lost', RESTRICT('lost on a mobile device')),
  'set-card-nickname': {
    method: 'PATCH',
    path: '/api/partner/cards/:id/nickname',
    ownership: OWNS_CARD,
    schemas: { body: 'card-nickname' },
    ends: LOCAL,
    audit: 'card.nickname.update',
    doc: { summary: 'Change card nickname', description: 'Kept by the gateway only; never sent to the issuer.', tag: 'Cards', answer: CARD },
  },
  'set-card-emboss-name': {
    method: 'PATCH',
    path: '/api/partner/cards/:id/emboss-name',
    ownership: OWNS_CARD,
    schemas: { body: 'card-emboss-name' },
    ends: ORCHESTRATION,
    audit: 'card.emboss-name.update',
    doc: { summary: 'Change emboss name', description: "1 to 26 of `A-Z a-z 0-9 . ' - /`, no spaces (the issuer refuses them).", tag: 'Cards', answer: CARD },
  },
  'replace-card': {
    method: 'POST',
    path: '/api/partner/cards/:id/replace',
    ownership: OWNS_CARD,
    schemas: { body: 'card-replace' },
    ends: ORCHESTRATION,
    audit: 'card.replace',
    doc: {
      summary: 'Replace card',
      description:
        'Physical cards only (a virtual card is 409 `conflict`): the same card record moves to the new cardKey, which the answer carries; the old cardKey is 404 from then on. Send an `Idempotency-Key` to retry safely.',
      tag: 'Cards',
      conflicts: ['invalid_transition'],
      answer: json('Card', 'The card under its new cardKey and cardMask'),
    },
  },
  'reissue-card': {
    method: 'POST',
    path: '/api/partner/cards/:id/reissue',
    ownership: OWNS_CARD,
    schemas: { body: 'card-replace' },
    ends: ORCHESTRATION,
    audit: 'card.reissue',
    doc: {
      summary: 'Re-issue card',
      description: 'A new card (201) replaces this one, which is closed. Nickname and 3DS phone carry over. Send an `Idempotency-Key` to retry safely.',
      tag: 'Cards',
      conflicts: ['invalid_transition'],
      answer: json('Card', 'The new card', 201),
    },
  },
  'get-card-cvv': {
    method: 'GET',
    path: '/api/partner/cards/:id/cvv',
    ownership: OWNS_CARD,
    schemas: { query: 'card-secret-query' },
    sensitive: true,
    ends: issuer('GET', '/cards/{id}/cvv', 'cvv', { query: ['expDate', 'securityKey'] }),
    audit: 'card.cvv.read',
    doc: {
      summary: 'Get card CVV',
      description:
        'The CVV2, encrypted with RSA-OAEP (SHA-256) under `securityKey` (your RSA public key, base64 SPKI DER, at least 2048 bits); decrypt it with your private key. Audited as `card.cvv.read`; never logged.',
      tag: 'Card secrets and PIN',
      answer: json('EncryptedCvv', 'The encrypted CVV2'),
    },
  },
  'get-card-pan': {
    method: 'GET',
    path: '/api/partner/cards/:id/pan',
    ownership: OWNS_CARD,
    schemas: { query: 'card-secret-query' },
    sensitive: true,
    ends: issuer('GET', '/cards/{id}/pan', 'card-number', { query: ['expDate', 'securityKey'] }),
    audit: 'card.pan.read',
    doc: {
      summary: 'Get full card number',
      description: 'The card number (PAN), encrypted with RSA-OAEP (SHA-256) under `securityKey`. Audited as `card.pan.read`; never logged.',
      tag: 'Card secrets and PIN',
      answer: json('EncryptedCardNumber', 'The encrypted card number'),
    },
  },
  'set-card-3ds-answer': {
    method: 'PUT',
    path: '/api/partner/cards/:id/3ds/answer',
    ownership: OWNS_CARD,
    schemas: { body: 'three-ds-answer' },
    sensitive: true,
    ends: ORCHESTRATION,
    audit: 'card.3ds-answer.update',
    doc: { summary: 'Set 3DS answer', description: 'Forwarded to the issuer; never stored, answered or logged by the gateway.', tag: 'Cards', answer: CARD },
  },
  'set-card-3ds-phone': {
    method: 'PUT',
    path: '/api/partner/cards/:id/3ds/phone',
    ownership: OWNS_CARD,
    schemas: { body: 'three-ds-phone' },
    ends: LOCAL,
    audit: 'card.3ds-phone.update',
    doc: { summary: 'Change 3DS phone number', description: 'E.164; kept by the gateway only.', tag: 'Cards', answer: CARD },
  },
  'reset-card-pin-tries': {
    method: 'POST',
    path: '/api/partner/cards/:id/pin/reset-tries',
    ownership: OWNS_CARD,
    schemas: { body: 'empty-body' },
    sensitive: true,
    ends: ORCHESTRATION,
    audit: 'card.pin.reset-tries',
    doc: { summary: 'Reset PIN tries', description: 'Resets the PIN-attempt counter. Takes no field: send `{}`.', tag: 'Card secrets and PIN', answer: CARD },
  },
  'change-card-pin': {
    method: 'POST',
    path: '/api/partner/cards/:id/pin/change',
    ownership: OWNS_CARD,
    schemas: { body: 'pin-change' },
    sensitive: true,
    ends: ORCHESTRATION,
    audit: 'card.pin.change',
    doc: {
      summary: 'Change PIN',
      description: `\`pin\` is a PIN block encrypted with RSA-OAEP (SHA-256) under the key of \`GET /pin-encryption-key\`. ${PLATFORM_REFUSES}`,
      tag: 'Card secrets and PIN',
      answer: CARD,
    },
  },
  'force-card-pin-lock': {
    method: 'POST',
    path: '/api/partner/cards/:id/pin/force-lock',
    ownership: OWNS_CARD,
    schemas: { body: 'pin-force-lock' },
    sensitive: true,
    ends: ORCHESTRATION,
    audit: 'card.pin.force-lock',
    doc: { summary: 'Force PIN lock', description: PLATFORM_REFUSES, tag: 'Card secrets and PIN', answer: STATUS_RESULT },
  },
  'authorize-cardholder': {
    method: 'POST',
    path: '/api/partner/cards/:id/authorize',
    ownership: OWNS_CARD,
    schemas: { body: 'card-authorize' },
    sensitive: true,
    ends: ORCHESTRATION,
    audit: 'card.authorize',
    doc: { summary: 'Authorize cardholder', description: 'PIN-less action authorized with an encrypted PIN block.', tag: 'Card secrets and PIN', answer: CARD },
  },
  'get-card-limits': {
    method: 'GET',
    path: '/api/partner/cards/:id/limits',
    ownership: OWNS_CARD,
    ends: issuer('GET', '/cards/{id}/limits', 'limits'),
    doc: { summary: 'Get all card limits', tag: 'Card limits', answer: jsonArray('CardLimit', 'Every limit of the card') },
  },
  'patch-card-limits': {
    method: 'PATCH',
    path: '/api/partner/cards/:id/limits',
    ownership: OWNS_CARD,
    schemas: { body: 'limits-patch' },
    ends: ORCHESTRATION,
    audit: 'card.limits.update',
    doc: { summary: 'Patch card limits', description: 'Sets 1 to 5 distinct limits at once; answers every limit of the card.', tag: 'Card limits', answer: jsonArray('CardLimit', 'Every limit of the card') },
  },
  'set-card-limit': {
    method: 'PUT',
    path: '/api/partner/cards/:id/limits/:limitName',
    ownership: OWNS_CARD,
    schemas: { params: 'limit-params', body: 'limit-set' },
    ends: ORCHESTRATION,
    audit: 'card.limits.update',
    doc: { summary: 'Set a single card limit', description: "The body's `name` must be the path's `limitName`.", tag: 'Card limits', answer: json('CardLimit', 'The limit') },
  },
  'get-card-limit': {
    method: 'GET',
    path: '/api/partner/cards/:id/limits/:limitName',
    ownership: OWNS_CARD,
    schemas: { params: 'limit-params' },
    ends: issuer('GET', '/cards/{id}/limits/{limitName}', 'limit'),
    doc: { summary: 'Get a single card limit', tag: 'Card limits', answer: json('CardLimit', 'The limit') },
  },
  'get-card-limit-available': {
    method: 'GET',
    path: '/api/partner/cards/:id/limits/:limitName/available',
    ownership: OWNS_CARD,
    schemas: { params: 'limit-params' },
    ends: issuer('GET', '/cards/{id}/limits/{limitName}/available', 'limit-available'),
    doc: { summary: 'Get available limit', tag: 'Card limits', answer: json('AvailableLimit', 'What is left of the limit') },
  },

  // Spend controls (docs/spend-controls.md): kept by the gateway, enforced on each authorization
  'get-card-spend-controls': {
    method: 'GET',
    path: '/api/partner/cards/:id/spend-controls',
    ownership: OWNS_CARD,
    ends: LOCAL,
    doc: { summary: "Get a card's spend controls", description: "The card's own controls; `{}` when none are set. Your default (`GET /spend-controls`) applies as well.", tag: 'Spend controls', answer: SPEND_CONTROLS },
  },
  'set-card-spend-controls': {
    method: 'PUT',
    path: '/api/partner/cards/:id/spend-controls',
    ownership: OWNS_CARD,
    schemas: { body: 'spend-controls' },
    ends: LOCAL,
    audit: 'card.spend-controls.update',
    doc: {
      summary: "Replace a card's spend controls",
      description: `Replaces the whole object with the body; ${CLEARING_CONTROLS} A purchase must pass these and your default. Audited; emits \`card.updated\` with \`changed: ["spendControls"]\`.`,
      tag: 'Spend controls',
      answer: SPEND_CONTROLS,
    },
  },
  'get-spend-controls': {
    method: 'GET',
    path: '/api/partner/spend-controls',
    ends: LOCAL,
    doc: { summary: 'Get your default spend controls', description: 'Your default for all your cards; `{}` when none are set.', tag: 'Spend controls', answer: SPEND_CONTROLS },
  },
  'set-spend-controls': {
    method: 'PUT',
    path: '/api/partner/spend-controls',
    schemas: { body: 'spend-controls' },
    ends: LOCAL,
    audit: 'partner.spend-controls.update',
    doc: {
      summary: 'Replace your default spend controls',
      description: `Your default for all your cards, checked on each card's purchases besides the card's own controls (velocity counts each card's own authorizations). Replaces the whole object with the body; ${CLEARING_CONTROLS} Audited.`,
      tag: 'Spend controls',
      answer: SPEND_CONTROLS,
    },
  },
  'get-pin-encryption-key': {
    method: 'GET',
    path: '/api/partner/pin-encryption-key',
    // A public key: not sensitive (the shipped pipeline still runs sensitive-data, for no-store).
    ends: issuer('GET', '/pin-encryption-key', 'pin-encryption-key'),
    doc: { summary: 'Get PIN encryption key', description: "The issuer's RSA key to encrypt PIN blocks under (RSA-OAEP-256).", tag: 'Card secrets and PIN', answer: json('PinEncryptionKey', 'The PIN encryption key') },
  },

  // Fees and delivery (spec 4.4): the gateway fixes OperationType
  'list-delivery-methods': {
    method: 'GET',
    path: '/api/partner/delivery-methods',
    schemas: { query: 'delivery-methods-query' },
    ends: { kind: 'upstream', upstream: 'processing', method: 'GET', path: '/delivery-methods', query: ['country'], response: 'delivery-methods' },
    doc: { summary: 'List delivery methods by country', tag: 'Fees and delivery', answer: json('DeliveryMethods', 'The delivery methods') },
  },
  'check-card-issuing-fee': {
    method: 'POST',
    path: '/api/partner/fees/card-issuing',
    ownership: OWNS_BODY_CARD_AND_CLIENT,
    schemas: { body: 'fee-check' },
    ends: { kind: 'upstream', upstream: 'processing', method: 'POST', path: '/fees', setBody: { OperationType: 'CARD_ISSUING_FEE' }, response: 'fee' },
    doc: { summary: 'Check card issuing fee', description: 'The gateway sets `OperationType` to `CARD_ISSUING_FEE`.', tag: 'Fees and delivery', answer: json('FeeResult', 'The fee') },
  },
  'check-card-delivery-fee': {
    method: 'POST',
    path: '/api/partner/fees/card-delivery',
    ownership: OWNS_BODY_CARD_AND_CLIENT,
    schemas: { body: 'fee-check' },
    ends: { kind: 'upstream', upstream: 'processing', method: 'POST', path: '/fees', setBody: { OperationType: 'CARD_DELIVERY_FEE' }, response: 'fee' },
    doc: { summary: 'Check card delivery fee', description: 'The gateway sets `OperationType` to `CARD_DELIVERY_FEE`.', tag: 'Fees and delivery', answer: json('FeeResult', 'The fee') },
  },

  // Transactions (docs/transactions.md): the gateway's projection of the processing system's
  'list-transactions': {
    method: 'GET',
    path: '/api/partner/transactions',
    schemas: { query: 'transactions-search-query' },
    ends: LOCAL,
    doc: {
      summary: 'Search transactions',
      description:
        'Your transactions across all your individuals and B2B cards, newest first by `createdAt`, filtered by any of `cardKey`, `individualId`, `status`, `type` and a `from` (inclusive) / `to` (exclusive) window. Pass the answer\'s `nextCursor` as `cursor`, with the same filters, for the next (older) page: transactions recorded meanwhile never shift a page; `nextCursor` is null on the last page. A filter naming a card or individual that is not yours matches nothing. Empty when the processing system is not configured for you.',
      tag: 'Transactions',
      answer: json('TransactionList', 'A page of transactions'),
    },
  },
  'get-transaction': {
    method: 'GET',
    path: '/api/partner/transactions/:id',
    ownership: OWNS_TRANSACTION,
    ends: LOCAL,
    doc: { summary: 'Get transaction', description: 'One of your transactions with its `history`: every step of its life, oldest first.', tag: 'Transactions', answer: json('Transaction', 'The transaction') },
  },

  // Wallet provisioning and network tokens (docs/tokens.md)
  'provision-card-apple-pay': {
    method: 'POST',
    path: '/api/partner/cards/:id/wallet-provisioning/apple-pay',
    ownership: OWNS_CARD,
    schemas: { body: 'wallet-provisioning-apple-pay' },
    sensitive: true,
    ends: ORCHESTRATION,
    audit: 'card.wallet.provision',
    doc: {
      summary: 'Provision a card to Apple Pay',
      description: PROVISIONING('Apple Pay (`PKAddPaymentPassRequest`)', "PassKit's `PKAddPaymentPassViewController` delegate (`certificates`, `nonce`, `nonceSignature`)"),
      tag: 'Wallet provisioning',
      conflicts: ['card_not_active'],
      answer: json('ApplePayProvisioning', 'The payload for Apple Pay'),
    },
  },
  'provision-card-google-pay': {
    method: 'POST',
    path: '/api/partner/cards/:id/wallet-provisioning/google-pay',
    ownership: OWNS_CARD,
    schemas: { body: 'wallet-provisioning-google-pay' },
    sensitive: true,
    ends: ORCHESTRATION,
    audit: 'card.wallet.provision',
    doc: {
      summary: 'Provision a card to Google Pay',
      description: PROVISIONING("Google Pay's `pushTokenize`", 'the Google Pay SDK (`walletAccountId`, `deviceId`)'),
      tag: 'Wallet provisioning',
      conflicts: ['card_not_active'],
      answer: json('GooglePayProvisioning', 'The payload for Google Pay'),
    },
  },
  'list-card-tokens': {
    method: 'GET',
    path: '/api/partner/cards/:id/tokens',
    ownership: OWNS_CARD,
    ends: LOCAL,
    doc: { summary: "List a card's tokens", description: 'Every network token of the card (wallets and merchants), newest first; a card has a handful, so there is no paging.', tag: 'Tokens', answer: json('CardTokens', "The card's tokens") },
  },
  'list-tokens': {
    method: 'GET',
    path: '/api/partner/tokens',
    schemas: { query: 'tokens-search-query' },
    ends: LOCAL,
    doc: {
      summary: 'Search tokens',
      description:
        "Your network tokens across all your cards, newest first by `createdAt` (ties by `_id`), filtered by any of `cardKey`, `status` and `walletProvider` (combined with AND). Pass the answer's `nextCursor` as `cursor`, with the same filters, for the next (older) page: tokens made meanwhile never shift a page; `nextCursor` is null on the last page. A cursor changed, or used with other filters, is 400. A `cardKey` that is not yours matches nothing.",
      tag: 'Tokens',
      answer: json('TokenList', 'A page of tokens'),
    },
  },
  'get-token': {
    method: 'GET',
    path: '/api/partner/tokens/:id',
    ownership: OWNS_TOKEN,
    ends: LOCAL,
    doc: { summary: 'Get token', description: 'One of your network tokens with its `history`: every status it took, oldest first.', tag: 'Tokens', answer: TOKEN },
  },
  'suspend-token': {
    method: 'POST',
    path: '/api/partner/tokens/:id/suspend',
    ownership: OWNS_TOKEN,
    schemas: { body: 'token-change' },
    ends: ORCHESTRATION,
    audit: 'token.suspend',
    doc: {
      summary: 'Suspend token',
      description: TOKEN_CHANGE(
        'An `active` token becomes `suspended`, `suspendedBy: partner`: it stays suspended when its card is unlocked.',
        'A suspended token answers 200 unchanged (one the card\'s state suspended becomes yours, with an event); any other status is 409 `token_transition_invalid`.'
      ),
      tag: 'Tokens',
      conflicts: ['token_transition_invalid'],
      answer: TOKEN,
    },
  },
  'resume-token': {
    method: 'POST',
    path: '/api/partner/tokens/:id/resume',
    ownership: OWNS_TOKEN,
    schemas: { body: 'token-change' },
    ends: ORCHESTRATION,
    audit: 'token.resume',
    doc: {
      summary: 'Resume token',
      description: TOKEN_CHANGE(
        'A `suspended` token becomes `active` again; its card must be ACTIVE (else 409 `card_not_active`: unlock the card).',
        'An active token answers 200 unchanged; any other status is 409 `token_transition_invalid`.'
      ),
      tag: 'Tokens',
      conflicts: ['token_transition_invalid', 'card_not_active'],
      answer: TOKEN,
    },
  },
  'deactivate-token': {
    method: 'POST',
    path: '/api/partner/tokens/:id/deactivate',
    ownership: OWNS_TOKEN,
    schemas: { body: 'token-change' },
    ends: ORCHESTRATION,
    audit: 'token.deactivate',
    doc: {
      summary: 'Deactivate token',
      description: TOKEN_CHANGE(
        'The token is `deactivated` for good: the wallet no longer holds it.',
        'A `deactivated` or `declined` token is 409 `token_transition_invalid`.'
      ),
      tag: 'Tokens',
      conflicts: ['token_transition_invalid'],
      answer: TOKEN,
    },
  },

  // Events (docs/events.md)
  'list-events': {
    method: 'GET',
    path: '/api/partner/events',
    schemas: { query: 'events-query' },
    ends: LOCAL,
    doc: {
      summary: 'List events',
      description:
        'Your events of the last 30 days, newest first, optionally of one `type`. Pass the answer\'s `nextCursor` as `after` for the next (older) page: events written meanwhile never shift a page; `nextCursor` is null on the last page.',
      tag: 'Events',
      answer: json('EventPage', 'A page of events'),
    },
  },
  'get-event': {
    method: 'GET',
    path: '/api/partner/events/:id',
    ownership: OWNS_EVENT,
    ends: LOCAL,
    doc: { summary: 'Get event', description: 'One of your events, as the list answers it.', tag: 'Events', answer: json('Event', 'The event') },
  },
  'resend-event': {
    method: 'POST',
    path: '/api/partner/events/:id/resend',
    ownership: OWNS_EVENT,
    schemas: { body: 'empty-body' },
    ends: LOCAL,
    doc: {
      summary: 'Resend event',
      description: 'Sends the event again, with the same id and body, to every enabled endpoint subscribed to its type (also one that failed to receive it). Resends are not ordered among the card\'s other events.',
      tag: 'Events',
      answer: json('EventResend', 'The event is queued for delivery', 202),
    },
  },

  // Webhooks (docs/webhooks.md)
  'list-webhook-endpoints': {
    method: 'GET',
    path: '/api/partner/webhooks/endpoints',
    ends: LOCAL,
    doc: { summary: 'List webhook endpoints', description: 'Your endpoints, oldest first, never with their secrets.', tag: 'Webhooks', answer: json('WebhookEndpointList', 'Your endpoints') },
  },
  'create-webhook-endpoint': {
    method: 'POST',
    path: '/api/partner/webhooks/endpoints',
    schemas: { body: 'webhook-endpoint-create' },
    sensitive: true,
    ends: LOCAL,
    audit: 'webhook.endpoint.create',
    doc: {
      summary: 'Create webhook endpoint',
      description:
        'Registers a URL to receive your events (all types when `events` is omitted). The answer carries the signing `secret`, shown only here. The URL must be https and resolve to public addresses (in sandbox mode, http and localhost are accepted); otherwise 400. At most 16 endpoints (409 `conflict`).',
      tag: 'Webhooks',
      conflicts: ['conflict'],
      answer: json('WebhookEndpointCreated', 'The endpoint and its secret', 201),
    },
  },
  'get-webhook-endpoint': {
    method: 'GET',
    path: '/api/partner/webhooks/endpoints/:id',
    ownership: OWNS_WEBHOOK_ENDPOINT,
    ends: LOCAL,
    doc: { summary: 'Get webhook endpoint', description: 'One of your endpoints, never with its secret.', tag: 'Webhooks', answer: json('WebhookEndpoint', 'The endpoint') },
  },
  'update-webhook-endpoint': {
    method: 'PATCH',
    path: '/api/partner/webhooks/endpoints/:id',
    ownership: OWNS_WEBHOOK_ENDPOINT,
    schemas: { body: 'webhook-endpoint-update' },
    ends: LOCAL,
    audit: 'webhook.endpoint.update',
    doc: { summary: 'Update webhook endpoint', description: 'Changes the URL (checked as at creation), the event types, the description, or enables / disables it.', tag: 'Webhooks', answer: json('WebhookEndpoint', 'The endpoint') },
  },
  'delete-webhook-endpoint': {
    method: 'DELETE',
    path: '/api/partner/webhooks/endpoints/:id',
    ownership: OWNS_WEBHOOK_ENDPOINT,
    ends: LOCAL,
    audit: 'webhook.endpoint.delete',
    doc: { summary: 'Delete webhook endpoint', description: 'Deletes the endpoint: its pending deliveries are cancelled.', tag: 'Webhooks', answer: { status: 204, description: 'Deleted' } },
  },
  'rotate-webhook-secret': {
    method: 'POST',
    path: '/api/partner/webhooks/endpoints/:id/rotate-secret',
    ownership: OWNS_WEBHOOK_ENDPOINT,
    schemas: { body: 'empty-body' },
    sensitive: true,
    ends: LOCAL,
    audit: 'webhook.secret.rotate',
    doc: {
      summary: 'Rotate webhook secret',
      description: 'A new signing secret, shown only here. For 24 hours deliveries are signed with both, so `Partner-Gateway-Signature` carries two `v1=` values (the new one first).',
      tag: 'Webhooks',
      answer: json('WebhookSecret', 'The new secret'),
    },
  },
  'list-webhook-deliveries': {
    method: 'GET',
    path: '/api/partner/webhooks/endpoints/:id/deliveries',
    ownership: OWNS_WEBHOOK_ENDPOINT,
    schemas: { query: 'webhook-deliveries-query' },
    ends: LOCAL,
    doc: {
      summary: 'List delivery attempts',
      description: "The endpoint's delivery attempts, newest first: event, attempt number, time, HTTP status or error, duration, next retry. Pass `nextCursor` as `after` for the next page.",
      tag: 'Webhooks',
      answer: json('WebhookAttemptPage', 'A page of attempts'),
    },
  },

  // The partner's decision endpoint for real-time authorizations (docs/authorization-endpoint.md): one per partner, no id in the path.
  'create-authorization-endpoint': {
    method: 'POST',
    path: '/api/partner/authorization-endpoint',
    schemas: { body: 'authorization-endpoint-create' },
    sensitive: true,
    ends: LOCAL,
    audit: 'authorization.endpoint.create',
    doc: {
      summary: 'Create authorization endpoint',
      description:
        'Registers your decision endpoint: the gateway POSTs it a signed `authorization.request` for each purchase of your cards and applies your answer. The answer carries the signing `secret`, shown only here. The URL must be https and resolve to public addresses (in sandbox mode, http and localhost are accepted); otherwise 400. One per partner: a second one is 409 `authorization_endpoint_exists`.',
      tag: 'Authorization endpoint',
      conflicts: ['authorization_endpoint_exists'],
      answer: json('AuthorizationEndpointCreated', 'The endpoint and its secret', 201),
    },
  },
  'get-authorization-endpoint': {
    method: 'GET',
    path: '/api/partner/authorization-endpoint',
    ends: LOCAL,
    doc: { summary: 'Get authorization endpoint', description: 'Your decision endpoint, never with its secret; 404 when you have none.', tag: 'Authorization endpoint', notFound: true, answer: json('AuthorizationEndpoint', 'The endpoint') },
  },
  'update-authorization-endpoint': {
    method: 'PATCH',
    path: '/api/partner/authorization-endpoint',
    schemas: { body: 'authorization-endpoint-update' },
    ends: LOCAL,
    audit: 'authorization.endpoint.update',
    doc: {
      summary: 'Update authorization endpoint',
      description: 'Changes the URL (checked as at creation), `timeoutMs`, `defaultDecision`, or enables / disables it (a disabled endpoint is not asked). 404 when you have none.',
      tag: 'Authorization endpoint',
      notFound: true,
      answer: json('AuthorizationEndpoint', 'The endpoint'),
    },
  },
  'delete-authorization-endpoint': {
    method: 'DELETE',
    path: '/api/partner/authorization-endpoint',
    ends: LOCAL,
    audit: 'authorization.endpoint.delete',
    doc: { summary: 'Delete authorization endpoint', description: 'Deletes your decision endpoint and its secrets: purchases are no longer sent to you. 404 when you have none.', tag: 'Authorization endpoint', notFound: true, answer: { status: 204, description: 'Deleted' } },
  },
  'rotate-authorization-endpoint-secret': {
    method: 'POST',
    path: '/api/partner/authorization-endpoint/rotate-secret',
    schemas: { body: 'empty-body' },
    sensitive: true,
    ends: LOCAL,
    audit: 'authorization.endpoint.secret.rotate',
    doc: {
      summary: 'Rotate authorization endpoint secret',
      description: 'A new signing secret, shown only here. For 24 hours requests are signed with both, so `Partner-Gateway-Signature` carries two `v1=` values (the new one first). 404 when you have no endpoint.',
      tag: 'Authorization endpoint',
      notFound: true,
      answer: json('AuthorizationEndpointSecret', 'The new secret'),
    },
  },

  // Sandbox simulations (docs/sandbox.md): sandbox mode only, 404 elsewhere.
  'simulate-card-transaction': {
    method: 'POST',
    path: '/api/partner/simulate/cards/:id/transactions',
    ownership: OWNS_CARD,
    schemas: { body: 'simulate-transaction' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.transaction',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate a card transaction',
      description:
        'Sandbox mode only (404 elsewhere). The shortcut: the processing sandbox records a transaction on the card: `authorization` (the default) is PENDING, `clearing` a force-post (SETTLED with no authorization before it), `decline` DECLINED with its `declineReason`. It then appears in the transactions and as a `transaction.created` event. The lifecycle routes (`/simulate/cards/{id}/authorizations`, `/simulate/transactions/{id}/...`) play the steps of one transaction.',
      tag: 'Sandbox',
      answer: json('Transaction', 'The recorded transaction', 201),
    },
  },
  'simulate-card-authorization': {
    method: 'POST',
    path: '/api/partner/simulate/cards/:id/authorizations',
    ownership: OWNS_CARD,
    schemas: { body: 'simulate-authorization' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.authorization',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate an authorization',
      description:
        'Sandbox mode only (404 elsewhere). The processing sandbox authorizes a purchase or withdrawal on the card: a PENDING transaction, a `transaction.created` event. `authorizationId` is the processor\'s id of the authorization: sending the same one again plays the processor\'s retry and answers the same transaction, nothing new.',
      tag: 'Sandbox',
      conflicts: ['authorization_id_reused'],
      answer: json('Transaction', 'The authorized transaction', 201),
    },
  },
  'simulate-transaction-clearing': {
    method: 'POST',
    path: '/api/partner/simulate/transactions/:id/clearing',
    ownership: OWNS_TRANSACTION,
    schemas: { body: 'simulate-transaction-step' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.clearing',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate a clearing',
      description: 'Sandbox mode only (404 elsewhere). Clears a PENDING transaction in full, or for less than its amount (`settledAmount`): SETTLED, a `transaction.updated` event (`change: clearing`).',
      tag: 'Sandbox',
      conflicts: ['transaction_not_pending', 'amount_exceeds_remaining'],
      answer: json('Transaction', 'The transaction after the step'),
    },
  },
  'simulate-transaction-reversal': {
    method: 'POST',
    path: '/api/partner/simulate/transactions/:id/reversal',
    ownership: OWNS_TRANSACTION,
    schemas: { body: 'simulate-transaction-step' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.reversal',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate a reversal',
      description: 'Sandbox mode only (404 elsewhere). Reverses a PENDING transaction in full (REVERSED, `amount` 0) or in part (`amount` lowered, still PENDING): a `transaction.updated` event (`change: reversal`).',
      tag: 'Sandbox',
      conflicts: ['transaction_not_pending', 'amount_exceeds_remaining'],
      answer: json('Transaction', 'The transaction after the step'),
    },
  },
  'simulate-transaction-expiry': {
    method: 'POST',
    path: '/api/partner/simulate/transactions/:id/expiry',
    ownership: OWNS_TRANSACTION,
    schemas: { body: 'empty-body' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.expiry',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate an expiry',
      description: 'Sandbox mode only (404 elsewhere). A PENDING authorization that was never cleared expires: EXPIRED, a `transaction.updated` event (`change: expiry`).',
      tag: 'Sandbox',
      conflicts: ['transaction_not_pending'],
      answer: json('Transaction', 'The transaction after the step'),
    },
  },
  'simulate-transaction-refund': {
    method: 'POST',
    path: '/api/partner/simulate/transactions/:id/refund',
    ownership: OWNS_TRANSACTION,
    schemas: { body: 'simulate-transaction-step' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.refund',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate a refund',
      description: 'Sandbox mode only (404 elsewhere). Refunds a SETTLED purchase, in full (what is left of its settled amount) or in part: a new REFUND transaction whose `relatedTransactionId` is the purchase, and its `transaction.created` event.',
      tag: 'Sandbox',
      conflicts: ['refund_not_allowed', 'refund_exceeds_settled'],
      answer: json('Transaction', 'The new REFUND transaction', 201),
    },
  },
  'simulate-card-issuer-status': {
    method: 'POST',
    path: '/api/partner/simulate/cards/:id/issuer-status',
    ownership: OWNS_CARD,
    schemas: { body: 'simulate-issuer-status' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.issuer-status',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate an issuer status change',
      description:
        'Sandbox mode only (404 elsewhere). The issuer sandbox sets the card\'s status on its own, whatever the partner transition table allows (as a fraud team or an expiry would); a `card.status_changed` event with `source: "issuer"` follows. A CLOSED card cannot change (409 `invalid_transition`).',
      tag: 'Sandbox',
      conflicts: ['invalid_transition'],
      answer: STATUS_RESULT,
    },
  },
  'simulate-card-tokenization': {
    method: 'POST',
    path: '/api/partner/simulate/cards/:id/tokenizations',
    ownership: OWNS_CARD,
    schemas: { body: 'simulate-tokenization' },
    ends: ORCHESTRATION,
    audit: 'card.simulate.tokenization',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate a tokenization',
      description:
        "Sandbox mode only (404 elsewhere). A wallet or a merchant asks to tokenize the card: the processing sandbox runs the whole tokenization request through the gateway's decision (the card's state, the wallet controls, your decision endpoint when enrolled for `tokenization.request`, the network's verdict) and answers the token it made: `active`, `pending_verification` (the `token.verification_code` event carries the code) or `declined`, with its `token.created` event. `tokenizationId` is the processor's id of the request: the same one again plays its retry and answers the same token, nothing new.",
      tag: 'Sandbox',
      conflicts: ['tokenization_id_reused'],
      answer: json('Token', 'The token made', 201),
    },
  },
  'simulate-token-verification': {
    method: 'POST',
    path: '/api/partner/simulate/tokens/:id/verify',
    ownership: OWNS_TOKEN,
    schemas: { body: 'simulate-token-verification' },
    ends: ORCHESTRATION,
    audit: 'token.simulate.verify',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate a verification',
      description:
        'Sandbox mode only (404 elsewhere). The cardholder types `code` into the wallet: the right one makes the `pending_verification` token `active`; a wrong one is 409 `verification_failed` with `attemptsLeft` (0: the token is now `declined`). A token that is not `pending_verification` is 409 `token_transition_invalid`.',
      tag: 'Sandbox',
      conflicts: ['verification_failed', 'token_transition_invalid'],
      answer: TOKEN,
    },
  },
  'simulate-token-authorization': {
    method: 'POST',
    path: '/api/partner/simulate/tokens/:id/authorizations',
    ownership: OWNS_TOKEN,
    schemas: { body: 'simulate-authorization' },
    ends: ORCHESTRATION,
    audit: 'token.simulate.authorization',
    sandboxOnly: true,
    doc: {
      summary: 'Simulate a purchase with a token',
      description:
        "Sandbox mode only (404 elsewhere). The processing sandbox authorizes a purchase made with the token (the phone's wallet, or the merchant keeping the card on file), decided like any other on the token's card now: a transaction with `tokenId` and `walletProvider`, and its `transaction.created` event. `authorizationId` as for `POST /simulate/cards/{id}/authorizations`.",
      tag: 'Sandbox',
      conflicts: ['authorization_id_reused'],
      answer: json('Transaction', 'The authorized (or declined) transaction', 201),
    },
  },
} satisfies Record<string, Operation>;
