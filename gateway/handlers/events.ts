import { decodeCursor } from '../db/cursor';
import { GatewayError } from '../errors';
import { JSON_CONTENT_TYPE } from '../http/answer';
import { findEvent, listEvents } from '../outbox/event-log';
import type { EventsQuery } from '../schemas';
import type { HandlerServices } from './services';
import type { OperationHandler, OwnerFacts, PartnerFacts, QueryFacts } from './context';

/**
 * `GET /events?type&after&limit`: the partner's events, newest first, as `{data, nextCursor}`.
 * Each event is answered as the JSON bytes written with its change (the same bytes a webhook will
 * sign), so the page is assembled around them rather than parsed and serialized again.
 */
export function listPartnerEvents(services: HandlerServices): OperationHandler<PartnerFacts & QueryFacts<EventsQuery>> {
  const { db } = services;
  return async function listEventsHandler({ partner, query }) {
    let afterSeq: string | undefined;
    if (query.after !== undefined) {
      afterSeq = decodeCursor(query.after);
      if (afterSeq === undefined) {
        throw new GatewayError('validation_failed', 'The cursor is not one this API gave', {
          invalidParams: [{ name: 'after', reason: 'must be the nextCursor of a previous page' }],
        });
      }
    }
    const page = await listEvents(db, partner._id, { type: query.type, afterSeq, limit: query.limit });
    return { status: 200, bytes: `{"data":[${page.payloads.join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`, contentType: JSON_CONTENT_TYPE };
  };
}

/** `GET /events/{id}`: one of the partner's events (the ownership step answered 403 / 404 for the others). */
export function getPartnerEvent(services: HandlerServices): OperationHandler<OwnerFacts<'event'>> {
  const { db } = services;
  return async function getEventHandler({ ownership: event }) {
    const payload = await findEvent(db, event.partnerId, event.id);
    // Deleted by retention since its owner was cached.
    if (payload === undefined) throw new GatewayError('not_found', 'No event has this id');
    return { status: 200, bytes: payload, contentType: JSON_CONTENT_TYPE };
  };
}
