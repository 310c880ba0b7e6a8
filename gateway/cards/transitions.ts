import type { StatusAction } from '../upstreams/types';
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
 * The status changes the gateway allows (docs/cards.md), by the name of the operation that makes
 * them (the catalog's, the route's and the pipeline's), checked before the issuer is called: a
 * refused one is a 409 `invalid_transition` and no upstream call. `issuerAction` is the issuer
 * contract's name for it (`POST /cards/{cardKey}/status`); the audit entry's is the catalog's.
 * An action whose target is the current code is accepted (idempotent). `S4` (CLOSED) is final: no
 * action leaves it.
 */
export const STATUS_CHANGES = {
  'activate-card': { issuerAction: 'activate', to: '00', status: 'ACTIVE', from: ['I1', '00'] },
  'lock-card': { issuerAction: 'lock', to: 'L1', status: 'LOCKED', from: ['00', 'L1', 'T1'] },
  'unlock-card': { issuerAction: 'unlock', to: '00', status: 'ACTIVE', from: ['00', 'L1', 'T1', 'S1'] },
  'temporary-lock-card': { issuerAction: 'temporary-lock', to: 'T1', status: 'TEMP_LOCKED', from: ['00', 'T1'] },
  'restrict-card': { issuerAction: 'restrict', to: 'S1', status: 'RESTRICTED', from: ['00', 'I1', 'L1', 'T1', 'S1'] },
  'restrict-card-lost': { issuerAction: 'lost', to: 'S2', status: 'LOST', from: OPEN },
  'restrict-card-stolen': { issuerAction: 'stolen', to: 'S3', status: 'STOLEN', from: OPEN },
  'restrict-card-closed': { issuerAction: 'closed', to: 'S4', status: 'CLOSED', from: OPEN },
  'restrict-card-fraud': { issuerAction: 'fraud', to: 'S5', status: 'FRAUD', from: OPEN },
  'restrict-card-mobile-lost': { issuerAction: 'mobile-lost', to: 'S6', status: 'MOBILE_LOST', from: OPEN },
} as const satisfies Record<string, StatusChange>;

/** The name of an operation that changes a card's status. */
export type StatusChangeName = keyof typeof STATUS_CHANGES;

/** The status change an operation makes; throws (when its pipeline is built) for an operation that makes none. */
export function statusChangeOf(operation: string): StatusChange {
  if (!Object.hasOwn(STATUS_CHANGES, operation)) throw new Error(`${operation} is not a status change (gateway/cards/transitions.ts)`);
  return STATUS_CHANGES[operation as StatusChangeName];
}

/**
 * The statuses an operator sets (`POST /admin/cards/{cardKey}/status`, docs/admin-api.md), each
 * made by the partner status change named here, so that both check the same transitions and send
 * the issuer the same action: unlock, lock, block (RESTRICTED, which can be lifted, or FRAUD,
 * which cannot) and close. The holder's own acts stay the partner's: activating a card in hand,
 * a temporary lock, reporting it lost, stolen or mobile-lost (docs/decisions.md).
 */
export const OPERATOR_STATUS_CHANGES = {
  ACTIVE: 'unlock-card',
  LOCKED: 'lock-card',
  RESTRICTED: 'restrict-card',
  FRAUD: 'restrict-card-fraud',
  CLOSED: 'restrict-card-closed',
} as const satisfies Partial<Record<CardStatus, StatusChangeName>>;

/** A status an operator may set. */
export type OperatorStatus = keyof typeof OPERATOR_STATUS_CHANGES;

/** The issuer actions that require the card's `expDate` (issuer contract 5.5). */
export const EXP_DATE_REQUIRED: ReadonlySet<StatusAction> = new Set<StatusAction>(['lock', 'unlock', 'activate', 'temporary-lock']);
