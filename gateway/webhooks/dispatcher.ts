import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import { recordWebhookAttempt } from '../metrics';
import { retryDelayMs } from './backoff';
import { liveSecrets, SecretUnavailableError } from './endpoint-store';
import type { SecretKeyring } from './secret-box';
import { signatureHeader } from './signature';
import { sendWebhook, type SendResult } from './sender';
import { checkTarget, type Resolver, type TargetCheck } from './target-guard';

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
  event_id: string;
  type: string;
  payload: string;
  url: string;
}

/** The oldest open delivery of its (endpoint, card) only: a card's events go one at a time, in order. */
const HEAD_OF_CARD = `(d.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM webhook_deliveries o
              WHERE o.endpoint_id = d.endpoint_id AND o.ordering_key = d.ordering_key AND o.id < d.id AND o.state IN ('pending', 'in_flight')))`;

/**
 * Claims due deliveries in one statement, in batches: per endpoint, up to its free share of
 * in-flight slots (WEBHOOKS_ENDPOINT_CONCURRENCY, one when unhealthy), the oldest first, and per
 * (endpoint, card) only the oldest open one, so a healthy endpoint gets a card's events in order.
 * The least recently served endpoints go first. A claim is a lease: when its sender dies, another
 * takes it over after `lease_until` (the attempt counts as `interrupted`). No transaction or lock is
 * held while sending. It answers what the send needs (the event and the URL) with the claim.
 *
 * The due pending deliveries and the expired leases are two arms, each walking its own partial
 * index in order and stopping at the slots it may fill (`webhook_deliveries_ready_idx`,
 * `webhook_deliveries_lease_idx`): one walk with an OR of both states read every open delivery of
 * the endpoint and sorted them, so a claim cost grew with the backlog.
 */
const CLAIM = `
WITH picked AS (
  SELECT d.id, d.recovered FROM webhook_endpoints e
  CROSS JOIN LATERAL (SELECT GREATEST(0, (CASE WHEN e.consecutive_failures >= ${UNHEALTHY_AFTER} THEN 1 ELSE $2 END)
                       - (SELECT count(*) FROM webhook_deliveries f
                           WHERE f.endpoint_id = e.id AND f.state = 'in_flight' AND f.lease_until >= now())) AS free) s
  CROSS JOIN LATERAL (
    SELECT c.id, c.recovered FROM (
      SELECT * FROM (
        SELECT d.id, false AS recovered, d.next_attempt_at AS due FROM webhook_deliveries d
         WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= now() AND ${HEAD_OF_CARD}
         ORDER BY d.next_attempt_at, d.id LIMIT s.free
         FOR UPDATE OF d SKIP LOCKED) due
      UNION ALL
      SELECT * FROM (
        SELECT d.id, true AS recovered, d.next_attempt_at AS due FROM webhook_deliveries d
         WHERE d.endpoint_id = e.id AND d.state = 'in_flight' AND d.lease_until < now() AND ${HEAD_OF_CARD}
         ORDER BY d.lease_until, d.id LIMIT s.free
         FOR UPDATE OF d SKIP LOCKED) expired) c
     ORDER BY c.due, c.id
     LIMIT s.free) d
   WHERE e.status = 'enabled' AND e.deleted_at IS NULL
     AND (CASE WHEN $3 THEN e.consecutive_failures >= ${UNHEALTHY_AFTER} ELSE e.consecutive_failures < ${UNHEALTHY_AFTER} END)
   ORDER BY e.last_attempt_at NULLS FIRST
   LIMIT $1)
UPDATE webhook_deliveries d
   SET state = 'in_flight', attempts = d.attempts + 1, lease_until = now() + make_interval(secs => $4)
  FROM picked, partner_events ev, webhook_endpoints e
 WHERE d.id = picked.id AND ev.seq = d.event_seq AND e.id = d.endpoint_id
RETURNING d.id, d.endpoint_id, d.attempts, d.created_at, picked.recovered, ev.id AS event_id, ev.type, ev.payload, e.url`;

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
      if (!claimed.rows.length) continue;
      // What is the same for the deliveries of one claim is read once for them: each endpoint's
      // live secrets, and each URL's check (resolved and vetted once per claim).
      const secrets = new Map<string, Promise<string[]>>();
      const targets = new Map<string, Promise<TargetCheck>>();
      for (const row of claimed.rows) {
        if (!secrets.has(row.endpoint_id)) {
          const read = liveSecrets(this.db, row.endpoint_id, this.options.keyring);
          read.catch(() => undefined);
          secrets.set(row.endpoint_id, read);
        }
        if (!targets.has(row.url)) targets.set(row.url, checkTarget(row.url, { allowPrivate: this.options.allowPrivate, resolve: this.options.resolve }));
        this.track(this.deliver(row, secrets.get(row.endpoint_id)!, targets.get(row.url)!), unhealthy);
      }
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

  private async deliver(row: Claimed, secretsRead: Promise<string[]>, targetChecked: Promise<TargetCheck>): Promise<void> {
    if (row.recovered) {
      // The previous attempt's sender died (or stalled past its lease) before recording an outcome.
      await this.db.query(
        `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, attempted_at, error, outcome, next_retry_at)
         VALUES ($1, $2, $3, $4, $5, now(), 'interrupted', 'retrying', now())`,
        [row.id, row.endpoint_id, row.event_id, row.type, row.attempts - 1]
      );
      recordWebhookAttempt('retrying', 'interrupted');
    }
    const attemptedAt = new Date();
    const target = await targetChecked;
    if (!target.ok) {
      await this.complete(row, attemptedAt, { durationMs: 0, error: 'target_refused' });
      return;
    }
    let secrets: string[];
    try {
      secrets = await secretsRead;
    } catch (err) {
      if (!(err instanceof SecretUnavailableError)) throw err;
      // Never sent unsigned, nor signed with fewer secrets than the receiver may hold: held and
      // retried like a failed attempt, so it goes once the key or the secret is back.
      this.log.error(
        { endpointId: row.endpoint_id, eventId: row.event_id, secretId: err.secretId, keyId: err.keyId, reason: err.reason },
        'webhook delivery held: a signing secret of its endpoint cannot be read'
      );
      await this.complete(row, attemptedAt, { durationMs: 0, error: 'secret_unavailable' });
      return;
    }
    const t = Math.floor(Date.now() / 1000);
    const result = await sendWebhook(
      target,
      row.payload,
      {
        'Partner-Gateway-Event-Id': row.event_id,
        'Partner-Gateway-Event-Type': row.type,
        'Partner-Gateway-Signature': signatureHeader(secrets, t, row.payload),
      },
      this.options.timeoutMs
    );
    await this.complete(row, attemptedAt, result);
  }

  private queued: Completion[] = [];
  private flushing = false;

  /**
   * Records the attempt and the delivery's next state: delivered, retried after a backoff, or
   * failed once the next attempt would fall past the retry window. Completions that end while
   * another batch is being written are written together in the next one (one statement: see
   * COMPLETE). Resolves once this one is written; the delivery's slot stays taken until then, so
   * the card's next event is claimable only after its predecessor's outcome is committed.
   */
  private complete(row: Claimed, attemptedAt: Date, result: AttemptResult): Promise<void> {
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
    return new Promise((resolve, reject) => {
      this.queued.push({ row, attemptedAt, result, delivered, state, next, resolve, reject });
      if (!this.flushing) this.flush();
    });
  }

  private flush(): void {
    this.flushing = true;
    const batch = this.queued;
    this.queued = [];
    writeCompletions(this.db, batch)
      .then((finished) => {
        for (const c of batch) {
          if (!finished.has(c.row.id)) {
            c.resolve();
            continue;
          }
          const outcome = c.state === 'pending' ? 'retrying' : c.state;
          recordWebhookAttempt(outcome, c.result.error ?? null, {
            seconds: c.result.durationMs / 1000,
            lagSeconds: c.delivered ? (Date.now() - c.row.created_at.getTime()) / 1000 : undefined,
          });
          if (c.state === 'failed') this.log.warn({ endpointId: c.row.endpoint_id, eventId: c.row.event_id, attempts: c.row.attempts }, 'webhook delivery failed: retry window over');
          c.resolve();
        }
      })
      .catch((err: unknown) => {
        for (const c of batch) c.reject(err);
      })
      .finally(() => {
        if (this.queued.length) this.flush();
        else this.flushing = false;
      });
  }
}

/** One finished attempt waiting to be written. */
interface Completion {
  row: Claimed;
  attemptedAt: Date;
  result: AttemptResult;
  delivered: boolean;
  state: 'delivered' | 'pending' | 'failed';
  next: Date | null;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Writes finished attempts in one statement (atomic like the transaction it replaces, one round
 * trip for the batch): each delivery's next state, its attempt, and its endpoint's health. A
 * completion whose claim was taken over meanwhile (lease expired, the delivery claimed again: its
 * `attempts` moved on) changes nothing: no attempt row, no health change. The endpoint's
 * `consecutive_failures` becomes what completing the batch's attempts one by one, in the order
 * they ended, would leave: the failures after its last delivered one, added to the count unless
 * one was delivered.
 */
const COMPLETE = `
WITH x AS (
  SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::boolean[])
    WITH ORDINALITY AS x(id, attempts, state, next_at, endpoint_id, event_id, event_type, attempted_at, duration_ms, http_status, error, delivered, ord)
), done AS (
  UPDATE webhook_deliveries d
     SET state = x.state, lease_until = NULL, next_attempt_at = COALESCE(x.next_at, d.next_attempt_at),
         finished_at = CASE WHEN x.state = 'pending' THEN NULL ELSE now() END
    FROM x
   WHERE d.id = x.id AND d.state = 'in_flight' AND d.attempts = x.attempts
  RETURNING d.id
), recorded AS (
  SELECT x.* FROM x JOIN done ON done.id = x.id
), attempts AS (
  INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, attempted_at, duration_ms, http_status, error, outcome, next_retry_at)
  SELECT id, endpoint_id, event_id, event_type, attempts, attempted_at, duration_ms, http_status, error, CASE WHEN state = 'pending' THEN 'retrying' ELSE state END, next_at
    FROM recorded ORDER BY ord
), health AS (
  SELECT r.endpoint_id, max(r.ord) FILTER (WHERE r.delivered) AS last_delivered FROM recorded r GROUP BY r.endpoint_id
), endpoints AS (
  UPDATE webhook_endpoints e
     SET last_attempt_at = now(),
         consecutive_failures = (CASE WHEN h.last_delivered IS NULL THEN e.consecutive_failures ELSE 0 END)
           + (SELECT count(*) FROM recorded r WHERE r.endpoint_id = h.endpoint_id AND NOT r.delivered AND r.ord > COALESCE(h.last_delivered, 0))::int
    FROM health h
   WHERE e.id = h.endpoint_id
)
SELECT id FROM done`;

/** Writes a batch of completions (COMPLETE); answers the ids whose claim was still theirs. */
async function writeCompletions(db: Database, batch: Completion[]): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(COMPLETE, [
    batch.map((c) => c.row.id),
    batch.map((c) => c.row.attempts),
    batch.map((c) => c.state),
    batch.map((c) => c.next),
    batch.map((c) => c.row.endpoint_id),
    batch.map((c) => c.row.event_id),
    batch.map((c) => c.row.type),
    batch.map((c) => c.attemptedAt),
    batch.map((c) => c.result.durationMs),
    batch.map((c) => c.result.status ?? null),
    batch.map((c) => c.result.error ?? null),
    batch.map((c) => c.delivered),
  ]);
  return new Set(rows.rows.map((row) => String(row.id)));
}
