import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { configure } from 'safe-stable-stringify';
import type { Queryable } from '../db/database';
import { RETENTION_BATCH, deleteInBatches } from '../db/retention';
import { GatewayError } from '../errors';
import { newObjectId } from '../ids';

/**
 * Idempotency keys: one key-claim store for the partners' keys (the idempotency policy,
 * `idempotency_keys`, one row per partner and key) and the operators' (the admin API's card status
 * change, `admin_idempotency_keys`, one row per key: an operator's key belongs to no partner, so it
 * can never collide with, or be replayed to, one). One request hash, one key pattern, one claim:
 *
 * - a key is claimed before the upstream call and holds the operation's upstream operation id,
 *   drawn once: every retry with the key sends the upstream the same id, so it applies the
 *   operation once;
 * - no transaction is held while the request runs: a claim is a lease, renewed while its request
 *   runs (the partners' claim keeper, every 2 s for all held claims; an operator's request, a
 *   quarter of its lease at a time, {@link KeyClaimStore.keep}), and one whose holder stopped
 *   renewing is taken over by the same request, with its operation id;
 * - the final answer is recorded by its claim's holder only ({@link KeyClaimStore.complete}: after
 *   the partner's answer is written, or in the operator's change's own transaction), and replayed
 *   byte for byte; any other ending releases the key for a retry, which keeps the operation id;
 * - a key of another request is a mismatch while it is completed or running; released or
 *   abandoned, it is freed for the new request (with a new operation id).
 */

/** An `Idempotency-Key`: 1 to 255 visible ASCII characters (partners' and operators'). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The `Idempotency-Key` header of a request, undefined without one; 400 `validation_failed` when malformed. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new GatewayError('validation_failed', 'Idempotency-Key must be 1 to 255 visible ASCII characters', {
      invalidParams: [{ name: 'Idempotency-Key', reason: 'must be 1 to 255 visible ASCII characters' }],
    });
  }
  return key;
}

/** JSON with object keys sorted (safe-stable-stringify), so that the same body always hashes the same. */
const canonical = configure({ deterministic: true });

/**
 * The hash a request is recognised by: its route (method and path), its path parameters and its
 * body, key order ignored. Stored with the key, so it must never change for a request: a partner's
 * route passes its path parameters; an operator's route names its card in the path it hashes and
 * passes none (`params` undefined is left out of the hashed JSON, so its stored hashes are those
 * the admin API computed before the two stores were one).
 */
export function requestHash(route: string, params: unknown, body: unknown): string {
  return crypto.createHash('sha256').update(canonical({ route, params, body })!).digest('hex');
}

/** Where a kind of key lives: its table, the column naming its owner (none for operators' keys), and the column its holder renews. */
export interface KeyTable {
  readonly table: 'idempotency_keys' | 'admin_idempotency_keys';
  readonly owner?: 'partner_id';
  readonly renewed: 'heartbeat_at' | 'claimed_at';
  /**
   * Its answers are JSON, and are also recorded parsed (`response_body`): the code before migration
   * 019 replays an operator's key from that column alone, and may still run beside this code during
   * a rolling deployment.
   */
  readonly parsedBodyToo?: true;
}

/** The partners' keys (migrations 001, 006, 008): one row per partner and key. */
export const PARTNER_KEYS: KeyTable = { table: 'idempotency_keys', owner: 'partner_id', renewed: 'heartbeat_at' };
/** The operators' keys (migrations 012, 019): one row per key. */
export const OPERATOR_KEYS: KeyTable = { table: 'admin_idempotency_keys', renewed: 'claimed_at', parsedBodyToo: true };

/** A request claiming a key: its owner (the partner; none for an operator), the key, its route and request hash. */
export interface KeyRequest {
  partnerId?: string;
  key: string;
  route: string;
  requestHash: string;
}

/** A claim of a key held by this request: the row's `claim_id` makes it its holder's alone. */
export interface KeyClaim {
  partnerId?: string;
  key: string;
  claimId: string;
  /**
   * The upstream operation id of the operation (24 hex): the same for every claim of the key, so a
   * takeover or a retry after a 5xx carries the id of the first attempt.
   */
  operationId: string;
  /** True when an earlier attempt of the same request held this key (the upstream may have applied it). */
  resumed: boolean;
}

/** A recorded answer, replayed for a repeated key: the first answer's status, exact body bytes and replayed headers. */
export interface StoredAnswer {
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

/** What claiming a key found: a claim, the first answer to replay, another request's key, or one still running. */
export type KeyClaimOutcome =
  | { outcome: 'claimed'; claim: KeyClaim }
  | { outcome: 'replay'; response: StoredAnswer }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };

/** How long a claim is held without renewal before another attempt of its request may take it over, and how long its key is remembered. */
export interface ClaimTerms {
  leaseSeconds: number;
  ttlHours: number;
}

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

/**
 * A completed row as a replayable answer. Rows recorded before their table stored bytes (partners'
 * before migration 006, operators' before migration 019) only have the parsed body: it is answered
 * as `res.json` answered it.
 */
function storedAnswer(row: Pick<Row, 'response_status' | 'response_bytes' | 'response_headers' | 'response_body'>): StoredAnswer {
  const status = row.response_status!;
  if (row.response_bytes) return { status, body: row.response_bytes, headers: row.response_headers ?? {} };
  return {
    status,
    body: Buffer.from(JSON.stringify(row.response_body ?? null)),
    headers: { 'content-type': `${status >= 400 ? 'application/problem+json' : 'application/json'}; charset=utf-8` },
  };
}

/** A JSON answer as `res.json` writes it: what an answer recorded before it is sent must be, to be replayed byte for byte. */
export function jsonAnswer(status: number, body: unknown): StoredAnswer {
  return { status, body: Buffer.from(JSON.stringify(body)), headers: { 'content-type': 'application/json; charset=utf-8' } };
}

/**
 * The key-claim store of one {@link KeyTable}: the same statements for partners' and operators'
 * keys, scoped by the table's owner column when it has one. Claiming is one INSERT ... ON CONFLICT
 * DO NOTHING, so of concurrent duplicates exactly one proceeds.
 */
export class KeyClaimStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    private readonly db: Queryable,
    private readonly keys: KeyTable
  ) {
    this.sql = statements(keys);
  }

  /**
   * Claims `request.key`. A new key is claimed with a new operation id; a key of the same request
   * that was released, or whose lease ran out, is taken over with its operation id; a completed
   * one answers its recorded answer; a key of another request is a mismatch (freed first when it
   * was released or abandoned); one whose holder still runs is in progress.
   */
  async claim(request: KeyRequest, terms: ClaimTerms): Promise<KeyClaimOutcome> {
    const owner = this.owner(request);
    const { key, route, requestHash: hash } = request;
    // Expired keys are forgotten, and so is a released or abandoned claim of ANOTHER request (the
    // key is free for it). One of the SAME request is taken over below, keeping its operation id,
    // so that the upstream deduplicates the retry.
    await this.db.query(this.sql.forget, [key, ABANDONED_AFTER_SECONDS, terms.leaseSeconds, route, hash, ...owner]);
    const claimId = crypto.randomUUID();
    const taken = await this.db.query<{ operation_id: string }>(this.sql.takeOver, [key, ABANDONED_AFTER_SECONDS, terms.leaseSeconds, claimId, INSTANCE_ID, newObjectId(), route, hash, ...owner]);
    if (taken.rowCount === 1) return { outcome: 'claimed', claim: this.held(request, claimId, taken.rows[0].operation_id, true) };
    const operationId = newObjectId();
    const inserted = await this.db.query(this.sql.insert, [key, route, hash, terms.ttlHours, claimId, INSTANCE_ID, operationId, ...owner]);
    if (inserted.rowCount === 1) return { outcome: 'claimed', claim: this.held(request, claimId, operationId, false) };
    const existing = await this.db.query<Row>(this.sql.find, [key, ...owner]);
    const row = existing.rows[0];
    // Gone between the insert and the select (released and freed, or expired): the client retries.
    if (!row) return { outcome: 'in_progress' };
    if (row.request_hash !== hash || row.route !== route) return { outcome: 'mismatch' };
    if (row.state !== 'completed' || row.response_status === null) return { outcome: 'in_progress' };
    return { outcome: 'replay', response: storedAnswer(row) };
  }

  /**
   * The recorded answer of this key, when it was completed for the same route and request hash
   * and has not expired; undefined otherwise (unknown, running, another request). Reads only:
   * never claims, releases or deletes.
   */
  async completedAnswer(request: KeyRequest): Promise<StoredAnswer | undefined> {
    const found = await this.db.query<Row>(this.sql.completed, [request.key, request.route, request.requestHash, ...this.owner(request)]);
    const row = found.rows[0];
    return row ? storedAnswer(row) : undefined;
  }

  /**
   * Records the final answer of a claim, through `q` (the store's database, or the transaction of
   * the change it answers). False when the claim is no longer this request's (its lease ran out and
   * another attempt took it over): an operator's change then rolls back, so it is written once.
   */
  async complete(claim: KeyClaim, answer: StoredAnswer, q: Queryable = this.db): Promise<boolean> {
    const updated = await q.query(this.sql.complete, [claim.key, claim.claimId, answer.status, answer.body, JSON.stringify(answer.headers), ...this.owner(claim)]);
    return updated.rowCount === 1;
  }

  /**
   * Frees a claim that ended without a final answer (a 5xx, a refusal of the operator's change), so
   * that the same key can be retried at once. The row stays, marked `released`, so that the retry
   * of the same request reuses its operation id (the upstream may have applied the operation).
   */
  async release(claim: KeyClaim): Promise<void> {
    await this.db.query(this.sql.release, [claim.key, claim.claimId, ...this.owner(claim)]);
  }

  /** Renews the lease of claims this process holds (one statement for all of them). */
  async heartbeat(claims: readonly KeyClaim[]): Promise<void> {
    if (claims.length === 0) return;
    const owners = this.keys.owner ? [claims.map((c) => this.owner(c)[0]!)] : [];
    await this.db.query(this.sql.heartbeat, [claims.map((c) => c.key), claims.map((c) => c.claimId), ...owners]);
  }

  /**
   * Renews the lease of one claim every `everyMs` until the returned function is called: a request
   * that runs long (a slow issuer, waiting for a connection or a row lock) keeps its key, so a
   * retry is told 409 `idempotency_in_progress` instead of taking it over. A renewal that finds the
   * key no longer this claim's changes nothing. The returned function stops it, once any renewal in
   * flight has finished (so none lands after its holder has finished).
   */
  keep(claim: KeyClaim, everyMs: number, onError: (err: unknown) => void): () => Promise<void> {
    let pending: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      pending = this.heartbeat([claim]).catch(onError);
    }, everyMs);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await pending;
    };
  }

  /**
   * Deletes the keys that expired (in batches: the retention pass, every 10 minutes). A claim
   * already ignores an expired key and forgets it; this keeps the tables from holding the keys
   * nobody reuses.
   */
  async deleteExpired(batch = RETENTION_BATCH): Promise<number> {
    return deleteInBatches(this.db, this.sql.deleteExpired, [], batch);
  }

  /** The owner parameter of the table's statements: the partner for partners' keys, none for operators'. */
  private owner(of: { partnerId?: string }): string[] {
    if (!this.keys.owner) return [];
    if (of.partnerId === undefined) throw new Error(`${this.keys.table}: a key of this table belongs to a partner`);
    return [of.partnerId];
  }

  private held(request: KeyRequest, claimId: string, operationId: string, resumed: boolean): KeyClaim {
    return { ...(this.keys.owner ? { partnerId: request.partnerId } : {}), key: request.key, claimId, operationId, resumed };
  }
}

/**
 * The statements of a key table. Each takes the key as $1 and, for a table with an owner column,
 * the owner as its last parameter (the same statement text otherwise).
 */
function statements({ table, owner, renewed, parsedBodyToo }: KeyTable) {
  /** `AND <owner> = $n` for a table with an owner column, nothing otherwise. */
  const ownedBy = (n: number) => (owner ? ` AND ${owner} = $${n}` : '');
  // A claim's holder is gone when it stopped renewing for the lease, or (a claim made before
  // renewals were recorded) when it is older than ABANDONED_AFTER_SECONDS.
  const abandoned = `(state = 'in_progress' AND ${renewed} IS NULL AND created_at < now() - make_interval(secs => $2))
                  OR (state = 'in_progress' AND ${renewed} < now() - make_interval(secs => $3))`;
  return {
    forget: `DELETE FROM ${table} WHERE key = $1${ownedBy(6)}
               AND (expires_at < now()
                    OR ((route <> $4 OR request_hash <> $5) AND (state = 'released' OR ${abandoned})))`,
    takeOver: `UPDATE ${table}
                  SET state = 'in_progress', claim_id = $4, claimed_by = $5, ${renewed} = now(), operation_id = COALESCE(operation_id, $6)
                WHERE key = $1${ownedBy(9)} AND route = $7 AND request_hash = $8
                  AND (state = 'released' OR ${abandoned})
                RETURNING operation_id`,
    insert: `INSERT INTO ${table} (${owner ? `${owner}, ` : ''}key, route, request_hash, state, expires_at, claim_id, claimed_by, ${renewed}, operation_id)
             VALUES (${owner ? '$8, ' : ''}$1, $2, $3, 'in_progress', now() + make_interval(hours => $4), $5, $6, now(), $7)
             ON CONFLICT (${owner ? `${owner}, ` : ''}key) DO NOTHING`,
    find: `SELECT request_hash, route, state, response_status, response_bytes, response_headers, response_body
             FROM ${table} WHERE key = $1${ownedBy(2)}`,
    completed: `SELECT response_status, response_bytes, response_headers, response_body FROM ${table}
                 WHERE key = $1${ownedBy(4)} AND route = $2 AND request_hash = $3
                   AND state = 'completed' AND response_status IS NOT NULL AND expires_at >= now()`,
    complete: `UPDATE ${table} SET state = 'completed', response_status = $3, response_bytes = $4, response_headers = $5::jsonb${parsedBodyToo ? ", response_body = convert_from($4, 'UTF8')::jsonb" : ''}
                WHERE key = $1${ownedBy(6)} AND claim_id = $2 AND state = 'in_progress'`,
    release: `UPDATE ${table} SET state = 'released' WHERE key = $1${ownedBy(3)} AND claim_id = $2 AND state = 'in_progress'`,
    deleteExpired: `DELETE FROM ${table} WHERE (${owner ? `${owner}, ` : ''}key) IN (
                      SELECT ${owner ? `${owner}, ` : ''}key FROM ${table} WHERE expires_at < now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
    heartbeat: owner
      ? `UPDATE ${table} k SET ${renewed} = now()
           FROM unnest($1::text[], $2::text[], $3::text[]) AS held (key, claim_id, owner)
          WHERE k.${owner} = held.owner::char(24) AND k.key = held.key AND k.claim_id = held.claim_id AND k.state = 'in_progress'`
      : `UPDATE ${table} k SET ${renewed} = now()
           FROM unnest($1::text[], $2::text[]) AS held (key, claim_id)
          WHERE k.key = held.key AND k.claim_id = held.claim_id AND k.state = 'in_progress'`,
  };
}
