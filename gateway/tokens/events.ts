import type { Queryable } from '../db/database';
import { emitEvent, type NewPartnerEvent } from '../outbox/partner-events';
import type { TokenCreatedData, TokenUpdatedData, TokenVerificationCodeData } from '../shapes/token';

/**
 * The token events (docs/tokens.md, "Events"), written through the outbox's `emitEvent` in the
 * transaction of the change, ordered with the token's card's events (`cardKey`).
 *
 * STUB (issue 35, part B): the three types belong to part D's `PARTNER_EVENT_TYPES` and
 * `PartnerEventData` (gateway/outbox/partner-events.ts). Until they land there, the event is passed
 * through a cast; migration 028 already admits the types in `partner_events`. Once D's entries are
 * on the branch, the cast goes and these are plain `emitEvent` calls.
 */
export interface TokenEventData {
  'token.created': TokenCreatedData;
  'token.updated': TokenUpdatedData;
  'token.verification_code': TokenVerificationCodeData;
}

export type TokenEventType = keyof TokenEventData;

/** Writes one token event in `tx`, ordered on `cardKey` among the card's events. */
export async function emitTokenEvent<T extends TokenEventType>(
  tx: Queryable,
  event: { type: T; partnerId: string; cardKey: string; data: TokenEventData[T]; requestId?: string }
): Promise<{ id: string; seq: string }> {
  const { id, seq } = await emitEvent(tx, event as unknown as NewPartnerEvent);
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
