import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import { recordWebhookAttempt } from '../metrics';
import { retryDelayMs } from './backoff';
import { liveSecrets, SecretUnavailableError } from './endpoint-store';
import type { SecretKeyring } from './secret-box';
import { signatureHeader } from './signature';
import { sendWebhook, type SendResult } from './sender';
import { checkTarget, type Resolver } from './target-guard';

/** What the dispatcher is tuned by (gateway/settings.ts, WEBHOOKS_*). */
export interface DispatcherOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  retryWindowSeconds: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
  concurrency: number;
  endpointConcurrency: number;
  pollMs: number;
  /** Opens the sealed endpoint secrets (`WEBHOOKS_SECRET_KEY`); undefined: secrets are plaintext. */
  keyring?: SecretKeyring;
  resolve?: Resolver;
}

/** How an attempt failed, as `webhook_attempts.error` records it. */
type AttemptResult = Omit<SendResult, 'error'> & { error?: SendResult['error'] | 'target_refused' | 'secret_unavailable' };

/** After this many failures in a row an endpoint is unhealthy: one delivery at a time (a probe), claimed after the healthy ones. */
const UNHEALTHY_AFTER = 5;

interface Claimed {
  id: string;
  endpoint_id: string;
  attempts: number;
  created_at: Date;
  recovered: boolean;
}

/**
 * Claims due deliveries in one statement: per endpoint, up to its free share of in-flight slots
 * (WEBHOOKS_ENDPOINT_CONCURRENCY, one when unhealthy), the oldest first, and per (endpoint, card)
 * only the oldest open one, so a healthy endpoint gets a card's events in order. The least recently
 * served endpoints go first. A claim is a lease: when its sender dies, another takes it over after
 * `lease_until` (the attempt counts as `interrupted`). No transaction or lock is held while sending.
 */
const CLAIM = `
WITH picked AS (
  SELECT d.id, d.recovered FROM webhook_endpoints e
  CROSS JOIN LATERAL (
    SELECT d.id, (d.state = 'in_flight') AS recovered FROM webhook_deliveries d
     WHERE d.endpoint_id = e.id
       AND ((d.state = 'pending' AND d.next_attempt_at <= now()) OR (d.state = 'in_flight' AND d.lease_until < now()))
       AND (d.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM webhook_deliveries o
              WHERE o.endpoint_id = d.endpoint_id AND o.ordering_key = d.ordering_key AND o.id < d.id AND o.state IN ('pending', 'in_flight')))
     ORDER BY d.next_attempt_at, d.id
     LIMIT GREATEST(0, (CASE WHEN e.consecutive_failures >= ${UNHEALTHY_AFTER} THEN 1 ELSE $2 END)
                       - (SELECT count(*) FROM webhook_deliveries f
                           WHERE f.endpoint_id = e.id AND f.state = 'in_flight' AND f.lease_until >= now()))
     FOR UPDATE OF d SKIP LOCKED) d
   WHERE e.status = 'enabled' AND e.deleted_at IS NULL
     AND (CASE WHEN $3 THEN e.consecutive_failures >= ${UNHEALTHY_AFTER} ELSE e.consecutive_failures < ${UNHEALTHY_AFTER} END)
   ORDER BY e.last_attempt_at NULLS FIRST
   LIMIT $1)
UPDATE webhook_deliveries d
   SET state = 'in_flight', attempts = d.attempts + 1, lease_until = now() + make_interval(secs => $4)
  FROM picked WHERE d.id = picked.id
RETURNING d.id, d.endpoint_id, d.attempts, d.created_at, picked.recovered`;

/**
 * Sends the partner events' webhook deliveries (docs/webhooks.md): every process runs one; they
 * share the work through the leases in PostgreSQL. At least once, with the same event id and body
 * on every attempt and a fresh signature.
 */
export class WebhookDispatcher {
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private looking = false;
  private again = false;
  private readonly sends = new Set<Promise<void>>();

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly options: DispatcherOptions
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Looks for due deliveries now (a new event, a finished send). */
  wake(): void {
    if (this.stopping) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    this.looking = true;
    this.claimAndSend()
      .catch((err: unknown) => this.log.warn({ err }, 'webhook claim failed'))
      .finally(() => {
        this.looking = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops claiming and waits for the sends in flight (each ends within the timeout). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await Promise.all([...this.sends]);
  }

  /**
   * The open deliveries (pending or in flight) in total, and of the `top` enabled endpoints with
   * the most, for the `webhook_backlog` gauges (read at scrape).
   */
  async backlog(top: number): Promise<{ total: number; endpoints: { endpointId: string; backlog: number }[] }> {
    const rows = await this.db.query<{ endpoint_id: string | null; backlog: number }>(
      `SELECT NULL AS endpoint_id, count(*)::int AS backlog FROM webhook_deliveries WHERE state IN ('pending', 'in_flight')
       UNION ALL
       (SELECT d.endpoint_id, count(*)::int AS backlog
          FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.state IN ('pending', 'in_flight') AND e.status = 'enabled' AND e.deleted_at IS NULL
         GROUP BY d.endpoint_id ORDER BY backlog DESC, d.endpoint_id LIMIT $1)`,
      [top]
    );
    const total = rows.rows.find((row) => row.endpoint_id === null)?.backlog ?? 0;
    const endpoints = rows.rows.filter((row): row is { endpoint_id: string; backlog: number } => row.endpoint_id !== null);
    return { total, endpoints: endpoints.map((row) => ({ endpointId: row.endpoint_id, backlog: row.backlog })) };
  }

  private get leaseSeconds(): number {
    // Longer than a send can last (the timeout, then the completion), so a live sender never loses its claim.
    return Math.ceil(this.options.timeoutMs / 1000) + 20;
  }

  private async claimAndSend(): Promise<void> {
    for (const unhealthy of [false, true]) {
      let free = this.options.concurrency - this.inFlight;
      // The unhealthy endpoints' probes never take more than a quarter of the slots.
      if (unhealthy) free = Math.min(free, Math.max(1, Math.floor(this.options.concurrency / 4)) - this.unhealthyInFlight);
      if (free <= 0) continue;
      const claimed = await this.db.query<Claimed>(CLAIM, [free, this.options.endpointConcurrency, unhealthy, this.leaseSeconds]);
      for (const row of claimed.rows) this.track(this.deliver(row, unhealthy), unhealthy);
    }
  }

  private unhealthyInFlight = 0;

  private track(send: Promise<void>, unhealthy: boolean): void {
    this.inFlight++;
    if (unhealthy) this.unhealthyInFlight++;
    const tracked = send
      .catch((err: unknown) => this.log.warn({ err }, 'webhook delivery failed unexpectedly'))
      .finally(() => {
        this.inFlight--;
        if (unhealthy) this.unhealthyInFlight--;
        this.sends.delete(tracked);
        this.wake();
      });
    this.sends.add(tracked);
  }

  private async deliver(row: Claimed, _unhealthy: boolean): Promise<void> {
    const found = await this.db.query<{ event_id: string; type: string; payload: string; url: string }>(
      `SELECT ev.id AS event_id, ev.type, ev.payload, e.url
         FROM webhook_deliveries d JOIN partner_events ev ON ev.seq = d.event_seq JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = $1`,
      [row.id]
    );
    const event = found.rows[0];
    if (!event) return;
    if (row.recovered) {
      // The previous attempt's sender died (or stalled past its lease) before recording an outcome.
      await this.db.query(
        `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, attempted_at, error, outcome, next_retry_at)
         VALUES ($1, $2, $3, $4, $5, now(), 'interrupted', 'retrying', now())`,
        [row.id, row.endpoint_id, event.event_id, event.type, row.attempts - 1]
      );
      recordWebhookAttempt('retrying', 'interrupted');
    }
    const attemptedAt = new Date();
    const target = await checkTarget(event.url, { allowPrivate: this.options.allowPrivate, resolve: this.options.resolve });
    if (!target.ok) {
      await this.complete(row, event, attemptedAt, { durationMs: 0, error: 'target_refused' });
      return;
    }
    let secrets: string[];
    try {
      secrets = await liveSecrets(this.db, row.endpoint_id, this.options.keyring);
    } catch (err) {
      if (!(err instanceof SecretUnavailableError)) throw err;
      // Never sent unsigned, nor signed with fewer secrets than the receiver may hold: held and
      // retried like a failed attempt, so it goes once the key or the secret is back.
      this.log.error(
        { endpointId: row.endpoint_id, eventId: event.event_id, secretId: err.secretId, keyId: err.keyId, reason: err.reason },
        'webhook delivery held: a signing secret of its endpoint cannot be read'
      );
      await this.complete(row, event, attemptedAt, { durationMs: 0, error: 'secret_unavailable' });
      return;
    }
    const t = Math.floor(Date.now() / 1000);
    const result = await sendWebhook(
      target,
      event.payload,
      {
        'Partner-Gateway-Event-Id': event.event_id,
        'Partner-Gateway-Event-Type': event.type,
        'Partner-Gateway-Signature': signatureHeader(secrets, t, event.payload),
      },
      this.options.timeoutMs
    );
    await this.complete(row, event, attemptedAt, result);
  }

  /**
   * Records the attempt and the delivery's next state in one short transaction: delivered, retried
   * after a backoff, or failed once the next attempt would fall past the retry window. A
   * completion whose claim was taken over meanwhile (lease expired) changes nothing.
   */
  private async complete(row: Claimed, event: { event_id: string; type: string }, attemptedAt: Date, result: AttemptResult): Promise<void> {
    const delivered = result.error === undefined && result.status !== undefined;
    let state: 'delivered' | 'pending' | 'failed' = 'delivered';
    let next: Date | null = null;
    if (!delivered) {
      next = new Date(Date.now() + retryDelayMs(row.attempts, { baseMs: this.options.retryBaseMs, maxMs: this.options.retryMaxDelayMs }));
      if (next.getTime() > row.created_at.getTime() + this.options.retryWindowSeconds * 1000) {
        state = 'failed';
        next = null;
      } else {
        state = 'pending';
      }
    }
    const error = result.error ?? null;
    const finished = await this.db.transaction(async (tx) => {
      const updated = await tx.query(
        `UPDATE webhook_deliveries
            SET state = $3, lease_until = NULL, next_attempt_at = COALESCE($4, next_attempt_at),
                finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
          WHERE id = $1 AND state = 'in_flight' AND attempts = $2`,
        [row.id, row.attempts, state, next]
      );
      if (!updated.rowCount) return false;
      await tx.query(
        `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, attempted_at, duration_ms, http_status, error, outcome, next_retry_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [row.id, row.endpoint_id, event.event_id, event.type, row.attempts, attemptedAt, result.durationMs, result.status ?? null, error, state === 'pending' ? 'retrying' : state, next]
      );
      await tx.query(
        `UPDATE webhook_endpoints SET last_attempt_at = now(),
                consecutive_failures = CASE WHEN $2 THEN 0 ELSE consecutive_failures + 1 END
          WHERE id = $1`,
        [row.endpoint_id, delivered]
      );
      return true;
    });
    if (finished) {
      const outcome = state === 'pending' ? 'retrying' : state;
      recordWebhookAttempt(outcome, error, { seconds: result.durationMs / 1000, lagSeconds: delivered ? (Date.now() - row.created_at.getTime()) / 1000 : undefined });
    }
    if (finished && state === 'failed') {
      this.log.warn({ endpointId: row.endpoint_id, eventId: event.event_id, attempts: row.attempts }, 'webhook delivery failed: retry window over');
    }
  }
}
