import type { UpstreamHttpClient } from './http-client';
import { upstreamPath } from './request-parts';
import type {
  ApplePayProvisioningRequest,
  ApplePayProvisioningResult,
  CardCreatedEvent,
  CardTokenList,
  GooglePayProvisioningRequest,
  GooglePayProvisioningResult,
  NetworkStatusSimulation,
  SimulatedTokenization,
  SimulatedTokenizationResult,
  SimulatedVerification,
  SimulatedVerificationResult,
  SimulatedAuthorization,
  SimulatedStep,
  SimulatedTransactionRequest,
  StatusUpdate,
  StatusUpdateReceipt,
  Token,
  TokenChanges,
  TokenMoveRequest,
  TokenMoveResult,
  TokenOperation,
  TokenOperationRequest,
  Transaction,
  TransactionChanges,
  TransactionPage,
  TransactionQuery,
  WebhookReceipt,
} from '../../contracts/upstreams';
import type { CallContext } from './call-context';

/** Typed client of the card processing system (docs/upstreams.md section 6). */
export interface ProcessingClient {
  /** `GET /transactions?accountId=&cardId=&page=&limit=` (6.2); at least one of accountId, cardId. */
  listTransactions(ctx: CallContext, query: TransactionQuery): Promise<TransactionPage>;
  /** `GET /transactions/{id}` (6.2): one transaction, in its current state. */
  getTransaction(ctx: CallContext, id: string): Promise<Transaction>;
  /** `GET /transactions/changes?after=&limit=` (6.2): the transactions changed since a cursor, each once, in their current state. */
  transactionChanges(ctx: CallContext, after: string | undefined, limit: number): Promise<TransactionChanges>;
  /** `POST /cards/status-update` (6.5). */
  statusUpdate(ctx: CallContext, update: StatusUpdate): Promise<StatusUpdateReceipt>;
  /** `POST /webhooks/card-created` (6.1): the `card_created` event; 202 `{ received: true }`. */
  cardCreated(ctx: CallContext, payload: CardCreatedEvent): Promise<WebhookReceipt>;
  /**
   * The processing sandbox's control route `POST /__sandbox/transactions` (sandbox mode only, outside
   * the contract): records a transaction, merged into `GET /transactions`, and notifies the gateway
   * (docs/upstreams.md section 9) before it answers 201. `operationId` is sent as `Idempotency-Key`.
   */
  simulateTransaction(ctx: CallContext, body: SimulatedTransactionRequest, operationId?: string): Promise<Transaction>;
  /** The processing sandbox's `POST /__sandbox/authorizations` (sandbox mode only): an authorization, PENDING, notified before it answers. */
  simulateAuthorization(ctx: CallContext, body: SimulatedAuthorization, operationId?: string): Promise<Transaction>;
  /**
   * The processing sandbox's `POST /__sandbox/transactions/{id}/{step}` (sandbox mode only): a later
   * step of a transaction, notified before it answers; a refund answers the new REFUND transaction.
   */
  simulateStep(ctx: CallContext, id: string, step: SimulatedStep, body: { amount?: number }, operationId?: string): Promise<Transaction>;

  // Network tokens and wallets (docs/upstreams.md section 10).

  /**
   * `POST /tokens/provisioning/apple-pay` (10.2): the wallet's opaque payload, to be answered to the
   * partner unchanged and never logged, stored or replayed. No operation id: a call creates nothing.
   */
  provisionApplePay(ctx: CallContext, body: ApplePayProvisioningRequest): Promise<ApplePayProvisioningResult>;
  /** `POST /tokens/provisioning/google-pay` (10.2): as {@link provisionApplePay}. */
  provisionGooglePay(ctx: CallContext, body: GooglePayProvisioningRequest): Promise<GooglePayProvisioningResult>;
  /** `GET /tokens/{tokenReference}` (10.7): the token in its current state; 404 `TOKEN_NOT_FOUND`. */
  getToken(ctx: CallContext, tokenReference: string): Promise<Token>;
  /** `GET /tokens?cardKey=` (10.7): every token of the card, newest first. */
  cardTokens(ctx: CallContext, cardKey: string): Promise<Token[]>;
  /** `GET /tokens/changes?after=&limit=` (10.7): the tokens changed since a cursor, each once, in their current state. */
  tokenChanges(ctx: CallContext, after: string | undefined, limit: number): Promise<TokenChanges>;
  /**
   * `POST /tokens/{tokenReference}/suspend|resume|deactivate` (10.6) with the operation id as
   * `Idempotency-Key` (the same on every retry): the token as the processor holds it after the operation.
   */
  tokenOperation(ctx: CallContext, tokenReference: string, action: TokenOperation, body: TokenOperationRequest, operationId: string): Promise<Token>;
  /** `POST /cards/{cardKey}/tokens/move` (10.6) with the operation id as `Idempotency-Key`: the tokens moved to `body.toCardKey`. */
  moveTokens(ctx: CallContext, cardKey: string, body: TokenMoveRequest, operationId: string): Promise<TokenMoveResult>;
  /**
   * The processing sandbox's `POST /__sandbox/tokenizations` (10.9, sandbox mode only): a network's
   * whole tokenization, the gateway's decision asked on its listener before this answers.
   */
  simulateTokenization(ctx: CallContext, body: SimulatedTokenization, operationId?: string): Promise<SimulatedTokenizationResult>;
  /** The processing sandbox's `POST /__sandbox/tokens/{tokenReference}/verify` (10.9): the cardholder types `code`. */
  simulateVerification(ctx: CallContext, tokenReference: string, body: SimulatedVerification, operationId?: string): Promise<SimulatedVerificationResult>;
  /** The processing sandbox's `POST /__sandbox/tokens/{tokenReference}/network-status` (10.9): a change the network or the wallet made. */
  simulateNetworkStatus(ctx: CallContext, tokenReference: string, body: NetworkStatusSimulation, operationId?: string): Promise<Token>;
}

/**
 * Members of the provisioning answers the card-data walker skips: opaque base64 the gateway passes
 * on byte for byte and never reads. `lastDigits`, `network` and the rest are checked as usual.
 */
export const APPLE_PAY_OPAQUE_MEMBERS = ['activationData', 'encryptedPassData', 'ephemeralPublicKey'] as const;
export const GOOGLE_PAY_OPAQUE_MEMBERS = ['opaquePaymentCard'] as const;

/**
 * Builds the processing client on the shared HTTP client of that upstream. Bodies are rebuilt
 * from the contract's fields only.
 */
export function createProcessingClient(http: UpstreamHttpClient): ProcessingClient {
  return {
    listTransactions: async (ctx, { accountId, cardId, page, limit }) =>
      http.request<TransactionPage>(ctx, { method: 'GET', path: '/transactions', query: { accountId, cardId, page, limit } }),
    getTransaction: async (ctx, id) => http.request<Transaction>(ctx, { method: 'GET', path: upstreamPath`/transactions/${id}` }),
    transactionChanges: async (ctx, after, limit) =>
      http.request<TransactionChanges>(ctx, { method: 'GET', path: '/transactions/changes', query: { after, limit } }),
    statusUpdate: async (ctx, { cardKey, statusCode, reason }) =>
      http.request<StatusUpdateReceipt>(ctx, { method: 'POST', path: '/cards/status-update', body: { cardKey, statusCode, reason } }),
    cardCreated: async (ctx, event) => {
      const { cardKey, previousCardKey, cardMask, type, ownerType, ownerId, partnerId, occurredAt, accountId, currency } = event;
      const body = { event: 'card_created', cardKey, previousCardKey, cardMask, type, ownerType, ownerId, partnerId, occurredAt, accountId, currency };
      return http.request<WebhookReceipt>(ctx, { method: 'POST', path: '/webhooks/card-created', body });
    },
    simulateTransaction: async (ctx, { cardId, amount, currency, type, merchant, declineReason }, operationId) => {
      const body = { cardId, amount, currency, type, merchant: merchant && { name: merchant.name, mcc: merchant.mcc, city: merchant.city, country: merchant.country }, declineReason };
      return http.request<Transaction>(ctx, { method: 'POST', path: '/__sandbox/transactions', body, idempotencyKey: operationId });
    },
    simulateAuthorization: async (ctx, { cardId, tokenReference, amount, currency, type, merchant, authorizationId }, operationId) => {
      const body = { cardId, tokenReference, amount, currency, type, merchant: merchant && { name: merchant.name, mcc: merchant.mcc, city: merchant.city, country: merchant.country }, authorizationId };
      return http.request<Transaction>(ctx, { method: 'POST', path: '/__sandbox/authorizations', body, idempotencyKey: operationId });
    },
    simulateStep: async (ctx, id, step, { amount }, operationId) =>
      http.request<Transaction>(ctx, { method: 'POST', path: upstreamPath`/__sandbox/transactions/${id}/${step}`, body: { amount }, idempotencyKey: operationId }),

    provisionApplePay: async (ctx, { cardKey, certificates, nonce, nonceSignature }) =>
      http.request<ApplePayProvisioningResult>(ctx, {
        method: 'POST',
        path: '/tokens/provisioning/apple-pay',
        body: { cardKey, certificates: [...certificates], nonce, nonceSignature },
        unread: APPLE_PAY_OPAQUE_MEMBERS,
      }),
    provisionGooglePay: async (ctx, { cardKey, walletAccountId, deviceId }) =>
      http.request<GooglePayProvisioningResult>(ctx, {
        method: 'POST',
        path: '/tokens/provisioning/google-pay',
        body: { cardKey, walletAccountId, deviceId },
        unread: GOOGLE_PAY_OPAQUE_MEMBERS,
      }),
    getToken: async (ctx, tokenReference) => http.request<Token>(ctx, { method: 'GET', path: upstreamPath`/tokens/${tokenReference}` }),
    cardTokens: async (ctx, cardKey) => (await http.request<CardTokenList>(ctx, { method: 'GET', path: '/tokens', query: { cardKey } })).data,
    tokenChanges: async (ctx, after, limit) => http.request<TokenChanges>(ctx, { method: 'GET', path: '/tokens/changes', query: { after, limit } }),
    tokenOperation: async (ctx, tokenReference, action, { reason, requestedBy }, operationId) =>
      http.request<Token>(ctx, { method: 'POST', path: upstreamPath`/tokens/${tokenReference}/${action}`, body: { reason, requestedBy }, idempotencyKey: operationId }),
    moveTokens: async (ctx, cardKey, { toCardKey, reason }, operationId) =>
      http.request<TokenMoveResult>(ctx, { method: 'POST', path: upstreamPath`/cards/${cardKey}/tokens/move`, body: { toCardKey, reason }, idempotencyKey: operationId }),
    simulateTokenization: async (ctx, { cardId, walletProvider, tokenRequestorId, device, networkVerdict, riskScore, tokenizationId }, operationId) => {
      const body = { cardId, walletProvider, tokenRequestorId, device: device && { type: device.type, name: device.name, ipCountry: device.ipCountry }, networkVerdict, riskScore, tokenizationId };
      return http.request<SimulatedTokenizationResult>(ctx, { method: 'POST', path: '/__sandbox/tokenizations', body, idempotencyKey: operationId });
    },
    simulateVerification: async (ctx, tokenReference, { code }, operationId) =>
      http.request<SimulatedVerificationResult>(ctx, { method: 'POST', path: upstreamPath`/__sandbox/tokens/${tokenReference}/verify`, body: { code }, idempotencyKey: operationId }),
    simulateNetworkStatus: async (ctx, tokenReference, { status, reason, notify }, operationId) =>
      http.request<Token>(ctx, { method: 'POST', path: upstreamPath`/__sandbox/tokens/${tokenReference}/network-status`, body: { status, reason, notify }, idempotencyKey: operationId }),
  };
}
