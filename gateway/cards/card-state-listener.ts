import type { Queryable } from '../db/database';
import type { CardStatus } from './card-status';

/**
 * What the cards domain tells whoever follows a card's state (the network tokens' cascade,
 * gateway/tokens/cascade.ts, docs/tokens.md "The cascade"), declared here so that the cards domain
 * never imports what listens (the layers of docs/architecture.md): the composition root hands a
 * listener to the status change, card-sync and the replacement handlers.
 *
 * Both methods run in the card change's own transaction, under the card's row lock, after the card's
 * row (and its event) is written, so that what they record follows exactly the state committed with
 * it. They answer the ids of the outbox messages they queued, which the caller delivers after the
 * commit (`OutboxDeliverer.deliver`) without waiting for them before it answers.
 */
export interface CardStateListener {
  /** A card's status code changed (a partner's or an operator's change, or the issuer's found by card-sync). */
  statusChanged(tx: Queryable, change: CardStatusChanged): Promise<string[]>;
  /** A card was replaced or re-issued: `fromCardKey`'s successor is `toCardKey`, already written. */
  replaced(tx: Queryable, move: CardReplaced): Promise<string[]>;
}

/** A card's status change, as committed with the listener's writes. */
export interface CardStatusChanged {
  cardKey: string;
  partnerId: string;
  previousStatus: CardStatus | null;
  previousStatusCode: string | null;
  status: CardStatus;
  statusCode: string;
  /** The change's request (the outbox messages' and the events' `requestId`). */
  requestId: string;
  /** Whether the partner's events name `requestId` (a partner's own request does). */
  eventNamesRequest: boolean;
  reason?: string | null;
}

/** A replacement or a re-issue, as committed with the listener's writes. */
export interface CardReplaced {
  fromCardKey: string;
  toCardKey: string;
  partnerId: string;
  /** The new card's status code as written (`I1`: a physical card not activated yet). */
  toStatusCode: string;
  reason: 'replaced' | 'reissued';
  requestId: string;
  eventNamesRequest: boolean;
}

/**
 * What a card change needs to follow its listener: the listener, and how the ids it queued are sent
 * after the commit. Both optional: a gateway (or a test) built without tokens changes cards alone.
 */
export interface CardStateFollowers {
  cardState?: CardStateListener;
  /** Delivers queued outbox messages right after the commit (best effort: the outbox retries). */
  deliver?: (ids: string[]) => Promise<void>;
}

/**
 * Sends `ids` after the commit without making the caller wait (a lock's answer never waits for the
 * token service): a failure is left to the background deliverer.
 */
export function deliverAfterCommit(followers: CardStateFollowers, ids: readonly string[]): void {
  if (ids.length === 0 || !followers.deliver) return;
  followers.deliver([...ids]).catch(() => undefined);
}
