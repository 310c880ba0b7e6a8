import { every } from '../background/every';
import type { Database, Queryable } from '../db/database';
import type { Logger } from '../logging/logger';
import type { UpstreamClients } from '../upstreams';
import type { CardCreatedEvent, StatusUpdate } from '../../contracts/upstreams';

/** A message to the card processing system. */
export type OutboxMessage =
  | { kind: 'processing.card_created'; payload: CardCreatedEvent }
  | { kind: 'processing.status_update'; payload: StatusUpdate };

/** Delivery attempts before a message is given up (and logged at error level for an operator). */
export const MAX_ATTEMPTS = 12;

/** Delay before attempt n+1: 5 s, 10 s, 20 s ... capped at 30 min. */
export function retryDelayMs(attempts: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 30 * 60_000);
}

/** Writes a message in the caller's transaction; returns its id. */
export async function enqueue(tx: Queryable, message: OutboxMessage, context: { partnerId: string; requestId: string }): Promise<string> {
  const rows = await tx.query<{ id: string }>(
    'INSERT INTO outbox_events (kind, payload, partner_id, request_id) VALUES ($1, $2::jsonb, $3, $4) RETURNING id',
    [message.kind, JSON.stringify(message.payload), context.partnerId, context.requestId]
  );
  return rows.rows[0].id;
}

interface EventRow {
  id: string;
  kind: OutboxMessage['kind'];
  payload: unknown;
  request_id: string | null;
  attempts: number;
}

/**
 * Delivers outbox messages to the processing system, in id order. Each message is claimed by
 * pushing its next attempt into the future (so two deliverers never send it at once), sent with no
 * transaction open, then marked delivered or rescheduled with backoff; after MAX_ATTEMPTS it is
 * marked failed and logged for an operator.
 */
export class OutboxDeliverer {
  constructor(private readonly db: Database, private readonly clients: UpstreamClients, private readonly log: Logger) {}

  /** Delivers the given messages now (right after the commit that wrote them), or every due one. */
  async deliver(ids?: string[]): Promise<{ delivered: number; failed: number }> {
    const claimed = await this.db.query<EventRow>(
      `UPDATE outbox_events SET next_attempt_at = now() + interval '60 seconds', attempts = attempts + 1
        WHERE id IN (SELECT id FROM outbox_events
                      WHERE delivered_at IS NULL AND failed_at IS NULL
                        AND (${ids ? 'id = ANY($1::bigint[])' : 'next_attempt_at <= now()'})
                      ORDER BY id LIMIT 100)
        RETURNING id, kind, payload, request_id, attempts`,
      ids ? [ids] : []
    );
    let delivered = 0;
    let failed = 0;
    for (const event of claimed.rows.sort((a, b) => Number(a.id) - Number(b.id))) {
      const ctx = { requestId: event.request_id ?? `outbox-${event.id}` };
      try {
        if (event.kind === 'processing.card_created') await this.clients.processing.cardCreated(ctx, event.payload as CardCreatedEvent);
        else await this.clients.processing.statusUpdate(ctx, event.payload as StatusUpdate);
        await this.db.query('UPDATE outbox_events SET delivered_at = now(), last_error = NULL WHERE id = $1', [event.id]);
        delivered += 1;
      } catch (err) {
        failed += 1;
        const reason = err instanceof Error ? err.message : String(err);
        if (event.attempts >= MAX_ATTEMPTS) {
          await this.db.query('UPDATE outbox_events SET failed_at = now(), last_error = $2 WHERE id = $1', [event.id, reason]);
          this.log.error({ outboxId: event.id, kind: event.kind, attempts: event.attempts, requestId: ctx.requestId }, 'outbox message given up');
        } else {
          await this.db.query(
            `UPDATE outbox_events SET next_attempt_at = now() + make_interval(secs => $2), last_error = $3 WHERE id = $1`,
            [event.id, retryDelayMs(event.attempts) / 1000, reason]
          );
          this.log.warn({ outboxId: event.id, kind: event.kind, attempts: event.attempts, requestId: ctx.requestId }, 'outbox message not delivered; will retry');
        }
      }
    }
    return { delivered, failed };
  }

  /** Delivers due messages every `intervalMs`; returns the function that stops it. */
  start(intervalMs: number): () => void {
    return every(intervalMs, () => this.deliver(), this.log, 'outbox pass failed');
  }
}
