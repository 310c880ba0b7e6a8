import type { CardStatus } from '../shapes/card';

export { CARD_STATUSES, type CardStatus } from '../shapes/card';

/**
 * The issuer platform's raw status codes and the CardStatus each means (docs/cards.md). `I1` and
 * `L1` are both LOCKED: `I1` is a new physical card not yet activated, `L1` a partner's lock.
 */
export const STATUS_CODES: Readonly<Record<string, CardStatus>> = {
  '00': 'ACTIVE',
  I1: 'LOCKED',
  L1: 'LOCKED',
  T1: 'TEMP_LOCKED',
  S1: 'RESTRICTED',
  S2: 'LOST',
  S3: 'STOLEN',
  S4: 'CLOSED',
  S5: 'FRAUD',
  S6: 'MOBILE_LOST',
};

/**
 * The issuer status code that sets a CardStatus: the code {@link STATUS_CODES} maps to it, the last
 * listed when two do (LOCKED is `L1`, a lock: `I1` means a physical card never activated).
 */
export function statusCodeFor(status: CardStatus): string {
  let found: string | undefined;
  for (const [code, named] of Object.entries(STATUS_CODES)) if (named === status) found = code;
  return found!;
}

/** The CardStatus of an issuer status code, or undefined for a code the gateway does not know. */
export function cardStatusOf(statusCode: string): CardStatus | undefined {
  return Object.prototype.hasOwnProperty.call(STATUS_CODES, statusCode) ? STATUS_CODES[statusCode] : undefined;
}
