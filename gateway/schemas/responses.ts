import { LIMIT_NAMES } from '../../contracts/upstreams';
import { CARD_STATUSES } from '../shapes/card';
import { ERROR_CATALOG } from '../errors';
import { EXP_DATE_PATTERN } from '../validation/keywords';
import { ID_TYPES } from './individual-create';
import { VELOCITY_WINDOWS } from './spend-controls';
import { TOKEN_CHANGES, TOKEN_DEVICE_TYPES, TOKEN_STATUSES, WALLET_PROVIDERS } from '../shapes/token';
import { DECLINE_REASON_CODES, TRANSACTION_STATUSES, TRANSACTION_STEP_KINDS, TRANSACTION_TYPES } from '../upstreams/partner-transaction';

/** applicationStatus values (docs/individuals.md). */
export const APPLICATION_STATUSES = ['PENDING', 'APPROVED'] as const;
/** dashboardStatus values: how the record shows in the operator's dashboard (docs/individuals.md). */
export const DASHBOARD_STATUSES = ['ACTIVE', 'SUSPENDED', 'CLOSED'] as const;

/**
 * JSON Schemas of what the partner API answers: one schema per resource, written once here and
 * used by the OpenAPI document (gateway/openapi) and by the tests that validate real responses
 * against them. Each mirrors the function that builds the answer (named in its description's
 * source note), field for field: `additionalProperties: false` wherever the gateway builds the
 * object itself, so a field added to a handler without a schema change fails the tests.
 *
 * Composite schemas embed their parts as the same JS objects (no `$ref`, no `$id`), so each entry
 * of {@link RESPONSE_SCHEMAS} is self-contained for AJV; the OpenAPI generator turns every embedded
 * named part back into a `$ref` to its component.
 */
export type ResponseSchema = Record<string, unknown>;

const string = (description?: string) => ({ type: 'string', ...(description ? { description } : {}) });
const nullableString = (description: string) => ({ type: ['string', 'null'], description });
const dateTime = (description = 'ISO 8601 date-time (UTC)') => ({ type: 'string', format: 'date-time', description });
const OBJECT_ID = { type: 'string', pattern: '^[0-9a-f]{24}$', description: '24-character hexadecimal id' };
const CARD_STATUS = { type: 'string', enum: CARD_STATUSES, description: 'CardStatus (spec 3.1; docs/cards.md maps issuer codes to it)' };
const STATUS_CODE = { type: 'string', description: 'Raw issuer-platform status code (00, I1, L1, T1, S1 to S6)' };
const CARD_TYPE = { type: 'string', enum: ['virtual', 'physical'] };
const OWNER_TYPE = { type: 'string', enum: ['individual', 'b2b'] };
const AMOUNT = (description: string) => ({ type: 'number', description });

function object(description: string, properties: Record<string, unknown>, required: string[] = Object.keys(properties)): ResponseSchema {
  return { type: 'object', description, additionalProperties: false, required, properties };
}

/** The Pagination object of every paginated answer except the individual list (docs/pagination.md). */
export const PAGINATION = object('Position of a page in a list (docs/pagination.md)', {
  page: { type: 'integer', minimum: 1, description: 'The page returned, from 1' },
  limit: { type: 'integer', minimum: 1, maximum: 100, description: 'The page size asked for' },
  total: {
    type: 'integer',
    minimum: 0,
    description:
      'Items across all pages: exact, or a lower bound where the list caps its count (the partner-wide card list with a search past 10,000, an individual\'s audit log and card status history past 1,000), which `X-Total-Capped: true` says',
  },
  totalPages: { type: 'integer', minimum: 0, description: '`ceil(total / limit)`, on the partner-wide card list of at most its first 10,000 items (the pages it serves); 0 when there is no item' },
  hasMore: { type: 'boolean', description: 'A page after this one holds items (exact also when `total` is capped; false on the last page the partner-wide card list serves)' },
});

const cardFields = {
  cardKey: string('Issuer-platform identifier of the card: the `{id}` of card routes'),
  cardMask: string('Masked card number'),
  type: CARD_TYPE,
  status: CARD_STATUS,
  statusCode: STATUS_CODE,
  currency: string('Three upper-case letters'),
  ownerType: OWNER_TYPE,
  ownerId: string('The individual _id or the B2B tenant _id, as ownerType says'),
  createdAt: dateTime(),
  productCode: string(),
  holderClientCode: nullableString("The holder's clientID"),
  expDate: { type: 'string', pattern: EXP_DATE_PATTERN, description: 'Card expiry, MM/YYYY' },
  embossedName: nullableString('Name embossed on the card; null when none'),
  nickname: nullableString('Nickname kept by the gateway only; null until set'),
  threeDsPhone: nullableString('3-D Secure phone number kept by the gateway only (E.164); null until set'),
};
type CardField = keyof typeof cardFields;
const pick = (names: CardField[]) => Object.fromEntries(names.map((name) => [name, cardFields[name]]));

/** The full card (spec 2.3 plus nickname and threeDsPhone): `toCard`. Never a card number or CVV. */
export const CARD = object('A card (spec 2.3) with the locally kept nickname and 3DS phone. Never holds the card number or CVV.', cardFields);

/** The first nine fields of 2.3 (list of an individual's cards): `toCardListItem`. */
export const CARD_LIST_ITEM = object(
  "A card in an individual's card list: the first nine fields of the card (spec 2.3)",
  pick(['cardKey', 'cardMask', 'type', 'status', 'statusCode', 'currency', 'ownerType', 'ownerId', 'createdAt'])
);

/** A card of the partner-wide list (docs/card-search.md): `toCardSummary`. */
export const CARD_SUMMARY = object(
  'A card in the partner-wide list: the card without productCode and holderClientCode, with its nickname (docs/card-search.md)',
  pick(['cardKey', 'cardMask', 'type', 'status', 'statusCode', 'currency', 'ownerType', 'ownerId', 'nickname', 'embossedName', 'expDate', 'createdAt'])
);

/** Card status result (spec 2.4). */
export const CARD_STATUS_RESULT = object('Card status result (spec 2.4)', pick(['cardKey', 'status', 'statusCode']));

/** Card limit (spec 2.5): `cardLimit` transform and the limit handlers. */
export const CARD_LIMIT = object('Card limit (spec 2.5)', {
  name: string('dailyPurchase, monthlyPurchase, dailyWithdrawal, monthlyWithdrawal or singleTransaction'),
  value: AMOUNT('The limit, in the card currency'),
  currency: string(),
  used: AMOUNT('Spent against the limit so far'),
  available: AMOUNT('max(0, value − used)'),
});

/** Answer of the available-limit read. */
export const AVAILABLE_LIMIT = object('What is left of one card limit', { available: AMOUNT('max(0, value − used), in the card currency') });

/** Spend controls as stored (`readSpendControls`): only the fields set, `{}` when none. */
export const SPEND_CONTROLS = object(
  "Spend controls: a card's own, or your default for all your cards (docs/spend-controls.md). Only the fields set; `{}` when none",
  {
    maxAmountPerTransaction: AMOUNT('A purchase above it is declined (`amount_exceeded`), in the card currency'),
    allowedMccs: { type: 'array', items: string('4-digit merchant category code'), description: 'Only these merchant categories are allowed' },
    blockedMccs: { type: 'array', items: string('4-digit merchant category code'), description: 'These merchant categories are declined' },
    allowedCountries: { type: 'array', items: string('ISO 3166-1 alpha-2'), description: 'Only merchants in these countries are allowed' },
    blockedCountries: { type: 'array', items: string('ISO 3166-1 alpha-2'), description: 'Merchants in these countries are declined' },
    allowedWalletProviders: { type: 'array', items: { type: 'string', enum: WALLET_PROVIDERS }, description: 'A purchase with a token is allowed only from these wallets (`wallet_provider_blocked`); card purchases are not affected' },
    blockedWalletProviders: { type: 'array', items: { type: 'string', enum: WALLET_PROVIDERS }, description: 'A purchase with a token from these wallets is declined (`wallet_provider_blocked`)' },
    velocity: {
      type: 'array',
      description: "Rules over rolling windows of the card's approved authorizations",
      items: object(
        'A velocity rule',
        {
          window: { type: 'string', enum: Object.keys(VELOCITY_WINDOWS) },
          maxCount: { type: 'integer', description: 'At most this many approved authorizations in the window' },
          maxAmount: AMOUNT('At most this much authorized in the window, in the card currency'),
        },
        ['window']
      ),
    },
  },
  []
);

/** `{cvv}`: the CVV2 encrypted under the partner's securityKey. */
export const ENCRYPTED_CVV = object('The CVV2, encrypted with RSA-OAEP (SHA-256) under the securityKey you sent', {
  cvv: string('base64 of the RSA-OAEP-256 ciphertext; decrypt it with your RSA private key'),
});

/** `{cardNumber}`: the PAN encrypted under the partner's securityKey. */
export const ENCRYPTED_CARD_NUMBER = object('The full card number, encrypted with RSA-OAEP (SHA-256) under the securityKey you sent', {
  cardNumber: string('base64 of the RSA-OAEP-256 ciphertext; decrypt it with your RSA private key'),
});

/** The issuer's PIN-encryption key. */
export const PIN_ENCRYPTION_KEY = object("The issuer's key to encrypt PIN blocks with (RSA-OAEP-256) for the PIN operations", {
  keyId: string(),
  algorithm: string('RSA-OAEP-256'),
  publicKey: string('RSA public key (PEM, SPKI)'),
});

/** Fee result (spec 2.6). */
export const FEE_RESULT = object('Fee result (spec 2.6)', {
  OperationType: string('CARD_ISSUING_FEE or CARD_DELIVERY_FEE, fixed by the route'),
  CustomerType: string(),
  ProductType: string(),
  fee: AMOUNT('The fee'),
  currency: string(),
});

/** One delivery method (`deliveryMethod` transform). */
export const DELIVERY_METHOD = object('A postal-carrier or courier delivery method', {
  id: string(),
  type: string('postal or courier'),
  carrier: string(),
  name: string(),
  estimatedDays: { type: 'number', description: 'Estimated delivery time in days' },
  fee: AMOUNT('Delivery fee'),
  currency: string(),
});

/** Answer of the delivery-method lookup (spec 4.4). */
export const DELIVERY_METHODS = object('Delivery methods of a country (spec 4.4)', {
  data: object('The lookup result', {
    success: { type: 'boolean' },
    country: string('ISO 3166-1 alpha-2'),
    deliveryMethods: { type: 'array', items: DELIVERY_METHOD },
  }),
});

/** personalInfo of an individual: document numbers masked to their last 4 characters. */
export const PERSONAL_INFO = object('Identity data of the individual; document numbers masked to their last 4 characters', {
  firstName: string(),
  middleName: string(),
  lastName: string(),
  birthDate: { type: 'string', format: 'date' },
  birthCountry: string('ISO 3166-1 alpha-2'),
  nationality: string('ISO 3166-1 alpha-2'),
  email: { type: 'string', format: 'email' },
  phone: string('E.164'),
  idType: { type: 'string', enum: ID_TYPES },
  passportNumber: string('Masked: only the last 4 characters are shown'),
  passportCountry: string('ISO 3166-1 alpha-2'),
  issuingDate: { type: 'string', format: 'date' },
  validityDate: { type: 'string', format: 'date' },
  taxCountry: nullableString('ISO 3166-1 alpha-2'),
  taxIdNumber: string('Masked: only the last 4 characters are shown'),
  fatca: { type: 'string', enum: ['T', 'F'] },
});

/** address of an individual. */
export const ADDRESS = object('Postal address of the individual', {
  address1: string(),
  address2: nullableString('Second address line'),
  buildingNumber: string(),
  city: string(),
  stateProvince: nullableString('State or province'),
  zipCode: string(),
  country: string('ISO 3166-1 alpha-2'),
});

const APPLICATION_STATUS = {
  type: 'string',
  enum: APPLICATION_STATUSES.filter((status) => status !== 'PENDING'),
  description: 'APPROVED once the account exists (PENDING is internal and never returned)',
};
const DASHBOARD_STATUS = { type: 'string', enum: DASHBOARD_STATUSES, description: "How the record shows in the operator's dashboard" };

/** The individual account (spec 2.1): `IndividualStore` `toAccount`. */
export const INDIVIDUAL_ACCOUNT = object('Individual account (spec 2.1)', {
  _id: OBJECT_ID,
  clientID: nullableString("The account-creation upstream's client id: the clientCode of the individual's cards"),
  baasAccountClientId: { type: ['integer', 'null'], description: 'Account/program under which the individual was created' },
  personalInfo: PERSONAL_INFO,
  address: ADDRESS,
  applicationStatus: APPLICATION_STATUS,
  dashboardStatus: DASHBOARD_STATUS,
  createdAt: dateTime(),
  updatedAt: dateTime(),
});

/** The individual account summary (list and `/me`): `IndividualStore` `toSummary`. */
export const INDIVIDUAL_SUMMARY = object('Individual account summary (list and /me)', {
  _id: OBJECT_ID,
  clientID: nullableString("The account-creation upstream's client id"),
  firstName: string(),
  lastName: string(),
  applicationStatus: APPLICATION_STATUS,
  dashboardStatus: DASHBOARD_STATUS,
  createdAt: dateTime(),
});

/** The individual list: `{count, data}` as the spec shapes it. */
export const INDIVIDUAL_LIST = object("A page of the partner's individuals, newest first", {
  count: { type: 'integer', minimum: 0, description: "The partner's individuals across all pages" },
  data: { type: 'array', items: INDIVIDUAL_SUMMARY },
});

/** An audit entry (`listAuditForIndividual`). */
export const AUDIT_LOG_ENTRY = object('An audit entry of a change on the individual or its cards', {
  _id: string(),
  operation: string('individual.create, card.issue.virtual, card.lock, card.cvv.read, ...'),
  targetType: { type: 'string', enum: ['individual', 'card'] },
  targetId: string('The individual _id or the cardKey'),
  outcome: { type: 'string', enum: ['success', 'failure'] },
  requestId: nullableString('X-Request-Id of the request that made the change'),
  details: {
    type: 'object',
    description: 'Safe details (card mask and type, clientID, status codes ...); never a secret',
    additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
  },
  createdAt: dateTime(),
});

/** A card status history entry (`listStatusHistoryOfIndividual`). */
export const CARD_STATUS_HISTORY_ENTRY = object('One status change of a card of the individual (card creation first)', {
  _id: string(),
  cardKey: string(),
  operation: string('card.issue, card.lock, card.restrict.lost, card.replace, ...'),
  oldStatus: { type: ['string', 'null'], enum: [...CARD_STATUSES, null], description: 'null for the card creation' },
  newStatus: CARD_STATUS,
  oldStatusCode: nullableString('null for the card creation'),
  newStatusCode: STATUS_CODE,
  reason: nullableString('The reason sent with the change'),
  createdAt: dateTime(),
});

const TRANSACTION_STEP = object('One step of a transaction\'s life', {
  kind: { type: 'string', enum: TRANSACTION_STEP_KINDS, description: 'authorization, clearing, reversal, expiry, refund or decline' },
  amount: AMOUNT('The amount of the step: authorized, cleared, reversed, left when it expired, refunded or declined'),
  at: dateTime('When the processing system recorded the step'),
});

/** A transaction (`toPartnerTransaction`, gateway/upstreams/partner-transaction.ts; docs/transactions.md). */
export const TRANSACTION = object(
  'A card transaction: one object from its first step to its last (docs/transactions.md)',
  {
  _id: string('The transaction id (the card processing system\'s)'),
  cardKey: string(),
  individualId: { type: ['string', 'null'], pattern: '^[0-9a-f]{24}$', description: 'The individual the card belongs to; null for a B2B card' },
  amount: { type: 'number', minimum: 0, description: 'What is authorized now: a partial reversal lowers it, a full one makes it 0; type says which way the money went' },
  currency: string(),
  type: { type: 'string', enum: TRANSACTION_TYPES },
  status: { type: 'string', enum: TRANSACTION_STATUSES, description: 'PENDING (authorized, not cleared), SETTLED, DECLINED, REVERSED (fully), EXPIRED (never cleared)' },
  merchant: object('Where the transaction happened', { name: string(), mcc: string('Merchant category code'), city: string(), country: string() }),
  createdAt: dateTime(),
  updatedAt: dateTime('When its latest step happened'),
  settledAmount: { type: ['number', 'null'], description: 'The cleared amount once SETTLED (may be less than amount); null before' },
  declineReason: { type: ['string', 'null'], enum: [...DECLINE_REASON_CODES, null], description: 'Why it was declined (docs/transactions.md, "Decline reasons"); null unless DECLINED' },
  relatedTransactionId: { type: ['string', 'null'], description: 'On a REFUND: the purchase it refunds; null otherwise' },
  history: { type: 'array', minItems: 1, items: TRANSACTION_STEP, description: 'Every step, oldest first' },
  tokenId: { type: 'string', pattern: '^tok_[0-9a-f]{24}$', description: 'The network token the purchase was made with (docs/tokens.md); absent on a purchase with the card itself' },
  walletProvider: { type: 'string', enum: WALLET_PROVIDERS, description: 'The wallet of that token; absent on a purchase with the card itself' },
  authorization: {
    oneOf: [
      object(
        'How the gateway decided the authorization in real time (docs/authorizations.md)',
        {
          decidedBy: { type: 'string', enum: ['card_state', 'token_state', 'spend_controls', 'partner', 'partner_default', 'approved'], description: 'What decided: the card state, the state of the token it was made with, the spend controls, your decision endpoint, its default decision, or nothing refused' },
          rule: string('Which state, control or rule decided (`card.status.LOCKED`, `card.blockedMccs`, `partner.velocity.1h.maxCount`, `partner.timeout`)'),
          partnerLatencyMs: { type: 'number', minimum: 0, description: 'How long your decision endpoint took' },
        },
        ['decidedBy']
      ),
      { type: 'null' },
    ],
    description: 'null when the gateway was not asked (a force-post, a refund, a processor that does not ask)',
  },
},
  ['_id', 'cardKey', 'individualId', 'amount', 'currency', 'type', 'status', 'merchant', 'createdAt', 'updatedAt', 'settledAmount', 'declineReason', 'relatedTransactionId', 'history', 'authorization']
);

/** `GET /transactions`: `{data, nextCursor}`. */
export const TRANSACTION_LIST = object('A page of your transactions, newest first', {
  data: { type: 'array', items: TRANSACTION },
  nextCursor: { type: ['string', 'null'], description: 'Pass it as `cursor`, with the same filters, for the next (older) page; null on the last page' },
});

const TOKEN_STATUS = { type: 'string', enum: TOKEN_STATUSES, description: 'requested, pending_verification, active, suspended, deactivated (final) or declined (final): docs/tokens.md' };
const TOKEN_ID = { type: 'string', pattern: '^tok_[0-9a-f]{24}$', description: "The token's id: `tok_` and 24 hexadecimal characters" };

const TOKEN_HISTORY_ENTRY = object(
  "One status of a token's life, or a move to another card (its status unchanged)",
  {
    status: TOKEN_STATUS,
    at: dateTime(),
    by: {
      type: 'string',
      enum: ['card_state', 'spend_controls', 'partner', 'partner_default', 'network', 'verification'],
      description: 'Who made it: the tokenization decision (card_state, spend_controls, partner, partner_default, network), the code entered (verification), your route (partner), the cascade (card_state), or the network on its own',
    },
    reason: string('Why, when one was given (a decline reason, your `reason`, the network\'s)'),
  },
  ['status', 'at', 'by']
);

/** A network token (`toToken`, gateway/tokens/store.ts; docs/tokens.md "The Token"). Never the token's or the card's number. */
export const TOKEN = object(
  'A network token of one of your cards: a wallet\'s or a merchant\'s (docs/tokens.md)',
  {
    _id: TOKEN_ID,
    cardKey: string('The card the token stands for now: a replacement or re-issue moves it to the new card'),
    walletProvider: { type: 'string', enum: WALLET_PROVIDERS, description: '`merchant`: a card-on-file token of a merchant' },
    tokenRequestorId: { type: 'string', pattern: '^[0-9]{11}$', description: "The network's id of the wallet or merchant that asked" },
    last4: { type: 'string', pattern: '^[0-9]{4}$', description: "The last four digits of the token's own number (what the wallet shows), never the card's" },
    tokenExpDate: { type: 'string', pattern: EXP_DATE_PATTERN, description: "The token's own expiry, MM/YYYY" },
    device: object(
      'The device, as the wallet described it',
      {
        type: { type: 'string', enum: TOKEN_DEVICE_TYPES },
        name: string('The device\'s name'),
        ipCountry: string('ISO 3166-1 alpha-2'),
      },
      ['type']
    ),
    status: TOKEN_STATUS,
    suspendedBy: { type: 'string', enum: ['partner', 'card_state'], description: 'While suspended only: you (`partner`), or the card\'s state (`card_state`: the card\'s unlock resumes it); absent when the network suspended it' },
    createdAt: dateTime(),
    updatedAt: dateTime(),
    history: { type: 'array', minItems: 1, items: TOKEN_HISTORY_ENTRY, description: 'Every status it took, oldest first' },
  },
  ['_id', 'cardKey', 'walletProvider', 'tokenRequestorId', 'last4', 'tokenExpDate', 'device', 'status', 'createdAt', 'updatedAt', 'history']
);

/** `GET /tokens`: `{data, nextCursor}`. */
export const TOKEN_LIST = object('A page of your tokens, newest first', {
  data: { type: 'array', items: TOKEN },
  nextCursor: { type: ['string', 'null'], description: 'Pass it as `cursor`, with the same filters, for the next (older) page; null on the last page' },
});

/** `GET /cards/{id}/tokens`: `{data}`, every token of the card. */
export const CARD_TOKENS = object("Every token of the card, newest first", { data: { type: 'array', items: TOKEN } });

const OPAQUE = (description: string) => ({ type: 'string', pattern: '^[A-Za-z0-9+/_=-]+$', description: `${description}. Opaque: pass it to the wallet as it is` });

/** Apple Pay In-App Provisioning's answer (upstreams.md 10.2): the processor's, passed on byte for byte. */
export const APPLE_PAY_PROVISIONING = object('What PassKit needs to add the card, made by the processor and encrypted for Apple: hand it to `PKAddPaymentPassRequest` unchanged (in sandbox mode not a real cryptogram)', {
  activationData: OPAQUE('Base64 activation data'),
  encryptedPassData: OPAQUE('Base64 of the card data encrypted for Apple'),
  ephemeralPublicKey: OPAQUE('Base64 of the ephemeral EC P-256 public key (uncompressed point)'),
});

/** Google Pay Push Provisioning's answer (upstreams.md 10.2): the processor's, passed on byte for byte. */
export const GOOGLE_PAY_PROVISIONING = object("What Google Pay's `pushTokenize` needs, made by the processor (in sandbox mode not a real cryptogram)", {
  opaquePaymentCard: OPAQUE('The opaque payment card (base64url)'),
  network: string("The card's network, e.g. MASTERCARD"),
  tokenServiceProvider: string('e.g. TOKEN_PROVIDER_MASTERCARD'),
  displayName: string("The card's product name, shown while the wallet adds it"),
  lastDigits: { type: 'string', pattern: '^[0-9]{4}$', description: "The card's last four digits, shown while the wallet adds it" },
});

const page = (description: string, item: ResponseSchema) => object(description, { data: { type: 'array', items: item }, pagination: PAGINATION });

/** Paginated answers `{data, pagination}`. */
export const AUDIT_LOG_PAGE = page('A page of audit entries, newest first', AUDIT_LOG_ENTRY);
export const CARD_STATUS_HISTORY_PAGE = page('A page of card status changes, newest first', CARD_STATUS_HISTORY_ENTRY);
export const TRANSACTION_PAGE = page('A page of transactions', TRANSACTION);

/** The partner-wide card list (spec 4.3): `{success, data, pagination}`. */
export const CARD_PAGE = object('A page of the partner-wide card list, newest first', {
  success: { type: 'boolean', const: true },
  data: { type: 'array', items: CARD_SUMMARY },
  pagination: PAGINATION,
});

/** The partner (decisions.md): `toPartner`. */
export const PARTNER = object('The authenticated partner', {
  _id: OBJECT_ID,
  name: string(),
  issuer: string('The `iss` your tokens must carry'),
  status: { type: 'string', enum: ['active', 'disabled'] },
  processingEnabled: { type: 'boolean', description: 'Whether the card processing system is configured for you (transactions)' },
  createdAt: dateTime(),
  updatedAt: dateTime(),
});

/** A B2B tenant (decisions.md). */
export const B2B_TENANT = object('A B2B tenant of the partner', { _id: OBJECT_ID, name: string(), createdAt: dateTime() });

/** `GET /me` (spec 4.1). */
export const ME = object('Partner self-introspection (spec 4.1)', {
  partner: PARTNER,
  activeTenantId: { type: ['string', 'null'], description: 'The first-created B2B tenant; null without tenants' },
  b2bAccounts: { type: 'array', items: B2B_TENANT },
  individuals: { type: 'array', maxItems: 100, items: INDIVIDUAL_SUMMARY, description: 'The 100 newest individuals; the paginated list serves the rest' },
});

/** One invalid field of a 400. */
export const INVALID_PARAM = object('One invalid field of the request', {
  name: string('The field: a body property path (`items.0.value`), a query or path parameter'),
  reason: string('Why it is invalid'),
});

const EVENT_ID = { type: 'string', pattern: '^evt_[0-9a-f]{24}$', description: 'The event id: the same on every delivery of the event' };

/** One event type's envelope (`emitEvent`, gateway/outbox/partner-events.ts): `{id, type, createdAt, partnerId, data, requestId?}`. */
function eventEnvelope(type: string, description: string, data: ResponseSchema): ResponseSchema {
  return object(
    description,
    {
      id: EVENT_ID,
      type: { type: 'string', const: type },
      createdAt: dateTime('When the change was written'),
      partnerId: { ...OBJECT_ID, description: 'You: the partner whose resource changed' },
      data,
      requestId: string('X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change)'),
    },
    ['id', 'type', 'createdAt', 'partnerId', 'data']
  );
}

/** `card.created`: a card was issued, or a replacement or re-issue made a new card (key). */
export const EVENT_CARD_CREATED = eventEnvelope(
  'card.created',
  'A card was issued (`issued`), or a replace (`replaced`: the same card under a new cardKey) or a re-issue (`reissued`: a new card, the old one closed) made one',
  object(
    'What was created',
    {
      card: CARD,
      reason: { type: 'string', enum: ['issued', 'replaced', 'reissued'] },
      previousCardKey: string('The cardKey replaced or re-issued (`replaced` and `reissued` only)'),
    },
    ['card', 'reason']
  )
);

/** `card.status_changed`: the card's status code changed. */
export const EVENT_CARD_STATUS_CHANGED = eventEnvelope(
  'card.status_changed',
  "A card's status code changed: through your API call (`source: partner`), or by the issuer on its own (`issuer`: fraud, expiry ...)",
  object(
    'The change',
    {
      cardKey: string(),
      previousStatus: { type: ['string', 'null'], enum: [...CARD_STATUSES, null], description: 'The status before' },
      status: CARD_STATUS,
      statusCode: STATUS_CODE,
      previousStatusCode: nullableString('The status code before'),
      source: { type: 'string', enum: ['partner', 'issuer', 'operator'], description: 'Who changed it: the partner through this API, the issuer on its own, or the bank\'s operators' },
      reason: nullableString('The reason sent with the change; `issuer-side change` for the issuer'),
    },
    ['cardKey', 'previousStatus', 'status', 'statusCode', 'previousStatusCode', 'source']
  )
);

/** `card.updated`: nickname, emboss name, 3DS phone, limits or spend controls changed. */
export const EVENT_CARD_UPDATED = eventEnvelope(
  'card.updated',
  "A card's nickname, emboss name, 3DS phone, limits or spend controls changed. Never a 3DS answer, a PIN or card data",
  object(
    'What changed',
    {
      cardKey: string(),
      changed: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: ['nickname', 'embossedName', 'threeDsPhone', 'limits', 'spendControls'] }, description: 'The names of the fields changed (`spendControls`: the card\'s own spend controls, read them with `GET /cards/{id}/spend-controls`)' },
      card: CARD,
      limits: {
        type: 'array',
        minItems: 1,
        description: 'The limits set (`limits` only)',
        items: object('A limit set', { name: { type: 'string', enum: LIMIT_NAMES }, value: AMOUNT('The new limit, in the card currency') }),
      },
    },
    ['cardKey', 'changed', 'card']
  )
);

/** `individual.created`: an individual account was created. */
export const EVENT_INDIVIDUAL_CREATED = eventEnvelope(
  'individual.created',
  'An individual account was created (by your request, or completed later by the gateway after an interrupted one)',
  object('The individual', { individual: INDIVIDUAL_ACCOUNT })
);

/** `transaction.created`: the processing system notified a transaction on a card (docs/events.md). */
export const EVENT_TRANSACTION_CREATED = eventEnvelope(
  'transaction.created',
  'The card processing system recorded a transaction on one of your cards: an authorization, a force-posted clearing, a decline or a refund (in sandbox mode, `POST /simulate/cards/{id}/authorizations` makes one)',
  object('The transaction', { transaction: TRANSACTION })
);

/** `transaction.updated`: a later step of a transaction's life (docs/events.md). */
export const EVENT_TRANSACTION_UPDATED = eventEnvelope(
  'transaction.updated',
  'A transaction of one of your cards took a step: cleared, reversed (in full or in part) or expired. Sent in order per card, one event per step',
  object('The transaction and the step', {
    transaction: TRANSACTION,
    previousStatus: { type: ['string', 'null'], enum: [...TRANSACTION_STATUSES, null], description: 'The status before this step' },
    change: { type: 'string', enum: TRANSACTION_STEP_KINDS, description: 'The step: the kind of the history entry it added' },
  })
);

/** `token.created`: a token's first state (docs/tokens.md, "Events"). */
export const EVENT_TOKEN_CREATED = eventEnvelope(
  'token.created',
  'A token of one of your cards was made: by the tokenization decision (whatever its outcome: `active`, `pending_verification` or `declined`), or by the processor without a decision of the gateway',
  object('The token', { token: TOKEN })
);

/** `token.updated`: each later change of a token, once. */
export const EVENT_TOKEN_UPDATED = eventEnvelope(
  'token.updated',
  'A token of one of your cards changed: its status (your route, the card\'s state, a verification, the network), its card (a replacement or re-issue) or its device. Ordered with the card\'s events',
  object('The token and the change', {
    token: TOKEN,
    previousStatus: { ...TOKEN_STATUS, description: 'The status before the change' },
    change: { type: 'string', enum: TOKEN_CHANGES, description: 'What changed' },
  })
);

/** `token.verification_code`: the one-time code the partner delivers to the cardholder. */
export const EVENT_TOKEN_VERIFICATION_CODE = eventEnvelope(
  'token.verification_code',
  'A tokenization was approved on condition of a one-time code: deliver `code` to the cardholder (an SMS, a push in your app), who types it into the wallet. Valid until `expiresAt` (10 minutes), 3 attempts; after `expiresAt` the event holds `code: null`',
  object('The token and its code', {
    token: TOKEN,
    code: { type: ['string', 'null'], pattern: '^[0-9]{6}$', description: 'The 6-digit code; null once it has expired' },
    expiresAt: dateTime('When the code stops being accepted'),
  })
);

/** Any event: one of the envelopes, told apart by `type`. */
export const EVENT: ResponseSchema = {
  description: 'A partner event (docs/events.md); `type` says which `data` it carries',
  oneOf: [
    EVENT_CARD_CREATED,
    EVENT_CARD_STATUS_CHANGED,
    EVENT_CARD_UPDATED,
    EVENT_INDIVIDUAL_CREATED,
    EVENT_TRANSACTION_CREATED,
    EVENT_TRANSACTION_UPDATED,
    EVENT_TOKEN_CREATED,
    EVENT_TOKEN_UPDATED,
    EVENT_TOKEN_VERIFICATION_CODE,
  ],
};

/** A page of the event log (`GET /events`): `{data, nextCursor}`. */
export const EVENT_PAGE = object('A page of your events, newest first', {
  data: { type: 'array', items: EVENT },
  nextCursor: { type: ['string', 'null'], description: 'Pass it as `after` for the next (older) page; null on the last page' },
});

const WEBHOOK_ENDPOINT_FIELDS = {
  id: { type: 'string', pattern: '^we_[0-9a-f]{24}$', description: 'The endpoint id' },
  url: string('Where events are POSTed'),
  events: { type: 'array', items: string(), description: 'The event types sent to it; `*`: every type' },
  description: nullableString('Your note about the endpoint'),
  status: { type: 'string', enum: ['enabled', 'disabled'] },
  createdAt: dateTime(),
  updatedAt: dateTime(),
};
/** A webhook endpoint: never its secret. */
export const WEBHOOK_ENDPOINT = object('A webhook endpoint (its secret is answered only at creation and rotation)', WEBHOOK_ENDPOINT_FIELDS);
const SECRET = { type: 'string', pattern: '^whsec_[A-Za-z0-9_-]{43,}$', description: 'The signing secret (HMAC-SHA256 key, docs/webhooks.md): shown only in this answer, keep it' };
export const WEBHOOK_ENDPOINT_CREATED = object('The new endpoint and its signing secret, shown only here', { ...WEBHOOK_ENDPOINT_FIELDS, secret: SECRET });
export const WEBHOOK_ENDPOINT_LIST = object('Your webhook endpoints, oldest first', { data: { type: 'array', items: WEBHOOK_ENDPOINT } });
export const WEBHOOK_SECRET = object('The new signing secret; the previous one also signs for 24 hours', { secret: SECRET });
export const WEBHOOK_ATTEMPT = object('One delivery attempt', {
  eventId: EVENT_ID,
  eventType: string('The event type'),
  attempt: { type: 'integer', minimum: 1, description: "The attempt's number for this delivery" },
  attemptedAt: dateTime(),
  outcome: { type: 'string', enum: ['delivered', 'retrying', 'failed'], description: 'failed: the retry window (3 days) is over; the event can be resent' },
  httpStatus: { type: ['integer', 'null'], description: 'Your endpoint\'s HTTP status; null when it did not answer' },
  error: {
    type: ['string', 'null'],
    enum: ['timeout', 'connection', 'target_refused', 'redirect', 'interrupted', 'http_status', 'secret_unavailable', null],
    description: 'Why the attempt failed; null when delivered. secret_unavailable: the gateway could not read the signing secret and held the delivery (never sent unsigned)',
  },
  durationMs: { type: ['integer', 'null'], description: 'Time to the answer (null for an interrupted attempt)' },
  nextRetryAt: { type: ['string', 'null'], format: 'date-time', description: 'When the next attempt is due; null once delivered or failed' },
});
export const WEBHOOK_ATTEMPT_PAGE = object('Delivery attempts, newest first', {
  data: { type: 'array', items: WEBHOOK_ATTEMPT },
  nextCursor: { type: ['string', 'null'], description: 'Pass it as `after` for the next (older) page; null on the last page' },
});
const AUTHORIZATION_ENDPOINT_FIELDS = {
  id: { type: 'string', pattern: '^ae_[0-9a-f]{24}$', description: 'The endpoint id' },
  url: string('Where authorization requests are POSTed'),
  timeoutMs: { type: 'integer', minimum: 100, maximum: 1500, description: 'How long the gateway waits for your answer, in ms' },
  defaultDecision: { type: 'string', enum: ['approve', 'decline'], description: 'What applies on a timeout, an error or an answer of another shape' },
  status: { type: 'string', enum: ['enabled', 'disabled'], description: 'disabled: not asked (by you, or by an operator)' },
  requestTypes: {
    type: 'array',
    minItems: 1,
    maxItems: 2,
    uniqueItems: true,
    items: { type: 'string', enum: ['authorization.request', 'tokenization.request'] },
    description: 'The requests sent to this endpoint: authorization.request, and tokenization.request once you add it (docs/tokens.md)',
  },
  createdAt: dateTime(),
  updatedAt: dateTime(),
};
/** The partner's decision endpoint: never its secret. */
export const AUTHORIZATION_ENDPOINT = object('Your decision endpoint for real-time authorizations (its secret is answered only at creation and rotation)', AUTHORIZATION_ENDPOINT_FIELDS);
export const AUTHORIZATION_ENDPOINT_CREATED = object('The new decision endpoint and its signing secret, shown only here', { ...AUTHORIZATION_ENDPOINT_FIELDS, secret: SECRET });
export const AUTHORIZATION_ENDPOINT_SECRET = object('The new signing secret of the decision endpoint; the previous one also signs for 24 hours', { secret: SECRET });
export const EVENT_RESEND = object('The event was queued again', { id: EVENT_ID, deliveries: { type: 'integer', minimum: 0, description: 'Deliveries queued: one per enabled endpoint subscribed to its type' } });

/** An RFC 9457 problem as `gateway/http/problem.ts` writes it, with our extension members. */
export const PROBLEM: ResponseSchema = {
  type: 'object',
  description: 'An RFC 9457 problem (application/problem+json); docs/errors.md',
  required: ['type', 'title', 'status', 'detail', 'code', 'requestId'],
  properties: {
    type: { type: 'string', format: 'uri', description: '`https://partner-gateway.dev/problems/<code>`' },
    title: string('Human title of the code'),
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status' },
    detail: string('What happened, for a human; never a secret, stack trace or upstream body'),
    code: { type: 'string', enum: Object.keys(ERROR_CATALOG), description: 'Machine-readable reason (docs/errors.md)' },
    requestId: string('Equals the X-Request-Id response header: quote it to support'),
    invalidParams: { type: 'array', items: INVALID_PARAM, description: 'Validation failures only: every invalid field' },
    upstream: { type: 'string', enum: ['issuer', 'processing', 'accounts'], description: 'The upstream that caused the problem' },
    upstreamCode: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$', description: "The upstream's error code, when it gave a well-formed one" },
    cardStatus: { ...CARD_STATUS, description: 'invalid_transition, card_not_active: the card status that refused the operation' },
    statusCode: { ...STATUS_CODE, description: 'invalid_transition, card_not_active: the issuer status code that refused the operation' },
    tokenStatus: { ...TOKEN_STATUS, description: 'token_transition_invalid: the token status that refused the operation' },
    attemptsLeft: { type: 'integer', minimum: 0, description: 'verification_failed: the attempts left (0: the token is now declined)' },
  },
  additionalProperties: true,
};

/** Every response schema by component name (the OpenAPI document's `components.schemas`). */
export const RESPONSE_SCHEMAS = {
  Card: CARD,
  CardListItem: CARD_LIST_ITEM,
  CardSummary: CARD_SUMMARY,
  CardPage: CARD_PAGE,
  CardStatusResult: CARD_STATUS_RESULT,
  CardLimit: CARD_LIMIT,
  AvailableLimit: AVAILABLE_LIMIT,
  SpendControls: SPEND_CONTROLS,
  EncryptedCvv: ENCRYPTED_CVV,
  EncryptedCardNumber: ENCRYPTED_CARD_NUMBER,
  PinEncryptionKey: PIN_ENCRYPTION_KEY,
  FeeResult: FEE_RESULT,
  DeliveryMethod: DELIVERY_METHOD,
  DeliveryMethods: DELIVERY_METHODS,
  PersonalInfo: PERSONAL_INFO,
  Address: ADDRESS,
  IndividualAccount: INDIVIDUAL_ACCOUNT,
  IndividualSummary: INDIVIDUAL_SUMMARY,
  IndividualList: INDIVIDUAL_LIST,
  AuditLogEntry: AUDIT_LOG_ENTRY,
  AuditLogPage: AUDIT_LOG_PAGE,
  CardStatusHistoryEntry: CARD_STATUS_HISTORY_ENTRY,
  CardStatusHistoryPage: CARD_STATUS_HISTORY_PAGE,
  Transaction: TRANSACTION,
  TransactionPage: TRANSACTION_PAGE,
  TransactionList: TRANSACTION_LIST,
  TransactionStep: TRANSACTION_STEP,
  Token: TOKEN,
  TokenHistoryEntry: TOKEN_HISTORY_ENTRY,
  TokenList: TOKEN_LIST,
  CardTokens: CARD_TOKENS,
  ApplePayProvisioning: APPLE_PAY_PROVISIONING,
  GooglePayProvisioning: GOOGLE_PAY_PROVISIONING,
  Pagination: PAGINATION,
  Partner: PARTNER,
  B2bTenant: B2B_TENANT,
  Me: ME,
  Event: EVENT,
  EventPage: EVENT_PAGE,
  EventCardCreated: EVENT_CARD_CREATED,
  EventCardStatusChanged: EVENT_CARD_STATUS_CHANGED,
  EventCardUpdated: EVENT_CARD_UPDATED,
  EventIndividualCreated: EVENT_INDIVIDUAL_CREATED,
  EventTransactionCreated: EVENT_TRANSACTION_CREATED,
  EventTransactionUpdated: EVENT_TRANSACTION_UPDATED,
  EventTokenCreated: EVENT_TOKEN_CREATED,
  EventTokenUpdated: EVENT_TOKEN_UPDATED,
  EventTokenVerificationCode: EVENT_TOKEN_VERIFICATION_CODE,
  EventResend: EVENT_RESEND,
  WebhookEndpoint: WEBHOOK_ENDPOINT,
  WebhookEndpointCreated: WEBHOOK_ENDPOINT_CREATED,
  WebhookEndpointList: WEBHOOK_ENDPOINT_LIST,
  WebhookSecret: WEBHOOK_SECRET,
  WebhookAttempt: WEBHOOK_ATTEMPT,
  WebhookAttemptPage: WEBHOOK_ATTEMPT_PAGE,
  AuthorizationEndpoint: AUTHORIZATION_ENDPOINT,
  AuthorizationEndpointCreated: AUTHORIZATION_ENDPOINT_CREATED,
  AuthorizationEndpointSecret: AUTHORIZATION_ENDPOINT_SECRET,
  InvalidParam: INVALID_PARAM,
  Problem: PROBLEM,
} satisfies Record<string, ResponseSchema>;

export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;
