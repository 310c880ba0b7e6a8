import { every } from '../background/every';
import type { Database, Queryable } from '../db/database';
import type { Logger } from '../logging/logger';
import type { UpstreamClients } from '../upstreams';
import type { CardCreatedEvent, StatusUpdate } from '../../contracts/upstreams';

/**
 * A token operation the gateway asks of the processor (docs/upstreams.md 10.6), queued by the cascade
 * in a card change's transaction: `operationId` is its `Idempotency-Key` on every attempt.
 */
export interface TokenOperationPayload {
  operationId: string;
  /** The gateway's token id (`tok_…`) and the processor's reference of it. */
  tokenId: string;
  tokenReference: string;
  action: 'suspend' | 'resume' | 'deactivate';
  requestedBy: 'partner' | 'card_state';
  reason?: string;
}

/** A card's tokens moved to its replacement (10.6 `POST /cards/{cardKey}/tokens/move`), queued after the new card's `card_created`. */
export interface TokenMovePayload {
  operationId: string;
  cardKey: string;
  toCardKey: string;
  reason: 'replaced' | 'reissued';
}

/** A message to the card processing system. */
export type OutboxMessage =
  | { kind: 'processing.card_created'; payload: CardCreatedEvent }
  | { kind: 'processing.status_update'; payload: StatusUpdate }
  | { kind: 'processing.token_operation'; payload: TokenOperationPayload }
  | { kind: 'processing.token_move'; payload: TokenMovePayload };

/**
 * How the two token kinds are delivered: given at construction by the composition root (the outbox
 * cannot import the tokens domain, gateway/tokens/operations.ts). A handler sends the message and
 * applies its answer; it resolves when the message is done with (a processor's final refusal, 404
 * or 409, included: the handler reads the token and applies what the processor holds) and throws to
 * have it retried. Without a handler, such a message waits (retried with backoff) for a deliverer
 * that has one.
 */
export interface OutboxHandlers {
  tokenOperation?: (ctx: { requestId: string }, payload: TokenOperationPayload) => Promise<void>;
  tokenMove?: (ctx: { requestId: string }, payload: TokenMovePayload) => Promise<void>;
}

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
 * Delivers outbox messages to the processing system, in id order (the token kinds through
 * {@link OutboxHandlers}). Each message is claimed by
 * pushing its next attempt into the future (so two deliverers never send it at once), sent with no
 * transaction open, then marked delivered or rescheduled with backoff; after MAX_ATTEMPTS it is
 * marked failed and logged for an operator.
 */
export class OutboxDeliverer {
  constructor(
    private readonly db: Database,
    private readonly clients: UpstreamClients,
    private readonly log: Logger,
    private readonly handlers: OutboxHandlers = {}
  ) {}

  /** Sends one message (a throw: not delivered). */
  private async send(ctx: { requestId: string }, event: EventRow): Promise<void> {
    switch (event.kind) {
      case 'processing.card_created':
        await this.clients.processing.cardCreated(ctx, event.payload as CardCreatedEvent);
        return;
      case 'processing.status_update':
        await this.clients.processing.statusUpdate(ctx, event.payload as StatusUpdate);
        return;
      case 'processing.token_operation':
        if (!this.handlers.tokenOperation) throw new Error('no handler of token operations in this process');
        await this.handlers.tokenOperation(ctx, event.payload as TokenOperationPayload);
        return;
      case 'processing.token_move':
        if (!this.handlers.tokenMove) throw new Error('no handler of token moves in this process');
        await this.handlers.tokenMove(ctx, event.payload as TokenMovePayload);
        return;
    }
  }

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
        await this.send(ctx, event);
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
