import { randomInt } from 'node:crypto';
import type { CardType, CreateCardRequest, IssuerCard } from '../../contracts/upstreams';
import { newCardKey } from '../shared/ids';
import { luhnCheckDigit } from '../shared/luhn';
import { recordCap } from '../shared/sandbox-app';
import { upstreamError } from '../shared/sandbox-error';
import { defaultLimits, LIMIT_NAMES, type CardLimits } from './limits';
import type { IssuerStatusCode, StatusAction } from './status-codes';

/** The BIN (first six PAN digits) of every sandbox card; masks start `5355 70`. */
export const SANDBOX_BIN = '535570';

/** Emboss name that makes a card leak `cardNumber` and `cvv` in its full-card answers. */
export const LEAK_TRIGGER = 'SANDBOX-LEAK';

/** PIN attempts a card allows before it blocks; `pin/reset-tries` restores this. */
export const PIN_TRIES = 3;

/** Status changes kept per card (the control endpoint shows them); older ones are dropped. */
export const STATUS_HISTORY_LIMIT = 100;

export type { CardType, IssuerCard } from '../../contracts/upstreams';

/** One recorded status change of a card (visible on the control endpoint). */
export interface StatusChange {
  /** `issuer`: a change the issuer made on its own (the control route, as a fraud team or an expiry would). */
  action: StatusAction | 'reissued' | 'issuer';
  from: IssuerStatusCode;
  to: IssuerStatusCode;
  reason: string | null;
  description: string | null;
  cardLocation: string | null;
  at: string;
}

/** Everything the issuer keeps about a card, secrets included. */
export interface CardRecord {
  cardKey: string;
  pan: string;
  cvv: string;
  type: CardType;
  statusCode: IssuerStatusCode;
  currency: string;
  productCode: string;
  holderClientCode: string;
  expDate: string;
  embossedName: string;
  shippingAddressId: string | null;
  createdAt: string;
  leaksSecrets: boolean;
  threeDSAnswer: string | null;
  pinTriesRemaining: number;
  limits: CardLimits;
  statusHistory: StatusChange[];
  previousCardKey: string | null;
  pinMailer: string | null;
}

/** Fields of a new card: the body of `POST /cards`. */
export type NewCard = CreateCardRequest;

/** `5355 70** **** 1234` from a 16-digit PAN. */
export function maskPan(pan: string): string {
  // Joined, not concatenated: one flat string, not a chain of five (the processing system keeps it per card).
  return [pan.slice(0, 4), ' ', pan.slice(4, 6), '** **** ', pan.slice(12)].join('');
}

/** The full card object of a record; secrets only for SANDBOX-LEAK cards. */
export function cardView(card: CardRecord): IssuerCard {
  const view: IssuerCard = {
    cardKey: card.cardKey,
    cardMask: maskPan(card.pan),
    type: card.type,
    statusCode: card.statusCode,
    currency: card.currency,
    productCode: card.productCode,
    holderClientCode: card.holderClientCode,
    expDate: card.expDate,
    embossedName: card.embossedName,
    createdAt: card.createdAt,
  };
  if (card.leaksSecrets) {
    view.cardNumber = card.pan;
    view.cvv = card.cvv;
  }
  return view;
}

/** Adds a status change to a card's history, keeping the newest {@link STATUS_HISTORY_LIMIT}. */
export function recordStatusChange(card: CardRecord, change: StatusChange): void {
  // A new array of the exact size (at most 100 items): `push` gave a card's first change room for 17.
  const kept = card.statusHistory.length >= STATUS_HISTORY_LIMIT ? card.statusHistory.slice(card.statusHistory.length - STATUS_HISTORY_LIMIT + 1) : card.statusHistory;
  card.statusHistory = kept.concat([change]);
}

/**
 * The issuer's cards, in memory: at most `maxCards`. Issuing one more evicts the oldest card
 * (it answers 404 `CARD_NOT_FOUND` from then on). A new PAN is never a held card's, nor one of
 * the last `maxCards` PANs of removed or evicted cards.
 */
export class CardStore {
  /** Oldest first (a Map keeps insertion order): the first entry is the next to evict. */
  private cards = new Map<string, CardRecord>();
  /** The PANs of the cards held. */
  private issuedPans = new Set<string>();
  /** PANs of cards removed or evicted, oldest first (a real issuer does not reuse one soon). */
  private retiredPans = new Set<string>();
  /** Card keys by holder client code, in issuance order (the control endpoint's `?clientCode=`). */
  private byClientCode = new Map<string, Set<string>>();

  /**
   * @param onIssued - told about every new card (POST /cards and every successor), after it is stored
   * @param maxCards - cards kept before the oldest is evicted (default `SANDBOX_MAX_CARDS`, else 10,000)
   */
  constructor(
    private readonly onIssued?: (card: CardRecord) => void,
    readonly maxCards = recordCap(undefined, 'SANDBOX_MAX_CARDS'),
  ) {}

  get size(): number {
    return this.cards.size;
  }

  /** How many PANs are remembered: those of the cards held, and at most `maxCards` retired ones. */
  get panCount(): number {
    return this.issuedPans.size + this.retiredPans.size;
  }

  /** Issues a card: new key, Luhn-valid PAN, CVV, initial status 00 (virtual) or I1 (physical). */
  create(input: NewCard): CardRecord {
    const embossedName = input.embossedName ?? '';
    return this.store({
      type: input.type,
      statusCode: input.type === 'virtual' ? '00' : 'I1',
      currency: input.currency,
      productCode: input.productCode,
      holderClientCode: input.clientCode,
      expDate: input.expDate,
      embossedName,
      shippingAddressId: input.shippingAddressId ?? null,
      leaksSecrets: embossedName === LEAK_TRIGGER,
      threeDSAnswer: null,
      previousCardKey: null,
      pinMailer: null,
    });
  }

  /** The card with `cardKey`, or 404 `CARD_NOT_FOUND`. */
  get(cardKey: string): CardRecord {
    const card = this.cards.get(cardKey);
    if (!card) throw upstreamError('CARD_NOT_FOUND', `No card with cardKey ${cardKey}`);
    return card;
  }

  /**
   * A successor of `old` (same holder, product, currency, emboss name, limit values) with a new
   * key, PAN, CVV and the given expiry. A physical successor starts `I1`, a virtual one `00`.
   */
  successor(old: CardRecord, expDate: string, pinMailer: string | null): CardRecord {
    const card = this.store({
      type: old.type,
      statusCode: old.type === 'virtual' ? '00' : 'I1',
      currency: old.currency,
      productCode: old.productCode,
      holderClientCode: old.holderClientCode,
      expDate,
      embossedName: old.embossedName,
      shippingAddressId: old.shippingAddressId,
      leaksSecrets: old.leaksSecrets,
      threeDSAnswer: old.threeDSAnswer,
      previousCardKey: old.cardKey,
      pinMailer,
    });
    for (const name of LIMIT_NAMES) card.limits.setValue(name, old.limits.get(name).value);
    return card;
  }

  /** Every card, oldest first. */
  list(): CardRecord[] {
    return [...this.cards.values()];
  }

  /** The cards of one holder, oldest first. */
  listByClientCode(clientCode: string): CardRecord[] {
    return [...(this.byClientCode.get(clientCode) ?? [])].map((cardKey) => this.cards.get(cardKey)!);
  }

  /** Forgets a card: its key answers 404 from now on. */
  remove(cardKey: string): void {
    const card = this.cards.get(cardKey);
    if (!card) return;
    this.cards.delete(cardKey);
    this.issuedPans.delete(card.pan);
    this.retiredPans.add(card.pan);
    if (this.retiredPans.size > this.maxCards) this.retiredPans.delete(this.retiredPans.values().next().value!);
    const keys = this.byClientCode.get(card.holderClientCode);
    keys?.delete(cardKey);
    if (keys?.size === 0) this.byClientCode.delete(card.holderClientCode);
  }

  clear(): void {
    this.cards.clear();
    this.issuedPans.clear();
    this.retiredPans.clear();
    this.byClientCode.clear();
  }

  private store(
    fields: Omit<CardRecord, 'cardKey' | 'pan' | 'cvv' | 'createdAt' | 'pinTriesRemaining' | 'limits' | 'statusHistory'>,
  ): CardRecord {
    while (this.cards.size >= this.maxCards) this.remove(this.cards.keys().next().value!);
    let cardKey = newCardKey();
    while (this.cards.has(cardKey)) cardKey = newCardKey();
    // Every field named, in one literal: built with `...fields`, each record gets a hidden class of
    // its own once the function is optimised (about 600 bytes a card of maps and descriptors).
    const card: CardRecord = {
      cardKey,
      pan: this.newPan(),
      cvv: String(randomInt(0, 1000)).padStart(3, '0'),
      type: fields.type,
      statusCode: fields.statusCode,
      currency: fields.currency,
      productCode: fields.productCode,
      holderClientCode: fields.holderClientCode,
      expDate: fields.expDate,
      embossedName: fields.embossedName,
      shippingAddressId: fields.shippingAddressId,
      createdAt: new Date().toISOString(),
      leaksSecrets: fields.leaksSecrets,
      threeDSAnswer: fields.threeDSAnswer,
      pinTriesRemaining: PIN_TRIES,
      limits: defaultLimits(cardKey, fields.currency),
      statusHistory: [],
      previousCardKey: fields.previousCardKey,
      pinMailer: fields.pinMailer,
    };
    this.cards.set(cardKey, card);
    let keys = this.byClientCode.get(card.holderClientCode);
    if (!keys) this.byClientCode.set(card.holderClientCode, (keys = new Set()));
    keys.add(cardKey);
    this.onIssued?.(card);
    return card;
  }

  private newPan(): string {
    for (;;) {
      let body = SANDBOX_BIN;
      while (body.length < 15) body += String(randomInt(0, 10));
      const pan = body + String(luhnCheckDigit(body));
      if (!this.issuedPans.has(pan) && !this.retiredPans.has(pan)) {
        this.issuedPans.add(pan);
        return pan;
      }
    }
  }
}
