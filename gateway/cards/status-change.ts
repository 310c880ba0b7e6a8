import { recordAudit } from '../audit/audit-log';
import type { Database, Queryable } from '../db/database';
import { GatewayError } from '../errors';
import type { Logger } from '../logging/logger';
import { emitEvent, type StatusSource } from '../outbox/partner-events';
import type { CallContext, UpstreamClients } from '../upstreams';
import type { StatusChangeRequest } from '../../contracts/upstreams';
import { cardStatusOf, type CardStatus } from './card-status';
import { CARD_COLUMNS, recordStatusChange, type CardRow } from './card-store';
import { markIssuerCheckDue, syncCardWithIssuer } from './card-sync';
import { outcomeUnknown } from '../upstreams/failures';
import { EXP_DATE_REQUIRED, type StatusChange } from './transitions';
import { deliverAfterCommit, type CardStateFollowers } from './card-state-listener';

/**
 * What a status change needs of the gateway's services; with `cardState`, the card's followers (its
 * network tokens' cascade) change with it, in its transaction, and `deliver` sends what they queued.
 */
export interface StatusChangeDeps extends CardStateFollowers {
  db: Database;
  clients: UpstreamClients;
  log: Logger;
}

/** The card status result (spec 2.4): what a status change answers. */
export interface CardStatusResult {
  cardKey: string;
  status: CardStatus;
  statusCode: string;
}

/** A card as a status change reads it: the record and its owner (partner, individual or B2B tenant). */
export type StatusChangeCard = CardRow & { individual_id: string | null; tenant_id: string | null };

/**
 * Who asks for a status change. `partner`: a partner's request (`POST /cards/{id}/lock`, …);
 * `operator`: the admin API (`POST /admin/cards/{cardKey}/status`). It is the event's `source`, and
 * the one that an unanswered issuer call is attributed to when card-sync later finds the code it
 * asked for.
 */
export interface StatusChangeActor {
  source: Exclude<StatusSource, 'issuer'>;
  /** The name the audit entry and the status-history row give the change (`card.lock`, `admin.card.lock`). */
  operation: string;
  /** The request's id: the audit entry's and the history row's, and the one sent to the issuer. */
  requestId: string;
  /**
   * Whether the partner event names the request (`requestId` of the envelope): a partner's own
   * request does; an operator's request is not the partner's and is left out (docs/events.md).
   */
  eventNamesRequest: boolean;
  /** Audit details besides `from` and `to` (e.g. `source: operator`). */
  auditDetails?: Record<string, string>;
}

/** One status change to make. */
export interface StatusChangeOrder {
  cardKey: string;
  /** The change (gateway/cards/transitions.ts): the issuer action, its target code and where it may start from. */
  change: StatusChange;
  /**
   * What the issuer gets besides the action; `reason` is also the history's and the event's. An
   * action for which the issuer requires `expDate` (lock, unlock, activate, temporary lock) and
   * that has none gets the card's, as we hold it (the operator's route sends none).
   */
  issuerBody: Omit<StatusChangeRequest, 'action'>;
  /**
   * The upstream operation id (the issuer's `Idempotency-Key`): the same on every retry of this
   * operation, so that the issuer applies it once (docs/upstreams.md, "Operation ids").
   */
  operationId: string;
  /**
   * True when this operation id was sent before (a retry with the same idempotency key after an
   * unknown outcome). A card already at the target code then moved there by that earlier call: the
   * transition is not checked against it again, the issuer replays its answer for the operation id,
   * and the retry answers the change instead of 409 `invalid_transition`.
   */
  resumed?: boolean;
  actor: StatusChangeActor;
  ctx: CallContext;
  /**
   * Runs in the change's transaction, once the card's row is locked and before anything is
   * written (the operator's idempotency key is completed there). A throw rolls the change back.
   */
  inTransaction?: (tx: Queryable, result: CardStatusResult) => Promise<void>;
}

const CARD_SELECT = `SELECT ${CARD_COLUMNS}, individual_id, tenant_id FROM cards WHERE card_key = $1`;

/**
 * The card's record, first brought to the issuer's state when an earlier call left it unknown
 * whether the issuer applied it (card-sync.ts); an issuer that cannot answer leaves it for the
 * card reconciler and the record is used as it is. 404 `not_found` for a card we do not hold.
 */
export async function loadCardSyncedWithIssuer(deps: StatusChangeDeps, cardKey: string, requestId: string): Promise<StatusChangeCard> {
  const { db, log } = deps;
  // One read of the row; a second only after the issuer sync changed it.
  const rows = await db.query<StatusChangeCard & { issuer_check_due: boolean }>(
    `SELECT ${CARD_COLUMNS}, individual_id, tenant_id, issuer_check_due FROM cards WHERE card_key = $1`,
    [cardKey]
  );
  if (rows.rowCount === 0) throw new GatewayError('not_found', 'No card has this cardKey');
  const { issuer_check_due: checkDue, ...row } = rows.rows[0];
  if (!checkDue) return row;
  await syncCardWithIssuer(deps, cardKey, requestId).catch((err: unknown) =>
    log.warn({ err, requestId, cardKey }, 'card not brought to the issuer before the operation; the reconciler will')
  );
  const again = await db.query<StatusChangeCard>(CARD_SELECT, [cardKey]);
  if (again.rowCount === 0) throw new GatewayError('not_found', 'No card has this cardKey');
  return again.rows[0];
}

/**
 * A card status change, for a partner (gateway/handlers/card-operations.ts) and for an operator
 * (gateway/admin/admin-api.ts) alike:
 *
 * 1. the card is read (brought to the issuer first when an earlier call's outcome is unknown);
 * 2. the transition is checked: refused, it is 409 `invalid_transition` (with `cardStatus` and
 *    `statusCode`) and the issuer is not called;
 * 3. the issuer is called with the operation id as its `Idempotency-Key`. A refusal writes a
 *    `failure` audit entry and changes nothing; an unknown outcome (timeout, reset) marks the card
 *    for card-sync with the code asked for and who asked;
 * 4. one transaction, under the card's row lock, updates the status and code and writes the
 *    status-history row, the `success` audit entry and, when the code changed, the
 *    `card.status_changed` event with the actor's `source` (a repeat of the current status writes
 *    history, not an event), and, when the code changed, the card's followers (`deps.cardState`:
 *    its tokens' holds and the token operations queued in the outbox, docs/tokens.md "The cascade");
 * 5. what the followers queued is sent after the commit, without delaying the answer.
 */
export async function applyStatusChange(deps: StatusChangeDeps, order: StatusChangeOrder): Promise<CardStatusResult> {
  const { db, clients, log } = deps;
  const { cardKey, change, actor } = order;
  const action = change.issuerAction;
  const current = await loadCardSyncedWithIssuer(deps, cardKey, actor.requestId);
  const madeByAnEarlierAttempt = order.resumed === true && current.status_code === change.to;
  if (!change.from.includes(current.status_code) && !madeByAnEarlierAttempt) {
    throw new GatewayError('invalid_transition', `A ${current.status} card (${current.status_code}) cannot be moved by ${action}`, {
      extensions: { cardStatus: current.status, statusCode: current.status_code },
    });
  }
  const audit = {
    partnerId: current.partner_id,
    individualId: current.individual_id ?? undefined,
    tenantId: current.tenant_id ?? undefined,
    operation: actor.operation,
    targetType: 'card' as const,
    targetId: cardKey,
    requestId: actor.requestId,
  };
  const body: StatusChangeRequest = { action, ...order.issuerBody };
  if (body.expDate === undefined && EXP_DATE_REQUIRED.has(action)) body.expDate = current.exp_date;
  let answered;
  try {
    answered = await clients.issuer.changeStatus(order.ctx, cardKey, body, order.operationId);
  } catch (err) {
    const reason = err instanceof GatewayError ? err.code : 'error';
    await recordAudit(db, { ...audit, outcome: 'failure', details: { reason } }).catch((auditError: unknown) =>
      log.warn({ err: auditError, requestId: actor.requestId }, 'failure audit entry not written')
    );
    // The issuer may have applied it (timeout, reset): the next access and the card reconciler read its status.
    if (outcomeUnknown(err)) await markIssuerCheckDue(db, cardKey, { source: actor.source, target: change.to }).catch(() => undefined);
    throw err;
  }
  const status = cardStatusOf(answered.statusCode);
  if (!status) throw new GatewayError('upstream_error', 'The card issuer platform answered an unknown status code', { extensions: { upstream: 'issuer' } });
  const result: CardStatusResult = { cardKey, status, statusCode: answered.statusCode };
  const reason = order.issuerBody.reason ?? null;
  const queued = await db.transaction(async (tx) => {
    // The status this change replaces, read under the row lock: a concurrent change of the card
    // committed meanwhile is the one this follows (history and event say so).
    const locked = await tx.query<Pick<CardRow, 'status' | 'status_code'>>('SELECT status, status_code FROM cards WHERE card_key = $1 FOR UPDATE', [cardKey]);
    if (locked.rowCount === 0) throw new GatewayError('not_found', 'No card has this cardKey');
    const previous = locked.rows[0];
    await order.inTransaction?.(tx, result);
    await tx.query('UPDATE cards SET status = $2, status_code = $3, updated_at = now() WHERE card_key = $1', [cardKey, status, answered.statusCode]);
    await recordStatusChange(tx, {
      cardKey,
      partnerId: current.partner_id,
      individualId: audit.individualId,
      oldStatus: previous.status,
      newStatus: status,
      oldStatusCode: previous.status_code,
      newStatusCode: answered.statusCode,
      operation: actor.operation,
      reason,
      requestId: actor.requestId,
    });
    await recordAudit(tx, { ...audit, outcome: 'success', details: { from: previous.status_code, to: answered.statusCode, ...actor.auditDetails } });
    if (previous.status_code !== answered.statusCode) {
      await emitEvent(tx, {
        type: 'card.status_changed',
        partnerId: current.partner_id,
        cardKey,
        ...(actor.eventNamesRequest ? { requestId: actor.requestId } : {}),
        data: {
          cardKey,
          previousStatus: previous.status,
          status,
          statusCode: answered.statusCode,
          previousStatusCode: previous.status_code,
          source: actor.source,
          reason,
        },
      });
      return (
        (await deps.cardState?.statusChanged(tx, {
          cardKey,
          partnerId: current.partner_id,
          previousStatus: previous.status,
          previousStatusCode: previous.status_code,
          status,
          statusCode: answered.statusCode,
          requestId: actor.requestId,
          eventNamesRequest: actor.eventNamesRequest,
          reason,
        })) ?? []
      );
    }
    return [];
  });
  deliverAfterCommit(deps, queued);
  return result;
}
