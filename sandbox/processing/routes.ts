import type { Request, Router } from 'express';
import type { IssuerStatusCode } from '../issuer/status-codes';
import { queryParam } from '../shared/sandbox-app';
import { upstreamError, type ErrorDetail } from '../shared/sandbox-error';
import { compileValidator } from '../shared/validation';
import { deliveryMethodsFor } from './delivery-methods';
import { FEE_CURRENCY, lookupFee, type CustomerType, type OperationType, type ProductType } from './fees';
import * as schemas from './schemas';
import { newestFirst, transactionsOf, type KnownCard } from './transactions';

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
type CardRegistration = Partial<Omit<CardCreatedEvent, 'event'>> & { cardKey: string };

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

/** The processing system's knowledge: known cards and received status updates. */
export class ProcessingState {
  readonly cards = new Map<string, KnownCard>();
  readonly statusUpdates: ReceivedStatusUpdate[] = [];

  register(input: CardRegistration): KnownCard {
    const card: KnownCard = {
      cardKey: input.cardKey,
      previousCardKey: input.previousCardKey ?? null,
      cardMask: input.cardMask ?? null,
      type: input.type ?? null,
      ownerType: input.ownerType ?? null,
      ownerId: input.ownerId ?? null,
      partnerId: input.partnerId ?? null,
      accountId: input.accountId ?? input.ownerId ?? null,
      currency: input.currency ?? DEFAULT_TRANSACTION_CURRENCY,
      occurredAt: input.occurredAt ?? null,
      registeredAt: new Date().toISOString(),
    };
    this.cards.set(card.cardKey, card);
    return card;
  }

  clear(): void {
    this.cards.clear();
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
    state.register(checkCardCreated(req.body));
    res.status(202).json({ received: true });
  });
}

/** Mounts the processing system's test-only routes under `/__sandbox`. */
export function mountProcessingControlRoutes(router: Router, state: ProcessingState): void {
  router.get('/cards', (_req, res) => {
    res.json([...state.cards.values()]);
  });
  router.post('/cards', (req, res) => {
    res.status(201).json(state.register(checkRegistration(req.body)));
  });
  router.get('/status-updates', (_req, res) => {
    res.json(state.statusUpdates);
  });
}
