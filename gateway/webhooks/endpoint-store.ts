import type { Database, Queryable } from '../db/database';
import { encodeCursor } from '../db/cursor';
import { deleteInBatches, RETENTION_BATCH } from '../db/retention';
import { newObjectId } from '../ids';
import type { SecretKeyring } from '../outbound/secret-box';
import { addNewSecret, rotateSecretIn } from '../outbound/secret-rows';

export { SecretUnavailableError, type SecretUnavailableReason } from '../outbound/secret-rows';

/** An endpoint as partners read it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  createdAt: string;
  updatedAt: string;
}

/** One delivery attempt as `GET /webhooks/endpoints/{id}/deliveries` lists it. */
export interface WebhookAttempt {
  eventId: string;
  eventType: string;
  attempt: number;
  attemptedAt: string;
  outcome: 'delivered' | 'retrying' | 'failed';
  httpStatus: number | null;
  error: string | null;
  durationMs: number | null;
  nextRetryAt: string | null;
}

/**
 * An endpoint as operators read it (the admin API): the partner's view and its delivery health.
 * Never the secret.
 */
export interface WebhookEndpointHealth extends WebhookEndpoint {
  /** Failed attempts in a row; from 5 on the endpoint is unhealthy (one probe at a time). */
  consecutiveFailures: number;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  /** The last failed attempt: when, its error kind and the receiver's HTTP status if it answered. */
  lastFailure: { at: string; error: string | null; httpStatus: number | null } | null;
  /** Deliveries not yet finished (pending or in flight), and since when the oldest waits. */
  backlog: number;
  oldestPendingAt: string | null;
}

interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, url, events, description, status, created_at, updated_at';

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return { id: row.id, url: row.url, events: row.events, description: row.description, status: row.status, createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString() };
}

/** Work to commit with an endpoint's change (its audit entry), given the change's transaction and the endpoint id. */
export type AlsoInTransaction = (tx: Queryable, endpointId: string) => Promise<void>;
const noop: AlsoInTransaction = async () => undefined;


/** The partner's webhook endpoints and their secrets, in PostgreSQL. Every query is filtered by the partner. */
export class WebhookEndpointStore {
  constructor(
    private readonly db: Database,
    private readonly options: { maxEndpoints: number; secretOverlapSeconds: number; keyring?: SecretKeyring }
  ) {}

  /**
   * Creates an endpoint and its first secret; answers the secret this once. Undefined when the
   * partner has its maximum of endpoints already (counted under a lock of the partner, so two
   * concurrent creates cannot both pass).
   */
  async create(partnerId: string, input: { url: string; events?: string[]; description?: string }, alsoInTransaction: AlsoInTransaction = noop): Promise<(WebhookEndpoint & { secret: string }) | undefined> {
    return this.db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('webhook-endpoints:' || $1::text, 0))", [partnerId]);
      const count = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE partner_id = $1 AND deleted_at IS NULL', [partnerId]);
      if (count.rows[0].n >= this.options.maxEndpoints) return undefined;
      const id = `we_${newObjectId()}`;
      const rows = await tx.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, partner_id, url, events, description) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
        [id, partnerId, input.url, input.events ?? ['*'], input.description ?? null]
      );
      const secret = await addNewSecret(tx, 'webhook_endpoint_secrets', id, this.options.keyring);
      await alsoInTransaction(tx, id);
      return { ...toEndpoint(rows.rows[0]), secret };
    });
  }

  async list(partnerId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db.query<EndpointRow>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE partner_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, [partnerId]);
    return rows.rows.map(toEndpoint);
  }

  async get(partnerId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const rows = await this.db.query<EndpointRow>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND partner_id = $2 AND deleted_at IS NULL`, [id, partnerId]);
    return rows.rows[0] && toEndpoint(rows.rows[0]);
  }

  async update(partnerId: string, id: string, change: { url?: string; events?: string[]; description?: string; status?: 'enabled' | 'disabled' }, alsoInTransaction: AlsoInTransaction = noop): Promise<WebhookEndpoint | undefined> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<EndpointRow>(
        `UPDATE webhook_endpoints
            SET url = COALESCE($3, url), events = COALESCE($4, events), description = COALESCE($5, description),
                status = COALESCE($6, status), updated_at = now(),
                -- Re-enabled: a fresh start, not the unhealthy endpoint's single probe.
                consecutive_failures = CASE WHEN $6 = 'enabled' THEN 0 ELSE consecutive_failures END
          WHERE id = $1 AND partner_id = $2 AND deleted_at IS NULL
          RETURNING ${COLUMNS}`,
        [id, partnerId, change.url ?? null, change.events ?? null, change.description ?? null, change.status ?? null]
      );
      if (!rows.rowCount) return undefined;
      await alsoInTransaction(tx, id);
      return toEndpoint(rows.rows[0]);
    });
  }

  /**
   * Soft-deletes the endpoint (its attempts stay for operators until {@link deleteExpiredEndpoints}),
   * cancels its open deliveries and drops its secrets.
   */
  async delete(partnerId: string, id: string, alsoInTransaction: AlsoInTransaction = noop): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query("UPDATE webhook_endpoints SET deleted_at = now(), status = 'disabled', updated_at = now() WHERE id = $1 AND partner_id = $2 AND deleted_at IS NULL", [id, partnerId]);
      if (!rows.rowCount) return false;
      await tx.query("UPDATE webhook_deliveries SET state = 'cancelled', finished_at = now(), lease_until = NULL WHERE endpoint_id = $1 AND state IN ('pending', 'in_flight')", [id]);
      await tx.query('DELETE FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [id]);
      await alsoInTransaction(tx, id);
      return true;
    });
  }

  /**
   * A new current secret; the one it replaces still signs for the overlap. At most two live: a
   * rotation within the overlap drops the older rotated-out one.
   */
  async rotateSecret(partnerId: string, id: string, alsoInTransaction: AlsoInTransaction = noop): Promise<string | undefined> {
    return this.db.transaction(async (tx) => {
      const owned = await tx.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 AND partner_id = $2 AND deleted_at IS NULL FOR UPDATE', [id, partnerId]);
      if (!owned.rowCount) return undefined;
      const secret = await rotateSecretIn(tx, 'webhook_endpoint_secrets', id, this.options.secretOverlapSeconds, this.options.keyring);
      await alsoInTransaction(tx, id);
      return secret;
    });
  }

  /**
   * The partner's endpoints with their delivery health, for operators. The last success and failure
   * are read from the newest attempts (index on endpoint, id), the backlog from the open deliveries.
   */
  async health(partnerId: string): Promise<WebhookEndpointHealth[]> {
    const rows = await this.db.query<EndpointRow & { consecutive_failures: number; last_attempt_at: Date | null; last_success_at: Date | null; failed_at: Date | null; failed_error: string | null; failed_status: number | null; backlog: number; oldest_pending_at: Date | null }>(
      `SELECT e.id, e.url, e.events, e.description, e.status, e.created_at, e.updated_at, e.consecutive_failures, e.last_attempt_at,
              ok.attempted_at AS last_success_at, bad.attempted_at AS failed_at, bad.error AS failed_error, bad.http_status AS failed_status,
              open.backlog, open.oldest_pending_at
         FROM webhook_endpoints e
         LEFT JOIN LATERAL (SELECT a.attempted_at FROM webhook_attempts a WHERE a.endpoint_id = e.id AND a.outcome = 'delivered' ORDER BY a.id DESC LIMIT 1) ok ON true
         LEFT JOIN LATERAL (SELECT a.attempted_at, a.error, a.http_status FROM webhook_attempts a WHERE a.endpoint_id = e.id AND a.outcome <> 'delivered' ORDER BY a.id DESC LIMIT 1) bad ON true
         CROSS JOIN LATERAL (SELECT count(*)::int AS backlog, min(d.created_at) AS oldest_pending_at FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state IN ('pending', 'in_flight')) open
        WHERE e.partner_id = $1 AND e.deleted_at IS NULL
        ORDER BY e.created_at, e.id`,
      [partnerId]
    );
    return rows.rows.map((row) => ({
      ...toEndpoint(row),
      consecutiveFailures: row.consecutive_failures,
      lastAttemptAt: row.last_attempt_at?.toISOString() ?? null,
      lastSuccessAt: row.last_success_at?.toISOString() ?? null,
      lastFailure: row.failed_at ? { at: row.failed_at.toISOString(), error: row.failed_error, httpStatus: row.failed_status } : null,
      backlog: row.backlog,
      oldestPendingAt: row.oldest_pending_at?.toISOString() ?? null,
    }));
  }

  /** The endpoint's attempts, newest first, below the attempt id `afterId` (the decoded cursor). */
  async attempts(partnerId: string, id: string, page: { afterId?: string; limit: number }): Promise<{ data: WebhookAttempt[]; nextCursor: string | null }> {
    const params: unknown[] = [id, partnerId, page.limit + 1];
    const after = page.afterId === undefined ? '' : ` AND a.id < $${params.push(page.afterId)}`;
    const rows = await this.db.query<{ id: string; event_id: string; event_type: string; attempt: number; attempted_at: Date; outcome: WebhookAttempt['outcome']; http_status: number | null; error: string | null; duration_ms: number | null; next_retry_at: Date | null }>(
      `SELECT a.id, a.event_id, a.event_type, a.attempt, a.attempted_at, a.outcome, a.http_status, a.error, a.duration_ms, a.next_retry_at
         FROM webhook_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id
        WHERE a.endpoint_id = $1 AND e.partner_id = $2${after}
        ORDER BY a.id DESC LIMIT $3`,
      params
    );
    const items = rows.rows.slice(0, page.limit);
    return {
      data: items.map((row) => ({
        eventId: row.event_id,
        eventType: row.event_type,
        attempt: row.attempt,
        attemptedAt: row.attempted_at.toISOString(),
        outcome: row.outcome,
        httpStatus: row.http_status,
        error: row.error,
        durationMs: row.duration_ms,
        nextRetryAt: row.next_retry_at?.toISOString() ?? null,
      })),
      nextCursor: rows.rows.length > page.limit ? encodeCursor(items[items.length - 1].id) : null,
    };
  }
}

/**
 * Removes the endpoints deleted more than `retentionDays` ago (`WEBHOOKS_EVENT_RETENTION_DAYS`: every
 * event one of them was sent was written before its deletion, so it and its deliveries expire by
 * then anyway), in batches: first whatever deliveries of theirs are left (their attempts cascade),
 * then the endpoint rows (their secrets, dropped at deletion already, cascade). A live endpoint's
 * history is never touched: it goes with its events. Idempotent; safe on several instances.
 */
export async function deleteExpiredEndpoints(db: Queryable, retentionDays: number, batch = RETENTION_BATCH): Promise<{ endpoints: number; deliveries: number }> {
  const deliveries = await deleteInBatches(
    db,
    `DELETE FROM webhook_deliveries WHERE id IN (
       SELECT d.id FROM webhook_deliveries d
        WHERE d.endpoint_id IN (SELECT id FROM webhook_endpoints WHERE deleted_at < now() - make_interval(days => $1))
        LIMIT $2 FOR UPDATE OF d SKIP LOCKED)`,
    [retentionDays],
    batch
  );
  // An endpoint with a delivery left (one written by a change racing the deletion, after the batch above) waits for the next pass.
  const endpoints = await deleteInBatches(
    db,
    `DELETE FROM webhook_endpoints WHERE id IN (
       SELECT e.id FROM webhook_endpoints e
        WHERE e.deleted_at < now() - make_interval(days => $1)
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id)
        ORDER BY e.deleted_at LIMIT $2 FOR UPDATE OF e SKIP LOCKED)`,
    [retentionDays],
    batch
  );
  return { endpoints, deliveries };
}
