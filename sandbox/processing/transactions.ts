import type { Transaction as UpstreamTransaction, TransactionStatus as UpstreamTransactionStatus, TransactionStep, TransactionStepKind, TransactionType as UpstreamTransactionType } from '../../contracts/upstreams';
import { roundMoney, seededRandom, type SeededRandom } from '../shared/seeded-random';

/** How a card became known to the processing system. */
export type CardSource = 'issuer' | 'webhook' | 'control';

/** A card the processing system has heard of (issuer link, card_created webhook or control API). */
export interface KnownCard {
  cardKey: string;
  previousCardKey: string | null;
  cardMask: string | null;
  type: 'virtual' | 'physical' | null;
  ownerType: 'individual' | 'b2b' | null;
  ownerId: string | null;
  partnerId: string | null;
  /** What `accountId` filters on; defaults to ownerId. */
  accountId: string | null;
  currency: string;
  occurredAt: string | null;
  /** Time of the latest registration (a redelivered webhook moves it). */
  registeredAt: string;
  /** Where the latest registration came from. */
  source: CardSource;
  /**
   * The instant the card's generated history ends (its newest possible transaction): when the
   * card first became known, unless a control registration pinned it. A redelivery keeps it.
   */
  historyEnd: string;
}

/** A transaction's merchant (contracts/upstreams.ts). */
export type Merchant = UpstreamTransaction['merchant'];

/** The transaction types, in a fixed order (memoised histories store a type as its index). */
export const TRANSACTION_TYPES = ['PURCHASE', 'WITHDRAWAL', 'REFUND'] as const satisfies readonly UpstreamTransactionType[];
/**
 * The statuses a generated history uses, in a fixed order: memoised histories store one as its
 * index in 2 bits, so this table stays as it is; the lifecycle's wider set is {@link TRANSACTION_STATUSES}.
 */
export const GENERATED_STATUSES = ['SETTLED', 'PENDING', 'DECLINED'] as const satisfies readonly UpstreamTransactionStatus[];
/** Every status of a transaction's lifecycle (docs/upstreams.md, 6.2). */
export const TRANSACTION_STATUSES = [...GENERATED_STATUSES, 'REVERSED', 'EXPIRED'] as const satisfies readonly UpstreamTransactionStatus[];
/** What a step of a transaction's history is. */
export const STEP_KINDS = ['authorization', 'clearing', 'reversal', 'expiry', 'refund', 'decline'] as const satisfies readonly TransactionStepKind[];
/** The reasons a generated decline is given, one drawn per transaction id. */
export const DECLINE_REASONS = ['insufficient_funds', 'do_not_honor', 'limit_exceeded', 'suspected_fraud', 'card_inactive'] as const;

export type TransactionType = UpstreamTransactionType;
export type GeneratedStatus = (typeof GENERATED_STATUSES)[number];
export type TransactionStatus = UpstreamTransactionStatus;
export type StepKind = TransactionStepKind;

/** One step of a transaction's life: what happened, for how much, when. */
export type HistoryEntry = TransactionStep;

/**
 * One card transaction of the processing system, as every route and notification shows it
 * (docs/upstreams.md, 6.2; contracts/upstreams.ts): this sandbox sends every lifecycle field
 * (`updatedAt` the newest step's `at`, `version` always `history.length`; `amount` what is
 * currently authorized or held, 0 once fully reversed).
 */
export type Transaction = Required<UpstreamTransaction>;

/** What the generator draws for a transaction; the rest of {@link Transaction} is derived from it. */
export interface GeneratedCore {
  id: string;
  cardId: string;
  accountId: string | null;
  amount: number;
  currency: string;
  type: TransactionType;
  merchant: Merchant;
  status: GeneratedStatus;
  createdAt: string;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * A generated transaction with its lifecycle fields, derived from what was drawn and nothing else
 * (the card's PRNG stream is not touched): PENDING (a refund too) `[authorization]`; SETTLED
 * purchase or withdrawal `[authorization, clearing a day later]`; SETTLED refund `[refund]`;
 * DECLINED `[decline]` with a reason drawn from a PRNG seeded with the transaction id.
 */
export function generatedTransaction(core: GeneratedCore): Transaction {
  const { amount, createdAt } = core;
  let history: HistoryEntry[];
  let settledAmount: number | null = null;
  let declineReason: string | null = null;
  if (core.status === 'PENDING') {
    history = [{ kind: 'authorization', amount, at: createdAt }];
  } else if (core.status === 'DECLINED') {
    history = [{ kind: 'decline', amount, at: createdAt }];
    declineReason = seededRandom(`decline:${core.id}`).pick(DECLINE_REASONS);
  } else if (core.type === 'REFUND') {
    history = [{ kind: 'refund', amount, at: createdAt }];
    settledAmount = amount;
  } else {
    history = [
      { kind: 'authorization', amount, at: createdAt },
      { kind: 'clearing', amount, at: new Date(Date.parse(createdAt) + DAY_MS).toISOString() },
    ];
    settledAmount = amount;
  }
  return {
    id: core.id,
    cardId: core.cardId,
    accountId: core.accountId,
    amount,
    currency: core.currency,
    type: core.type,
    status: core.status,
    merchant: core.merchant,
    createdAt,
    updatedAt: history[history.length - 1].at,
    version: history.length,
    settledAmount,
    declineReason,
    relatedTransactionId: null,
    authorizationId: null,
    history,
    tokenReference: null,
  };
}

/** Length of a generated history. */
export const HISTORY_DAYS = 90;
/** Transactions younger than this (relative to the card's historyEnd) are still PENDING. */
const PENDING_WINDOW_MS = 2 * 24 * 3600 * 1000;

interface MerchantProfile extends Merchant {
  minAmount: number;
  maxAmount: number;
}

const SHOPS: readonly MerchantProfile[] = [
  { name: 'REWE Markt', mcc: '5411', city: 'Berlin', country: 'DE', minAmount: 4, maxAmount: 120 },
  { name: 'Carrefour', mcc: '5411', city: 'Paris', country: 'FR', minAmount: 6, maxAmount: 150 },
  { name: 'Albert Heijn', mcc: '5411', city: 'Amsterdam', country: 'NL', minAmount: 3, maxAmount: 90 },
  { name: 'Shell', mcc: '5541', city: 'Hamburg', country: 'DE', minAmount: 20, maxAmount: 110 },
  { name: 'Amazon EU', mcc: '5942', city: 'Luxembourg', country: 'LU', minAmount: 8, maxAmount: 300 },
  { name: 'Zalando', mcc: '5651', city: 'Berlin', country: 'DE', minAmount: 25, maxAmount: 250 },
  { name: 'IKEA', mcc: '5712', city: 'Madrid', country: 'ES', minAmount: 15, maxAmount: 600 },
  { name: 'Deutsche Bahn', mcc: '4112', city: 'Frankfurt', country: 'DE', minAmount: 12, maxAmount: 180 },
  { name: 'Ryanair', mcc: '4511', city: 'Dublin', country: 'IE', minAmount: 30, maxAmount: 400 },
  { name: 'Booking.com', mcc: '7011', city: 'Amsterdam', country: 'NL', minAmount: 60, maxAmount: 900 },
  { name: 'Uber', mcc: '4121', city: 'Lisbon', country: 'PT', minAmount: 6, maxAmount: 45 },
  { name: 'Starbucks', mcc: '5814', city: 'Milan', country: 'IT', minAmount: 3, maxAmount: 15 },
  { name: 'Spotify', mcc: '5815', city: 'Stockholm', country: 'SE', minAmount: 10.99, maxAmount: 10.99 },
  { name: 'Netflix', mcc: '4899', city: 'Amsterdam', country: 'NL', minAmount: 13.99, maxAmount: 13.99 },
  { name: 'Apotheke am Markt', mcc: '5912', city: 'Munich', country: 'DE', minAmount: 5, maxAmount: 60 },
  { name: 'Trattoria da Luigi', mcc: '5812', city: 'Rome', country: 'IT', minAmount: 18, maxAmount: 95 },
];

const ATMS: readonly MerchantProfile[] = [
  { name: 'ATM Sparkasse', mcc: '6011', city: 'Cologne', country: 'DE', minAmount: 20, maxAmount: 400 },
  { name: 'ATM BNP Paribas', mcc: '6011', city: 'Lyon', country: 'FR', minAmount: 20, maxAmount: 300 },
  { name: 'ATM ING', mcc: '6011', city: 'Rotterdam', country: 'NL', minAmount: 20, maxAmount: 250 },
];

/** One merchant object per profile, shared by every transaction (memoised histories store its index here). */
export const MERCHANTS: readonly Merchant[] = [...SHOPS, ...ATMS].map((p) => Object.freeze({ name: p.name, mcc: p.mcc, city: p.city, country: p.country }));
const merchants = new Map<MerchantProfile, Merchant>([...SHOPS, ...ATMS].map((p, i) => [p, MERCHANTS[i]]));

function amountFor(profile: MerchantProfile, random: SeededRandom, type: TransactionType): number {
  if (type === 'WITHDRAWAL') return random.int(profile.minAmount / 10, profile.maxAmount / 10) * 10;
  const amount = profile.minAmount + random.next() * (profile.maxAmount - profile.minAmount);
  return roundMoney(type === 'REFUND' ? amount * (0.2 + random.next() * 0.8) : amount);
}

/**
 * The transaction history of a card, newest first: 6 to 24 transactions over the 90 days
 * before the card's `historyEnd`, generated from a PRNG seeded with the card key only. So a card
 * key always yields the same ids, amounts, merchants, statuses and *offsets* before
 * `historyEnd`; the absolute dates move with `historyEnd` only. `accountId` and `currency`
 * come from the card's registration.
 */
export function transactionsOf(card: KnownCard): Transaction[] {
  const historyEnd = Date.parse(card.historyEnd);
  const random = seededRandom(`transactions:${card.cardKey}`);
  const count = random.int(6, 24);
  const out: Transaction[] = [];
  for (let i = 0; i < count; i += 1) {
    const roll = random.next();
    const type: TransactionType = roll < 0.8 ? 'PURCHASE' : roll < 0.92 ? 'WITHDRAWAL' : 'REFUND';
    const profile = random.pick(type === 'WITHDRAWAL' ? ATMS : SHOPS);
    const at = historyEnd - Math.floor(random.next() * HISTORY_DAYS * 24 * 3600) * 1000;
    const declined = type !== 'REFUND' && random.next() < 0.06;
    out.push(generatedTransaction({
      id: random.hex(24),
      cardId: card.cardKey,
      accountId: card.accountId,
      amount: amountFor(profile, random, type),
      currency: card.currency,
      type,
      merchant: merchants.get(profile)!,
      status: declined ? 'DECLINED' : historyEnd - at < PENDING_WINDOW_MS ? 'PENDING' : 'SETTLED',
      createdAt: new Date(at).toISOString(),
    }));
  }
  return out.sort(newestFirst);
}

/** Orders transactions newest first, ties by id. */
export function newestFirst(a: Pick<Transaction, 'createdAt' | 'id'>, b: Pick<Transaction, 'createdAt' | 'id'>): number {
  return b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id);
}
