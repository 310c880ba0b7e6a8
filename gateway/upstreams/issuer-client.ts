import type { UpstreamHttpClient } from './http-client';
import { upstreamPath } from './http-client';
import type {
  AuthorizeRequest,
  CardLimit,
  CardStatusResult,
  CreateCardRequest,
  ForcePinLockRequest,
  IssuerCard,
  IssuerStatusSimulation,
  IssuerStatusSimulationResult,
  LimitUpdate,
  PinChangeRequest,
  StatusChangeRequest,
  StatusChangeResult,
  SuccessorRequest,
  SuccessorResult,
} from '../../contracts/upstreams';
import type { CallContext } from './call-context';

/**
 * Typed client of the card issuer platform (docs/upstreams.md section 5). Full-card answers are
 * returned as received: a `SANDBOX-LEAK` card carries `cardNumber`/`cvv`, which handlers strip.
 */
export interface IssuerClient {
  /** `POST /cards` (5.3): 201 full card. `operationId` is sent as `Idempotency-Key` (5.1): a repeat answers the first card. */
  createCard(ctx: CallContext, body: CreateCardRequest, operationId?: string): Promise<IssuerCard>;
  /** `GET /cards/{cardKey}` (5.4). */
  getCard(ctx: CallContext, cardKey: string): Promise<IssuerCard>;
  /** `GET /cards/{cardKey}/status` (5.4). */
  getStatus(ctx: CallContext, cardKey: string): Promise<CardStatusResult>;
  /** `POST /cards/{cardKey}/status` (5.5). */
  changeStatus(ctx: CallContext, cardKey: string, body: StatusChangeRequest, operationId?: string): Promise<StatusChangeResult>;
  /** `PATCH /cards/{cardKey}/emboss-name` (5.6). */
  setEmbossName(ctx: CallContext, cardKey: string, embossedName: string): Promise<IssuerCard>;
  /** `POST /cards/{cardKey}/replace` (5.7, physical only): 201 `{ cardKey: newKey }`. */
  replace(ctx: CallContext, cardKey: string, body: SuccessorRequest, operationId?: string): Promise<SuccessorResult>;
  /** `POST /cards/{cardKey}/reissue` (5.8): 201 `{ cardKey: newKey }`; the old card becomes `S4`. */
  reissue(ctx: CallContext, cardKey: string, body: SuccessorRequest, operationId?: string): Promise<SuccessorResult>;
  /** `PUT /cards/{cardKey}/3ds/answer` (5.10). */
  setThreeDsAnswer(ctx: CallContext, cardKey: string, answer: string): Promise<IssuerCard>;
  /** `POST /cards/{cardKey}/pin/reset-tries` (5.11), no body. */
  resetPinTries(ctx: CallContext, cardKey: string): Promise<IssuerCard>;
  /**
   * `POST /cards/{cardKey}/pin/change` (5.11). The contract answers every valid request with 500
   * `OPERATION_NOT_SUPPORTED` (→ 502 `upstream_error`, `upstreamCode` tells it apart); the success
   * answer is undocumented, so it resolves to whatever the issuer sends.
   */
  changePin(ctx: CallContext, cardKey: string, body: PinChangeRequest): Promise<unknown>;
  /** `POST /cards/{cardKey}/pin/force-lock` (5.11); same limitation as {@link IssuerClient.changePin}. */
  forcePinLock(ctx: CallContext, cardKey: string, body: ForcePinLockRequest): Promise<unknown>;
  /** `POST /cards/{cardKey}/authorize` (5.11). */
  authorize(ctx: CallContext, cardKey: string, body: AuthorizeRequest): Promise<IssuerCard>;
  /** `PATCH /cards/{cardKey}/limits` (5.13): all-or-nothing; answers all five limits. */
  patchLimits(ctx: CallContext, cardKey: string, items: LimitUpdate[]): Promise<CardLimit[]>;
  /** `PUT /cards/{cardKey}/limits/{name}` (5.13); the issuer refuses a body name ≠ `name` (400 `LIMIT_NAME_MISMATCH`). */
  setLimit(ctx: CallContext, cardKey: string, name: string, body: LimitUpdate): Promise<CardLimit>;
  /**
   * The issuer sandbox's control route `POST /__sandbox/cards/{cardKey}/issuer-status` (sandbox mode
   * only, outside the contract): the issuer changes the card's status on its own and notifies the
   * gateway (docs/upstreams.md section 9) before it answers.
   */
  simulateStatus(ctx: CallContext, cardKey: string, body: IssuerStatusSimulation): Promise<IssuerStatusSimulationResult>;
}

/**
 * Builds the issuer client on the shared HTTP client of that upstream. Bodies are rebuilt from
 * the contract's fields only, so nothing a handler forgot to strip from partner input travels on.
 */
export function createIssuerClient(http: UpstreamHttpClient): IssuerClient {
  const card = (cardKey: string): string => upstreamPath`/cards/${cardKey}`;
  return {
    createCard: async (ctx, { type, clientCode, expDate, currency, productCode, embossedName, shippingAddressId }, operationId) =>
      http.request<IssuerCard>(ctx, {
        method: 'POST',
        path: '/cards',
        body: { type, clientCode, expDate, currency, productCode, embossedName, shippingAddressId },
        idempotencyKey: operationId,
      }),
    getCard: async (ctx, cardKey) => http.request<IssuerCard>(ctx, { method: 'GET', path: card(cardKey) }),
    getStatus: async (ctx, cardKey) => http.request<CardStatusResult>(ctx, { method: 'GET', path: `${card(cardKey)}/status` }),
    changeStatus: async (ctx, cardKey, { action, expDate, reason, description, cardLocation }, operationId) =>
      http.request<StatusChangeResult>(ctx, {
        method: 'POST',
        path: `${card(cardKey)}/status`,
        body: { action, expDate, reason, description, cardLocation },
        idempotencyKey: operationId,
      }),
    setEmbossName: async (ctx, cardKey, embossedName) =>
      http.request<IssuerCard>(ctx, { method: 'PATCH', path: `${card(cardKey)}/emboss-name`, body: { embossedName } }),
    replace: async (ctx, cardKey, { expDate, reason, pinMailer }, operationId) =>
      http.request<SuccessorResult>(ctx, { method: 'POST', path: `${card(cardKey)}/replace`, body: { expDate, reason, pinMailer }, idempotencyKey: operationId }),
    reissue: async (ctx, cardKey, { expDate, reason, pinMailer }, operationId) =>
      http.request<SuccessorResult>(ctx, { method: 'POST', path: `${card(cardKey)}/reissue`, body: { expDate, reason, pinMailer }, idempotencyKey: operationId }),
    setThreeDsAnswer: async (ctx, cardKey, answer) =>
      http.request<IssuerCard>(ctx, { method: 'PUT', path: `${card(cardKey)}/3ds/answer`, body: { answer } }),
    resetPinTries: async (ctx, cardKey) => http.request<IssuerCard>(ctx, { method: 'POST', path: `${card(cardKey)}/pin/reset-tries` }),
    changePin: async (ctx, cardKey, { expDate, pin }) =>
      http.request<unknown>(ctx, { method: 'POST', path: `${card(cardKey)}/pin/change`, body: { expDate, pin } }),
    forcePinLock: async (ctx, cardKey, { expDate }) =>
      http.request<unknown>(ctx, { method: 'POST', path: `${card(cardKey)}/pin/force-lock`, body: { expDate } }),
    authorize: async (ctx, cardKey, { pin }) => http.request<IssuerCard>(ctx, { method: 'POST', path: `${card(cardKey)}/authorize`, body: { pin } }),
    patchLimits: async (ctx, cardKey, items) =>
      http.request<CardLimit[]>(ctx, {
        method: 'PATCH',
        path: `${card(cardKey)}/limits`,
        body: items.map(({ name, value }) => ({ name, value })),
      }),
    setLimit: async (ctx, cardKey, name, body) =>
      http.request<CardLimit>(ctx, {
        method: 'PUT',
        path: `${card(cardKey)}${upstreamPath`/limits/${name}`}`,
        body: { name: body.name, value: body.value },
      }),
    simulateStatus: async (ctx, cardKey, { statusCode, reason }) =>
      http.request<IssuerStatusSimulationResult>(ctx, { method: 'POST', path: `/__sandbox${card(cardKey)}/issuer-status`, body: { statusCode, reason } }),
  };
}
