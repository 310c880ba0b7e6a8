import type { IssuerStatusCode, StatusAction } from '../../contracts/upstreams';

/** Raw status codes of the card issuer platform, and the actions of `POST /cards/{cardKey}/status` (contracts/upstreams.ts). */
export type { IssuerStatusCode, StatusAction } from '../../contracts/upstreams';

/** The partner-facing card status (spec section 3.1). */
export type CardStatus =
  | 'ACTIVE'
  | 'LOCKED'
  | 'TEMP_LOCKED'
  | 'RESTRICTED'
  | 'LOST'
  | 'STOLEN'
  | 'CLOSED'
  | 'FRAUD'
  | 'MOBILE_LOST';

/** Every issuer status code, its meaning and the CardStatus it maps to (documented in docs/upstreams.md). */
export const ISSUER_STATUS_CODES: ReadonlyArray<{ code: IssuerStatusCode; meaning: string; cardStatus: CardStatus }> = [
  { code: '00', meaning: 'active', cardStatus: 'ACTIVE' },
  { code: 'I1', meaning: 'issued, not yet activated (new physical card)', cardStatus: 'LOCKED' },
  { code: 'L1', meaning: 'locked by the partner/holder', cardStatus: 'LOCKED' },
  { code: 'T1', meaning: 'temporarily locked', cardStatus: 'TEMP_LOCKED' },
  { code: 'S1', meaning: 'restricted (generic)', cardStatus: 'RESTRICTED' },
  { code: 'S2', meaning: 'lost', cardStatus: 'LOST' },
  { code: 'S3', meaning: 'stolen', cardStatus: 'STOLEN' },
  { code: 'S4', meaning: 'closed', cardStatus: 'CLOSED' },
  { code: 'S5', meaning: 'fraud', cardStatus: 'FRAUD' },
  { code: 'S6', meaning: 'mobile device lost', cardStatus: 'MOBILE_LOST' },
];

/** All issuer status codes, in table order. */
export const STATUS_CODE_VALUES: readonly IssuerStatusCode[] = ISSUER_STATUS_CODES.map((s) => s.code);

/** The actions whose body must carry `expDate`; the restrict family may omit it. */
export const ACTIONS_REQUIRING_EXP_DATE: readonly StatusAction[] = ['lock', 'unlock', 'activate', 'temporary-lock'];

const ANY_OPEN: readonly IssuerStatusCode[] = ['00', 'I1', 'L1', 'T1', 'S1', 'S2', 'S3', 'S5', 'S6'];

/** For each action: the code it sets and the codes it may start from (S4 is refused before this table). */
export const STATUS_TRANSITIONS: Readonly<Record<StatusAction, { to: IssuerStatusCode; from: readonly IssuerStatusCode[] }>> = {
  activate: { to: '00', from: ['I1', '00'] },
  lock: { to: 'L1', from: ['00', 'L1', 'T1'] },
  unlock: { to: '00', from: ['00', 'L1', 'T1', 'S1'] },
  'temporary-lock': { to: 'T1', from: ['00', 'T1'] },
  restrict: { to: 'S1', from: ['00', 'I1', 'L1', 'T1', 'S1'] },
  lost: { to: 'S2', from: ANY_OPEN },
  stolen: { to: 'S3', from: ANY_OPEN },
  closed: { to: 'S4', from: ANY_OPEN },
  fraud: { to: 'S5', from: ANY_OPEN },
  'mobile-lost': { to: 'S6', from: ANY_OPEN },
};

/** All status actions, in table order. */
export const STATUS_ACTIONS = Object.keys(STATUS_TRANSITIONS) as StatusAction[];

/** The code `action` moves a card in `current` to, or `null` when the transition is refused. */
export function nextStatusCode(current: IssuerStatusCode, action: StatusAction): IssuerStatusCode | null {
  const transition = STATUS_TRANSITIONS[action];
  return transition.from.includes(current) ? transition.to : null;
}

/** The CardStatus of a raw issuer code. */
export function cardStatusOf(code: IssuerStatusCode): CardStatus {
  const entry = ISSUER_STATUS_CODES.find((s) => s.code === code);
  if (!entry) throw new Error(`Unknown issuer status code ${code}`);
  return entry.cardStatus;
}
