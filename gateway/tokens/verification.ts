import crypto from 'node:crypto';
import { DecisionTooLate, type Clock } from '../authorizations/deadline';
import { recordedBefore } from './fenced';
import type { Database, Queryable } from '../db/database';
import { gatewayKey } from '../db/gateway-keys';
import { applyToken } from './apply';
import type { VerificationAnswer, VerificationRequest } from './contract-stub';
import { lockCardEvents } from './events';
import { TOKEN_COLUMNS, tokenByReference, upstreamOf, type TokenRow } from './store';

/**
 * The one-time verification code of a `require_verification` tokenization (docs/tokens.md, "The
 * verification code"; upstreams.md 10.4): 6 digits from `crypto.randomInt`, valid 10 minutes, 3
 * attempts. The gateway keeps only a keyed hash of it (HMAC-SHA256 under the database's
 * `token-verification` key of `gateway_keys`, bound to the token's id) on the token's row while it
 * waits; the code itself is in the `token.verification_code` event only (until `expiresAt`, then
 * {@link scrubExpiredCodes} replaces it by null), and in no log line, audit entry or other row.
 */

/** How long a code can be used. */
export const VERIFICATION_TTL_MS = 10 * 60_000;
/** Attempts a code allows; the last wrong one declines the token. */
export const VERIFICATION_ATTEMPTS = 3;

/** What a token waiting for its code holds (`tokens.verification`): never the code. */
export interface VerificationState {
  hash: string;
  expiresAt: string;
  attemptsLeft: number;
}

const KEY_NAME = 'token-verification';
/** The database's verification key, made on first use (every instance reads the same one). */
export function verificationKey(db: Queryable): Promise<Buffer> {
  return gatewayKey(db, KEY_NAME);
}

/** The keyed hash of `code` for the token `tokenId` (hex). */
export function codeHash(key: Buffer, tokenId: string, code: string): string {
  return crypto.createHmac('sha256', key).update(`${tokenId}\n${code}`).digest('hex');
}

/** Whether `code` is the one `hash` was made of, in constant time (for any code of any length). */
export function codeMatches(key: Buffer, tokenId: string, code: string, hash: string): boolean {
  const given = Buffer.from(codeHash(key, tokenId, code), 'hex');
  const held = Buffer.from(hash, 'hex');
  return given.length === held.length && crypto.timingSafeEqual(given, held);
}

/** A new code for the token and what its row keeps of it (the hash, the expiry, the attempts). */
export function newVerification(key: Buffer, tokenId: string, now: number): { code: string; state: VerificationState } {
  const code = crypto.randomInt(0, 1_000_000).toString().padStart(6, '0');
  return { code, state: { hash: codeHash(key, tokenId, code), expiresAt: new Date(now + VERIFICATION_TTL_MS).toISOString(), attemptsLeft: VERIFICATION_ATTEMPTS } };
}

/** What a verification attempt decides on the token's row, pure. */
export function judgeAttempt(
  key: Buffer,
  row: Pick<TokenRow, 'id' | 'status'> & { verification: VerificationState | string | null },
  code: string,
  now: number
): { answer: VerificationAnswer; next: { kind: 'active' } | { kind: 'declined'; reason: 'verification_failed' | 'verification_expired' } | { kind: 'attempt'; attemptsLeft: number } | { kind: 'none' } } {
  const state = typeof row.verification === 'string' ? (JSON.parse(row.verification) as VerificationState) : row.verification;
  if (row.status !== 'pending_verification' || !state) return { answer: { verified: false, reason: 'not_pending', attemptsLeft: 0 }, next: { kind: 'none' } };
  if (state.attemptsLeft <= 0) return { answer: { verified: false, reason: 'attempts_exhausted', attemptsLeft: 0 }, next: { kind: 'declined', reason: 'verification_failed' } };
  if (now > Date.parse(state.expiresAt)) return { answer: { verified: false, reason: 'expired', attemptsLeft: 0 }, next: { kind: 'declined', reason: 'verification_expired' } };
  if (codeMatches(key, row.id, code, state.hash)) return { answer: { verified: true }, next: { kind: 'active' } };
  const attemptsLeft = state.attemptsLeft - 1;
  return {
    answer: { verified: false, reason: 'wrong_code', attemptsLeft },
    next: attemptsLeft === 0 ? { kind: 'declined', reason: 'verification_failed' } : { kind: 'attempt', attemptsLeft },
  };
}

/** What verifies: the database and the clock budgets and expiry are counted on. */
export interface VerificationDeps {
  db: Database;
  now: Clock;
}

/**
 * Answers one verification attempt (10.4) by `answerBy`, counted once per attempt id across
 * instances: in one transaction, the attempt's row first (a repeat's insert waits for the first
 * one's commit and then reads its answer; nothing else is written), then the token's row under its
 * card's event lock and its own, the code judged ({@link judgeAttempt}), and the token's change
 * through `applyToken` (`active` by `verification`; `declined` with `verification_failed` or
 * `verification_expired`) or its attempts counted down. The attempt's row is fenced at COMMIT by its
 * commit-by instant (migration 028): past it, nothing is recorded ({@link DecisionTooLate}, 503).
 * `recorded`: this request's own transaction wrote the attempt.
 */
export async function verifyAttempt(deps: VerificationDeps, request: VerificationRequest, answerBy: number): Promise<{ answer: VerificationAnswer; recorded: boolean }> {
  const { db, now } = deps;
  const key = await verificationKey(db);
  return recordedBefore(db, now, answerBy, async (tx, commitBy) => {
    const inserted = await tx.query(
      `INSERT INTO token_verification_attempts (verification_id, token_id, outcome, commit_by)
       VALUES ($1, COALESCE((SELECT id FROM tokens WHERE processor_ref = $2), ''), '{}'::jsonb, $3::timestamptz)
       ON CONFLICT (verification_id) DO NOTHING RETURNING 1`,
      [request.id, request.tokenReference, new Date(commitBy).toISOString()]
    );
    if ((inserted.rowCount ?? 0) === 0) {
      const first = await tx.query<{ outcome: VerificationAnswer | string }>('SELECT outcome FROM token_verification_attempts WHERE verification_id = $1', [request.id]);
      const outcome = first.rows[0]?.outcome;
      if (outcome === undefined) throw new DecisionTooLate();
      return { answer: typeof outcome === 'string' ? (JSON.parse(outcome) as VerificationAnswer) : outcome, recorded: false };
    }
    const answer = await judgeAndApply(tx, key, request, now());
    await tx.query('UPDATE token_verification_attempts SET outcome = $2::jsonb WHERE verification_id = $1', [request.id, JSON.stringify(answer)]);
    return { answer, recorded: true };
  });
}

async function judgeAndApply(tx: Queryable, key: Buffer, request: VerificationRequest, at: number): Promise<VerificationAnswer> {
  const seen = await tokenByReference(tx, request.tokenReference);
  if (!seen) return { verified: false, reason: 'not_pending', attemptsLeft: 0 };
  await lockCardEvents(tx, seen.partner_id, seen.card_key);
  const row = (
    await tx.query<TokenRow & { verification: VerificationState | string | null }>(`SELECT ${TOKEN_COLUMNS}, verification FROM tokens WHERE id = $1 FOR UPDATE`, [seen.id])
  ).rows[0]!;
  const { answer, next } = judgeAttempt(key, row, request.code, at);
  const origin = { via: 'verification' as const, verificationId: request.id };
  if (next.kind === 'active') await applyToken(tx, { ...upstreamOf(row), status: 'active' }, origin);
  else if (next.kind === 'declined') await applyToken(tx, { ...upstreamOf(row), status: 'declined' }, { ...origin, reason: next.reason });
  else if (next.kind === 'attempt') await tx.query(`UPDATE tokens SET verification = jsonb_set(verification, '{attemptsLeft}', to_jsonb($2::int)) WHERE id = $1`, [row.id, next.attemptsLeft]);
  return answer;
}

/**
 * Replaces by null the code of every `token.verification_code` event whose `expiresAt` has passed
 * (docs/tokens.md, "What is stored"): the retention pass, every 10 minutes, so that a code is held
 * at most about 20 minutes. The stored envelope keeps its bytes otherwise (its members in their
 * order). Reads only the events of the last day that are older than a code's life (the retention
 * index on `created_at`). Returns how many it scrubbed.
 */
export async function scrubExpiredCodes(db: Queryable, now = Date.now()): Promise<number> {
  const rows = await db.query<{ seq: string; payload: string }>(
    `SELECT seq, payload FROM partner_events
      WHERE type = 'token.verification_code' AND created_at >= $1::timestamptz - interval '1 day' AND created_at < $1::timestamptz - make_interval(secs => $2)
        AND payload NOT LIKE '%"code":null%'
      ORDER BY created_at LIMIT 1000`,
    [new Date(now).toISOString(), VERIFICATION_TTL_MS / 1000]
  );
  let scrubbed = 0;
  for (const row of rows.rows) {
    const envelope = JSON.parse(row.payload) as { data: { code: string | null; expiresAt: string } };
    if (envelope.data.code === null || Date.parse(envelope.data.expiresAt) > now) continue;
    envelope.data.code = null;
    const updated = await db.query("UPDATE partner_events SET payload = $2 WHERE seq = $1 AND type = 'token.verification_code'", [row.seq, JSON.stringify(envelope)]);
    scrubbed += updated.rowCount ?? 0;
  }
  return scrubbed;
}
