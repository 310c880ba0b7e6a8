import type { Request, Router } from 'express';
import type { IssuedCard } from '../issuer/issuance-feed';
import type { IssuerStatusCode } from '../issuer/status-codes';
import { queryParam } from '../shared/sandbox-app';
import { upstreamError, type ErrorDetail } from '../shared/sandbox-error';
import { compileValidator } from '../shared/validation';
import { deliveryMethodsFor } from './delivery-methods';
import { FEE_CURRENCY, lookupFee, type CustomerType, type OperationType, type ProductType } from './fees';
import * as schemas from './schemas';
import { newestFirst, transactionsOf, type CardSource, type KnownCard } from './transactions';

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

/** The processing system's knowledge: known cards and received status updates. */
export class ProcessingState {
  readonly cards = new Map<string, KnownCard>();
  readonly statusUpdates: ReceivedStatusUpdate[] = [];
  private readonly issuerFacts = new Map<string, IssuerFacts>();

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
    this.cards.set(card.cardKey, card);
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
      historyEnd: this.cards.get(issued.cardKey)?.historyEnd ?? now,
    };
    this.cards.set(card.cardKey, card);
    return card;
  }

  clear(): void {
    this.cards.clear();
    this.issuerFacts.clear();
    this.statusUpdates.length = 0;
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
    const cards = cardId ? [state.cards.get(cardId)].filter((c): c is KnownCard => c !== undefined) : [...state.cards.values()];
    const all = cards
      .filter((card) => !accountId || card.accountId === accountId)
      .flatMap(transactionsOf)
      .sort(newestFirst);
    res.json({ data: all.slice((page - 1) * limit, page * limit), total: all.length, page, limit });
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
export function mountProcessingControlRoutes(router: Router, state: ProcessingState): void {
  router.get('/cards', (_req, res) => {
    res.json([...state.cards.values()]);
  });
  router.post('/cards', (req, res) => {
    res.status(201).json(state.register(checkRegistration(req.body), 'control'));
  });
  router.get('/status-updates', (_req, res) => {
    res.json(state.statusUpdates);
  });
}
