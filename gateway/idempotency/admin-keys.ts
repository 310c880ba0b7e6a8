import crypto from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import type { Queryable } from '../db/database';
import { newObjectId } from '../ids';
import type { KeyClaim, KeyClaimOutcome } from './key-claims';

/**
 * Idempotency keys of the admin API's changes that reach an upstream (today the card status
 * change, `POST /admin/cards/{cardKey}/status`), in `admin_idempotency_keys` (migration 012). The
 * partners' keys (policies/idempotency) are per partner; an operator's belongs to none, so it has
 * a table of its own and can never collide with, or be replayed to, a partner.
 *
 * A key is claimed before the upstream call and holds the operation's upstream operation id, drawn
 * once: every retry with the key sends the issuer the same id, so the issuer applies the change
 * once. The successful answer is recorded in the change's own transaction ({@link completeAdminKey}),
 * so a retry after the commit is answered it again and writes nothing twice. Any other ending
 * releases the key ({@link releaseAdminKey}) for a retry, which keeps the operation id. No
 * transaction is held while the request runs: a claim is a lease (`claimed_at`), renewed while its
 * request runs ({@link keepAdminKey}), and one whose holder died is taken over when it has run out.
 */

/** How long a key is remembered: as long as the issuer remembers its operation id (docs/upstreams.md). */
export const ADMIN_KEY_TTL_HOURS = 24;

/** An operator's key: 1 to 255 visible ASCII characters, as a partner's `Idempotency-Key`. */
export const ADMIN_KEY = /^[\x21-\x7e]{1,255}$/;

/** A claim held by this request. */
export type AdminKeyClaim = KeyClaim;

/** A recorded answer. */
export interface AdminKeyResponse {
  status: number;
  body: unknown;
}

/** What claiming a key found. */
export type AdminKeyOutcome = KeyClaimOutcome<AdminKeyClaim, AdminKeyResponse>;

const canonical = configure({ deterministic: true });

/** The hash a request is recognised by: its route (method and path) and its body, key order ignored. */
export function adminRequestHash(route: string, body: unknown): string {
  return crypto.createHash('sha256').update(canonical({ route, body })!).digest('hex');
}

/**
 * Claims `key` for the request (`route`, `requestHash`). A new key is claimed with a new operation
 * id; a key of the same request that was released, or whose lease (`leaseSeconds`) ran out, is
 * taken over with its operation id; a completed one answers its recorded response; a key of
 * another request is a mismatch; one whose holder still runs is in progress.
 */
export async function claimAdminKey(db: Queryable, key: string, route: string, requestHash: string, leaseSeconds: number): Promise<AdminKeyOutcome> {
  await db.query('DELETE FROM admin_idempotency_keys WHERE expires_at < now()');
  const claimId = crypto.randomUUID();
  const inserted = await db.query<{ operation_id: string }>(
    `INSERT INTO admin_idempotency_keys (key, route, request_hash, operation_id, state, claim_id, expires_at)
     VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + make_interval(hours => $6))
     ON CONFLICT (key) DO NOTHING RETURNING operation_id`,
    [key, route, requestHash, newObjectId(), claimId, ADMIN_KEY_TTL_HOURS]
  );
  if (inserted.rowCount === 1) return { outcome: 'claimed', claim: { key, claimId, operationId: inserted.rows[0].operation_id, resumed: false } };
  const taken = await db.query<{ operation_id: string }>(
    `UPDATE admin_idempotency_keys SET state = 'in_progress', claim_id = $4, claimed_at = now()
      WHERE key = $1 AND route = $2 AND request_hash = $3
        AND (state = 'released' OR (state = 'in_progress' AND claimed_at < now() - make_interval(secs => $5)))
      RETURNING operation_id`,
    [key, route, requestHash, claimId, leaseSeconds]
  );
  if (taken.rowCount === 1) return { outcome: 'claimed', claim: { key, claimId, operationId: taken.rows[0].operation_id, resumed: true } };
  const found = await db.query<{ route: string; request_hash: string; state: string; response_status: number | null; response_body: unknown }>(
    'SELECT route, request_hash, state, response_status, response_body FROM admin_idempotency_keys WHERE key = $1',
    [key]
  );
  const row = found.rows[0];
  // Gone between the statements (expired): the client retries.
  if (!row) return { outcome: 'in_progress' };
  if (row.route !== route || row.request_hash !== requestHash) return { outcome: 'mismatch' };
  if (row.state === 'completed' && row.response_status !== null) return { outcome: 'replay', response: { status: row.response_status, body: row.response_body } };
  return { outcome: 'in_progress' };
}

/**
 * Records the answer of a claim, in the transaction of the change it answers. False when the claim
 * is no longer this request's (its lease ran out and a retry took it over, or completed it): the
 * caller then rolls its change back, so that the change is written once.
 */
export async function completeAdminKey(tx: Queryable, claim: AdminKeyClaim, response: AdminKeyResponse): Promise<boolean> {
  const updated = await tx.query(
    `UPDATE admin_idempotency_keys SET state = 'completed', response_status = $3, response_body = $4::jsonb
      WHERE key = $1 AND claim_id = $2 AND state = 'in_progress'`,
    [claim.key, claim.claimId, response.status, JSON.stringify(response.body)]
  );
  return updated.rowCount === 1;
}

/**
 * Renews the lease of a claim this request holds (`claimed_at = now()`), every `everyMs` until the
 * returned function is called: a request that runs long (a slow issuer, waiting for a connection
 * or a row lock) keeps its key, so a retry is told 409 `idempotency_in_progress` instead of taking
 * it over. A renewal that finds the key no longer this claim's changes nothing. The returned
 * function stops it, once any renewal in flight has finished.
 */
export function keepAdminKey(db: Queryable, claim: AdminKeyClaim, everyMs: number, onError: (err: unknown) => void): () => Promise<void> {
  let pending: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    pending = db.query("UPDATE admin_idempotency_keys SET claimed_at = now() WHERE key = $1 AND claim_id = $2 AND state = 'in_progress'", [claim.key, claim.claimId]).catch(onError);
  }, everyMs);
  timer.unref();
  // Stopping waits for a renewal already sent, so none lands after its holder has finished.
  return async () => {
    clearInterval(timer);
    await pending;
  };
}

/** Frees a claim that ended without a recorded answer (a refusal, a failure), so that a retry runs with its operation id. */
export async function releaseAdminKey(db: Queryable, claim: AdminKeyClaim): Promise<void> {
  await db.query("UPDATE admin_idempotency_keys SET state = 'released' WHERE key = $1 AND claim_id = $2 AND state = 'in_progress'", [claim.key, claim.claimId]);
}

/** The recorded answer of a completed key, if it is completed. */
export async function completedAdminResponse(db: Queryable, key: string): Promise<AdminKeyResponse | undefined> {
  const found = await db.query<{ response_status: number; response_body: unknown }>(
    "SELECT response_status, response_body FROM admin_idempotency_keys WHERE key = $1 AND state = 'completed' AND response_status IS NOT NULL",
    [key]
  );
  const row = found.rows[0];
  return row ? { status: row.response_status, body: row.response_body } : undefined;
}
