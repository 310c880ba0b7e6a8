import { AUDIT_COLUMNS, auditValues } from '../audit/audit-log';
import { commitByOf, DecisionTooLate, tooLate, type Clock } from '../authorizations/deadline';
import { recordedBefore } from './fenced';
import type { Database, Queryable } from '../db/database';
import { StatementParams } from '../db/statement-params';
import { eventStatement } from '../outbox/partner-events';
import type { Token, TokenHistoryEntry } from '../shapes/token';
import type { TokenizationClaim } from './claim';
import type { TokenizationRequest } from './contract-stub';
import { cardStateTokenization, tokenStatusOf, type TokenizationCard, type TokenizationDecision } from './decision';
import { CARD_EVENTS_LOCK, emitTokenEvent } from './events';
import { TOKEN_COLUMNS, tokenByReference, toToken, type TokenRow } from './store';
import { newVerification, verificationKey } from './verification';

/**
 * Recording a tokenization's decision (docs/plans/issue-35.md, "Exactly once", step 5): the claim
 * marked decided (fenced by its claim token), the token with the decision, its code's hash when it
 * needs one, the audit entry `card.token.decided` and the events `token.created` and
 * `token.verification_code`, all or nothing. Usually one statement with no transaction around it
 * ({@link recordInOneStatement}); when the card changed since the claim, one transaction that
 * decides again on the card as it is. Either commit runs the deferred `tokenization_decisions_in_time`
 * (migration 028): past the commit-by instant on the database's clock the whole recording rolls
 * back, so no decision is committed after its 503.
 */

export interface TokenizationRecordingDeps {
  db: Database;
  now: Clock;
}

/** What the recording did: the decision that stands (the card re-checked, a token the processor notified first) and whether this request recorded it. */
export interface TokenizationRecorded {
  decision: TokenizationDecision;
  tokenId: string;
  recorded: boolean;
}

/**
 * The card's state as the recording reads it under its share lock, and the partner's setting; the
 * statement sets the transaction's lock timeout first (its target list is computed below the row
 * lock, so the timeout holds for that lock's wait and every later one).
 */
async function cardNow(tx: Queryable, cardKey: string, lockTimeout: string): Promise<{ card: TokenizationCard; tokenizeBeforeActivation: boolean } | undefined> {
  const row = (
    await tx.query<{ partner_id: string; individual_id: string | null; tenant_id: string | null; status: string; status_code: string; tokenize_before_activation: boolean }>(
      `SELECT set_config('lock_timeout', $2, true) AS lock_timeout, c.partner_id, c.individual_id, c.tenant_id, c.status, c.status_code, p.tokenize_before_activation
         FROM cards c JOIN partners p ON p.id = c.partner_id WHERE c.card_key = $1 FOR SHARE OF c`,
      [cardKey, lockTimeout]
    )
  ).rows[0];
  if (!row) return undefined;
  return {
    card: { cardKey, partnerId: row.partner_id, individualId: row.individual_id, tenantId: row.tenant_id, status: row.status, statusCode: row.status_code },
    tokenizeBeforeActivation: row.tokenize_before_activation,
  };
}

/** The decision a token the processor made first stands for (an authorization's existing transaction, alike). */
function standing(row: TokenRow, ours: TokenizationDecision): TokenizationDecision {
  switch (row.status) {
    case 'requested':
      return ours;
    case 'active':
    case 'suspended':
      return ours.decision === 'approve' ? ours : { decision: 'approve', decidedBy: 'network', rule: 'token.exists' };
    case 'pending_verification':
      return ours.decision === 'require_verification' ? ours : { decision: 'require_verification', decidedBy: 'network', rule: 'token.exists' };
    default:
      return ours.decision === 'decline' ? ours : { decision: 'decline', declineReason: 'network_declined', decidedBy: 'network', rule: 'token.exists' };
  }
}

/** The audit entry of a recorded tokenization (`card.token.decided`): never the code, the endpoint's own reason kept here only. */
function decidedAudit(card: TokenizationCard, request: TokenizationRequest, tokenId: string, decision: TokenizationDecision): unknown[] {
  return auditValues({
    partnerId: card.partnerId,
    individualId: card.individualId ?? undefined,
    tenantId: card.tenantId ?? undefined,
    operation: 'card.token.decided',
    targetType: 'card',
    targetId: card.cardKey,
    requestId: `tokenize-${request.id}`,
    outcome: 'success',
    details: {
      tokenizationId: request.id,
      tokenId,
      walletProvider: request.walletProvider,
      decision: decision.decision,
      decidedBy: decision.decidedBy,
      networkVerdict: request.networkVerdict.decision,
      ...(decision.declineReason === undefined ? {} : { declineReason: decision.declineReason }),
      ...(decision.rule === undefined ? {} : { rule: decision.rule }),
      ...(decision.partnerLatencyMs === undefined ? {} : { partnerLatencyMs: decision.partnerLatencyMs }),
      // The endpoint's own reason for its decline (≤ 200 characters): here only, never answered.
      ...(decision.partnerReason === undefined ? {} : { partnerReason: decision.partnerReason }),
    },
  });
}

/**
 * The recording as one statement with no transaction around it (the purchases' shape,
 * gateway/authorizations/recording-statements.ts), for the common case: the card's status code and
 * its partner's `tokenizeBeforeActivation` are still what the claim read. Its CTEs run in the order
 * each reads the one before: the card under its share lock (the lock timeout set first), the gate,
 * the card's event lock, the claim's fence, the token, its audit entry, `token.created` and, with a
 * code, `token.verification_code`; the commit-by trigger fences its commit. `undefined` when the gate
 * did not pass (either changed since the claim, or the card is gone): nothing was written, and the
 * transaction's path decides on the card as it is now. A token the processor notified first (the
 * insert's conflict) is answered as the transaction's path answers it, in one more statement.
 */
async function recordInOneStatement(
  deps: TokenizationRecordingDeps,
  key: Buffer,
  claim: TokenizationClaim & { card: TokenizationCard },
  request: TokenizationRequest,
  decision: TokenizationDecision,
  answerBy: number
): Promise<TokenizationRecorded | undefined> {
  const { db, now } = deps;
  const commitBy = commitByOf(answerBy);
  if (now() >= commitBy) throw new DecisionTooLate();
  const card = claim.card;
  const at = new Date(now()).toISOString();
  const status = tokenStatusOf(decision.decision);
  const verification = status === 'pending_verification' ? newVerification(key, claim.tokenId, now()) : undefined;
  const history: TokenHistoryEntry[] = [{ status, at, by: decision.decidedBy, ...(decision.declineReason === undefined ? {} : { reason: decision.declineReason }) }];
  // The token as the row will read (./store.ts toToken): its times are the statement's own `at`.
  const token: Token = {
    _id: claim.tokenId,
    cardKey: card.cardKey,
    walletProvider: request.walletProvider,
    tokenRequestorId: request.tokenRequestorId,
    last4: request.last4,
    tokenExpDate: request.tokenExpDate,
    device: request.device,
    status,
    createdAt: at,
    updatedAt: at,
    history,
  };
  const params = new StatementParams();
  const p = (value: unknown) => params.add(value);
  const cardKey = p(card.cardKey);
  const partnerId = p(card.partnerId);
  const created = eventStatement({ type: 'token.created', partnerId: card.partnerId, cardKey: card.cardKey, data: { token } }, params, { prefix: 'created_', after: 'ins' });
  const code = verification
    ? eventStatement(
        { type: 'token.verification_code', partnerId: card.partnerId, cardKey: card.cardKey, data: { token, code: verification.code, expiresAt: verification.state.expiresAt } },
        params,
        { prefix: 'code_', after: 'created_ev' }
      )
    : undefined;
  const text = `WITH card AS MATERIALIZED (
      SELECT set_config('lock_timeout', ${p(`${Math.max(1, commitBy - now())}ms`)}, true) AS lock_timeout, c.status_code, p.tokenize_before_activation
        FROM cards c JOIN partners p ON p.id = c.partner_id WHERE c.card_key = ${cardKey} FOR SHARE OF c
    ), gate AS MATERIALIZED (
      SELECT 1 AS passed FROM card WHERE card.status_code = ${p(card.statusCode)} AND card.tokenize_before_activation = ${p(claim.tokenizeBeforeActivation)}
    ), locked AS MATERIALIZED (
      SELECT pg_advisory_xact_lock(hashtextextended('evt:' || ${partnerId}::text || ':' || ${cardKey}::text, 0)) FROM gate
    ), fenced AS (
      UPDATE tokenization_decisions SET state = 'decided', decision = ${p(JSON.stringify(decision))}::jsonb, commit_by = ${p(new Date(commitBy).toISOString())}::timestamptz, decided_at = now()
       WHERE tokenization_id = ${p(request.id)} AND claim_token = ${p(claim.token)} AND state = 'deciding' AND EXISTS (SELECT 1 FROM locked)
      RETURNING 1
    ), ins AS (
      INSERT INTO tokens (id, partner_id, card_key, individual_id, tenant_id, processor_ref, tokenization_id, wallet_provider, token_requestor_id, last4, token_exp_date,
                          device, status, history, version, verification, created_at, updated_at)
      SELECT ${p(claim.tokenId)}, ${partnerId}, ${cardKey}, ${p(card.individualId)}, ${p(card.tenantId)}, ${p(request.tokenReference)}, ${p(request.id)}, ${p(request.walletProvider)},
             ${p(request.tokenRequestorId)}, ${p(request.last4)}, ${p(request.tokenExpDate)}, ${p(JSON.stringify(request.device))}::jsonb, ${p(status)}, ${p(JSON.stringify(history))}::jsonb, 0,
             ${p(verification ? JSON.stringify(verification.state) : null)}::jsonb, ${p(at)}::timestamptz, ${p(at)}::timestamptz
        FROM fenced
      ON CONFLICT DO NOTHING RETURNING id
    ), audited AS (
      INSERT INTO audit_log (${AUDIT_COLUMNS}) SELECT ${params.list(decidedAudit(card, request, claim.tokenId, decision))}::jsonb FROM ins RETURNING 1
    ), ${created.ctes}${code ? `, ${code.ctes}` : ''}
    SELECT (SELECT count(*) FROM gate)::int AS passed, (SELECT count(*) FROM fenced)::int AS fenced, (SELECT count(*) FROM ins)::int AS inserted,
           (SELECT count(*) FROM audited)::int AS audited, ${created.columns}${code ? `, ${code.columns}` : ''}`;
  let row: { passed: number; fenced: number; inserted: number };
  try {
    row = (await db.query<{ passed: number; fenced: number; inserted: number }>(text, params.values)).rows[0]!;
  } catch (err) {
    if (tooLate(err)) throw new DecisionTooLate(true);
    throw err;
  }
  if (row.passed === 0) return undefined;
  // The claim was taken over (its holder fenced out): nothing of this recording stands.
  if (row.fenced === 0) throw new DecisionTooLate(true);
  if (row.inserted === 1) return { decision, tokenId: claim.tokenId, recorded: true };
  return standingOver(db, request, decision, claim.tokenId);
}

/**
 * The answer when the token's insert met a token of the same reference (the processor's stand-in
 * notified it first, or the id was decided before its decision row went with retention): that token
 * stands, the recorded decision is made to say so, and the answer is what it says.
 */
async function standingOver(q: Queryable, request: TokenizationRequest, decision: TokenizationDecision, tokenId: string): Promise<TokenizationRecorded> {
  const existing = await tokenByReference(q, request.tokenReference);
  const stands = existing ? standing(existing, decision) : decision;
  if (stands !== decision) await q.query('UPDATE tokenization_decisions SET decision = $2::jsonb WHERE tokenization_id = $1', [request.id, JSON.stringify(stands)]);
  return { decision: stands, tokenId: existing?.id ?? tokenId, recorded: true };
}

/**
 * Records `decision` for the claim, within the commit-by instant of `answerBy`. The card is read
 * again under `FOR SHARE` and step 1 taken again on what it says now: a lock committed since the
 * claim's read makes the decision `card_locked` (the cascade then has nothing to suspend, and a lock
 * waiting for this share lock finds the token to suspend). {@link DecisionTooLate} when the budget
 * ran out before sending, or (`byDatabase`) the claim was taken over, a lock was not had in time, or
 * the commit came past the instant.
 */
export async function recordTokenization(
  deps: TokenizationRecordingDeps,
  claim: TokenizationClaim,
  request: TokenizationRequest,
  first: TokenizationDecision,
  answerBy: number
): Promise<TokenizationRecorded> {
  const { db, now } = deps;
  const key = await verificationKey(db);
  if (claim.card) {
    const once = await recordInOneStatement(deps, key, { ...claim, card: claim.card }, request, first, answerBy);
    if (once) return once;
  }
  return recordedBefore(
    db,
    now,
    answerBy,
    async (tx, commitBy, lockTimeout) => {
      let decision = first;
      const read = claim.card ? await cardNow(tx, request.cardId, lockTimeout()) : undefined;
      if (claim.card) {
        // Step 1 again, on the card as it is now (under its share lock): a lock since the claim's read declines.
        const refused = cardStateTokenization({ card: read?.card, tokenizeBeforeActivation: read?.tokenizeBeforeActivation ?? false, controls: claim.controls, request });
        if (refused) decision = refused;
      }
      // The fence of the claim and, for a card, the lock that orders the card's events (taken before the
      // token's row exists, as every writer of the card's tokens takes it: ./events.ts), in one statement;
      // without a card read, the lock timeout is set here.
      const fenced = (
        await tx.query<{ fenced: number }>(
          `WITH fenced AS (
             UPDATE tokenization_decisions SET state = 'decided', decision = $2::jsonb, commit_by = $3::timestamptz, decided_at = now()
              WHERE tokenization_id = $1 AND claim_token = $4 AND state = 'deciding' RETURNING 1
           ) SELECT (SELECT count(*) FROM fenced)::int AS fenced,
                    CASE WHEN $5::text IS NULL THEN set_config('lock_timeout', $7, true) END AS lock_timeout,
                    CASE WHEN $5::text IS NOT NULL THEN ${CARD_EVENTS_LOCK('$5', '$6')} END AS events_locked`,
          [request.id, JSON.stringify(decision), new Date(commitBy).toISOString(), claim.token, read?.card.partnerId ?? null, read?.card.cardKey ?? null, lockTimeout()]
        )
      ).rows[0]!;
      // The claim was taken over (its holder fenced out): nothing of this recording stands.
      if (fenced.fenced === 0) throw new DecisionTooLate(true);
      if (!read) return { decision, tokenId: claim.tokenId, recorded: true };
      const { card } = read;
      const status = tokenStatusOf(decision.decision);
      const verification = status === 'pending_verification' ? newVerification(key, claim.tokenId, now()) : undefined;
      const history: TokenHistoryEntry[] = [
        { status, at: new Date(now()).toISOString(), by: decision.decidedBy, ...(decision.declineReason === undefined ? {} : { reason: decision.declineReason }) },
      ];
      // The token and its audit entry `card.token.decided` (written only with the token) in one statement.
      const audit = decidedAudit(card, request, claim.tokenId, decision);
      const inserted = (
        await tx.query<TokenRow>(
          `WITH ins AS (
             INSERT INTO tokens (id, partner_id, card_key, individual_id, tenant_id, processor_ref, tokenization_id, wallet_provider, token_requestor_id, last4, token_exp_date,
                                 device, status, history, version, verification)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14::jsonb, 0, $15::jsonb)
             ON CONFLICT DO NOTHING RETURNING ${TOKEN_COLUMNS}
           ), audited AS (
             INSERT INTO audit_log (${AUDIT_COLUMNS}) SELECT $16, $17, $18, $19, $20, $21, $22, $23, $24, $25::jsonb FROM ins RETURNING 1
           ) SELECT ins.*, (SELECT count(*) FROM audited) AS audited FROM ins`,
          [
            claim.tokenId,
            card.partnerId,
            card.cardKey,
            card.individualId,
            card.tenantId,
            request.tokenReference,
            request.id,
            request.walletProvider,
            request.tokenRequestorId,
            request.last4,
            request.tokenExpDate,
            JSON.stringify(request.device),
            status,
            JSON.stringify(history),
            verification ? JSON.stringify(verification.state) : null,
            ...audit,
          ]
        )
      ).rows[0];
      if (!inserted) return standingOver(tx, request, decision, claim.tokenId);
      const token = toToken(inserted);
      await emitTokenEvent(tx, { type: 'token.created', partnerId: card.partnerId, cardKey: card.cardKey, data: { token } });
      if (verification) {
        await emitTokenEvent(tx, {
          type: 'token.verification_code',
          partnerId: card.partnerId,
          cardKey: card.cardKey,
          data: { token, code: verification.code, expiresAt: verification.state.expiresAt },
        });
      }
      return { decision, tokenId: claim.tokenId, recorded: true };
    },
    { setsLockTimeout: true }
  );
}
