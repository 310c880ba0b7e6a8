import { encodeCursor } from '../db/cursor';
import type { Queryable } from '../db/database';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';
import type { PartnerEventType } from './partner-events';

/** A page of a partner's event log: the envelopes' stored JSON, newest first. */
export interface EventLogPage {
  /** Each event's envelope, as the exact JSON bytes written with its change. */
  payloads: string[];
  /** The cursor of the next (older) page; null when this page is the last. */
  nextCursor: string | null;
}

/**
 * One page of a partner's events, newest first: up to `limit` events with a sequence number below
 * `afterSeq` (the decoded cursor), optionally of one type. One row more than asked for tells
 * whether an older page exists.
 */
export async function listEvents(db: Queryable, partnerId: string, query: { type?: PartnerEventType; afterSeq?: string; limit: number }): Promise<EventLogPage> {
  // Only the conditions asked for, so that each shape walks its index (partner, [type,] seq DESC).
  const params: unknown[] = [partnerId, query.limit + 1];
  let where = 'partner_id = $1';
  if (query.type !== undefined) where += ` AND type = $${params.push(query.type)}`;
  if (query.afterSeq !== undefined) where += ` AND seq < $${params.push(query.afterSeq)}`;
  const rows = await db.query<{ seq: string; payload: string }>(`SELECT seq, payload FROM partner_events WHERE ${where} ORDER BY seq DESC LIMIT $2`, params);
  const page = rows.rows.slice(0, query.limit);
  const more = rows.rows.length > query.limit;
  return { payloads: page.map((row) => row.payload), nextCursor: more ? encodeCursor(page[page.length - 1].seq) : null };
}

/** The stored envelope of one of the partner's events, or undefined (unknown, another partner's, or past retention). */
export async function findEvent(db: Queryable, partnerId: string, id: string): Promise<string | undefined> {
  const rows = await db.query<{ payload: string }>('SELECT payload FROM partner_events WHERE id = $1 AND partner_id = $2', [id, partnerId]);
  return rows.rows[0]?.payload;
}

/**
 * Deletes the events older than `retentionDays`, in batches; returns how many went. Their webhook
 * deliveries and those deliveries' attempts go with them (foreign keys `ON DELETE CASCADE`, each
 * looked up through an index: `webhook_deliveries_event_idx`, `webhook_attempts_delivery_idx`).
 */
export async function deleteExpiredEvents(db: Queryable, retentionDays: number, batch = RETENTION_BATCH): Promise<number> {
  return deleteInBatches(
    db,
    `DELETE FROM partner_events WHERE seq IN (
       SELECT seq FROM partner_events WHERE created_at < now() - make_interval(days => $1) ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays],
    batch
  );
}

