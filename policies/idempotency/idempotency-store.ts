import crypto from 'node:crypto';
import type { Database } from '../../gateway/db/database';
import { newObjectId } from '../../gateway/ids';
import type { KeyClaim, KeyClaimOutcome } from '../../gateway/idempotency/key-claims';

/** A stored response, replayed for a repeated key: the first answer's status, exact body bytes and replayed headers. */
export interface StoredResponse {
  status: number;
  /** The body exactly as the first answer sent it. */
  body: Buffer;
  /** The first answer's headers a replay repeats ({@link REPLAYED_HEADERS}), lower-case names. */
  headers: Record<string, string>;
}

/**
 * Headers of the first answer that describe its body or its resource, and so belong to every
 * replay of it. Per-response headers (Date, X-Request-Id, rate-limit counters, Retry-After,
 * Content-Length, which the bytes determine) are the replay's own.
 */
export const REPLAYED_HEADERS = ['content-type', 'cache-control', 'location', 'content-location', 'content-language', 'link', 'vary'] as const;

/** A claim held by this process (migration 008 holds its operation id), for one partner. */
export interface HeldClaim extends KeyClaim {
  partnerId: string;
}

/** What claiming a key found. */
export type Claim = KeyClaimOutcome<HeldClaim, StoredResponse>;

/** The holder of a claim refreshes its heartbeat this often while the request runs (`claim-keeper.ts`). */
export const HEARTBEAT_INTERVAL_MS = 2_000;
/** A claim whose heartbeat is older than this is abandoned (its process is gone or cut off): it may be taken over. */
export const STALE_AFTER_SECONDS = 10;
/** A claim made before migration 006 (no heartbeat) is abandoned after this long, as it always was. */
export const ABANDONED_AFTER_SECONDS = 120;

/** This process, as recorded in `claimed_by` (for operators: which instance holds a key). */
export const INSTANCE_ID = `${process.env.HOSTNAME ?? 'host'}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;

interface Row {
  request_hash: string;
  route: string;
  state: string;
  response_status: number | null;
  response_bytes: Buffer | null;
  response_headers: Record<string, string> | null;
  response_body: unknown;
}

/** A completed row as a replayable response; rows recorded before migration 006 only have the parsed body. */
function storedResponse(row: Pick<Row, 'response_status' | 'response_bytes' | 'response_headers' | 'response_body'>): StoredResponse {
  const status = row.response_status!;
  if (row.response_bytes) return { status, body: row.response_bytes, headers: row.response_headers ?? {} };
  return {
    status,
    body: Buffer.from(JSON.stringify(row.response_body ?? null)),
    headers: { 'content-type': `${status >= 400 ? 'application/problem+json' : 'application/json'}; charset=utf-8` },
  };
}

/**
 * Idempotency keys in PostgreSQL, one row per (partner, key). Claiming is one INSERT ... ON CONFLICT
 * DO NOTHING, so of concurrent duplicates exactly one proceeds. No transaction is held while the
 * request runs: the row's state says where it is, and its heartbeat that its holder still lives.
 */
export class IdempotencyStore {
  constructor(private readonly db: Database) {}

  async claim(partnerId: string, key: string, route: string, requestHash: string, ttlHours: number): Promise<Claim> {
    // Expired keys are forgotten, and so is a released or abandoned claim of ANOTHER request (the
    // key is free for it, as before). One of the SAME request is taken over below, keeping its
    // operation id, so that the upstream deduplicates the retry.
    await this.db.query(
      `DELETE FROM idempotency_keys WHERE partner_id = $1 AND key = $2
         AND (expires_at < now()
              OR ((route <> $5 OR request_hash <> $6)
                  AND (state = 'released'
                       OR (state = 'in_progress' AND heartbeat_at IS NULL AND created_at < now() - make_interval(secs => $3))
                       OR (state = 'in_progress' AND heartbeat_at < now() - make_interval(secs => $4)))))`,
      [partnerId, key, ABANDONED_AFTER_SECONDS, STALE_AFTER_SECONDS, route, requestHash]
    );
    const claimId = crypto.randomUUID();
    // A claim released after a 5xx, or abandoned by a process that died (no heartbeat for
    // STALE_AFTER_SECONDS), is taken over by the same request: same row, same operation id.
    const taken = await this.db.query<{ operation_id: string }>(
      `UPDATE idempotency_keys
          SET state = 'in_progress', claim_id = $5, claimed_by = $6, heartbeat_at = now(),
              operation_id = COALESCE(operation_id, $7)
        WHERE partner_id = $1 AND key = $2 AND route = $8 AND request_hash = $9
          AND (state = 'released'
               OR (state = 'in_progress' AND heartbeat_at IS NULL AND created_at < now() - make_interval(secs => $3))
               OR (state = 'in_progress' AND heartbeat_at < now() - make_interval(secs => $4)))
        RETURNING operation_id`,
      [partnerId, key, ABANDONED_AFTER_SECONDS, STALE_AFTER_SECONDS, claimId, INSTANCE_ID, newObjectId(), route, requestHash]
    );
    if (taken.rowCount === 1) {
      return { outcome: 'claimed', claim: { partnerId, key, claimId, operationId: taken.rows[0].operation_id, resumed: true } };
    }
    const operationId = newObjectId();
    const inserted = await this.db.query(
      `INSERT INTO idempotency_keys (partner_id, key, route, request_hash, expires_at, claim_id, claimed_by, heartbeat_at, operation_id)
       VALUES ($1, $2, $3, $4, now() + make_interval(hours => $5), $6, $7, now(), $8)
       ON CONFLICT (partner_id, key) DO NOTHING`,
      [partnerId, key, route, requestHash, ttlHours, claimId, INSTANCE_ID, operationId]
    );
    if (inserted.rowCount === 1) return { outcome: 'claimed', claim: { partnerId, key, claimId, operationId, resumed: false } };
    const existing = await this.db.query<Row>(
      `SELECT request_hash, route, state, response_status, response_bytes, response_headers, response_body
         FROM idempotency_keys WHERE partner_id = $1 AND key = $2`,
      [partnerId, key]
    );
    const row = existing.rows[0];
    // Gone between the insert and the select (released by its owner): ask the client to retry.
    if (!row) return { outcome: 'in_progress' };
    if (row.request_hash !== requestHash || row.route !== route) return { outcome: 'mismatch' };
    if (row.state !== 'completed' || row.response_status === null) return { outcome: 'in_progress' };
    return { outcome: 'replay', response: storedResponse(row) };
  }

  /**
   * The stored final response of this partner's key, when it was completed for the same route and
   * request hash and has not expired; undefined otherwise (unknown, running, another request).
   * Reads only: never claims, releases or deletes.
   */
  async completedResponse(partnerId: string, key: string, route: string, requestHash: string): Promise<StoredResponse | undefined> {
    const found = await this.db.query<Row>(
      `SELECT response_status, response_bytes, response_headers, response_body FROM idempotency_keys
        WHERE partner_id = $1 AND key = $2 AND route = $3 AND request_hash = $4
          AND state = 'completed' AND response_status IS NOT NULL AND expires_at >= now()`,
      [partnerId, key, route, requestHash]
    );
    const row = found.rows[0];
    return row ? storedResponse(row) : undefined;
  }

  /** Records the final response of a claim; false when the claim is no longer ours (taken over after its heartbeat stopped). */
  async complete(claim: HeldClaim, response: StoredResponse): Promise<boolean> {
    const updated = await this.db.query(
      `UPDATE idempotency_keys SET state = 'completed', response_status = $4, response_bytes = $5, response_headers = $6::jsonb
        WHERE partner_id = $1 AND key = $2 AND claim_id = $3 AND state = 'in_progress'`,
      [claim.partnerId, claim.key, claim.claimId, response.status, response.body, JSON.stringify(response.headers)]
    );
    return updated.rowCount === 1;
  }

  /**
   * Frees a claim whose request failed in a retryable way (5xx), so that the same key can be
   * retried at once. The row stays, marked `released`, so that the retry of the same request
   * reuses its operation id (the upstream may have applied the operation: it deduplicates).
   */
  async release(claim: HeldClaim): Promise<void> {
    await this.db.query("UPDATE idempotency_keys SET state = 'released', claim_id = NULL, heartbeat_at = NULL WHERE partner_id = $1 AND key = $2 AND claim_id = $3 AND state = 'in_progress'", [
      claim.partnerId,
      claim.key,
      claim.claimId,
    ]);
  }

  /** Refreshes the heartbeat of claims this process holds (one statement for all of them). */
  async heartbeat(claims: HeldClaim[]): Promise<void> {
    if (claims.length === 0) return;
    await this.db.query(
      `UPDATE idempotency_keys k SET heartbeat_at = now()
         FROM unnest($1::text[], $2::text[], $3::text[]) AS held (partner_id, key, claim_id)
        WHERE k.partner_id = held.partner_id::char(24) AND k.key = held.key AND k.claim_id = held.claim_id AND k.state = 'in_progress'`,
      [claims.map((c) => c.partnerId), claims.map((c) => c.key), claims.map((c) => c.claimId)]
    );
  }
}
