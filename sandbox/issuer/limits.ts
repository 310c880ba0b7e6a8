import { roundMoney, seededRandom } from '../shared/seeded-random';

import { LIMIT_NAMES, type CardLimit, type LimitName } from '../../contracts/upstreams';

/** The card limit names the issuer knows, and a limit as it answers it (spec 2.5; contracts/upstreams.ts). */
export { LIMIT_NAMES, type CardLimit, type LimitName };

/** State of one limit. */
export interface LimitState {
  value: number;
  used: number;
}

/**
 * The limits of one card: the value and used amount of each of {@link LIMIT_NAMES}, in that
 * order, in one array of numbers: about 160 bytes a card, where a Map of five state objects costs about
 * 750 (7.5 MB at 10,000 cards).
 */
export class CardLimits {
  /** `[value, used]` of each limit name, in the order of {@link LIMIT_NAMES}. */
  private readonly numbers: number[];

  constructor(states: Readonly<Record<LimitName, LimitState>>) {
    this.numbers = LIMIT_NAMES.flatMap((name) => [states[name].value, states[name].used]);
  }

  /** A copy of the state of limit `name`. */
  get(name: LimitName): LimitState {
    const i = LIMIT_NAMES.indexOf(name) * 2;
    return { value: this.numbers[i], used: this.numbers[i + 1] };
  }

  setValue(name: LimitName, value: number): void {
    this.numbers[LIMIT_NAMES.indexOf(name) * 2] = value;
  }

  setUsed(name: LimitName, used: number): void {
    this.numbers[LIMIT_NAMES.indexOf(name) * 2 + 1] = used;
  }
}

/** Default limit values in EUR-like units, scaled by {@link CURRENCY_SCALE}. */
export const DEFAULT_LIMIT_VALUES: Readonly<Record<LimitName, number>> = {
  dailyPurchase: 2000,
  monthlyPurchase: 10000,
  dailyWithdrawal: 500,
  monthlyWithdrawal: 2000,
  singleTransaction: 1000,
};

/** Multiplier applied to the defaults for weak currencies; any other currency uses 1. */
export const CURRENCY_SCALE: Readonly<Record<string, number>> = {
  CZK: 25,
  DKK: 7,
  HUF: 400,
  JPY: 150,
  NOK: 10,
  PLN: 4,
  RON: 5,
  SEK: 10,
};

/** True when `name` is a known limit name. */
export function isLimitName(name: string): name is LimitName {
  return (LIMIT_NAMES as readonly string[]).includes(name);
}

/**
 * The limits of a new card: default values in its currency and deterministic `used` amounts
 * derived from the card key, kept consistent (monthly used ≥ daily used; nothing is used
 * against the per-transaction cap).
 */
export function defaultLimits(cardKey: string, currency: string): CardLimits {
  const scale = CURRENCY_SCALE[currency] ?? 1;
  const random = seededRandom(`limits:${cardKey}`);
  const value = (name: LimitName): number => DEFAULT_LIMIT_VALUES[name] * scale;
  const dailyPurchaseUsed = roundMoney(value('dailyPurchase') * random.next() * 0.25);
  const dailyWithdrawalUsed = roundMoney(value('dailyWithdrawal') * random.next() * 0.4);
  const monthlyPurchaseUsed = roundMoney(dailyPurchaseUsed + value('monthlyPurchase') * random.next() * 0.3);
  const monthlyWithdrawalUsed = roundMoney(dailyWithdrawalUsed + value('monthlyWithdrawal') * random.next() * 0.3);
  return new CardLimits({
    dailyPurchase: { value: value('dailyPurchase'), used: dailyPurchaseUsed },
    monthlyPurchase: { value: value('monthlyPurchase'), used: monthlyPurchaseUsed },
    dailyWithdrawal: { value: value('dailyWithdrawal'), used: dailyWithdrawalUsed },
    monthlyWithdrawal: { value: value('monthlyWithdrawal'), used: monthlyWithdrawalUsed },
    singleTransaction: { value: value('singleTransaction'), used: 0 },
  });
}

/** The answered form of one limit: `available = max(0, value - used)`. */
export function limitView(name: LimitName, state: LimitState, currency: string): CardLimit {
  return {
    name,
    value: state.value,
    currency,
    used: state.used,
    available: roundMoney(Math.max(0, state.value - state.used)),
  };
}
