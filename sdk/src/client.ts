import crypto from 'node:crypto';
import { PartnerGatewayConnectionError, PartnerGatewayError, parseRetryAfter } from './errors';
import { encryptPin, oneOffRevealKey } from './card-data';
import { OPERATIONS, type OperationId } from './generated/operations';
import { Paginated, type PagingKind } from './pagination';
import { isRetryable, retryDelayMs, type RetryOptions } from './retry';
import { PartnerTokens, type PartnerPrivateKey } from './token';
import type { AnswerOf, BodyOf, ItemOf, PinEncryptionKey, QueryOf } from './types';

/** The SDK's version, sent in `User-Agent`. */
export const SDK_VERSION = '0.1.0';

/** The local sandbox gateway's partner API (`npm start`). */
export const DEFAULT_BASE_URL = 'http://localhost:8080/api/partner';

/** One line the SDK may log: never a token, key, body, header or card datum. */
export interface LogRecord {
  operationId: OperationId;
  method: string;
  attempt: number;
  status?: number;
  code?: string;
  requestId?: string;
  /** The wait before the next attempt, when one follows. */
  retryInMs?: number;
  error?: string;
}

/** Options of {@link PartnerGateway}. */
export interface PartnerGatewayOptions {
  /** Your partner `_id` (24 hexadecimal characters), the tokens' `sub`. */
  partnerId: string;
  /** The issuer registered for you, the tokens' `iss`. */
  issuer: string;
  /** Your P-521 private key: PEM, `KeyObject`, or a key-store signer (docs/sdk.md). */
  privateKey: PartnerPrivateKey;
  /** The key id the operator registered. */
  kid?: string;
  /** The partner API's base URL; default the local sandbox's, `http://localhost:8080/api/partner`. */
  baseUrl?: string;
  /** Token lifetime in seconds (1 to 300); default 60. Each token is reused until shortly before it expires. */
  tokenLifetimeSeconds?: number;
  /** Retries (docs/sdk.md#retries). */
  retry?: RetryOptions;
  /** Timeout of one attempt; default 30 s. A timed-out attempt counts as a network error. */
  timeoutMs?: number;
  /** The `fetch` to call with (a proxy agent, instrumentation, tests); default the global one. */
  fetch?: typeof fetch;
  /** Receives one record per attempt; nothing is logged otherwise. */
  logger?: (record: LogRecord) => void;
  /** @internal The clock (tests). */
  now?: () => number;
  /** @internal How to wait between attempts (tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** Options of one call. */
export interface RequestOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** This call's retries; `{maxRetries: 0}` sends it once. */
  retry?: RetryOptions;
}

/** Options of a write the gateway takes an `Idempotency-Key` on. */
export interface WriteOptions extends RequestOptions {
  /**
   * Your own key (1 to 255 visible ASCII characters; the same key and body within 24 hours replay
   * the first answer). Default: a new UUID for this call, reused by each of its retries.
   */
  idempotencyKey?: string;
}

interface CallInput {
  path?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
}

type Call<K extends OperationId> = Promise<AnswerOf<K>>;
type Query<K extends OperationId> = QueryOf<K>;
type Body<K extends OperationId> = BodyOf<K>;

/** The paging kind of an operation of the generated table, when it is a list that pages. */
function pagingOf(operationId: OperationId): PagingKind | undefined {
  return (OPERATIONS[operationId] as { paging?: PagingKind }).paging;
}

/**
 * A client of the Partner Card-Management API: one typed method per operation, grouped by
 * resource and named after the gateway's catalog (`lock-card` is `cards.lock`;
 * {@link OPERATION_METHODS} lists them all).
 *
 * @example
 * const client = new PartnerGateway({ partnerId, issuer, privateKey: fs.readFileSync('private.pem', 'utf8') });
 * const me = await client.me();
 * for await (const card of client.cards.list({ status: 'ACTIVE' })) console.log(card.cardKey);
 */
/** The network-token methods of `client.tokens` (docs/tokens.md). */
export interface NetworkTokens {
  list(query?: Query<'list-tokens'>, options?: RequestOptions): Paginated<ItemOf<'list-tokens'>, AnswerOf<'list-tokens'> & { data: ItemOf<'list-tokens'>[] }>;
  get(tokenId: string, options?: RequestOptions): Call<'get-token'>;
  suspend(tokenId: string, body: Body<'suspend-token'>, options?: WriteOptions): Call<'suspend-token'>;
  resume(tokenId: string, body: Body<'resume-token'>, options?: WriteOptions): Call<'resume-token'>;
  deactivate(tokenId: string, body: Body<'deactivate-token'>, options?: WriteOptions): Call<'deactivate-token'>;
}

/** The signer's two methods, kept on `client.tokens` for code that signed through it. */
export interface SignerMethodsOnTokens {
  /** @deprecated `client.signer.token()`. */
  token(): Promise<string>;
  /** @deprecated `client.signer.invalidate()`. */
  invalidate(): void;
}

export class PartnerGateway {
  /** The partner API's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The ES512 tokens this client signs for its calls (docs/authentication.md). */
  readonly signer: PartnerTokens;
  /**
   * Your cards' network tokens (docs/tokens.md): `list` (pages with `for await`), `get`, `suspend`,
   * `resume`, `deactivate`. `token()` and `invalidate()` here are the {@link signer}'s, kept for
   * code written before network tokens (deprecated: use `client.signer`).
   */
  readonly tokens: NetworkTokens & SignerMethodsOnTokens;
  private readonly fetchImpl: typeof fetch;
  private readonly retryOptions: RetryOptions;
  private readonly timeoutMs: number;
  private readonly logger: ((record: LogRecord) => void) | undefined;
  private readonly sleep: (ms: number) => Promise<void>;
  private pinKey: { key: PinEncryptionKey; fetchedAt: number } | undefined;
  private readonly now: () => number;

  constructor(options: PartnerGatewayOptions) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.now = options.now ?? Date.now;
    this.signer = new PartnerTokens({
      partnerId: options.partnerId,
      issuer: options.issuer,
      privateKey: options.privateKey,
      kid: options.kid,
      lifetimeSeconds: options.tokenLifetimeSeconds,
      now: this.now,
    });
    const networkTokens: NetworkTokens = {
      list: (query: Query<'list-tokens'> = {}, options?: RequestOptions) => this.list('list-tokens', {}, query, options),
      get: (tokenId: string, options?: RequestOptions) => this.call('get-token', { path: { id: tokenId } }, options),
      suspend: (tokenId: string, body: Body<'suspend-token'>, options?: WriteOptions) => this.call('suspend-token', { path: { id: tokenId }, body }, options),
      resume: (tokenId: string, body: Body<'resume-token'>, options?: WriteOptions) => this.call('resume-token', { path: { id: tokenId }, body }, options),
      deactivate: (tokenId: string, body: Body<'deactivate-token'>, options?: WriteOptions) => this.call('deactivate-token', { path: { id: tokenId }, body }, options),
    };
    this.tokens = { ...networkTokens, token: () => this.signer.token(), invalidate: () => this.signer.invalidate() };
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.retryOptions = options.retry ?? {};
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.logger = options.logger;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** `GET /health-check`: `OK` while the gateway runs (no token). */
  healthCheck(options?: RequestOptions): Promise<string> {
    return this.call('health-check', {}, options) as Promise<string>;
  }
  /** `GET /me`: who you are to the gateway. */
  me(options?: RequestOptions): Call<'me'> {
    return this.call('me', {}, options);
  }
  /** `GET /openapi.json`: the OpenAPI document the gateway serves (no token). */
  openapiDocument(options?: RequestOptions): Call<'openapi-document'> {
    return this.call('openapi-document', {}, options);
  }
  /** `GET /docs`: the API reference page, HTML (no token). */
  apiDocs(options?: RequestOptions): Promise<string> {
    return this.call('api-docs', {}, options) as Promise<string>;
  }

  /** Individual cardholders (docs/individuals.md). */
  readonly individuals = {
    list: (query: Query<'list-individuals'> = {}, options?: RequestOptions) => this.list('list-individuals', {}, query, options),
    create: (body: Body<'create-individual'>, options?: WriteOptions) => this.call('create-individual', { body }, options),
    get: (individualId: string, options?: RequestOptions) => this.call('get-individual', { path: { id: individualId } }, options),
    /** The individual's ACTIVE cards: at most `limit` (default and most 100) from `page`; every individual with up to 100 in one call (docs/individuals.md). */
    listCards: (individualId: string, query: Query<'list-individual-cards'> = {}, options?: RequestOptions) => this.call('list-individual-cards', { path: { id: individualId }, query }, options),
    issueVirtualCard: (individualId: string, body: Body<'issue-virtual-card'>, options?: WriteOptions) => this.call('issue-virtual-card', { path: { id: individualId }, body }, options),
    issuePhysicalCard: (individualId: string, body: Body<'issue-physical-card'>, options?: WriteOptions) => this.call('issue-physical-card', { path: { id: individualId }, body }, options),
    listAuditLogs: (individualId: string, query: Query<'list-individual-audit-logs'> = {}, options?: RequestOptions) => this.list('list-individual-audit-logs', { id: individualId }, query, options),
    listCardStatusHistory: (individualId: string, query: Query<'list-individual-card-status-history'> = {}, options?: RequestOptions) => this.list('list-individual-card-status-history', { id: individualId }, query, options),
    listTransactions: (individualId: string, query: Query<'list-individual-transactions'> = {}, options?: RequestOptions) => this.list('list-individual-transactions', { id: individualId }, query, options),
  };

  /** Cards (docs/cards.md, docs/card-search.md). */
  readonly cards = {
    list: (query: Query<'list-cards'> = {}, options?: RequestOptions) => this.list('list-cards', {}, query, options),
    get: (cardKey: string, options?: RequestOptions) => this.call('get-card', { path: { id: cardKey } }, options),
    getStatus: (cardKey: string, options?: RequestOptions) => this.call('get-card-status', { path: { id: cardKey } }, options),
    /** Push provisioning to Apple Pay: the wallet's opaque payload (never logged or stored; docs/tokens.md). */
    provisionApplePay: (cardKey: string, body: Body<'provision-card-apple-pay'>, options?: WriteOptions) => this.call('provision-card-apple-pay', { path: { id: cardKey }, body }, options),
    /** Push provisioning to Google Pay: the wallet's opaque payment card (never logged or stored). */
    provisionGooglePay: (cardKey: string, body: Body<'provision-card-google-pay'>, options?: WriteOptions) => this.call('provision-card-google-pay', { path: { id: cardKey }, body }, options),
    /** The card's network tokens. */
    listTokens: (cardKey: string, options?: RequestOptions) => this.call('list-card-tokens', { path: { id: cardKey } }, options),
    lock: (cardKey: string, body: Body<'lock-card'>, options?: WriteOptions) => this.call('lock-card', { path: { id: cardKey }, body }, options),
    unlock: (cardKey: string, body: Body<'unlock-card'>, options?: WriteOptions) => this.call('unlock-card', { path: { id: cardKey }, body }, options),
    activate: (cardKey: string, body: Body<'activate-card'>, options?: WriteOptions) => this.call('activate-card', { path: { id: cardKey }, body }, options),
    temporaryLock: (cardKey: string, body: Body<'temporary-lock-card'>, options?: WriteOptions) => this.call('temporary-lock-card', { path: { id: cardKey }, body }, options),
    restrict: (cardKey: string, body: Body<'restrict-card'>, options?: WriteOptions) => this.call('restrict-card', { path: { id: cardKey }, body }, options),
    restrictLost: (cardKey: string, body: Body<'restrict-card-lost'>, options?: WriteOptions) => this.call('restrict-card-lost', { path: { id: cardKey }, body }, options),
    restrictStolen: (cardKey: string, body: Body<'restrict-card-stolen'>, options?: WriteOptions) => this.call('restrict-card-stolen', { path: { id: cardKey }, body }, options),
    restrictClosed: (cardKey: string, body: Body<'restrict-card-closed'>, options?: WriteOptions) => this.call('restrict-card-closed', { path: { id: cardKey }, body }, options),
    restrictFraud: (cardKey: string, body: Body<'restrict-card-fraud'>, options?: WriteOptions) => this.call('restrict-card-fraud', { path: { id: cardKey }, body }, options),
    restrictMobileLost: (cardKey: string, body: Body<'restrict-card-mobile-lost'>, options?: WriteOptions) => this.call('restrict-card-mobile-lost', { path: { id: cardKey }, body }, options),
    setNickname: (cardKey: string, body: Body<'set-card-nickname'>, options?: RequestOptions) => this.call('set-card-nickname', { path: { id: cardKey }, body }, options),
    setEmbossName: (cardKey: string, body: Body<'set-card-emboss-name'>, options?: RequestOptions) => this.call('set-card-emboss-name', { path: { id: cardKey }, body }, options),
    replace: (cardKey: string, body: Body<'replace-card'>, options?: WriteOptions) => this.call('replace-card', { path: { id: cardKey }, body }, options),
    reissue: (cardKey: string, body: Body<'reissue-card'>, options?: WriteOptions) => this.call('reissue-card', { path: { id: cardKey }, body }, options),
    /** The CVV encrypted under your `securityKey`; {@link revealCvv} does the key and the decryption. */
    getCvv: (cardKey: string, query: Query<'get-card-cvv'>, options?: RequestOptions) => this.call('get-card-cvv', { path: { id: cardKey }, query }, options),
    /** The card number encrypted under your `securityKey`; {@link revealPan} does the key and the decryption. */
    getPan: (cardKey: string, query: Query<'get-card-pan'>, options?: RequestOptions) => this.call('get-card-pan', { path: { id: cardKey }, query }, options),
    /** The CVV in clear: a one-off RSA key is made, its public half sent, the answer decrypted. Show it, never log or store it. */
    revealCvv: async (cardKey: string, query: { expDate: string }, options?: RequestOptions): Promise<{ cvv: string }> => {
      const key = await oneOffRevealKey();
      const answer = await this.call('get-card-cvv', { path: { id: cardKey }, query: { expDate: query.expDate, securityKey: key.securityKey } }, options);
      return { cvv: key.decrypt(answer.cvv) };
    },
    /** The card number in clear, as {@link revealCvv}. */
    revealPan: async (cardKey: string, query: { expDate: string }, options?: RequestOptions): Promise<{ cardNumber: string }> => {
      const key = await oneOffRevealKey();
      const answer = await this.call('get-card-pan', { path: { id: cardKey }, query: { expDate: query.expDate, securityKey: key.securityKey } }, options);
      return { cardNumber: key.decrypt(answer.cardNumber) };
    },
    set3dsAnswer: (cardKey: string, body: Body<'set-card-3ds-answer'>, options?: RequestOptions) => this.call('set-card-3ds-answer', { path: { id: cardKey }, body }, options),
    set3dsPhone: (cardKey: string, body: Body<'set-card-3ds-phone'>, options?: RequestOptions) => this.call('set-card-3ds-phone', { path: { id: cardKey }, body }, options),
    resetPinTries: (cardKey: string, body: Body<'reset-card-pin-tries'>, options?: RequestOptions) => this.call('reset-card-pin-tries', { path: { id: cardKey }, body }, options),
    /**
     * `pin` is the PIN encrypted under the issuer's PIN key: `await client.cards.encryptPin('1234')`.
     * A refusal (4xx) drops the PIN key {@link encryptPin} cached: a PIN block under a key the
     * issuer has since rotated is refused (422 `upstream_rejected`, `INVALID_PIN_BLOCK`), and the
     * next `encryptPin` fetches the key again.
     */
    changePin: async (cardKey: string, body: Body<'change-card-pin'>, options?: RequestOptions): Call<'change-card-pin'> => {
      try {
        return await this.call('change-card-pin', { path: { id: cardKey }, body }, options);
      } catch (err) {
        if (err instanceof PartnerGatewayError && err.status >= 400 && err.status < 500) this.pinKey = undefined;
        throw err;
      }
    },
    forcePinLock: (cardKey: string, body: Body<'force-card-pin-lock'>, options?: RequestOptions) => this.call('force-card-pin-lock', { path: { id: cardKey }, body }, options),
    authorizeCardholder: (cardKey: string, body: Body<'authorize-cardholder'>, options?: RequestOptions) => this.call('authorize-cardholder', { path: { id: cardKey }, body }, options),
    getLimits: (cardKey: string, options?: RequestOptions) => this.call('get-card-limits', { path: { id: cardKey } }, options),
    patchLimits: (cardKey: string, body: Body<'patch-card-limits'>, options?: RequestOptions) => this.call('patch-card-limits', { path: { id: cardKey }, body }, options),
    setLimit: (cardKey: string, limitName: string, body: Body<'set-card-limit'>, options?: RequestOptions) => this.call('set-card-limit', { path: { id: cardKey, limitName }, body }, options),
    getLimit: (cardKey: string, limitName: string, options?: RequestOptions) => this.call('get-card-limit', { path: { id: cardKey, limitName } }, options),
    getLimitAvailable: (cardKey: string, limitName: string, options?: RequestOptions) => this.call('get-card-limit-available', { path: { id: cardKey, limitName } }, options),
    getSpendControls: (cardKey: string, options?: RequestOptions) => this.call('get-card-spend-controls', { path: { id: cardKey } }, options),
    /** Replaces the card's controls with `body`; `{}` clears them. Without a body: rejects with a `TypeError` (never a clear). */
    setSpendControls: async (cardKey: string, body: Body<'set-card-spend-controls'>, options?: RequestOptions) => this.call('set-card-spend-controls', { path: { id: cardKey }, body: spendControlsBody(body) }, options),
    /** `GET /pin-encryption-key`: the issuer's published PIN key. */
    getPinEncryptionKey: (options?: RequestOptions) => this.call('get-pin-encryption-key', {}, options),
    /**
     * The PIN encrypted under the issuer's published PIN key, for `changePin`. The key is fetched
     * once and kept an hour; a refused `changePin` drops it, and {@link refreshPinKey} fetches it
     * again at once (after the issuer announces a rotation).
     */
    encryptPin: async (pin: string, options?: RequestOptions): Promise<string> => {
      const cached = this.pinKey && this.now() - this.pinKey.fetchedAt <= 3_600_000 ? this.pinKey.key : undefined;
      return encryptPin(pin, cached ?? (await this.fetchPinKey(options)));
    },
    /** Fetches the issuer's published PIN key now and keeps it for {@link encryptPin}; answers it. */
    refreshPinKey: (options?: RequestOptions): Promise<PinEncryptionKey> => this.fetchPinKey(options),
  };

  /** Your default spend controls for all your cards (docs/spend-controls.md). */
  readonly spendControls = {
    get: (options?: RequestOptions) => this.call('get-spend-controls', {}, options),
    /** Replaces your default with `body`; `{}` clears it. Without a body: rejects with a `TypeError` (never a clear). */
    set: async (body: Body<'set-spend-controls'>, options?: RequestOptions) => this.call('set-spend-controls', { body: spendControlsBody(body) }, options),
  };

  /** Delivery methods of physical cards. */
  readonly deliveryMethods = {
    list: (query: Query<'list-delivery-methods'>, options?: RequestOptions) => this.call('list-delivery-methods', { query }, options),
  };

  /** Fees. */
  readonly fees = {
    checkCardIssuing: (body: Body<'check-card-issuing-fee'>, options?: RequestOptions) => this.call('check-card-issuing-fee', { body }, options),
    checkCardDelivery: (body: Body<'check-card-delivery-fee'>, options?: RequestOptions) => this.call('check-card-delivery-fee', { body }, options),
  };

  /** Transactions, from authorization to clearing (docs/transactions.md). */
  readonly transactions = {
    list: (query: Query<'list-transactions'> = {}, options?: RequestOptions) => this.list('list-transactions', {}, query, options),
    get: (transactionId: string, options?: RequestOptions) => this.call('get-transaction', { path: { id: transactionId } }, options),
  };

  /** Your events, read back (docs/events.md). */
  readonly events = {
    list: (query: Query<'list-events'> = {}, options?: RequestOptions) => this.list('list-events', {}, query, options),
    get: (eventId: string, options?: RequestOptions) => this.call('get-event', { path: { id: eventId } }, options),
    resend: (eventId: string, body: Body<'resend-event'>, options?: RequestOptions) => this.call('resend-event', { path: { id: eventId }, body }, options),
  };

  /** Your webhook endpoints (docs/webhooks.md); verify deliveries with `verifyWebhook`. */
  readonly webhookEndpoints = {
    list: (options?: RequestOptions) => this.call('list-webhook-endpoints', {}, options),
    create: (body: Body<'create-webhook-endpoint'>, options?: RequestOptions) => this.call('create-webhook-endpoint', { body }, options),
    get: (endpointId: string, options?: RequestOptions) => this.call('get-webhook-endpoint', { path: { id: endpointId } }, options),
    update: (endpointId: string, body: Body<'update-webhook-endpoint'>, options?: RequestOptions) => this.call('update-webhook-endpoint', { path: { id: endpointId }, body }, options),
    delete: (endpointId: string, options?: RequestOptions) => this.call('delete-webhook-endpoint', { path: { id: endpointId } }, options),
    rotateSecret: (endpointId: string, body: Body<'rotate-webhook-secret'>, options?: RequestOptions) => this.call('rotate-webhook-secret', { path: { id: endpointId }, body }, options),
    listDeliveries: (endpointId: string, query: Query<'list-webhook-deliveries'> = {}, options?: RequestOptions) => this.list('list-webhook-deliveries', { id: endpointId }, query, options),
  };

  /** Your decision endpoint (docs/authorization-endpoint.md); verify its requests with `verifyAuthorizationRequest`. */
  readonly authorizationEndpoint = {
    create: (body: Body<'create-authorization-endpoint'>, options?: RequestOptions) => this.call('create-authorization-endpoint', { body }, options),
    get: (options?: RequestOptions) => this.call('get-authorization-endpoint', {}, options),
    update: (body: Body<'update-authorization-endpoint'>, options?: RequestOptions) => this.call('update-authorization-endpoint', { body }, options),
    delete: (options?: RequestOptions) => this.call('delete-authorization-endpoint', {}, options),
    rotateSecret: (body: Body<'rotate-authorization-endpoint-secret'>, options?: RequestOptions) => this.call('rotate-authorization-endpoint-secret', { body }, options),
  };

  /** Sandbox simulations (sandbox mode only; docs/sandbox.md). */
  readonly simulate = {
    cardTransaction: (cardKey: string, body: Body<'simulate-card-transaction'>, options?: WriteOptions) => this.call('simulate-card-transaction', { path: { id: cardKey }, body }, options),
    cardIssuerStatus: (cardKey: string, body: Body<'simulate-card-issuer-status'>, options?: WriteOptions) => this.call('simulate-card-issuer-status', { path: { id: cardKey }, body }, options),
    cardAuthorization: (cardKey: string, body: Body<'simulate-card-authorization'>, options?: WriteOptions) => this.call('simulate-card-authorization', { path: { id: cardKey }, body }, options),
    cardTokenization: (cardKey: string, body: Body<'simulate-card-tokenization'>, options?: WriteOptions) => this.call('simulate-card-tokenization', { path: { id: cardKey }, body }, options),
    tokenVerification: (tokenId: string, body: Body<'simulate-token-verification'>, options?: WriteOptions) => this.call('simulate-token-verification', { path: { id: tokenId }, body }, options),
    tokenAuthorization: (tokenId: string, body: Body<'simulate-token-authorization'>, options?: WriteOptions) => this.call('simulate-token-authorization', { path: { id: tokenId }, body }, options),
    transactionClearing: (transactionId: string, body: Body<'simulate-transaction-clearing'>, options?: WriteOptions) => this.call('simulate-transaction-clearing', { path: { id: transactionId }, body }, options),
    transactionReversal: (transactionId: string, body: Body<'simulate-transaction-reversal'>, options?: WriteOptions) => this.call('simulate-transaction-reversal', { path: { id: transactionId }, body }, options),
    transactionExpiry: (transactionId: string, body: Body<'simulate-transaction-expiry'>, options?: WriteOptions) => this.call('simulate-transaction-expiry', { path: { id: transactionId }, body }, options),
    transactionRefund: (transactionId: string, body: Body<'simulate-transaction-refund'>, options?: WriteOptions) => this.call('simulate-transaction-refund', { path: { id: transactionId }, body }, options),
  };

  /** The issuer's PIN key, fetched now and kept for `cards.encryptPin`; the one kept is dropped first. */
  private async fetchPinKey(options?: RequestOptions): Promise<PinEncryptionKey> {
    this.pinKey = undefined;
    const key = await this.call('get-pin-encryption-key', {}, options);
    this.pinKey = { key, fetchedAt: this.now() };
    return key;
  }

  /**
   * A list operation, walked page by page with `for await`. `options` (signal, retry) go with the
   * call of every page: aborting the signal stops the walk, the retry rules apply to each page.
   */
  private list<K extends OperationId>(operationId: K, path: Record<string, string>, query: object, options?: RequestOptions): Paginated<ItemOf<K>, AnswerOf<K> & { data: ItemOf<K>[] }> {
    const kind = pagingOf(operationId);
    if (!kind) throw new Error(`${operationId} does not page`);
    return new Paginated(kind, { ...query }, (pageQuery, pageOptions) => this.call(operationId, { path, query: pageQuery }, pageOptions) as Promise<AnswerOf<K> & { data: ItemOf<K>[] }>, options);
  }

  /**
   * Calls one operation by its operationId: signs (or reuses) the token, adds an Idempotency-Key
   * where the operation takes one, retries by the rules of ./retry.ts, and answers the parsed
   * success body or throws a {@link PartnerGatewayError}.
   */
  async call<K extends OperationId>(operationId: K, input: CallInput, options: WriteOptions = {}): Call<K> {
    const operation = OPERATIONS[operationId] as { method: string; path: string; token: boolean; idempotencyKey: boolean; body?: boolean; empty?: boolean; text?: boolean };
    if (options.idempotencyKey !== undefined && !operation.idempotencyKey) throw new TypeError(`${operationId} takes no Idempotency-Key`);
    const url = this.url(operation.path, input);
    const idempotencyKey = operation.idempotencyKey ? (options.idempotencyKey ?? crypto.randomUUID()) : undefined;
    const retry = { ...this.retryOptions, ...options.retry };
    const maxRetries = retry.maxRetries ?? 2;
    // An operation that takes a body always gets one, `{}` when none is given: the gateway answers a
    // request of it without one 400 body_required.
    const body = input.body !== undefined ? JSON.stringify(input.body) : operation.body ? '{}' : undefined;
    let resigned = false;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { accept: operation.text ? 'text/html, text/plain, */*' : 'application/json', 'user-agent': `partner-gateway-sdk/${SDK_VERSION} node/${process.versions.node}` };
      if (operation.token) headers.authorization = `Bearer ${await this.signer.token()}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let response: Response;
      let text: string;
      try {
        response = await this.fetchImpl(url, { method: operation.method, headers, body, signal });
        text = await response.text();
      } catch (err) {
        if (options.signal?.aborted) throw err;
        const retryInMs = attempt <= maxRetries && isRetryable(operation.method, idempotencyKey !== undefined, 'network') ? retryDelayMs(attempt, undefined, retry) : undefined;
        this.logger?.({ operationId, method: operation.method, attempt, error: errorKind(err), ...(retryInMs === undefined ? {} : { retryInMs }) });
        if (retryInMs === undefined) throw new PartnerGatewayConnectionError(`${operation.method} ${operation.path}: ${errorKind(err)} after ${attempt} attempt(s)`, { cause: err });
        await this.sleep(retryInMs);
        options.signal?.throwIfAborted();
        continue;
      }
      if (response.ok) {
        this.logger?.({ operationId, method: operation.method, attempt, status: response.status, requestId: response.headers.get('x-request-id') ?? undefined });
        if (operation.empty || text === '') return undefined as AnswerOf<K>;
        if (operation.text) return text as AnswerOf<K>;
        try {
          return JSON.parse(text) as AnswerOf<K>;
        } catch {
          // Not the gateway's answer (a proxy's page): its body is not repeated.
          throw new PartnerGatewayError({ status: response.status, code: 'unexpected_response', detail: `HTTP ${response.status} whose body is not JSON`, requestId: response.headers.get('x-request-id') ?? undefined });
        }
      }
      const error = PartnerGatewayError.fromAnswer(response.status, response.headers, text);
      // A refused token (expired by a clock jump, a revoked key) is not reused by the next call.
      if (response.status === 401) this.signer.invalidate();
      // A token refused for its time (a clock that jumped, a machine asleep past its exp) is signed
      // again and the call sent once more, at once: the gateway refused the token, not the call.
      if (response.status === 401 && !resigned && (error.code === 'token_expired' || error.code === 'token_not_yet_valid')) {
        resigned = true;
        this.logger?.({ operationId, method: operation.method, attempt, status: response.status, code: error.code, requestId: error.requestId, retryInMs: 0 });
        continue;
      }
      const retryable = attempt <= maxRetries && isRetryable(operation.method, idempotencyKey !== undefined, { status: response.status, code: error.code });
      const retryInMs = retryable ? retryDelayMs(attempt, parseRetryAfter(response.headers.get('retry-after'), this.now()), retry) : undefined;
      this.logger?.({ operationId, method: operation.method, attempt, status: response.status, code: error.code, requestId: error.requestId, ...(retryInMs === undefined ? {} : { retryInMs }) });
      if (retryInMs === undefined) throw error;
      await this.sleep(retryInMs);
      // A call aborted while it waited is not sent again.
      options.signal?.throwIfAborted();
    }
  }

  private url(template: string, input: CallInput): string {
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = input.path?.[name];
      if (typeof value !== 'string' || value === '') throw new TypeError(`missing path parameter ${name}`);
      return encodeURIComponent(value);
    });
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(input.query ?? {})) if (value !== undefined && value !== null) query.set(name, String(value));
    const search = query.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }
}

/**
 * The body of a spend-controls replacement, which `{}` clears: a missing one (a JavaScript caller's
 * `undefined`, a `null`) is a mistake to refuse, not a clear to send (docs/spend-controls.md#clearing).
 */
function spendControlsBody<B>(body: B): B {
  if (body === undefined || body === null) throw new TypeError('spend controls are replaced by the body: pass {} to clear them');
  return body;
}

/** A network error's kind (its code or name), never its message (a URL may carry a query). */
function errorKind(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } })?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (err instanceof Error) return err.name === 'TypeError' ? 'network error' : err.name;
  return 'network error';
}

/**
 * The client method of every operation, by operationId. Typed by the generated operation table:
 * an operation added to the document without a method here does not compile.
 */
export const OPERATION_METHODS: Record<OperationId, string> = {
  'health-check': 'healthCheck',
  'openapi-document': 'openapiDocument',
  'api-docs': 'apiDocs',
  me: 'me',
  'list-individuals': 'individuals.list',
  'create-individual': 'individuals.create',
  'get-individual': 'individuals.get',
  'list-individual-cards': 'individuals.listCards',
  'issue-virtual-card': 'individuals.issueVirtualCard',
  'issue-physical-card': 'individuals.issuePhysicalCard',
  'list-individual-audit-logs': 'individuals.listAuditLogs',
  'list-individual-card-status-history': 'individuals.listCardStatusHistory',
  'list-individual-transactions': 'individuals.listTransactions',
  'list-cards': 'cards.list',
  'get-card': 'cards.get',
  'get-card-status': 'cards.getStatus',
  'lock-card': 'cards.lock',
  'unlock-card': 'cards.unlock',
  'activate-card': 'cards.activate',
  'temporary-lock-card': 'cards.temporaryLock',
  'restrict-card': 'cards.restrict',
  'restrict-card-lost': 'cards.restrictLost',
  'restrict-card-stolen': 'cards.restrictStolen',
  'restrict-card-closed': 'cards.restrictClosed',
  'restrict-card-fraud': 'cards.restrictFraud',
  'restrict-card-mobile-lost': 'cards.restrictMobileLost',
  'set-card-nickname': 'cards.setNickname',
  'set-card-emboss-name': 'cards.setEmbossName',
  'replace-card': 'cards.replace',
  'reissue-card': 'cards.reissue',
  'get-card-cvv': 'cards.getCvv',
  'get-card-pan': 'cards.getPan',
  'set-card-3ds-answer': 'cards.set3dsAnswer',
  'set-card-3ds-phone': 'cards.set3dsPhone',
  'reset-card-pin-tries': 'cards.resetPinTries',
  'change-card-pin': 'cards.changePin',
  'force-card-pin-lock': 'cards.forcePinLock',
  'authorize-cardholder': 'cards.authorizeCardholder',
  'get-card-limits': 'cards.getLimits',
  'patch-card-limits': 'cards.patchLimits',
  'set-card-limit': 'cards.setLimit',
  'get-card-limit': 'cards.getLimit',
  'get-card-limit-available': 'cards.getLimitAvailable',
  'get-card-spend-controls': 'cards.getSpendControls',
  'set-card-spend-controls': 'cards.setSpendControls',
  'get-spend-controls': 'spendControls.get',
  'set-spend-controls': 'spendControls.set',
  'get-pin-encryption-key': 'cards.getPinEncryptionKey',
  'list-delivery-methods': 'deliveryMethods.list',
  'check-card-issuing-fee': 'fees.checkCardIssuing',
  'check-card-delivery-fee': 'fees.checkCardDelivery',
  'list-transactions': 'transactions.list',
  'get-transaction': 'transactions.get',
  'list-events': 'events.list',
  'get-event': 'events.get',
  'resend-event': 'events.resend',
  'list-webhook-endpoints': 'webhookEndpoints.list',
  'create-webhook-endpoint': 'webhookEndpoints.create',
  'get-webhook-endpoint': 'webhookEndpoints.get',
  'update-webhook-endpoint': 'webhookEndpoints.update',
  'delete-webhook-endpoint': 'webhookEndpoints.delete',
  'rotate-webhook-secret': 'webhookEndpoints.rotateSecret',
  'list-webhook-deliveries': 'webhookEndpoints.listDeliveries',
  'create-authorization-endpoint': 'authorizationEndpoint.create',
  'get-authorization-endpoint': 'authorizationEndpoint.get',
  'update-authorization-endpoint': 'authorizationEndpoint.update',
  'delete-authorization-endpoint': 'authorizationEndpoint.delete',
  'rotate-authorization-endpoint-secret': 'authorizationEndpoint.rotateSecret',
  'simulate-card-transaction': 'simulate.cardTransaction',
  'simulate-card-issuer-status': 'simulate.cardIssuerStatus',
  'simulate-card-authorization': 'simulate.cardAuthorization',
  'simulate-card-tokenization': 'simulate.cardTokenization',
  'simulate-token-verification': 'simulate.tokenVerification',
  'simulate-token-authorization': 'simulate.tokenAuthorization',
  'provision-card-apple-pay': 'cards.provisionApplePay',
  'provision-card-google-pay': 'cards.provisionGooglePay',
  'list-card-tokens': 'cards.listTokens',
  'list-tokens': 'tokens.list',
  'get-token': 'tokens.get',
  'suspend-token': 'tokens.suspend',
  'resume-token': 'tokens.resume',
  'deactivate-token': 'tokens.deactivate',
  'simulate-transaction-clearing': 'simulate.transactionClearing',
  'simulate-transaction-reversal': 'simulate.transactionReversal',
  'simulate-transaction-expiry': 'simulate.transactionExpiry',
  'simulate-transaction-refund': 'simulate.transactionRefund',
};
