import type { CardType } from './card-store';

/** What the issuer tells in-process listeners about a card it has just issued; never its PAN or CVV. */
export interface IssuedCard {
  cardKey: string;
  /** The replaced / re-issued card, `null` for a card of `POST /cards`. */
  previousCardKey: string | null;
  cardMask: string;
  type: CardType;
  /** The `clientCode` the card was issued for (the accounts `clientId` of an individual). */
  holderClientCode: string;
  currency: string;
  createdAt: string;
}

export type IssuedCardListener = (card: IssuedCard) => void;

/**
 * In-process fan-out of issued cards: links the issuer sandbox to the processing sandbox when
 * both run from `startSandboxes()`, the way a real processor processes the issuer's cards.
 * Delivery is synchronous, so a listener knows the card before the issuer answers its 201.
 */
export class CardIssuanceFeed {
  private readonly listeners = new Set<IssuedCardListener>();

  /** Adds a listener; returns its unsubscribe function. */
  subscribe(listener: IssuedCardListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  publish(card: IssuedCard): void {
    for (const listener of this.listeners) {
      try {
        listener(card);
      } catch {
        // The card is issued whatever a listener does: a broken link must not turn the
        // issuer's 201 into a 500 for a card that exists.
      }
    }
  }
}
