import crypto from 'node:crypto';
import { escapeLiteral, isUnavailableError, type Database } from '../db/database';
import type { QueryResult } from '../db/pg';
import type { Logger } from '../logging/logger';
import { recordWebhookAttempt } from '../metrics';
import { retryDelayMs } from './backoff';
import { SecretUnavailableError } from './endpoint-store';
import { openSecrets, type SecretRow } from '../outbound/secret-rows';
import type { SecretKeyring } from '../outbound/secret-box';
import type { Outbound, TargetCheck } from '../outbound';
import { sendWebhook, type SendResult } from './sender';

/** What the dispatcher is tuned by (gateway/settings.ts, WEBHOOKS_*). */
export interface DispatcherOptions {
  /** The guard and transport of partner URLs: each URL is checked again before its deliveries, and connected to only at the address vetted. */
  outbound: Outbound;
  timeoutMs: number;
  retryWindowSeconds: number;
  retryBaseMs: number;
  retryMaxDelayMs: number;
  concurrency: number;
  endpointConcurrency: number;
  pollMs: number;
  /** Opens the sealed endpoint secrets (`WEBHOOKS_SECRET_KEY`); undefined: secrets are plaintext. */
  keyring?: SecretKeyring;
}

/** How an attempt failed, as `webhook_attempts.error` records it. */
type AttemptResult = Omit<SendResult, 'error'> & { error?: SendResult['error'] | 'secret_unavailable' };

/** After this many failures in a row an endpoint is unhealthy: one delivery at a time (a probe), claimed after the healthy ones. */
const UNHEALTHY_AFTER = 5;

interface Claimed {
  id: string;
  endpoint_id: string;
  attempts: number;
  created_at: Date;
  recovered: boolean;
  /** Its endpoint had failed {@link UNHEALTHY_AFTER} times in a row at the claim (one of the probes' slots). */
  unhealthy: boolean;
  event_id: string;
  type: string;
  payload: string;
  url: string;
  /** The endpoint's live secrets as stored (read with the claim; dropped once opened). */
  secret_rows?: SecretRow[];
  /** Its slot was given back (set by the dispatcher). */
  released?: boolean;
}

/**
 * The oldest open delivery of its (endpoint, card) only: a card's events go one at a time, in order.
 * `fin.closed`: the deliveries this very statement has just delivered or given up (the statement's
 * snapshot still shows them in flight), so their cards' next events are claimable in the same step.
 */
const HEAD_OF_CARD = `(d.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM webhook_deliveries o
              WHERE o.endpoint_id = d.endpoint_id AND o.ordering_key = d.ordering_key AND o.id < d.id AND o.state IN ('pending', 'in_flight')
                AND o.id <> ALL (fin.closed)))`;

/**
 * One step of the dispatcher, in one statement: it writes the attempts that ended since the last
 * step (the completions) and claims due deliveries for the slots they free and any other free one.
 *
 * The completions (`$5`…`$16`, one array per column, empty when none ended): each delivery's next
 * state where its claim is still its own, its attempt row, and its endpoint's health
 * (`last_attempt_at`, and `consecutive_failures` as completing them one by one, in the order they
 * ended, would leave it: the failures after its last delivered one, added to the count unless one
 * was delivered). A completion whose claim was taken over meanwhile (lease expired, the delivery
 * claimed again: its `attempts` moved on) changes nothing: no attempt row, no health change.
 *
 * The claim: per endpoint, up to its free share of in-flight slots (`$2`,
 * WEBHOOKS_ENDPOINT_CONCURRENCY, one when unhealthy), counted in PostgreSQL, less the deliveries
 * this statement completes; the oldest first, and per (endpoint, card) only the oldest open one (a
 * delivery this statement delivers or gives up no longer holds its card), so a healthy endpoint
 * gets a card's events in order. Healthy endpoints first, the least recently served first; at most
 * `$1` in all (the process's free slots) and `$3` of unhealthy endpoints. A claim is a lease: when
 * its sender dies, another takes it over after `lease_until` (`$4` seconds; the attempt counts as
 * `interrupted`). No transaction or lock is held while sending. It answers what the send needs with
 * the claim: the event, the URL, and the endpoint's live signing secrets as stored (sealed or not:
 * opened by the dispatcher; the current one first, then one still in its overlap).
 *
 * The due pending deliveries and the expired leases are two arms, each walking its own partial
 * index in order and stopping at the slots it may fill (`webhook_deliveries_ready_idx`,
 * `webhook_deliveries_lease_idx`).
 *
 * The statement sees the completions it writes only through `done` (a data-modifying CTE's rows are
 * not in the statement's snapshot): `fin` is read by every endpoint's count before anything is
 * claimed, so the completions are written first; the claim never touches a row they wrote.
 *
 * Answers one row per claimed delivery (`kind` 'claimed') and one per completion written (`kind`
 * 'done', with only `id`).
 */
const STEP = `
WITH x AS (
  SELECT * FROM unnest($5::bigint[], $6::int[], $7::text[], $8::timestamptz[], $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::int[], $14::int[], $15::text[], $16::boolean[])
    WITH ORDINALITY AS x(id, attempts, state, next_at, endpoint_id, event_id, event_type, attempted_at, duration_ms, http_status, error, delivered, ord)
), done AS (
  UPDATE webhook_deliveries d
     SET state = x.state, lease_until = NULL, next_attempt_at = COALESCE(x.next_at, d.next_attempt_at),
         finished_at = CASE WHEN x.state = 'pending' THEN NULL ELSE now() END
    FROM x
   WHERE d.id = x.id AND d.state = 'in_flight' AND d.attempts = x.attempts
  RETURNING d.id, d.state
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
), fin AS MATERIALIZED (
  SELECT COALESCE(array_agg(id), '{}') AS ids, COALESCE(array_agg(id) FILTER (WHERE state <> 'pending'), '{}') AS closed FROM done
), candidates AS (
  SELECT c.id, c.recovered, s.unhealthy, e.last_attempt_at, c.due FROM fin CROSS JOIN webhook_endpoints e
  CROSS JOIN LATERAL (SELECT e.consecutive_failures >= ${UNHEALTHY_AFTER} AS unhealthy) h
  CROSS JOIN LATERAL (SELECT h.unhealthy, GREATEST(0, (CASE WHEN h.unhealthy THEN 1 ELSE $2 END)
                       - (SELECT count(*) FROM webhook_deliveries f
                           WHERE f.endpoint_id = e.id AND f.state = 'in_flight' AND f.lease_until >= now() AND f.id <> ALL (fin.ids))) AS free) s
  CROSS JOIN LATERAL (
    SELECT c.id, c.recovered, c.due FROM (
      SELECT * FROM (
        SELECT d.id, false AS recovered, d.next_attempt_at AS due FROM webhook_deliveries d
         WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= now() AND ${HEAD_OF_CARD}
         ORDER BY d.next_attempt_at, d.id LIMIT s.free
         FOR UPDATE OF d SKIP LOCKED) due
      UNION ALL
      SELECT * FROM (
        SELECT d.id, true AS recovered, d.next_attempt_at AS due FROM webhook_deliveries d
         WHERE d.endpoint_id = e.id AND d.state = 'in_flight' AND d.lease_until < now() AND d.id <> ALL (fin.ids) AND ${HEAD_OF_CARD}
         ORDER BY d.lease_until, d.id LIMIT s.free
         FOR UPDATE OF d SKIP LOCKED) expired) c
     ORDER BY c.due, c.id
     LIMIT s.free) c
   WHERE e.status = 'enabled' AND e.deleted_at IS NULL AND $1 > 0
), picked AS (
  SELECT id, recovered FROM (
    SELECT id, recovered, unhealthy,
           row_number() OVER (ORDER BY unhealthy, last_attempt_at NULLS FIRST, due, id) AS n,
           row_number() OVER (PARTITION BY unhealthy ORDER BY last_attempt_at NULLS FIRST, due, id) AS n_of_kind
      FROM candidates) ranked
   WHERE n <= $1 AND (NOT unhealthy OR n_of_kind <= $3)
), claimed AS (
  UPDATE webhook_deliveries d
     SET state = 'in_flight', attempts = d.attempts + 1, lease_until = now() + make_interval(secs => $4)
    FROM picked, partner_events ev, webhook_endpoints e
   WHERE d.id = picked.id AND ev.seq = d.event_seq AND e.id = d.endpoint_id
  RETURNING d.id, d.endpoint_id, d.attempts, d.created_at, picked.recovered, e.consecutive_failures >= ${UNHEALTHY_AFTER} AS unhealthy,
            ev.id AS event_id, ev.type, ev.payload, e.url,
            (SELECT COALESCE(json_agg(json_build_object('id', s.id::text, 'secret', s.secret, 'sealed_secret', s.sealed_secret) ORDER BY s.id DESC), '[]')
               FROM webhook_endpoint_secrets s WHERE s.endpoint_id = d.endpoint_id AND (s.expires_at IS NULL OR s.expires_at > now())) AS secret_rows
)
SELECT 'claimed' AS kind, * FROM claimed
UNION ALL
SELECT 'done', id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM done`;

/**
 * The statement prepared once per connection (SQL PREPARE: its plan is kept, not made at each
 * step), under a name of its text, so a connection never runs another version's statement.
 */
const STEP_NAME = `webhook_dispatch_step_${crypto.createHash('sha256').update(STEP).digest('hex').slice(0, 12)}`;
const STEP_PARAMETER_TYPES = ['bigint', 'int', 'bigint', 'int', 'bigint[]', 'int[]', 'text[]', 'timestamptz[]', 'text[]', 'text[]', 'text[]', 'timestamptz[]', 'int[]', 'int[]', 'text[]', 'boolean[]'] as const;
const PREPARE_STEP = `PREPARE ${STEP_NAME} (${STEP_PARAMETER_TYPES.join(', ')}) AS ${STEP}`;

/**
 * STEP with its parameters written in as literals, for a database that does not keep prepared
 * statements (`DATABASE_PREPARED_STATEMENTS=false`: a pooler in transaction mode, where a session's
 * PREPARE and a later EXECUTE can land on two server connections; the embedded database). The
 * parameters are `$1` to `$16` only (STEP has no other `$`).
 */
function inlineStep(args: readonly string[]): string {
  return STEP.replace(/\$(\d+)/g, (_, n: string) => `(${args[Number(n) - 1]})::${STEP_PARAMETER_TYPES[Number(n) - 1]}`);
}

/**
 * Claims across instances are serialised by this transaction-scoped lock, taken by a statement of
 * its own before the step: in READ COMMITTED the step's snapshot is taken after the lock is had, so
 * it sees every claim committed by the instance that held it before. Without it, two instances
 * claiming at once each counted the other's fresh claims as free and an endpoint could get more
 * than WEBHOOKS_ENDPOINT_CONCURRENCY deliveries at once (6 of 4 seen with two gateways).
 */
const CLAIM_LOCK = `SELECT pg_advisory_xact_lock(hashtextextended('webhook-dispatch-claims', 0))`;

/**
 * A step's commit does not wait for its WAL to reach the disk (this transaction only): every slot
 * waits for its step, and on the loaded bench machine that flush (3 to 7 ms per fdatasync) was most
 * of it (docs/performance.md: up to 2.5 times the deliveries per second; a wash when quiet). What a crash of PostgreSQL itself (not of a gateway) can then lose is the steps of
 * its last moments (at most 3 × `wal_writer_delay`, 600 ms by default), always a suffix of them in
 * commit order, never one step without the steps after it: their claims are claimable again and
 * their completions not recorded, so those deliveries are sent again (same event ids: at least
 * once), after the lease for those whose claim survived; a card's next event is never claimed
 * without its predecessor's completion (the same transaction), so the first arrivals per card stay
 * in order. Nothing else is written this way.
 */
const STEP_COMMIT = 'SET LOCAL synchronous_commit = off';

/**
 * A step whose completions fail it this many times in a row (for another reason than the database
 * being unreachable, which every step waits out) gives them up, rather than holding back every
 * claim of the process behind an attempt that cannot be written.
 */
const STEP_FAILURES_BEFORE_GIVING_UP = 3;

/**
 * Sends the partner events' webhook deliveries (docs/webhooks.md): every process runs one; they
 * share the work through the leases in PostgreSQL. At least once, with the same event id and body
 * on every attempt and a fresh signature.
 *
 * One step runs at a time per process (STEP: the attempts that ended since the last step are
 * written and the slots they free refilled, in one round trip); attempts that end while a step
 * runs go in the next. A slot, and so the card's next event, is released only by the step that
 * commits its completion.
 */
export class WebhookDispatcher {
  private inFlight = 0;
  private unhealthyInFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private stepping = false;
  /** A look for due deliveries was asked for (a new event, the poll) since the last step. */
  private wanted = false;
  private queued: Completion[] = [];
  private readonly sends = new Set<Promise<void>>();
  /** The pool's connections on which STEP is prepared. */
  private readonly prepared = new WeakSet<object>();
  /** Steps in a row that failed for another reason than the database being unreachable. */
  private failedSteps = 0;

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

  /** Looks for due deliveries now (a new event, the poll). */
  wake(): void {
    if (this.stopping) return;
    this.wanted = true;
    this.pump();
  }

  /** Stops claiming and waits for the sends in flight (each ends within the timeout, then its completion is written). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    while (this.sends.size) await Promise.all([...this.sends]);
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

  /** Runs steps one after another while completions wait or a look was asked for; after a failed step, waits a poll interval. */
  private pump(): void {
    if (this.stepping || this.retryTimer) return;
    if (!this.queued.length && !(this.wanted && !this.stopping)) return;
    this.stepping = true;
    this.step().then(
      () => {
        this.stepping = false;
        this.pump();
      },
      (err: unknown) => {
        this.stepping = false;
        this.log.warn({ err }, 'webhook dispatch step failed');
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.pump();
        }, Math.min(this.options.pollMs, 1000));
      }
    );
  }

  private async step(): Promise<void> {
    const batch = this.queued;
    this.queued = [];
    this.wanted = false;
    // The slots this batch's completions free are refilled by the same step.
    const inFlight = this.inFlight - batch.length;
    const unhealthyInFlight = this.unhealthyInFlight - batch.filter((c) => c.row.unhealthy).length;
    const free = this.stopping ? 0 : Math.max(0, this.options.concurrency - inFlight);
    // The unhealthy endpoints' probes never take more than a quarter of the slots.
    const unhealthyFree = Math.max(0, Math.min(free, Math.max(1, Math.floor(this.options.concurrency / 4)) - unhealthyInFlight));
    if (!batch.length && free === 0) return;
    let rows: StepRow[];
    try {
      rows = await this.runStep(batch, free, unhealthyFree);
    } catch (err) {
      if (this.stopping) {
        // Not written: the leases expire and another instance takes them over ('interrupted').
        for (const c of batch) {
          this.release(c.row);
          c.resolve();
        }
      } else if (isUnavailableError(err) || ++this.failedSteps < STEP_FAILURES_BEFORE_GIVING_UP || !batch.length) {
        // Written by the next step (a completion whose claim was taken over meanwhile changes nothing).
        this.queued = batch.concat(this.queued);
      } else {
        // The same completions failed the step again and again (one of them cannot be written): they
        // are given up, so that this process claims again; their deliveries keep their slots until
        // their leases run out, and are then sent again by any instance ('interrupted'), as after a
        // crash (a completion that fails its statement did the same before steps were one statement).
        this.failedSteps = 0;
        for (const c of batch) {
          this.release(c.row);
          c.resolve();
        }
        this.log.error({ err, deliveries: batch.map((c) => String(c.row.id)) }, 'webhook attempts not recorded after repeated failed steps: given up, sent again when their leases run out');
      }
      throw err;
    }
    this.failedSteps = 0;
    const finished = new Set<string>();
    const claimed: Claimed[] = [];
    for (const row of rows) {
      if (row.kind === 'done') finished.add(String(row.id));
      else claimed.push(row as Claimed);
    }
    for (const c of batch) {
      this.release(c.row);
      if (finished.has(String(c.row.id))) {
        const outcome = c.state === 'pending' ? 'retrying' : c.state;
        recordWebhookAttempt(outcome, c.result.error ?? null, {
          seconds: c.result.durationMs / 1000,
          lagSeconds: c.delivered ? (Date.now() - c.row.created_at.getTime()) / 1000 : undefined,
        });
        if (c.state === 'failed') this.log.warn({ endpointId: c.row.endpoint_id, eventId: c.row.event_id, attempts: c.row.attempts }, 'webhook delivery failed: retry window over');
      }
      c.resolve();
    }
    this.sendAll(claimed);
  }

  /**
   * One step on one connection, in one round trip: BEGIN, the commit mode, the claims' lock, STEP
   * (prepared once per connection where the database keeps prepared statements, else written in
   * full), COMMIT. The connection is checked out through `Database.withClient`: a connection lost
   * meanwhile is released as broken (its 'error' is listened to; unheard, it would end the
   * process). After any other failure the transaction is rolled back and STEP deallocated, so that
   * the next step prepares it afresh: a plan a migration made stale (0A000), a statement gone with a
   * `DISCARD ALL` (26000), or one a pooler's other server connection never had.
   */
  private async runStep(batch: Completion[], free: number, unhealthyFree: number): Promise<StepRow[]> {
    const prepares = this.db.namedStatements;
    return this.db.withClient(
      'a webhook dispatch step',
      async (client) => {
        if (prepares && !this.prepared.has(client)) {
          await client.query(PREPARE_STEP).catch((err: { code?: string }) => {
            // Left by a step whose DEALLOCATE failed: the same text under the same name.
            if (err.code !== '42P05') throw err;
          });
          this.prepared.add(client);
        }
        const args = [
          String(free),
          String(this.options.endpointConcurrency),
          String(unhealthyFree),
          String(this.leaseSeconds),
          sqlArray(batch.map((c) => c.row.id), 'bigint'),
          sqlArray(batch.map((c) => c.row.attempts), 'int'),
          sqlArray(batch.map((c) => c.state), 'text'),
          sqlArray(batch.map((c) => c.next), 'timestamptz'),
          sqlArray(batch.map((c) => c.row.endpoint_id), 'text'),
          sqlArray(batch.map((c) => c.row.event_id), 'text'),
          sqlArray(batch.map((c) => c.row.type), 'text'),
          sqlArray(batch.map((c) => c.attemptedAt), 'timestamptz'),
          sqlArray(batch.map((c) => c.result.durationMs), 'int'),
          sqlArray(batch.map((c) => c.result.status ?? null), 'int'),
          sqlArray(batch.map((c) => c.result.error ?? null), 'text'),
          sqlArray(batch.map((c) => c.delivered), 'boolean'),
        ];
        const step = prepares ? `EXECUTE ${STEP_NAME}(${args.join(', ')})` : inlineStep(args);
        // The simple query protocol: several statements in one round trip, the values as literals.
        const results = (await client.query(`BEGIN; ${STEP_COMMIT}; ${CLAIM_LOCK}; ${step}; COMMIT`)) as unknown as QueryResult<StepRow>[];
        return results[results.length - 2].rows;
      },
      async (client) => {
        this.prepared.delete(client);
        await client.query('ROLLBACK');
        if (prepares) await client.query(`DEALLOCATE ${STEP_NAME}`);
      }
    );
  }

  private sendAll(claimed: Claimed[]): void {
    if (!claimed.length) return;
    // What is the same for the deliveries of one step is done once for them: each endpoint's live
    // secrets opened (read by the step), and each URL's check (resolved and vetted once per step).
    const secrets = new Map<string, Promise<string[]>>();
    const targets = new Map<string, Promise<TargetCheck>>();
    for (const row of claimed) {
      if (!secrets.has(row.endpoint_id)) {
        let opened: Promise<string[]>;
        try {
          opened = Promise.resolve(openSecrets(row.endpoint_id, row.secret_rows ?? [], this.options.keyring));
        } catch (err) {
          opened = Promise.reject(err);
          opened.catch(() => undefined);
        }
        secrets.set(row.endpoint_id, opened);
      }
      row.secret_rows = undefined;
      if (!targets.has(row.url)) targets.set(row.url, this.options.outbound.check(row.url));
      this.track(row, this.deliver(row, secrets.get(row.endpoint_id)!, targets.get(row.url)!));
    }
  }

  /** Takes a slot for a claimed delivery until {@link release} (by the step that writes its completion, or when its send throws). */
  private track(row: Claimed, send: Promise<void>): void {
    this.inFlight++;
    if (row.unhealthy) this.unhealthyInFlight++;
    const tracked = send
      .catch((err: unknown) => this.log.warn({ err }, 'webhook delivery failed unexpectedly'))
      .finally(() => {
        // A send that threw before its completion was queued: its slot is freed here (its lease
        // expires and another attempt takes it over).
        this.release(row);
        this.sends.delete(tracked);
        this.pump();
      });
    this.sends.add(tracked);
  }

  private release(row: Claimed): void {
    if (row.released) return;
    row.released = true;
    this.inFlight--;
    if (row.unhealthy) this.unhealthyInFlight--;
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
    const result = await sendWebhook(this.options.outbound, target, { eventId: row.event_id, type: row.type, payload: row.payload, secrets }, this.options.timeoutMs);
    await this.complete(row, attemptedAt, result);
  }

  /**
   * Records the attempt and the delivery's next state: delivered, retried after a backoff, or
   * failed once the next attempt would fall past the retry window. Written by the next step (STEP),
   * with the attempts that ended meanwhile. Resolves once it is written; the delivery's slot stays
   * taken until then, so the card's next event is claimable only once its predecessor's outcome is
   * committed (by the same statement that claims it).
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
    return new Promise((resolve) => {
      this.queued.push({ row, attemptedAt, result, delivered, state, next, resolve });
      this.pump();
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
}

/** A row of STEP's answer: a claimed delivery, or (`kind` 'done', only `id`) a completion written. */
type StepRow = (Claimed & { kind: 'claimed' }) | { kind: 'done'; id: string };

/** An array literal of `values` for the simple query protocol (each element a literal; an empty array typed). */
function sqlArray(values: readonly (string | number | boolean | Date | null)[], type: 'bigint' | 'int' | 'text' | 'timestamptz' | 'boolean'): string {
  if (!values.length) return `'{}'::${type}[]`;
  return `ARRAY[${values.map(sqlLiteral).join(', ')}]::${type}[]`;
}

function sqlLiteral(value: string | number | boolean | Date | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`not a finite number: ${String(value)}`);
    return String(value);
  }
  return escapeLiteral(value instanceof Date ? value.toISOString() : value);
}
