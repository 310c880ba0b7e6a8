import type { UpstreamHttpClient } from './http-client';
import { upstreamPath } from './request-parts';
import type {
  CardCreatedEvent,
  SimulatedAuthorization,
  SimulatedStep,
  SimulatedTransactionRequest,
  StatusUpdate,
  StatusUpdateReceipt,
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
}

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
    simulateAuthorization: async (ctx, { cardId, amount, currency, type, merchant, authorizationId }, operationId) => {
      const body = { cardId, amount, currency, type, merchant: merchant && { name: merchant.name, mcc: merchant.mcc, city: merchant.city, country: merchant.country }, authorizationId };
      return http.request<Transaction>(ctx, { method: 'POST', path: '/__sandbox/authorizations', body, idempotencyKey: operationId });
    },
    simulateStep: async (ctx, id, step, { amount }, operationId) =>
      http.request<Transaction>(ctx, { method: 'POST', path: upstreamPath`/__sandbox/transactions/${id}/${step}`, body: { amount }, idempotencyKey: operationId }),
  };
}
