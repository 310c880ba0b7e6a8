import type { Queryable } from '../db/database';
import { emitEvent, type NewPartnerEvent } from '../outbox/partner-events';

/**
 * The token events (docs/tokens.md, "Events"), written through the outbox's `emitEvent` in the
 * transaction of the change, ordered with the token's card's events (`cardKey`).
 */
export type TokenEventType = 'token.created' | 'token.updated' | 'token.verification_code';

/** Writes one token event in `tx`, ordered on `cardKey` among the card's events. */
export async function emitTokenEvent<T extends TokenEventType>(tx: Queryable, event: NewPartnerEvent<T> & { cardKey: string }): Promise<{ id: string; seq: string }> {
  const { id, seq } = await emitEvent(tx, event);
  return { id, seq };
}

/**
 * The advisory lock `emitEvent` takes to order a card's events (partner, card), taken first by a
 * token's writers: a card change's transaction holds it from its own event on and then locks the
 * card's tokens (the cascade), so a token's writer takes it before the token's row, in the same
 * order, and the two never wait on each other in a circle.
 */
export async function lockCardEvents(tx: Queryable, partnerId: string, cardKey: string): Promise<void> {
  await tx.query(`SELECT ${CARD_EVENTS_LOCK('$1', '$2')}`, [partnerId, cardKey]);
}

/** {@link lockCardEvents}' lock as an SQL expression of the partner's and the card's parameters, for a statement that takes it with other work. */
export const CARD_EVENTS_LOCK = (partnerParam: string, cardParam: string): string => `pg_advisory_xact_lock(hashtextextended('evt:' || ${partnerParam}::text || ':' || ${cardParam}::text, 0))`;
