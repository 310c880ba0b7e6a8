import type { NextFunction, Response, Router } from 'express';
import type { AuthorizationRequestBody, CardCreatedEvent, FeeRequest, StatusUpdate } from '../../contracts/upstreams';
import type { IssuedCard } from '../issuer/issuance-feed';
import type { IssuerStatusCode } from '../issuer/status-codes';
import { newAuthorizationId, newTransactionId } from './recorded';
import { Ring } from '../shared/ring';
import { positiveInt, queryParam, recordCap } from '../shared/sandbox-app';
import { upstreamError, type ErrorDetail } from '../shared/sandbox-error';
import { compileSchemaValidator, compileValidator, type Checker } from '../shared/validation';
import { deliveryMethodsFor } from './delivery-methods';
import { FEE_CURRENCY, lookupFee } from './fees';
import * as schemas from './schemas';
import { AccountTransactions } from './account-transactions';
import type { NotificationBody, Notifier } from '../shared/notifier';
import { mountNotifyTargetRoutes } from '../shared/notify-target';
import { deduplicateByIdempotencyKey, type IdempotencyBook } from '../shared/idempotency';
import { transactionsOf, type CardSource, type KnownCard, type Merchant, type Transaction } from './transactions';
import { checkAuthorization, checkRecordedTransaction, checkRelease, checkResend, checkStep, type AuthorizationInput, type MerchantInput, type RecordedTransactionInput } from './control-input';
import { isChangeCursor, RecordedTransactions, RECORDED_KEPT, RECORDED_PER_CARD, type NotifyMode } from './recorded';
import { TokenStore, TOKENS_PER_KNOWN_CARD } from './tokens';

export { RECORDED_KEPT, RECORDED_PER_CARD } from './recorded';
export type { RecordedTransactionInput } from './control-input';

type CardRegistration = Partial<Omit<CardCreatedEvent, 'event'>> & { cardKey: string; historyEnd?: string };

/** A status update as kept by the processing system. */
export interface ReceivedStatusUpdate {
  cardKey: string;
  statusCode: IssuerStatusCode;
  reason: string | null;
  receivedAt: string;
}

/** Currency of transactions when the registration named none. */
export const DEFAULT_TRANSACTION_CURRENCY = 'EUR';

// Typed by their schemas, checked against the upstream contract's types (contracts/upstreams.ts).
const checkFeeRequest: Checker<FeeRequest> = compileSchemaValidator(schemas.feeRequestSchema);
const checkStatusUpdate: Checker<StatusUpdate> = compileSchemaValidator(schemas.statusUpdateSchema);
const checkCardCreated: Checker<CardCreatedEvent> = compileSchemaValidator(schemas.cardCreatedSchema);
const checkRegistration = compileValidator<CardRegistration>(schemas.registerCardSchema);

/** What the issuer link said about a card; a later webhook or control registration falls back on it. */
type IssuerFacts = Pick<KnownCard, 'previousCardKey' | 'cardMask' | 'type' | 'accountId' | 'currency'>;

/** Status updates kept (the control endpoint lists them); older ones are dropped. */
export const STATUS_UPDATES_KEPT = 5000;

/** Whether two registrations of a card generate the same transactions. */
function sameHistory(a: KnownCard, b: KnownCard): boolean {
  return a.accountId === b.accountId && a.currency === b.currency && a.historyEnd === b.historyEnd;
}

/** The merchant of a recorded transaction: what the control route named, the rest from the defaults. */
function merchantOf(input: MerchantInput | undefined, type: 'PURCHASE' | 'WITHDRAWAL'): Merchant {
  const atm = type === 'WITHDRAWAL';
  return {
    name: input?.name ?? (atm ? 'Sandbox ATM' : 'Sandbox Merchant'),
    mcc: input?.mcc ?? (atm ? '6011' : '5999'),
    city: input?.city ?? 'Online',
    country: input?.country ?? 'DE',
  };
}

/**
 * The processing system's knowledge: known cards (at most `maxCards`: registering one more
 * evicts the oldest with what the issuer link said about it, its place in its account's
 * transactions and its recorded transactions; it is unknown from then on), the transactions
 * recorded through the control routes and the latest received status updates.
 */
export class ProcessingState {
  /** Oldest first (a Map keeps insertion order): the first entry is the next to evict. Change it through the methods only. */
  readonly cards = new Map<string, KnownCard>();
  readonly statusUpdates = new Ring<ReceivedStatusUpdate>(STATUS_UPDATES_KEPT);
  readonly transactions: AccountTransactions;
  private readonly issuerFacts = new Map<string, IssuerFacts>();
  /**
   * Transactions recorded through the control routes, each through its lifecycle: at most
   * {@link RECORDED_PER_CARD} per card and {@link RECORDED_KEPT} in all (else 1,000 per card at the card cap).
   */
  readonly recorded = new RecordedTransactions(RECORDED_PER_CARD, RECORDED_KEPT);
  /** The cards' network tokens (docs/upstreams.md section 10): at most `maxCards` × 10, evicted with their card. */
  readonly tokens: TokenStore;
  /** Each known card's last received status code (6.5): provisioning refuses a card closed at the network (`S4`). */
  private readonly lastStatus = new Map<string, StatusUpdate['statusCode']>();

  constructor(
    readonly maxCards = recordCap(undefined, 'SANDBOX_MAX_CARDS'),
    historyCacheTransactions?: number,
  ) {
    this.transactions = new AccountTransactions(historyCacheTransactions);
    this.tokens = new TokenStore(maxCards * TOKENS_PER_KNOWN_CARD);
  }

  /** Records a received status update (6.5). */
  receiveStatusUpdate(update: ReceivedStatusUpdate): void {
    this.statusUpdates.push(update);
    // Kept for known cards only, so that the map is bounded by the card cap.
    if (this.cards.has(update.cardKey)) this.lastStatus.set(update.cardKey, update.statusCode);
  }

  /** The last status code received for a card (6.5), if any. */
  lastStatusCode(cardKey: string): StatusUpdate['statusCode'] | undefined {
    return this.lastStatus.get(cardKey);
  }

  /** How many cards the issuer link has told about (at most `maxCards`). */
  get issuerFactCount(): number {
    return this.issuerFacts.size;
  }

  /**
   * Registers (or re-registers) a card. A field the registration leaves out falls back to what
   * the issuer link said about the card, then to the contract's defaults (`accountId` = ownerId,
   * currency EUR). `historyEnd` is kept from the card's first registration unless given.
   */
  register(input: CardRegistration, source: Exclude<CardSource, 'issuer'>): KnownCard {
    const facts = this.issuerFacts.get(input.cardKey);
    const known = this.cards.get(input.cardKey);
    const now = new Date().toISOString();
    const card: KnownCard = {
      cardKey: input.cardKey,
      previousCardKey: input.previousCardKey ?? facts?.previousCardKey ?? null,
      cardMask: input.cardMask ?? facts?.cardMask ?? null,
      type: input.type ?? facts?.type ?? null,
      ownerType: input.ownerType ?? null,
      ownerId: input.ownerId ?? null,
      partnerId: input.partnerId ?? null,
      accountId: input.accountId ?? facts?.accountId ?? input.ownerId ?? null,
      currency: input.currency ?? facts?.currency ?? DEFAULT_TRANSACTION_CURRENCY,
      occurredAt: input.occurredAt ?? null,
      registeredAt: now,
      source,
      historyEnd: input.historyEnd === undefined ? (known?.historyEnd ?? now) : new Date(input.historyEnd).toISOString(),
    };
    this.put(card, known);
    return card;
  }

  /**
   * The issuer link: a card the issuer sandbox has just issued becomes known at once, under
   * `accountId` = its holder's client code, in its own currency, its history ending now.
   */
  registerIssued(issued: IssuedCard): KnownCard {
    const facts: IssuerFacts = {
      previousCardKey: issued.previousCardKey,
      cardMask: issued.cardMask,
      type: issued.type,
      accountId: issued.holderClientCode,
      currency: issued.currency,
    };
    const known = this.cards.get(issued.cardKey);
    if (!known) this.makeRoom();
    this.issuerFacts.set(issued.cardKey, facts);
    const now = new Date().toISOString();
    const card: KnownCard = {
      cardKey: issued.cardKey,
      ...facts,
      ownerType: null,
      ownerId: null,
      partnerId: null,
      occurredAt: issued.createdAt,
      registeredAt: now,
      source: 'issuer',
      historyEnd: known?.historyEnd ?? now,
    };
    this.put(card, known);
    return card;
  }

  /** The transactions of one card, or of every card of an account (`cardId` and `accountId`: both must match), newest first. */
  transactionsOf(filter: { accountId?: string; cardId?: string }): readonly Transaction[] {
    return this.transactionPage(filter, 0, Number.MAX_SAFE_INTEGER).items;
  }

  /**
   * `limit` of {@link transactionsOf} from `offset` on, and how many there are in all: an
   * account's page is materialised from its memoised history, not the whole history.
   */
  transactionPage(filter: { accountId?: string; cardId?: string }, offset: number, limit: number): { items: Transaction[]; total: number } {
    if (filter.cardId === undefined) {
      if (filter.accountId === undefined) return { items: [], total: 0 };
      // Recorded transactions first (newest first), then the generated history.
      const recorded = this.recorded.pageOfAccount(filter.accountId, offset, limit);
      const history = this.transactions.page(filter.accountId, Math.max(0, offset - recorded.total), limit - recorded.items.length);
      return { items: [...recorded.items, ...history.items], total: recorded.total + history.total };
    }
    const card = this.cards.get(filter.cardId);
    if (!card || (filter.accountId !== undefined && card.accountId !== filter.accountId)) return { items: [], total: 0 };
    // Recorded transactions first (newest first), then the generated history; only the page is materialised.
    const recorded = this.recorded.pageOfCard(card.cardKey, offset, limit);
    const generated = transactionsOf(card);
    const from = Math.max(0, offset - recorded.total);
    return { items: [...recorded.items, ...generated.slice(from, from + limit - recorded.items.length)], total: recorded.total + generated.length };
  }

  /**
   * Records a transaction on a known card (`POST /__sandbox/transactions`, the one-step shortcut):
   * an authorization (PENDING), a force-post clearing (SETTLED) or a decline (DECLINED), newest
   * first before the card's generated history. Undefined for an unknown card.
   */
  record(input: RecordedTransactionInput): Transaction | undefined {
    const card = this.cards.get(input.cardId);
    if (!card) return undefined;
    const merchant = merchantOf(input.merchant, 'PURCHASE');
    const type = input.type ?? 'authorization';
    if (type === 'authorization') return this.recorded.authorize({ card, amount: input.amount, currency: input.currency, type: 'PURCHASE', merchant }).transaction;
    return this.recorded.createOneStep({ card, amount: input.amount, currency: input.currency, merchant, first: type, declineReason: input.declineReason });
  }

  /**
   * `POST /__sandbox/authorizations`: a PENDING transaction on a known card (404 `CARD_NOT_FOUND`),
   * or the one of the same `authorizationId` (`created` false).
   */
  authorize(input: AuthorizationInput & { cardId: string; id?: string; declineReason?: string }): { transaction: Transaction; created: boolean } {
    const card = this.cardOf(input.cardId);
    const type = input.type ?? 'PURCHASE';
    return this.recorded.authorize({
      card,
      amount: input.amount,
      currency: input.currency ?? card.currency,
      type,
      merchant: merchantOf(input.merchant, type),
      authorizationId: input.authorizationId,
      id: input.id,
      declineReason: input.declineReason,
      tokenReference: input.tokenReference,
    });
  }

  /** A known card (404 `CARD_NOT_FOUND` otherwise). */
  cardOf(cardId: string): KnownCard {
    const card = this.cards.get(cardId);
    if (!card) throw upstreamError('CARD_NOT_FOUND', `Card ${cardId} is not known`);
    return card;
  }

  /** The transaction of an authorization id already recorded on this card (a processor's retry), or undefined; 409 `AUTHORIZATION_ID_REUSED` for another card's. */
  knownAuthorization(input: AuthorizationInput & { cardId: string }): Transaction | undefined {
    return input.authorizationId === undefined ? undefined : this.recorded.ofAuthorization(input.authorizationId, input.cardId);
  }

  clear(): void {
    this.cards.clear();
    this.issuerFacts.clear();
    this.recorded.reset();
    this.transactions.clear();
    this.statusUpdates.clear();
    this.tokens.reset();
    this.lastStatus.clear();
  }

  /** Stores a (re-)registration, keeping the account index in step with it. */
  private put(card: KnownCard, known: KnownCard | undefined): void {
    if (!known) this.makeRoom();
    this.cards.set(card.cardKey, card);
    if (known && sameHistory(known, card)) {
      // Same transactions: only the index's reference to the card is renewed.
      this.transactions.add(card);
      return;
    }
    if (known) this.transactions.remove(known);
    this.transactions.add(card);
  }

  /** Evicts the oldest cards until one more fits. */
  private makeRoom(): void {
    while (this.cards.size >= this.maxCards) {
      const oldest = this.cards.values().next().value!;
      this.cards.delete(oldest.cardKey);
      this.issuerFacts.delete(oldest.cardKey);
      this.recorded.forgetCard(oldest.cardKey);
      this.tokens.forgetCard(oldest.cardKey);
      this.lastStatus.delete(oldest.cardKey);
      this.transactions.remove(oldest);
    }
  }
}

/** Mounts the processing system's API on `router`. */
export function mountProcessingRoutes(router: Router, state: ProcessingState): void {
  router.get('/transactions', (req, res) => {
    const accountId = queryParam(req, 'accountId') || undefined;
    const cardId = queryParam(req, 'cardId') || undefined;
    const details: ErrorDetail[] = [];
    const page = positiveInt(req, 'page', 1, Number.MAX_SAFE_INTEGER, details);
    const limit = positiveInt(req, 'limit', 20, 100, details);
    if (!accountId && !cardId) details.push({ path: '?accountId', message: 'accountId or cardId is required' });
    if (details.length > 0) {
      throw upstreamError('VALIDATION_ERROR', `Invalid request: ${details[0].path} ${details[0].message}`, details);
    }
    const { items, total } = state.transactionPage({ accountId, cardId }, (page - 1) * limit, limit);
    res.json({ data: items, total, page, limit });
  });

  // Before /transactions/:id, which would take "changes" for an id.
  router.get('/transactions/changes', (req, res) => {
    const details: ErrorDetail[] = [];
    const limit = positiveInt(req, 'limit', 100, 500, details);
    const after = queryParam(req, 'after') || undefined;
    if (after !== undefined && !isChangeCursor(after)) details.push({ path: '?after', message: 'must be a cursor answered as nextCursor' });
    if (details.length > 0) {
      throw upstreamError('VALIDATION_ERROR', `Invalid request: ${details[0].path} ${details[0].message}`, details);
    }
    res.json(state.recorded.changes(after, limit));
  });

  router.get('/transactions/:id', (req, res) => {
    const transaction = state.recorded.get(req.params.id);
    if (!transaction) throw upstreamError('TRANSACTION_NOT_FOUND', `No recorded transaction ${req.params.id} (a generated history is listed, not read by id)`);
    res.json(transaction);
  });

  router.post('/fees', (req, res) => {
    const body = checkFeeRequest(req.body);
    if (body.cardKey === undefined && body.clientId === undefined && body.iban === undefined) {
      // Spec 4.4.1: the customer must be identified by at least one of the three.
      throw upstreamError('VALIDATION_ERROR', 'Invalid request: one of cardKey, clientId, iban is required', [
        { path: '/cardKey', message: 'one of cardKey, clientId, iban is required' },
      ]);
    }
    res.json({
      OperationType: body.OperationType,
      CustomerType: body.CustomerType,
      ProductType: body.ProductType,
      fee: lookupFee(body.OperationType, body.CustomerType, body.ProductType),
      currency: FEE_CURRENCY,
    });
  });

  router.get('/delivery-methods', (req, res) => {
    const country = queryParam(req, 'country');
    if (country === undefined || !/^[A-Za-z]{2}$/.test(country)) {
      throw upstreamError('VALIDATION_ERROR', 'Invalid request: ?country must be an ISO 3166-1 alpha-2 code', [
        { path: '?country', message: 'must be exactly 2 letters' },
      ]);
    }
    const code = country.toUpperCase();
    res.json({ success: true, country: code, deliveryMethods: deliveryMethodsFor(code) });
  });

  router.post('/cards/status-update', (req, res) => {
    const body = checkStatusUpdate(req.body);
    state.receiveStatusUpdate({
      cardKey: body.cardKey,
      statusCode: body.statusCode,
      reason: body.reason ?? null,
      receivedAt: new Date().toISOString(),
    });
    res.json({ accepted: true });
  });

  router.post('/webhooks/card-created', (req, res) => {
    state.register(checkCardCreated(req.body), 'webhook');
    res.status(202).json({ received: true });
  });
}

/** How long the processor waits for the gateway's authorization decision (`AUTHORIZATION_DEADLINE_MS`, default 2000). */
export function authorizationDeadlineMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.AUTHORIZATION_DEADLINE_MS);
  return Number.isInteger(value) && value >= 300 && value <= 10_000 ? value : 2000;
}

/** Where the gateway answers the processor's authorization requests (docs/upstreams.md 6.10). */
export const AUTHORIZATION_REQUEST_PATH = '/upstream-notifications/processing/authorizations';

/**
 * Asks the gateway whether to approve an authorization (docs/upstreams.md 6.10), waiting at most
 * the deadline. Undefined: approve (the gateway approved, or has no target or no such route: a 404,
 * a gateway that does not decide). Otherwise the decline's reason: the gateway's, or `stand_in` when
 * no usable answer came in time (a timeout, an error status, a body not of the contract's shape).
 */
async function askGateway(
  notifier: Notifier,
  deadlineMs: number,
  a: { authorizationId: string; id: string; card: KnownCard; input: AuthorizationInput; token?: AuthorizationRequestBody['authorization']['token'] }
): Promise<string | undefined> {
  if (notifier.targetUrl === null) return undefined;
  const at = new Date().toISOString();
  const type = a.input.type ?? 'PURCHASE';
  const body: AuthorizationRequestBody = {
    id: a.authorizationId,
    type: 'authorization.request',
    occurredAt: at,
    authorization: {
      id: a.authorizationId,
      transactionId: a.id,
      cardId: a.card.cardKey,
      amount: a.input.amount,
      currency: a.input.currency ?? a.card.currency,
      type,
      merchant: merchantOf(a.input.merchant, type),
      at,
      ...(a.token ? { token: a.token } : {}),
    },
  };
  const answer = await notifier.ask(AUTHORIZATION_REQUEST_PATH, body as unknown as NotificationBody, deadlineMs);
  if (answer?.status === 404) return undefined;
  const decision = answer && answer.status === 200 ? (answer.body as { approved?: unknown; declineReason?: unknown } | undefined) : undefined;
  if (decision?.approved === true) return undefined;
  if (decision?.approved === false) return typeof decision.declineReason === 'string' && /^[a-z_]{1,40}$/.test(decision.declineReason) ? decision.declineReason : 'do_not_honor';
  return 'stand_in';
}

/** Mounts the processing system's test-only routes under `/__sandbox`. */
export function mountProcessingControlRoutes(router: Router, state: ProcessingState, keys: IdempotencyBook, notifier: Notifier, deadlineMs = authorizationDeadlineMs()): void {
  // Where the notifications go (the gateway's listener and this upstream's secret): docs/upstreams.md, section 9.
  mountNotifyTargetRoutes(router, 'processing', notifier);

  const dedupe = deduplicateByIdempotencyKey(keys);
  /** Sends `bodies` one after the other, each awaited (2 s at most: it stays queued past that), then answers `status` `answer`. */
  const sendThenAnswer = (res: Response, next: NextFunction, bodies: (NotificationBody | undefined)[], status: number, answer: unknown): void => {
    void (async () => {
      for (const body of bodies) if (body) await notifier.send(body);
    })().then(() => res.status(status).json(answer), next);
  };
  /** Answers a step: its notification (as `mode` says: docs/upstreams.md, 6.9) first. */
  const answerStep = (res: Response, next: NextFunction, status: number, transaction: Transaction, mode: NotifyMode | undefined): void => {
    sendThenAnswer(res, next, [state.recorded.notice(transaction.id, mode ?? 'deliver')], status, transaction);
  };

  // The one-step shortcut: a transaction the processing system records (an authorization, a force-post
  // clearing or a decline), merged into GET /transactions and notified to the gateway (docs/upstreams.md,
  // section 9) as `notify` says before this answers (2 s at most).
  router.post('/transactions', dedupe, (req, res, next) => {
    const input = checkRecordedTransaction(req.body);
    const transaction = state.record(input);
    if (!transaction) throw upstreamError('CARD_NOT_FOUND', `Card ${input.cardId} is not known`);
    answerStep(res, next, 201, transaction, input.notify);
  });

  // The lifecycle of one purchase (docs/upstreams.md, 6.9): an authorization, then its clearing,
  // reversals or expiry, and refunds of a settled purchase.
  router.post('/authorizations', dedupe, (req, res, next) => {
    const body = checkAuthorization(req.body);
    void (async () => {
      // A purchase with a token (docs/upstreams.md 10.8) is made on the token's card as the processor holds it now.
      const token = body.tokenReference === undefined ? undefined : state.tokens.find(body.tokenReference);
      const input = { ...body, cardId: token ? token.cardKey : body.cardId! };
      // The processor's retry of one authorization: the same transaction, nothing new to notify.
      const known = state.knownAuthorization(input);
      if (known) return res.status(201).json(known);
      const card = state.cardOf(input.cardId);
      const authorizationId = input.authorizationId ?? newAuthorizationId();
      const id = newTransactionId();
      const tokenOf = token && { reference: token.tokenReference, walletProvider: token.walletProvider };
      const declineReason = await askGateway(notifier, deadlineMs, { authorizationId, id, card, input, token: tokenOf });
      const { transaction, created } = state.authorize({ ...input, authorizationId, id, declineReason });
      if (!created) res.status(201).json(transaction);
      else answerStep(res, next, 201, transaction, input.notify);
    })().catch(next);
  });
  router.post('/transactions/:id/clearing', dedupe, (req, res, next) => {
    const input = checkStep(req.body);
    answerStep(res, next, 200, state.recorded.clear(req.params.id, input.amount), input.notify);
  });
  router.post('/transactions/:id/reversal', dedupe, (req, res, next) => {
    const input = checkStep(req.body);
    answerStep(res, next, 200, state.recorded.reverse(req.params.id, input.amount), input.notify);
  });
  router.post('/transactions/:id/expiry', dedupe, (req, res, next) => {
    const input = checkStep(req.body, false);
    answerStep(res, next, 200, state.recorded.expire(req.params.id), input.notify);
  });
  router.post('/transactions/:id/refund', dedupe, (req, res, next) => {
    const input = checkStep(req.body);
    answerStep(res, next, 201, state.recorded.refund(req.params.id, input.amount), input.notify);
  });

  // Notifications out of the ordinary: held ones released (newest-first: out of order), and a resend
  // of the latest sent one, same id and body (a processor's retry after a lost 2xx).
  router.post('/transactions/:id/notifications/release', dedupe, (req, res, next) => {
    const bodies = state.recorded.release(req.params.id, checkRelease(req.body));
    sendThenAnswer(res, next, bodies, 200, { sent: bodies.length });
  });
  router.post('/transactions/:id/notifications/resend', dedupe, (req, res, next) => {
    checkResend(req.body);
    sendThenAnswer(res, next, [state.recorded.resend(req.params.id)], 200, { sent: 1 });
  });

  router.get('/cards', (_req, res) => {
    res.json([...state.cards.values()]);
  });
  router.post('/cards', (req, res) => {
    res.status(201).json(state.register(checkRegistration(req.body), 'control'));
  });
  router.get('/status-updates', (_req, res) => {
    res.json(state.statusUpdates.toArray());
  });
}
