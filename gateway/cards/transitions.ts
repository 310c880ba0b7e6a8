import type { CardStatus } from './card-status';

/** Status actions of the card routes (spec 4.3): the four status changes and the restrict family. */
export type StatusAction = 'lock' | 'unlock' | 'activate' | 'temporary-lock' | 'restrict' | 'lost' | 'stolen' | 'closed' | 'fraud' | 'mobile-lost';

const OPEN = ['00', 'I1', 'L1', 'T1', 'S1', 'S2', 'S3', 'S5', 'S6'];

/**
 * The transitions the gateway allows (docs/cards.md), checked before the issuer is called: a
 * refused one is a 409 `invalid_transition` and no upstream call. `to` is the issuer code the
 * action sets and `status` the CardStatus it results in. An action whose target is the current
 * code is accepted (idempotent). `S4` (CLOSED) is final: no action leaves it.
 */
export const TRANSITIONS: Readonly<Record<StatusAction, { to: string; status: CardStatus; from: readonly string[] }>> = {
  activate: { to: '00', status: 'ACTIVE', from: ['I1', '00'] },
  lock: { to: 'L1', status: 'LOCKED', from: ['00', 'L1', 'T1'] },
  unlock: { to: '00', status: 'ACTIVE', from: ['00', 'L1', 'T1', 'S1'] },
  'temporary-lock': { to: 'T1', status: 'TEMP_LOCKED', from: ['00', 'T1'] },
  restrict: { to: 'S1', status: 'RESTRICTED', from: ['00', 'I1', 'L1', 'T1', 'S1'] },
  lost: { to: 'S2', status: 'LOST', from: OPEN },
  stolen: { to: 'S3', status: 'STOLEN', from: OPEN },
  closed: { to: 'S4', status: 'CLOSED', from: OPEN },
  fraud: { to: 'S5', status: 'FRAUD', from: OPEN },
  'mobile-lost': { to: 'S6', status: 'MOBILE_LOST', from: OPEN },
};

/** Whether `action` may start from the card's current issuer code. */
export function transitionAllowed(action: StatusAction, currentCode: string): boolean {
  return TRANSITIONS[action].from.includes(currentCode);
}
