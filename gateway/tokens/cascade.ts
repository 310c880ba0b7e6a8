import crypto from 'node:crypto';
import type { CardReplaced, CardStateListener, CardStatusChanged } from '../cards/card-state-listener';
import type { Queryable } from '../db/database';
import { enqueue, type TokenOperationPayload } from '../outbox/outbox';
import { emitTokenEvent } from './events';
import { tokenCourse, type TokenCourse } from './decision';
import { TOKEN_COLUMNS, toToken, type TokenRow } from './store';

export { tokenCourse, type TokenCourse } from './decision';

/**
 * The cascade (docs/tokens.md "The cascade"; docs/plans/issue-35.md): a card's state governs its
 * network tokens. In the card change's own transaction, under the card's row lock, the listener
 * records which tokens the change concerns and what for (the `card_state_hold` of the tokens it
 * suspends, the card a moved token stands for), and queues the processor's token operations in the
 * outbox; they are sent after the commit (./operations.ts delivers them and applies the answers
 * with `applyToken`). The token statuses are the processor's: they converge after the card's 200,
 * while a purchase with any of the tokens is decided by the card's row at once (the authorization
 * decision reads the card through the token).
 */

/** The partner's `tokenizeBeforeActivation`, read only when the code makes it matter (`I1`). */
async function courseOf(tx: Queryable, partnerId: string, statusCode: string): Promise<TokenCourse> {
  if (statusCode !== 'I1') return tokenCourse(statusCode, false);
  const row = (await tx.query<{ tokenize_before_activation: boolean }>('SELECT tokenize_before_activation FROM partners WHERE id = $1', [partnerId])).rows[0];
  return tokenCourse(statusCode, row?.tokenize_before_activation === true);
}

/** A new operation id for the processor (its `Idempotency-Key`, the same on every attempt of the message). */
function newOperationId(): string {
  return `tokop_${crypto.randomBytes(12).toString('hex')}`;
}

interface Concerned {
  id: string;
  processor_ref: string;
  status: string;
  suspended_by: string | null;
}

/** Queues one token operation per token, in the given order; returns their outbox ids. */
async function queueOperations(
  tx: Queryable,
  tokens: readonly Concerned[],
  action: TokenOperationPayload['action'],
  context: { partnerId: string; requestId: string },
  reason: string
): Promise<string[]> {
  const ids: string[] = [];
  for (const token of tokens) {
    const payload: TokenOperationPayload = { operationId: newOperationId(), tokenId: token.id, tokenReference: token.processor_ref, action, requestedBy: 'card_state', reason };
    ids.push(await enqueue(tx, { kind: 'processing.token_operation', payload }, context));
  }
  return ids;
}

/**
 * Holds the card's tokens for its state: each `active` one, and each one a `card_state` suspension
 * still holds at the processor though an unlock released it (its resume not applied yet), gets
 * `card_state_hold` and a `suspend`. Tokens held already are left (a lock after a temporary lock).
 */
async function hold(tx: Queryable, cardKey: string, context: { partnerId: string; requestId: string }, reason: string): Promise<string[]> {
  const rows = await tx.query<Concerned>(
    `UPDATE tokens SET card_state_hold = true
      WHERE card_key = $1 AND NOT card_state_hold AND (status = 'active' OR (status = 'suspended' AND suspended_by = 'card_state'))
      RETURNING id, processor_ref, status, suspended_by`,
    [cardKey]
  );
  return queueOperations(tx, sortById(rows.rows), 'suspend', context, reason);
}

/**
 * Releases the card's hold: exactly the tokens holding it are resumed, unless the partner has
 * suspended them since (theirs stay suspended).
 */
async function release(tx: Queryable, cardKey: string, context: { partnerId: string; requestId: string }, reason: string): Promise<string[]> {
  const rows = await tx.query<Concerned>(
    `UPDATE tokens SET card_state_hold = false WHERE card_key = $1 AND card_state_hold RETURNING id, processor_ref, status, suspended_by`,
    [cardKey]
  );
  const resumed = sortById(rows.rows).filter((t) => t.suspended_by !== 'partner' && t.status !== 'deactivated' && t.status !== 'declined');
  return queueOperations(tx, resumed, 'resume', context, reason);
}

/** Deactivates every token of the card that is not final yet. */
async function deactivateAll(tx: Queryable, cardKey: string, context: { partnerId: string; requestId: string }, reason: string): Promise<string[]> {
  const rows = await tx.query<Concerned>(
    `UPDATE tokens SET card_state_hold = false WHERE card_key = $1 AND status NOT IN ('deactivated', 'declined') RETURNING id, processor_ref, status, suspended_by`,
    [cardKey]
  );
  return queueOperations(tx, sortById(rows.rows), 'deactivate', context, reason);
}

/** The rows an UPDATE answered, in a stable order (their ids: creation order). */
function sortById<T extends { id: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A card status change's course for its tokens. */
async function statusChanged(tx: Queryable, change: CardStatusChanged): Promise<string[]> {
  if (change.previousStatusCode === change.statusCode) return [];
  const context = { partnerId: change.partnerId, requestId: change.requestId };
  const reason = `card ${change.status}`;
  switch (await courseOf(tx, change.partnerId, change.statusCode)) {
    case 'usable':
      return release(tx, change.cardKey, context, reason);
    case 'hold':
      return hold(tx, change.cardKey, context, reason);
    case 'deactivate':
      return deactivateAll(tx, change.cardKey, context, reason);
  }
}

/**
 * A replacement or a re-issue, as networks do on a card update: the `active` and `suspended` tokens
 * move to the new card (their `cardKey`, a history entry with the status unchanged, `by:
 * card_state`, and a `token.updated` `card_updated`, ordered on the new card after its
 * `card.created`), and one `processing.token_move` is queued; the `requested` and
 * `pending_verification` ones (their request was for the old card) are deactivated. Then the moved
 * tokens follow the new card's state: a new card not usable yet (`I1` without the setting) holds the
 * active ones; a usable one releases those the old card's state held.
 */
async function replaced(tx: Queryable, move: CardReplaced): Promise<string[]> {
  const context = { partnerId: move.partnerId, requestId: move.requestId };
  const at = new Date().toISOString();
  const moved = await tx.query<TokenRow>(
    `UPDATE tokens SET card_key = $2, updated_at = now(),
            history = history || jsonb_build_array(jsonb_build_object('status', status, 'at', $3::text, 'by', 'card_state', 'reason', $4::text))
      WHERE card_key = $1 AND status IN ('active', 'suspended') RETURNING ${TOKEN_COLUMNS}`,
    [move.fromCardKey, move.toCardKey, at, `card ${move.reason}`]
  );
  const ids: string[] = [];
  for (const row of sortById(moved.rows)) {
    const token = toToken(row);
    await emitTokenEvent(tx, {
      type: 'token.updated',
      partnerId: row.partner_id,
      cardKey: move.toCardKey,
      ...(move.eventNamesRequest ? { requestId: move.requestId } : {}),
      data: { token, previousStatus: row.status, change: 'card_updated' },
    });
  }
  if (moved.rows.length > 0) {
    ids.push(
      await enqueue(tx, { kind: 'processing.token_move', payload: { operationId: newOperationId(), cardKey: move.fromCardKey, toCardKey: move.toCardKey, reason: move.reason } }, context)
    );
  }
  ids.push(
    ...(await queueOperations(
      tx,
      sortById(
        (
          await tx.query<Concerned>(
            `UPDATE tokens SET card_state_hold = false WHERE card_key = $1 AND status IN ('requested', 'pending_verification') RETURNING id, processor_ref, status, suspended_by`,
            [move.fromCardKey]
          )
        ).rows
      ),
      'deactivate',
      context,
      `card ${move.reason}`
    ))
  );
  if (moved.rows.length > 0) {
    const course = await courseOf(tx, move.partnerId, move.toStatusCode);
    const reason = `card ${move.reason}`;
    if (course === 'hold') ids.push(...(await hold(tx, move.toCardKey, context, reason)));
    if (course === 'usable') ids.push(...(await release(tx, move.toCardKey, context, reason)));
  }
  return ids;
}

/** The cascade as the cards domain's listener (wired by the composition root). */
export function createTokenCascade(): CardStateListener {
  return { statusChanged, replaced };
}
