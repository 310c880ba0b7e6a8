import type { Database } from '../db/database';

/** A stored response, replayed for a repeated key. */
export interface StoredResponse {
  status: number;
  body: unknown;
}

/** What claiming a key found. */
export type Claim =
  | { outcome: 'claimed' }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };

/** A claim older than this without a stored response is abandoned (its process died): it may be taken over. */
export const ABANDONED_AFTER_SECONDS = 120;

/**
 * Idempotency keys in PostgreSQL, one row per (partner, key). Claiming is one INSERT ... ON CONFLICT
 * DO NOTHING, so of concurrent duplicates exactly one proceeds. No transaction is held while the
 * request runs: the row's state says where it is.
 */
export class IdempotencyStore {
  constructor(private readonly db: Database) {}

  async claim(partnerId: string, key: string, route: string, requestHash: string, ttlHours: number): Promise<Claim> {
    // Expired keys, and claims abandoned by a crashed request, are released first.
    await this.db.query(
      `DELETE FROM idempotency_keys WHERE partner_id = $1 AND key = $2
         AND (expires_at < now() OR (state = 'in_progress' AND created_at < now() - make_interval(secs => $3)))`,
      [partnerId, key, ABANDONED_AFTER_SECONDS]
    );
    const inserted = await this.db.query(
      `INSERT INTO idempotency_keys (partner_id, key, route, request_hash, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(hours => $5))
       ON CONFLICT (partner_id, key) DO NOTHING`,
      [partnerId, key, route, requestHash, ttlHours]
    );
    if (inserted.rowCount === 1) return { outcome: 'claimed' };
    const existing = await this.db.query<{ request_hash: string; route: string; state: string; response_status: number | null; response_body: unknown }>(
      'SELECT request_hash, route, state, response_status, response_body FROM idempotency_keys WHERE partner_id = $1 AND key = $2',
      [partnerId, key]
    );
    const row = existing.rows[0];
    // Gone between the insert and the select (released by its owner): ask the client to retry.
    if (!row) return { outcome: 'in_progress' };
    if (row.request_hash !== requestHash || row.route !== route) return { outcome: 'mismatch' };
    if (row.state !== 'completed' || row.response_status === null) return { outcome: 'in_progress' };
    return { outcome: 'replay', response: { status: row.response_status, body: row.response_body } };
  }

  /**
   * The stored final response of this partner's key, when it was completed for the same route and
   * request hash and has not expired; undefined otherwise (unknown, running, another request).
   * Reads only: never claims, releases or deletes.
   */
  async completedResponse(partnerId: string, key: string, route: string, requestHash: string): Promise<StoredResponse | undefined> {
    const found = await this.db.query<{ response_status: number; response_body: unknown }>(
      `SELECT response_status, response_body FROM idempotency_keys
        WHERE partner_id = $1 AND key = $2 AND route = $3 AND request_hash = $4
          AND state = 'completed' AND response_status IS NOT NULL AND expires_at >= now()`,
      [partnerId, key, route, requestHash]
    );
    const row = found.rows[0];
    return row ? { status: row.response_status, body: row.response_body } : undefined;
  }

  async complete(partnerId: string, key: string, response: StoredResponse): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET state = 'completed', response_status = $3, response_body = $4::jsonb
        WHERE partner_id = $1 AND key = $2`,
      [partnerId, key, response.status, JSON.stringify(response.body ?? null)]
    );
  }

  /** Forgets a claim whose request failed in a retryable way, so that the same key can be retried. */
  async release(partnerId: string, key: string): Promise<void> {
    await this.db.query("DELETE FROM idempotency_keys WHERE partner_id = $1 AND key = $2 AND state = 'in_progress'", [partnerId, key]);
  }
}
