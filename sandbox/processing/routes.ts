import type { Request, Router } from 'express';
import type { IssuedCard } from '../issuer/issuance-feed';
import type { IssuerStatusCode } from '../issuer/status-codes';
import { Ring } from '../shared/ring';
import { queryParam, recordCap } from '../shared/sandbox-app';
import { upstreamError, type ErrorDetail } from '../shared/sandbox-error';
import { compileValidator } from '../shared/validation';
import { deliveryMethodsFor } from './delivery-methods';
import { FEE_CURRENCY, lookupFee, type CustomerType, type OperationType, type ProductType } from './fees';
import * as schemas from './schemas';
import { AccountTransactions } from './account-transactions';
import crypto from 'node:crypto';
import { newNotificationId, type Notifier } from '../shared/notifier';
import { mountNotifyTargetRoutes } from '../shared/notify-target';
import { deduplicateByIdempotencyKey, type IdempotencyBook } from '../shared/idempotency';
import { transactionsOf, type CardSource, type KnownCard, type Transaction } from './transactions';

interface FeeRequest {
  OperationType: OperationType;
  CustomerType: CustomerType;
  ProductType: ProductType;
  cardKey?: string;
  clientId?: string;
  iban?: string;
}
interface StatusUpdate {
  cardKey: string;
  statusCode: IssuerStatusCode;
  reason?: string;
}
interface CardCreatedEvent {
  event: 'card_created';
  cardKey: string;
  previousCardKey?: string;
  cardMask: string;
  type: 'virtual' | 'physical';
  ownerType: 'individual' | 'b2b';
  ownerId: string;
  partnerId: string;
  occurredAt: string;
  accountId?: string;
  currency?: string;
}
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

const checkFeeRequest = compileValidator<FeeRequest>(schemas.feeRequestSchema);
const checkStatusUpdate = compileValidator<StatusUpdate>(schemas.statusUpdateSchema);
const checkCardCreated = compileValidator<CardCreatedEvent>(schemas.cardCreatedSchema);
const checkRegistration = compileValidator<CardRegistration>(schemas.registerCardSchema);

/** What the issuer link said about a card; a later webhook or control registration falls back on it. */
type IssuerFacts = Pick<KnownCard, 'previousCardKey' | 'cardMask' | 'type' | 'accountId' | 'currency'>;

/** Status updates kept (the control endpoint lists them); older ones are dropped. */
export const STATUS_UPDATES_KEPT = 5000;

/** Whether two registrations of a card generate the same transactions. */
function sameHistory(a: KnownCard, b: KnownCard): boolean {
  return a.accountId === b.accountId && a.currency === b.currency && a.historyEnd === b.historyEnd;
}

/**
 * The processing system's knowledge: known cards (at most `maxCards`: registering one more
 * evicts the oldest with what the issuer link said about it and its place in its account's
 * transactions; it is unknown from then on) and the latest received status updates.
 */
/** Most recorded (simulated) transactions a card keeps; the oldest goes first. */
export const RECORDED_PER_CARD = 1000;
/** Most recorded (simulated) transactions kept in all, every card together; the oldest goes first. */
export const RECORDED_KEPT = 10_000;

/** Body of `POST /__sandbox/transactions`. */
export interface RecordedTransactionInput {
  cardId: string;
  amount: number;
  currency: string;
  type?: 'authorization' | 'clearing' | 'decline';
  merchant?: { name?: string; mcc?: string; city?: string; country?: string };
  declineReason?: string;
}

function checkRecordedTransaction(body: unknown): RecordedTransactionInput {
  const b = (body ?? {}) as Record<string, unknown>;
  const bad = (path: string, message: string) => upstreamError('VALIDATION_ERROR', `Invalid request: ${path} ${message}`, [{ path, message }]);
  if (typeof b.cardId !== 'string' || b.cardId.length === 0) throw bad('/cardId', 'is required');
  if (typeof b.amount !== 'number' || !Number.isFinite(b.amount) || b.amount <= 0) throw bad('/amount', 'must be a positive number');
  if (typeof b.currency !== 'string' || !/^[A-Z]{3}$/.test(b.currency)) throw bad('/currency', 'must be an ISO 4217 code');
  if (b.type !== undefined && !['authorization', 'clearing', 'decline'].includes(b.type as string)) throw bad('/type', 'must be authorization, clearing or decline');
  const m = b.merchant;
  if (m !== undefined && (typeof m !== 'object' || m === null || Object.values(m).some((v) => typeof v !== 'string'))) throw bad('/merchant', 'must hold strings');
  if (b.declineReason !== undefined && typeof b.declineReason !== 'string') throw bad('/declineReason', 'must be a string');
  return b as unknown as RecordedTransactionInput;
}

export class ProcessingState {
  /** Oldest first (a Map keeps insertion order): the first entry is the next to evict. Change it through the methods only. */
  readonly cards = new Map<string, KnownCard>();
  readonly statusUpdates = new Ring<ReceivedStatusUpdate>(STATUS_UPDATES_KEPT);
  readonly transactions: AccountTransactions;
  private readonly issuerFacts = new Map<string, IssuerFacts>();
  /** Transactions recorded through the control route, per card, newest first. */
  private readonly recorded = new Map<string, Transaction[]>();
  /** The same, all cards together, oldest first: bounds them to {@link RECORDED_KEPT} (else 1,000 per card at the card cap). */
  private readonly recordedOrder = new Ring<Transaction>(RECORDED_KEPT);

  constructor(
    readonly maxCards = recordCap(undefined, 'SANDBOX_MAX_CARDS'),
    historyCacheTransactions?: number,
  ) {
    this.transactions = new AccountTransactions(historyCacheTransactions);
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
      const recorded = this.recordedOfAccount(filter.accountId);
      const fromRecorded = recorded.slice(offset, offset + limit);
      const history = this.transactions.page(filter.accountId, Math.max(0, offset - recorded.length), limit - fromRecorded.length);
      return { items: [...fromRecorded, ...history.items], total: recorded.length + history.total };
    }
    const card = this.cards.get(filter.cardId);
    if (!card || (filter.accountId !== undefined && card.accountId !== filter.accountId)) return { items: [], total: 0 };
    const all = [...(this.recorded.get(card.cardKey) ?? []), ...transactionsOf(card)];
    return { items: all.slice(offset, offset + limit), total: all.length };
  }

  /**
   * Records a transaction on a known card (`POST /__sandbox/transactions`): newest first before the
   * card's generated history, which ends when the card became known; at most
   * {@link RECORDED_PER_CARD} per card and {@link RECORDED_KEPT} in all. Undefined for an unknown card.
   */
  record(input: RecordedTransactionInput): Transaction | undefined {
    const card = this.cards.get(input.cardId);
    if (!card) return undefined;
    const type = input.type ?? 'authorization';
    const transaction: Transaction & { declineReason?: string } = {
      id: crypto.randomBytes(12).toString('hex'),
      cardId: card.cardKey,
      accountId: card.accountId,
      amount: input.amount,
      currency: input.currency,
      type: 'PURCHASE',
      merchant: { name: input.merchant?.name ?? 'Sandbox Merchant', mcc: input.merchant?.mcc ?? '5999', city: input.merchant?.city ?? 'Online', country: input.merchant?.country ?? 'DE' },
      status: type === 'clearing' ? 'SETTLED' : type === 'decline' ? 'DECLINED' : 'PENDING',
      ...(type === 'decline' ? { declineReason: input.declineReason ?? 'do_not_honor' } : {}),
      createdAt: new Date().toISOString(),
    };
    const list = this.recorded.get(card.cardKey) ?? [];
    list.unshift(transaction);
    if (list.length > RECORDED_PER_CARD) list.length = RECORDED_PER_CARD;
    this.recorded.set(card.cardKey, list);
    const dropped = this.recordedOrder.push(transaction);
    // The oldest of all is the oldest of its card, unless that card dropped it already or was evicted.
    const of = dropped && this.recorded.get(dropped.cardId);
    if (of && of[of.length - 1] === dropped) {
      of.pop();
      if (of.length === 0) this.recorded.delete(dropped.cardId);
    }
    return transaction;
  }

  private recordedOfAccount(accountId: string): Transaction[] {
    const all: Transaction[] = [];
    for (const list of this.recorded.values()) if (list[0]?.accountId === accountId) all.push(...list);
    return all.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  clear(): void {
    this.cards.clear();
    this.issuerFacts.clear();
    this.recorded.clear();
    this.recordedOrder.clear();
    this.transactions.clear();
    this.statusUpdates.clear();
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
      this.recorded.delete(oldest.cardKey);
      this.transactions.remove(oldest);
    }
  }
}

function positiveInt(req: Request, name: string, fallback: number, max: number, details: ErrorDetail[]): number {
  const raw = queryParam(req, name);
  if (raw === undefined || raw === '') return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= max)) details.push({ path: `?${name}`, message: `must be an integer from 1 to ${max}` });
  return value;
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
    state.statusUpdates.push({
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

/** Mounts the processing system's test-only routes under `/__sandbox`. */
export function mountProcessingControlRoutes(router: Router, state: ProcessingState, keys: IdempotencyBook, notifier: Notifier): void {
  // Where the notifications go (the gateway's listener and this upstream's secret): docs/upstreams.md, section 9.
  mountNotifyTargetRoutes(router, 'processing', notifier);

  // A transaction the processing system records (a purchase at a merchant): merged into GET
  // /transactions, and notified to the gateway (docs/upstreams.md, section 9) before this answers (2 s at most).
  router.post('/transactions', deduplicateByIdempotencyKey(keys), (req, res, next) => {
    const input = checkRecordedTransaction(req.body);
    const transaction = state.record(input);
    if (!transaction) throw upstreamError('CARD_NOT_FOUND', `Card ${input.cardId} is not known`);
    const notification = { id: newNotificationId(), type: 'transaction.created', occurredAt: transaction.createdAt, transaction };
    notifier.send(notification).then(() => res.status(201).json(transaction), next);
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
