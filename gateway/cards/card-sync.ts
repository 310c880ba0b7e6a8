import { every } from '../background/every';
import { recordAudit } from '../audit/audit-log';
import type { Database, Queryable } from '../db/database';
import { GatewayError } from '../errors';
import type { Logger } from '../logging/logger';
import { enqueue } from '../outbox/outbox';
import { emitEvent, type StatusSource } from '../outbox/partner-events';
import type { UpstreamClients } from '../upstreams';
import type { CardCreatedEvent, IssuerCard } from '../../contracts/upstreams';
import { cardStatusOf } from './card-status';
import { CARD_COLUMNS, maskedCardNumber, recordStatusChange, toCard, type Card, type CardRow } from './card-store';
import type { CardStateFollowers, CardStateListener } from './card-state-listener';

/** Operation name of a status change the issuer made without us knowing (history and audit). */
export const ISSUER_SYNC_OPERATION = 'card.issuer-sync';

interface SyncRow extends CardRow {
  individual_id: string | null;
  tenant_id: string | null;
  replaced_from: string | null;
  issuer_check_due: boolean;
  issuer_check_source: Exclude<StatusSource, 'issuer'> | null;
  issuer_check_target: string | null;
}

export function cardCreatedEvent(card: Card, previousCardKey: string, partnerId: string): CardCreatedEvent {
  return {
    event: 'card_created',
    cardKey: card.cardKey,
    previousCardKey,
    cardMask: card.cardMask,
    type: card.type,
    ownerType: card.ownerType,
    ownerId: card.ownerId,
    partnerId,
    occurredAt: new Date().toISOString(),
    ...(card.holderClientCode ? { accountId: card.holderClientCode } : {}),
    currency: card.currency,
  };
}

export function statusOrFail(code: string) {
  const status = cardStatusOf(code);
  if (!status) throw new GatewayError('upstream_error', 'The card issuer platform answered an unknown status code', { extensions: { upstream: 'issuer' } });
  return status;
}

/** What completes a replacement: the request (or reconciliation) it belongs to. */
export interface ReplacementContext {
  oldKey: string;
  newKey: string;
  /** Status of the card before the replace (history's old status). */
  oldStatus: CardRow['status'];
  oldStatusCode: string;
  partnerId: string;
  individualId?: string;
  tenantId?: string;
  reason: string | null;
  requestId: string;
  /** Completed after the replace request (its next access, the reconciler): the event names no request. */
  reconciled?: boolean;
}

/**
 * Second phase of a replace, in the caller's transaction: the record (already under the new key)
 * gets the new card's mask, status and expiry, the status history and audit entries and the
 * partner's `card.created` event (`reason: replaced`) are written and the `card_created` webhook is
 * queued; then, with `cardState`, the card's followers are told (its network tokens move to the new
 * card, after its `card.created` and `card_created`). Returns the card, the `card_created` message's
 * outbox id and every id to deliver (that one first, then the followers'), or a null outbox id and
 * none to deliver when the replacement was already
 * completed (by the handler, the next access or the reconciler: they can race), in which case
 * nothing is written twice.
 */
export async function completeReplacement(tx: Queryable, fresh: IssuerCard, c: ReplacementContext, cardState?: CardStateListener): Promise<{ card: Card; outboxId: string | null; outboxIds: string[] }> {
  const status = statusOrFail(fresh.statusCode);
  const rows = await tx.query<CardRow>(
    `UPDATE cards SET card_mask = $2, status = $3, status_code = $4, exp_date = $5, replaced_from = NULL, issuer_check_due = false,
            issuer_check_source = NULL, issuer_check_target = NULL, issuer_checked_at = now(), updated_at = now()
      WHERE card_key = $1 AND replaced_from = $6 RETURNING ${CARD_COLUMNS}`,
    [c.newKey, maskedCardNumber(fresh.cardMask), status, fresh.statusCode, fresh.expDate, c.oldKey]
  );
  if (rows.rowCount === 0) {
    const done = await tx.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_key = $1`, [c.newKey]);
    return { card: toCard(done.rows[0]), outboxId: null, outboxIds: [] };
  }
  const card = toCard(rows.rows[0]);
  await recordStatusChange(tx, {
    cardKey: c.newKey,
    partnerId: c.partnerId,
    individualId: c.individualId,
    oldStatus: c.oldStatus,
    newStatus: status,
    oldStatusCode: c.oldStatusCode,
    newStatusCode: fresh.statusCode,
    operation: 'card.replace',
    reason: c.reason,
    requestId: c.requestId,
  });
  await recordAudit(tx, {
    partnerId: c.partnerId,
    individualId: c.individualId,
    tenantId: c.tenantId,
    operation: 'card.replace',
    targetType: 'card',
    targetId: c.oldKey,
    requestId: c.requestId,
    outcome: 'success',
    details: { previousCardKey: c.oldKey, cardKey: c.newKey, cardMask: fresh.cardMask, ...(c.reconciled ? { reconciled: true } : {}) },
  });
  await emitEvent(tx, {
    type: 'card.created',
    partnerId: c.partnerId,
    cardKey: c.newKey,
    ...(c.reconciled ? {} : { requestId: c.requestId }),
    data: { card, reason: 'replaced', previousCardKey: c.oldKey },
  });
  const outboxId = await enqueue(tx, { kind: 'processing.card_created', payload: cardCreatedEvent(card, c.oldKey, c.partnerId) }, { partnerId: c.partnerId, requestId: c.requestId });
  const followed =
    (await cardState?.replaced(tx, {
      fromCardKey: c.oldKey,
      toCardKey: c.newKey,
      partnerId: c.partnerId,
      toStatusCode: fresh.statusCode,
      reason: 'replaced',
      requestId: c.requestId,
      eventNamesRequest: !c.reconciled,
    })) ?? [];
  return { card, outboxId, outboxIds: [outboxId, ...followed] };
}

/** What {@link syncCardWithIssuer} found. */
export type SyncOutcome = 'unchanged' | 'repaired' | 'completed' | 'missing';

/** With `cardState`, the card's followers change with what the sync writes (docs/tokens.md "The cascade"); `deliver` sends what was queued. */
export interface SyncDeps extends CardStateFollowers {
  db: Database;
  clients: UpstreamClients;
  log: Logger;
}

/**
 * Marks a card whose last issuer call ended without knowing whether the issuer applied it. With
 * `expect`, the status code that call asked for and who asked: if the sync then finds the card at
 * that code, its `card.status_changed` event is that source's, not the issuer's.
 */
export async function markIssuerCheckDue(db: Queryable, cardKey: string, expect?: { source: Exclude<StatusSource, 'issuer'>; target: string }): Promise<void> {
  await db.query('UPDATE cards SET issuer_check_due = true, issuer_check_source = $2, issuer_check_target = $3 WHERE card_key = $1', [
    cardKey,
    expect?.source ?? null,
    expect?.target ?? null,
  ]);
}

/**
 * Reads the issuer's card and brings our record to it: a replacement recorded before its new card
 * was read is completed; a status that differs is taken over as an issuer-side change (status
 * history and audit entry `card.issuer-sync`, and a `card.status_changed` event whose source is the
 * issuer, or the partner when it is the code an unanswered call of the partner asked for). Only a record still in the state read is changed
 * (a concurrent operation wins). An issuer that does not know the card leaves the record as it is.
 * Throws what the issuer call threw (other than its 404).
 */
export async function syncCardWithIssuer(deps: SyncDeps, cardKey: string, requestId: string, via: IssuerNotice = {}): Promise<SyncOutcome> {
  const select = `SELECT ${CARD_COLUMNS}, individual_id, tenant_id, replaced_from, issuer_check_due, issuer_check_source, issuer_check_target FROM cards WHERE card_key = $1`;
  const before = (await deps.db.query<SyncRow>(select, [cardKey])).rows[0];
  if (!before) return 'missing';
  let fresh: IssuerCard;
  try {
    fresh = await deps.clients.issuer.getCard({ requestId }, cardKey);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'not_found') {
      await deps.db.query('UPDATE cards SET issuer_checked_at = now() WHERE card_key = $1', [cardKey]);
      deps.log.warn({ cardKey, requestId }, 'the card issuer does not know a card we hold; left as it is');
      return 'missing';
    }
    throw err;
  }
  const status = statusOrFail(fresh.statusCode);
  const outcome = await deps.db.transaction(async (tx): Promise<{ outcome: SyncOutcome; outboxIds: string[] }> => {
    const row = (await tx.query<SyncRow>(`${select} FOR UPDATE`, [cardKey])).rows[0];
    if (!row || row.status_code !== before.status_code || row.replaced_from !== before.replaced_from) return { outcome: 'unchanged', outboxIds: [] };
    const common = { partnerId: row.partner_id, individualId: row.individual_id ?? undefined, tenantId: row.tenant_id ?? undefined, requestId };
    if (row.replaced_from) {
      const { outboxIds } = await completeReplacement(
        tx,
        fresh,
        {
          ...common,
          oldKey: row.replaced_from,
          newKey: cardKey,
          oldStatus: row.status,
          oldStatusCode: row.status_code,
          reason: null,
          reconciled: true,
        },
        deps.cardState
      );
      return { outcome: outboxIds.length ? 'completed' : 'unchanged', outboxIds };
    }
    if (fresh.statusCode === row.status_code) {
      await tx.query('UPDATE cards SET issuer_check_due = false, issuer_check_source = NULL, issuer_check_target = NULL, issuer_checked_at = now() WHERE card_key = $1', [cardKey]);
      return { outcome: 'unchanged', outboxIds: [] };
    }
    // The code an unanswered call of the partner (or an operator) asked for is that call's outcome;
    // any other code is a change the issuer made on its own.
    const source: StatusSource = row.issuer_check_source && fresh.statusCode === row.issuer_check_target ? row.issuer_check_source : 'issuer';
    await tx.query(
      `UPDATE cards SET status = $2, status_code = $3, issuer_check_due = false, issuer_check_source = NULL, issuer_check_target = NULL,
              issuer_checked_at = now(), updated_at = now() WHERE card_key = $1`,
      [cardKey, status, fresh.statusCode]
    );
    await recordStatusChange(tx, {
      ...common,
      cardKey,
      oldStatus: row.status,
      newStatus: status,
      oldStatusCode: row.status_code,
      newStatusCode: fresh.statusCode,
      operation: ISSUER_SYNC_OPERATION,
      reason: via.reason ?? 'issuer-side change',
    });
    await recordAudit(tx, {
      ...common,
      operation: ISSUER_SYNC_OPERATION,
      targetType: 'card',
      targetId: cardKey,
      outcome: 'success',
      // `source`: how the gateway learned of it (from the issuer); the event's own source says who asked.
      details: { from: row.status_code, to: fresh.statusCode, source: 'issuer', ...(via.notificationId ? { notificationId: via.notificationId } : {}) },
    });
    await emitEvent(tx, {
      type: 'card.status_changed',
      partnerId: row.partner_id,
      cardKey,
      data: {
        cardKey,
        previousStatus: row.status,
        status,
        statusCode: fresh.statusCode,
        previousStatusCode: row.status_code,
        source,
        reason: source === 'issuer' ? (via.reason ?? 'issuer-side change') : null,
      },
    });
    const followed =
      (await deps.cardState?.statusChanged(tx, {
        cardKey,
        partnerId: row.partner_id,
        previousStatus: row.status,
        previousStatusCode: row.status_code,
        status,
        statusCode: fresh.statusCode,
        requestId,
        eventNamesRequest: false,
        reason: source === 'issuer' ? (via.reason ?? 'issuer-side change') : null,
      })) ?? [];
    return { outcome: 'repaired', outboxIds: followed };
  });
  if (outcome.outboxIds.length && deps.deliver) await deps.deliver(outcome.outboxIds);
  if (outcome.outcome !== 'unchanged') deps.log.info({ cardKey, outcome: outcome.outcome, requestId }, 'card record brought to the issuer');
  return outcome.outcome;
}

/** How the gateway learned of an issuer-side change: the issuer's notification (docs/upstreams.md), when it sent one. */
export interface IssuerNotice {
  /** The issuer's reason (status history, event); default `issuer-side change`. */
  reason?: string | null;
  /** The notification's id (audit). */
  notificationId?: string;
}

/** What one card reconciliation pass did. */
export interface CardReconcileResult {
  checked: number;
  repaired: string[];
  completed: string[];
  failed: string[];
}

/**
 * One pass of the card reconciler: up to `batch` cards marked due (an operation whose outcome at
 * the issuer is unknown) and not closed (S4), the ones read longest ago first (never read first),
 * are brought to the issuer's state. Cards with nothing pending are not read: a pass costs nothing
 * when there is nothing to repair, whatever the number of cards.
 */
export async function reconcileCards(deps: SyncDeps, batch: number): Promise<CardReconcileResult> {
  const result: CardReconcileResult = { checked: 0, repaired: [], completed: [], failed: [] };
  const due = await deps.db.query<{ card_key: string }>(
    `SELECT card_key FROM cards WHERE issuer_check_due AND status_code <> 'S4' ORDER BY issuer_checked_at ASC NULLS FIRST, card_key LIMIT $1`,
    [batch]
  );
  for (const { card_key: cardKey } of due.rows) {
    result.checked += 1;
    try {
      const outcome = await syncCardWithIssuer(deps, cardKey, `card-reconciler-${cardKey}`);
      if (outcome === 'repaired') result.repaired.push(cardKey);
      if (outcome === 'completed') result.completed.push(cardKey);
    } catch (err) {
      deps.log.warn({ err, cardKey }, 'card not reconciled; retrying later');
      result.failed.push(cardKey);
      // To the back of the queue, so that a card the issuer keeps failing on never holds up the others.
      await deps.db.query('UPDATE cards SET issuer_checked_at = now() WHERE card_key = $1', [cardKey]).catch(() => undefined);
    }
  }
  return result;
}

/** Runs a card reconciliation pass every `intervalMs`; returns the function that stops it. */
export function startCardReconciler(deps: SyncDeps, options: { intervalMs: number; batch: number }): () => void {
  return every(options.intervalMs, () => reconcileCards(deps, options.batch), deps.log, 'card reconciliation pass failed');
}
