import type { SchemaName } from '../schemas';
import type { ResponseSchemaName } from '../schemas/responses';

/**
 * Example values of the OpenAPI document: one per request schema (bodies, queries, path
 * parameters) and one per response schema. Unit tests validate each against its schema with the
 * gateway's own validators, so an example can never show a request the gateway would refuse.
 * Built when the document is generated: expiry dates lie a few years ahead of that day.
 */

/** The example ids every example shares, so that requests and answers fit together. */
export const EXAMPLE_IDS = {
  individualId: '6b02371b40487492a2ee0dd6',
  partnerId: '6b0236f540487492a2ee0dc1',
  tenantId: '6b0236f940487492a2ee0dc7',
  cardKey: 'CK6DBBA4B3064FE99E',
  newCardKey: 'CK77A0C1D2E3F40511',
  clientID: '48213377',
  requestId: '6f1c0c1e-2b8e-4f57-9a55-5a0b8f0e7f45',
  eventId: 'evt_6b0237a240487492a2ee0de3',
  webhookEndpointId: 'we_6b0237a240487492a2ee0de4',
  transactionId: '5f0c2a9e8b1d4c7a9e3f2b61',
  refundTransactionId: '5f0c2b1f8b1d4c7a9e3f2b7c',
  tokenId: 'tok_6b0237a240487492a2ee0de6',
} as const;

/** A real 2048-bit RSA public key, base64 SPKI DER: what `securityKey` looks like. */
export const EXAMPLE_SECURITY_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEArDU99tC52tIAMNRFS7wKKD4kNGnvN5+4J6jtmv7szFUl+BSgrVpSIwjfVDT44FJc/i39wiGL1am3beJJeDC23zDvfNGEpGNKRuMC51GsA0T3Zg6GZ70Jxb7j7yEfFzGcy0I1Itb8/RU8Q/ZAJ9KJ6Gsx9rWCvRmCq6L1SCqgAuHXATjetAGAPj1iAmAq6fKPUeDxdjablov6a2mLEGwQfF9VNrEJ05M1YB4TyOuAXIjsG08ZaO60mm+jrhfoLL/FFeWgeSo23P9ra/vV0tiL2ss45ZETdZylxt4Umd7yWn3Q1kWiBoT9xDsdXqc18ZS/ZTz+AvsMCAs2R+J9NE6ZYwIDAQAB';

/** An RSA-OAEP-256 ciphertext (256 bytes, base64) standing for an encrypted PIN, CVV or PAN. */
const EXAMPLE_CIPHERTEXT =
  'BeANGfSiAQ7L/hc3UdE6t7DTKsZTB9x0fC8uRAPW1mg+zaiHSrzgxCbbnopvG+7p4KqTSsuIcRNiwkyQ0UmXpk1WidFsTPjD3gDyo9PaEb7IBtpHRiBdbi/DkWlkEbqkBXnIe5uUYpnlWHMBoVV38lzpxj0NRpaoQMkXqqpmDGgwnTSt0mxgiHVqGLbaSyPufM4Wi8dKvX6NE/oV+phbxkiSR9JTP3wxHdKEhR0BWwSImVsaYpgsaRfZEm/OtnUh4S2EEv9EMhet95if2SGBZAaOc6UFr3pq1RwZTg0BXWljONgcjEnpUPp6MwbIH40pLYjo6dXV1F09GjXuYkG+AA==';

/** What a PassKit certificate looks like in a request (base64 of DER; not a real certificate). */
const EXAMPLE_CERTIFICATE =
  'MIIEETCCA7agAwIBAgIIPrHEGSAJDiswCgYIKoZIzj0EAwIwgYAxNDAyBgNVBAMMK0FwcGxlIFdvcmxkd2lkZSBEZXZlbG9wZXIgUmVsYXRpb25zIENBIC0gRzIxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmljYXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzAeFw0yNjAxMDEwMDAwMDBaFw0zMTAxMDEwMDAwMDBa';

const CREATED_AT = '2026-11-22T10:00:00.000Z';

/** Spend controls: no gambling, EU merchants only, 500 per purchase, 3 purchases an hour and 2,000 a week. */
const EXAMPLE_SPEND_CONTROLS = {
  maxAmountPerTransaction: 500,
  blockedMccs: ['7995', '7801'],
  allowedCountries: ['DE', 'FR', 'NL', 'AT', 'BE'],
  velocity: [
    { window: '1h', maxCount: 3 },
    { window: '7d', maxAmount: 2000 },
  ],
};

/** Example requests by schema name (`gateway/schemas` SCHEMAS). */
export function requestExamples(now = new Date()): Record<SchemaName, unknown> {
  const expDate = `09/${now.getUTCFullYear() + 3}`;
  const newExpDate = `12/${now.getUTCFullYear() + 4}`;
  return {
    'pagination-query': { page: 1, limit: 20 },
    'individual-cards-query': { page: 1, limit: 100 },
    'transactions-query': { page: 1, limit: 20, cardKey: EXAMPLE_IDS.cardKey },
    'transactions-search-query': { status: 'SETTLED', from: '2026-11-01T00:00:00Z', to: '2026-11-08T00:00:00Z', limit: 20 },
    'simulate-authorization': { amount: 42.9, currency: 'EUR', type: 'PURCHASE', merchant: { name: 'Babbage Books', mcc: '5942', city: 'London', country: 'GB' }, authorizationId: 'auth_5f0c2a9e8b1d4c7a9e3f2b60' },
    'simulate-transaction-step': { amount: 39.9 },
    'individual-create': {
      baasAccountClientId: 42,
      firstName: 'Ada',
      middleName: 'Augusta',
      lastName: 'Lovelace',
      country: 'GB',
      city: 'London',
      zipCode: 'SW1Y 4LE',
      buildingNumber: '12',
      idType: 'PASSPORT',
      address1: 'St James Square',
      passportNumber: 'P1234567',
      issuingDate: '2020-01-15',
      validityDate: '2030-01-14',
      passportCountry: 'GB',
      birthCountry: 'GB',
      birthDate: '1990-12-10',
      nationality: 'GB',
      phone: '+447700900123',
      email: 'ada@example.com',
    },
    'card-issue': { expDate, clientCode: EXAMPLE_IDS.clientID, currency: 'EUR', productCode: 'P-STD', embossedName: 'ADA.LOVELACE' },
    'card-status-change': { expDate, reason: 'Holder asked to pause the card' },
    'card-restrict': { expDate, reason: 'Reported by the holder', description: 'Wallet lost on the train', cardLocation: 'London' },
    'card-nickname': { nickname: 'Travel' },
    'card-emboss-name': { embossedName: 'A.LOVELACE' },
    'card-replace': { expDate: newExpDate, reason: 'Card damaged', pinMailer: 'PM-2026-000123' },
    'card-secret-query': { expDate, securityKey: EXAMPLE_SECURITY_KEY },
    'three-ds-answer': { answer: 'Analytical Engine' },
    'three-ds-phone': { phoneNumber: '+447700900123' },
    'pin-change': { expDate, pin: EXAMPLE_CIPHERTEXT },
    'pin-force-lock': { expDate },
    'card-authorize': { pin: EXAMPLE_CIPHERTEXT },
    'empty-body': {},
    'limits-patch': [
      { name: 'dailyPurchase', value: 1500 },
      { name: 'monthlyWithdrawal', value: 2000 },
    ],
    'limit-set': { name: 'dailyPurchase', value: 1500 },
    'limit-params': { id: EXAMPLE_IDS.cardKey, limitName: 'dailyPurchase' },
    'spend-controls': EXAMPLE_SPEND_CONTROLS,
    'delivery-methods-query': { country: 'DE' },
    'fee-check': { CustomerType: 'Consumer Debit', ProductType: 'R001', clientId: EXAMPLE_IDS.clientID },
    'cards-list-query': { page: 1, limit: 20, status: 'ACTIVE', type: 'virtual', search: 'travel' },
    'events-query': { type: 'card.status_changed', after: 'MTA0Mg', limit: 20 },
    'webhook-endpoint-create': { url: 'https://hooks.example.com/partner-gateway', events: ['card.created', 'card.status_changed'], description: 'Card lifecycle' },
    'webhook-endpoint-update': { status: 'disabled' },
    'authorization-endpoint-create': { url: 'https://decisions.example.com/partner-gateway', timeoutMs: 1000, defaultDecision: 'decline' },
    'authorization-endpoint-update': { timeoutMs: 800 },
    'webhook-deliveries-query': { after: 'NTE', limit: 20 },
    'simulate-transaction': { amount: 42.5, currency: 'EUR', type: 'authorization', merchant: { name: 'Corner Cafe', mcc: '5814', country: 'DE' } },
    'simulate-issuer-status': { status: 'FRAUD', reason: 'Suspicious activity' },
    'wallet-provisioning-apple-pay': {
      certificates: [EXAMPLE_CERTIFICATE, EXAMPLE_CERTIFICATE.slice(0, 120)],
      nonce: 'q7l3Bw==',
      nonceSignature: 'MEUCIQDxD3p1c0a1bmV1bW9uaWMgc2lnbmF0dXJlIG9mIHRoZSBub25jZQIgQm9ndXMgYnV0IHdlbGwtZm9ybWVkIGJhc2U2NA==',
    },
    'wallet-provisioning-google-pay': { walletAccountId: 'aGVsbG8td2FsbGV0LWFjY291bnQ', deviceId: 'WQ4oPEwuhbPZUG0ShSnO4g7b' },
    'token-change': { reason: 'Cardholder reported the phone lost' },
    'tokens-search-query': { cardKey: EXAMPLE_IDS.cardKey, status: 'active', walletProvider: 'apple_pay', limit: 20 },
    'simulate-tokenization': { walletProvider: 'apple_pay', device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' }, networkVerdict: 'require_verification', tokenizationId: 'tkz_6b0237a240487492a2ee0de4' },
    'simulate-token-verification': { code: '482913' },
  };
}

/** Example answers by response schema name (`gateway/schemas/responses.ts`). */
export function responseExamples(now = new Date()): Record<ResponseSchemaName, unknown> {
  const expDate = `09/${now.getUTCFullYear() + 3}`;
  const pagination = { page: 1, limit: 20, total: 1, totalPages: 1, hasMore: false };
  const webhookEndpoint = {
    id: EXAMPLE_IDS.webhookEndpointId,
    url: 'https://hooks.example.com/partner-gateway',
    events: ['*'],
    description: 'Card lifecycle',
    status: 'enabled',
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
  };
  const authorizationEndpoint = {
    id: 'ae_65f1a2b3c4d5e6f708192a3b',
    url: 'https://decisions.example.com/partner-gateway',
    timeoutMs: 1000,
    defaultDecision: 'decline',
    status: 'enabled',
    requestTypes: ['authorization.request', 'tokenization.request'],
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
  };
  const webhookAttempt = {
    eventId: EXAMPLE_IDS.eventId,
    eventType: 'card.status_changed',
    attempt: 2,
    attemptedAt: CREATED_AT,
    outcome: 'retrying',
    httpStatus: 503,
    error: 'http_status',
    durationMs: 118,
    nextRetryAt: '2026-11-22T10:00:20.000Z',
  };
  const card = {
    cardKey: EXAMPLE_IDS.cardKey,
    cardMask: '5355 70** **** 1786',
    type: 'virtual',
    status: 'ACTIVE',
    statusCode: '00',
    currency: 'EUR',
    ownerType: 'individual',
    ownerId: EXAMPLE_IDS.individualId,
    createdAt: CREATED_AT,
    productCode: 'P-STD',
    holderClientCode: EXAMPLE_IDS.clientID,
    expDate,
    embossedName: 'ADA.LOVELACE',
    nickname: 'Travel',
    threeDsPhone: null,
  };
  const { productCode: _p, holderClientCode: _h, threeDsPhone: _t, ...cardSummary } = card;
  const { expDate: _e, embossedName: _n, nickname: _k, ...cardListItem } = cardSummary;
  const limit = { name: 'dailyPurchase', value: 1500, currency: 'EUR', used: 120.5, available: 1379.5 };
  const individualSummary = {
    _id: EXAMPLE_IDS.individualId,
    clientID: EXAMPLE_IDS.clientID,
    firstName: 'Ada',
    lastName: 'Lovelace',
    applicationStatus: 'APPROVED',
    dashboardStatus: 'ACTIVE',
    createdAt: CREATED_AT,
  };
  const personalInfo = {
    firstName: 'Ada',
    middleName: 'Augusta',
    lastName: 'Lovelace',
    birthDate: '1990-12-10',
    birthCountry: 'GB',
    nationality: 'GB',
    email: 'ada@example.com',
    phone: '+447700900123',
    idType: 'PASSPORT',
    passportNumber: '****4567',
    passportCountry: 'GB',
    issuingDate: '2020-01-15',
    validityDate: '2030-01-14',
    taxCountry: null,
    taxIdNumber: '****4567',
    fatca: 'F',
  };
  const address = { address1: 'St James Square', address2: null, buildingNumber: '12', city: 'London', stateProvince: null, zipCode: 'SW1Y 4LE', country: 'GB' };
  const auditEntry = {
    _id: '1042',
    operation: 'card.issue.virtual',
    targetType: 'card',
    targetId: EXAMPLE_IDS.cardKey,
    outcome: 'success',
    requestId: EXAMPLE_IDS.requestId,
    details: { cardMask: '5355 70** **** 1786', type: 'virtual' },
    createdAt: CREATED_AT,
  };
  const historyEntry = {
    _id: '311',
    cardKey: EXAMPLE_IDS.cardKey,
    operation: 'card.lock',
    oldStatus: 'ACTIVE',
    newStatus: 'LOCKED',
    oldStatusCode: '00',
    newStatusCode: 'L1',
    reason: 'Holder asked to pause the card',
    createdAt: CREATED_AT,
  };
  const authorizedAt = CREATED_AT;
  const clearedAt = new Date(Date.parse(CREATED_AT) + 86_400_000).toISOString();
  const transaction = {
    _id: EXAMPLE_IDS.transactionId,
    cardKey: EXAMPLE_IDS.cardKey,
    individualId: EXAMPLE_IDS.individualId,
    amount: 42.9,
    currency: 'EUR',
    type: 'PURCHASE',
    status: 'SETTLED',
    merchant: { name: 'Babbage Books', mcc: '5942', city: 'London', country: 'GB' },
    createdAt: authorizedAt,
    updatedAt: clearedAt,
    settledAmount: 39.9,
    declineReason: null,
    relatedTransactionId: null,
    history: [
      { kind: 'authorization', amount: 42.9, at: authorizedAt },
      { kind: 'clearing', amount: 39.9, at: clearedAt },
    ],
    authorization: { decidedBy: 'partner', partnerLatencyMs: 84 },
  };
  const deliveryMethod = { id: 'DE-DHL-STD', type: 'postal', carrier: 'DHL', name: 'DHL Brief', estimatedDays: 3, fee: 2.5, currency: 'EUR' };
  const partner = {
    _id: EXAMPLE_IDS.partnerId,
    name: 'Acme Pay',
    issuer: 'https://acme.example',
    status: 'active',
    processingEnabled: true,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
  };
  const tenant = { _id: EXAMPLE_IDS.tenantId, name: 'Acme Corporate', createdAt: CREATED_AT };
  const envelope = (type: string, data: unknown) => ({ id: EXAMPLE_IDS.eventId, type, createdAt: CREATED_AT, partnerId: EXAMPLE_IDS.partnerId, data, requestId: EXAMPLE_IDS.requestId });
  const individual = {
    _id: EXAMPLE_IDS.individualId,
    clientID: EXAMPLE_IDS.clientID,
    baasAccountClientId: 42,
    personalInfo,
    address,
    applicationStatus: 'APPROVED',
    dashboardStatus: 'ACTIVE',
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
  };
  const statusChanged = envelope('card.status_changed', {
    cardKey: EXAMPLE_IDS.cardKey,
    previousStatus: 'ACTIVE',
    status: 'LOCKED',
    statusCode: 'L1',
    previousStatusCode: '00',
    source: 'partner',
    reason: 'Holder asked to pause the card',
  });
  const token = {
    _id: EXAMPLE_IDS.tokenId,
    cardKey: EXAMPLE_IDS.cardKey,
    walletProvider: 'apple_pay',
    tokenRequestorId: '50110030273',
    last4: '4821',
    tokenExpDate: `11/${now.getUTCFullYear() + 3}`,
    device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' },
    status: 'suspended',
    suspendedBy: 'card_state',
    createdAt: CREATED_AT,
    updatedAt: clearedAt,
    history: [
      { status: 'active', at: CREATED_AT, by: 'network' },
      { status: 'suspended', at: clearedAt, by: 'card_state', reason: 'card LOCKED' },
    ],
  };
  const { suspendedBy: _s, ...activeToken } = { ...token, status: 'active', updatedAt: CREATED_AT, history: [token.history[0]] };
  const pendingToken = { ...activeToken, status: 'pending_verification', history: [{ status: 'pending_verification', at: CREATED_AT, by: 'network' }] };
  const invalidParam = { name: 'expDate', reason: 'must match pattern "^(0[1-9]|1[0-2])/[0-9]{4}$"' };
  return {
    Card: card,
    CardListItem: cardListItem,
    CardSummary: cardSummary,
    CardPage: { success: true, data: [cardSummary], pagination },
    CardStatusResult: { cardKey: EXAMPLE_IDS.cardKey, status: 'LOCKED', statusCode: 'L1' },
    CardLimit: limit,
    AvailableLimit: { available: 1379.5 },
    SpendControls: EXAMPLE_SPEND_CONTROLS,
    EncryptedCvv: { cvv: EXAMPLE_CIPHERTEXT },
    EncryptedCardNumber: { cardNumber: EXAMPLE_CIPHERTEXT },
    PinEncryptionKey: { keyId: 'pin-key-2026-11', algorithm: 'RSA-OAEP-256', publicKey: '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqh...\n-----END PUBLIC KEY-----\n' },
    FeeResult: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R001', fee: 4.99, currency: 'EUR' },
    DeliveryMethod: deliveryMethod,
    DeliveryMethods: { data: { success: true, country: 'DE', deliveryMethods: [deliveryMethod] } },
    PersonalInfo: personalInfo,
    Address: address,
    IndividualAccount: individual,
    IndividualSummary: individualSummary,
    IndividualList: { count: 1, data: [individualSummary] },
    AuditLogEntry: auditEntry,
    AuditLogPage: { data: [auditEntry], pagination },
    CardStatusHistoryEntry: historyEntry,
    CardStatusHistoryPage: { data: [historyEntry], pagination },
    Transaction: transaction,
    TransactionPage: { data: [transaction], pagination },
    TransactionList: { data: [transaction], nextCursor: 'WyIyMDI2LTExLTAyVDA5OjE1OjAwLjAwMDAwMFoiLCI1ZjBjMmE5ZThiMWQ0YzdhOWUzZjJiNjEiXQ.q2XoQmVfqP0b4yxN8f3b2A' },
    TransactionStep: transaction.history[0],
    Token: token,
    TokenHistoryEntry: token.history[1],
    TokenList: { data: [token], nextCursor: 'WyIyMDI2LTExLTIyVDEwOjAwOjAwLjAwMDAwMFoiLCJ0b2tfNmIwMjM3YTI0MDQ4NzQ5MmEyZWUwZGU2Il0.Ku2vbm9Jp0cm9a3VzGQ7xw' },
    CardTokens: { data: [token] },
    ApplePayProvisioning: {
      activationData: 'TUJQQUM6MTU1NDI3MzIzNjpTQU1QTEVfQUNUSVZBVElPTl9EQVRBX05PVF9BX1JFQUxfT05FOjE2MjM0NTY3ODk=',
      encryptedPassData: 'b3RwYXNzZGF0YSBlbmNyeXB0ZWQgZm9yIEFwcGxlOyB0aGUgc2FuZGJveCBhbnN3ZXJzIDEsMDI0IHRvIDIsMDQ4IHJhbmRvbSBieXRlcw==',
      ephemeralPublicKey: 'BOX7w8YlVtWcOvNkN0v1qkRjJ5L8mZ2T3eQ9sH4yF6aD1pXgU0bC7iK2nM5oR8tW3zE6hJ9lA4qS7vY0xB1cG2I=',
    },
    GooglePayProvisioning: {
      opaquePaymentCard: 'c2FuZGJveC1vcGFxdWUtcGF5bWVudC1jYXJkLW5vdC1hLXJlYWwtY3J5cHRvZ3JhbS1fLWJhc2U2NHVybA',
      network: 'MASTERCARD',
      tokenServiceProvider: 'TOKEN_PROVIDER_MASTERCARD',
      displayName: 'Partner Card',
      lastDigits: '1786',
    },
    Pagination: { page: 2, limit: 20, total: 57, totalPages: 3, hasMore: true },
    Partner: partner,
    B2bTenant: tenant,
    Me: { partner, activeTenantId: EXAMPLE_IDS.tenantId, b2bAccounts: [tenant], individuals: [individualSummary] },
    Event: statusChanged,
    EventPage: { data: [statusChanged], nextCursor: 'MTA0Mg' },
    EventCardCreated: envelope('card.created', { card: { ...card, cardKey: EXAMPLE_IDS.newCardKey }, reason: 'reissued', previousCardKey: EXAMPLE_IDS.cardKey }),
    EventCardStatusChanged: statusChanged,
    EventCardUpdated: envelope('card.updated', { cardKey: EXAMPLE_IDS.cardKey, changed: ['limits'], card, limits: [{ name: 'dailyPurchase', value: 1500 }] }),
    EventIndividualCreated: envelope('individual.created', { individual }),
    EventTransactionCreated: envelope('transaction.created', { transaction: { ...transaction, status: 'PENDING', settledAmount: null, updatedAt: authorizedAt, history: [transaction.history[0]] } }),
    EventTransactionUpdated: envelope('transaction.updated', { transaction, previousStatus: 'PENDING', change: 'clearing' }),
    EventTokenCreated: envelope('token.created', { token: activeToken }),
    EventTokenUpdated: envelope('token.updated', { token, previousStatus: 'active', change: 'suspended' }),
    EventTokenVerificationCode: envelope('token.verification_code', { token: pendingToken, code: '482913', expiresAt: '2026-11-22T10:10:00.000Z' }),
    EventResend: { id: EXAMPLE_IDS.eventId, deliveries: 1 },
    WebhookEndpoint: webhookEndpoint,
    WebhookEndpointCreated: { ...webhookEndpoint, secret: 'whsec_' + 'Q'.repeat(43) },
    WebhookEndpointList: { data: [webhookEndpoint] },
    WebhookSecret: { secret: 'whsec_' + 'R'.repeat(43) },
    WebhookAttempt: webhookAttempt,
    WebhookAttemptPage: { data: [webhookAttempt], nextCursor: 'NTE' },
    AuthorizationEndpoint: authorizationEndpoint,
    AuthorizationEndpointCreated: { ...authorizationEndpoint, secret: 'whsec_' + 'S'.repeat(43) },
    AuthorizationEndpointSecret: { secret: 'whsec_' + 'T'.repeat(43) },
    InvalidParam: invalidParam,
    Problem: {
      type: 'https://partner-gateway.dev/problems/validation_failed',
      title: 'Request validation failed',
      status: 400,
      detail: 'The request body is invalid',
      code: 'validation_failed',
      requestId: EXAMPLE_IDS.requestId,
      invalidParams: [invalidParam],
    },
  };
}
