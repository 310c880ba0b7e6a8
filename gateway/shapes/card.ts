/**
 * The card as partners read it, declared once: the API's answers (gateway/cards/card-store.ts's
 * `toCard`), the events' `data` (gateway/outbox/partner-events.ts) and the decision endpoint's
 * request (gateway/authorizations/) all use these.
 */

/** CardStatus values (spec 3.1). */
export const CARD_STATUSES = ['ACTIVE', 'LOCKED', 'CLOSED', 'LOST', 'STOLEN', 'FRAUD', 'MOBILE_LOST', 'RESTRICTED', 'TEMP_LOCKED'] as const;
export type CardStatus = (typeof CARD_STATUSES)[number];

/** A card's form factor. */
export type CardType = 'virtual' | 'physical';

/** Who owns a card: an individual account or a B2B tenant. */
export type CardOwnerType = 'individual' | 'b2b';

/** The full card object (spec 2.3), plus the locally kept nickname and 3DS phone: never a card number or CVV. */
export interface Card {
  cardKey: string;
  cardMask: string;
  type: CardType;
  status: CardStatus;
  statusCode: string;
  currency: string;
  ownerType: CardOwnerType;
  ownerId: string;
  createdAt: string;
  productCode: string;
  holderClientCode: string | null;
  expDate: string;
  embossedName: string | null;
  nickname: string | null;
  threeDsPhone: string | null;
}
