import type { StatusAction } from '../../contracts/upstreams';
import type { CardStatus } from './card-status';

const OPEN = ['00', 'I1', 'L1', 'T1', 'S1', 'S2', 'S3', 'S5', 'S6'];

/** A status change: the issuer's action for it, the code it sets, the CardStatus that results, and the codes it may start from. */
export interface StatusChange {
  issuerAction: StatusAction;
  to: string;
  status: CardStatus;
  from: readonly string[];
}

/**
 * The status changes the gateway allows (docs/cards.md), by the issuer action that makes them,
 * checked before the issuer is called: a refused one is a 409 `invalid_transition` and no upstream
 * call. `issuerAction` is the issuer contract's name for it (`POST /cards/{cardKey}/status`). Each
 * is referenced by the catalog entry of the partner operation that makes it (`statusChange`,
 * gateway/catalog/operations.ts), which its handler and the operator's admin route read; the audit
 * entry's action is the catalog entry's. An action whose target is the current code is accepted
 * (idempotent). `S4` (CLOSED) is final: no action leaves it.
 */
export const STATUS_CHANGES = {
  activate: { issuerAction: 'activate', to: '00', status: 'ACTIVE', from: ['I1', '00'] },
  lock: { issuerAction: 'lock', to: 'L1', status: 'LOCKED', from: ['00', 'L1', 'T1'] },
  unlock: { issuerAction: 'unlock', to: '00', status: 'ACTIVE', from: ['00', 'L1', 'T1', 'S1'] },
  'temporary-lock': { issuerAction: 'temporary-lock', to: 'T1', status: 'TEMP_LOCKED', from: ['00', 'T1'] },
  restrict: { issuerAction: 'restrict', to: 'S1', status: 'RESTRICTED', from: ['00', 'I1', 'L1', 'T1', 'S1'] },
  lost: { issuerAction: 'lost', to: 'S2', status: 'LOST', from: OPEN },
  stolen: { issuerAction: 'stolen', to: 'S3', status: 'STOLEN', from: OPEN },
  closed: { issuerAction: 'closed', to: 'S4', status: 'CLOSED', from: OPEN },
  fraud: { issuerAction: 'fraud', to: 'S5', status: 'FRAUD', from: OPEN },
  'mobile-lost': { issuerAction: 'mobile-lost', to: 'S6', status: 'MOBILE_LOST', from: OPEN },
} as const satisfies { [Action in StatusAction]: StatusChange & { issuerAction: Action } };

/** The issuer actions that require the card's `expDate` (issuer contract 5.5). */
export const EXP_DATE_REQUIRED: ReadonlySet<StatusAction> = new Set<StatusAction>(['lock', 'unlock', 'activate', 'temporary-lock']);
