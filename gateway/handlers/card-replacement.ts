import type { Request } from 'express';
import { recordAudit } from '../audit/audit-log';
import { CARD_COLUMNS, findCard, insertCard, maskedCardNumber, recordStatusChange, toCard, type Card, type CardRow } from '../cards/card-store';
import { cardCreatedEvent, completeReplacement, statusOrFail } from '../cards/card-sync';
import { announceOwnershipChange } from '../ownership';
import { GatewayError } from '../errors';
import { callContext } from '../http/call-context';
import { enqueue } from '../outbox/outbox';
import { emitEvent } from '../outbox/partner-events';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { IssuerCard, IssuerStatusCode } from '../../contracts/upstreams';
import { callIssuer, cardAudit, cardFollowers, loadCardRow } from './card-operations';
import type { OwnedResource } from '../http/request-facts';
import type { BodyFacts, OperationFacts, OperationHandler, OwnerFacts, HandlerResponse } from './context';
import type { CardReplaceBody } from './request-bodies';

/** The facts of a replacement or re-issue: the card of the path, the validated body, the upstream operation. */
type ReplacementFacts = OwnerFacts<'card'> & BodyFacts<CardReplaceBody> & OperationFacts;

/** Delivers the outbox messages a request wrote, right after its commit; failures are retried later. */
async function deliverNow({ outbox, log }: Pick<HandlerServices, 'outbox' | 'log'>, req: Request, ids: string[]): Promise<void> {
  await outbox.deliver(ids).catch((err: unknown) => log.warn({ err, requestId: req.requestId }, 'outbox delivery deferred'));
}

/**
 * `POST /cards/{id}/replace` (physical cards; spec 3.1): the issuer returns a new cardKey, and one
 * transaction moves our record to it at once (the old key is 404 from then on, on every instance:
 * the move is announced on the ownership feed), marked `replaced_from` the old key. Then the gateway
 * reads the new card, and a second transaction stores its mask, status and expiry, writes the status
 * history and the audit entry, and queues the `card_created` webhook for the processing system,
 * delivered after the commit; in that transaction the card's network tokens move to the new card
 * (docs/tokens.md "The cascade", their move queued after `card_created`). A failing read answers its 502 but leaves the card usable under its
 * new key; the next access or the card reconciler completes it (docs/reliability.md).
 */
export function replaceCard(services: HandlerServices, build: HandlerBuild): OperationHandler<ReplacementFacts> {
  const operation = auditActionOf(build);
  const { db, clients, ownership, log } = services;
  const { cardState } = cardFollowers(services);
  return async function replaceCardHandler({ ownership: owned, body, operation: upstream }, req, res) {
    const oldKey = owned.id;
    const current = await loadCardRow(db, oldKey);
    if (current.type !== 'physical') throw new GatewayError('conflict', 'Only physical cards can be replaced; re-issue a virtual card');
    if (current.status_code === 'S4') throw new GatewayError('invalid_transition', 'A closed card cannot be replaced', { extensions: { cardStatus: current.status, statusCode: current.status_code } });
    const { cardKey: newKey } = await callIssuer(services, owned, req, res, operation, (ctx) => clients.issuer.replace(ctx, oldKey, body, upstream.id));
    await db.transaction(async (tx) => {
      await tx.query('UPDATE cards SET card_key = $2, replaced_from = $1, issuer_check_due = true, updated_at = now() WHERE card_key = $1', [oldKey, newKey]);
      await announceOwnershipChange(tx, [oldKey, newKey]);
    });
    ownership.invalidate('card', oldKey);
    ownership.invalidate('card', newKey);
    let fresh: IssuerCard;
    try {
      fresh = await clients.issuer.getCard(callContext(req, res), newKey);
      statusOrFail(fresh.statusCode);
      maskedCardNumber(fresh.cardMask);
    } catch (err) {
      log.warn({ err, requestId: req.requestId, cardKey: newKey }, 'replaced card recorded under its new key; its details follow on the next read');
      // The partner learns the new key from the problem: the old one is gone here and at the issuer.
      if (err instanceof GatewayError) throw new GatewayError(err.code, err.message, { invalidParams: err.invalidParams, headers: err.headers, extensions: { ...err.extensions, cardKey: newKey }, cause: err });
      throw err;
    }
    const { card, outboxIds } = await db.transaction((tx) =>
      completeReplacement(
        tx,
        fresh,
        {
          oldKey,
          newKey,
          oldStatus: current.status,
          oldStatusCode: current.status_code,
          partnerId: current.partner_id,
          individualId: owned.individualId,
          tenantId: owned.tenantId,
          reason: body.reason ?? null,
          requestId: req.requestId,
        },
        cardState
      )
    );
    await deliverNow(services, req, outboxIds);
    return { status: 200, body: card };
  };
}

/** The issuer's answers that say it made nothing for an operation id (docs/upstreams.md). */
const FINAL_REFUSALS: ReadonlySet<string> = new Set(['conflict', 'upstream_rejected', 'not_found']);

/**
 * The card an earlier attempt of this re-issue made, when a retry of the same `Idempotency-Key`
 * resumes after that attempt committed (closed the old card, stored the new one) but died before its
 * answer was recorded: the issuer answers the same operation id with the same new cardKey, and the
 * new card is ours under the same partner. Undefined when the issuer does not say so (then the card
 * was closed some other way and the retry is refused like any re-issue of a closed card).
 */
async function reissuedByAnEarlierAttempt(
  services: Pick<HandlerServices, 'db' | 'clients' | 'log'>,
  owned: OwnedResource<'card'>,
  upstreamOperationId: string,
  req: Request,
  res: HandlerResponse,
  operation: string,
  body: CardReplaceBody,
  partnerId: string
): Promise<Card | undefined> {
  const oldKey = owned.id;
  const { db, clients } = services;
  let newKey: string;
  try {
    ({ cardKey: newKey } = await callIssuer(services, owned, req, res, operation, (ctx) => clients.issuer.reissue(ctx, oldKey, body, upstreamOperationId)));
  } catch (err) {
    // The issuer's final refusal: it made no card for this operation id. Anything else (a timeout,
    // an outage, its earlier call still running) is not an answer: it goes to the partner as it is,
    // a 5xx or 409 idempotency_in_progress, which releases the key for another retry.
    if (err instanceof GatewayError && FINAL_REFUSALS.has(err.code)) return undefined;
    throw err;
  }
  return findCard(db, newKey, partnerId);
}

/**
 * `POST /cards/{id}/reissue` (spec 3.1): the old statusCode is read before the local update; the
 * issuer returns the new cardKey; one transaction closes the old card locally (S4), stores the new
 * one under the same owner (nickname and 3DS phone carried over), writes history and audit, the
 * partner's events (the old card's `card.status_changed` to CLOSED, then the new card's
 * `card.created`, `reason: reissued`), and queues, in this order, the processing system's status
 * update for the OLD cardKey with the OLD statusCode and the `card_created` webhook of the new card;
 * then the old card's network tokens move to the new one (its followers' `replaced`, never
 * `statusChanged`: the old card's close does not deactivate tokens that move).
 */
export function reissueCard(services: HandlerServices, build: HandlerBuild): OperationHandler<ReplacementFacts> {
  const operation = auditActionOf(build);
  const { db, clients, ownership } = services;
  const { cardState } = cardFollowers(services);
  return async function reissueCardHandler({ ownership: owner, body, operation: upstream }, req, res) {
    const oldKey = owner.id;
    const current = await loadCardRow(db, oldKey);
    const oldStatusCode = current.status_code;
    if (oldStatusCode === 'S4') {
      const earlier = upstream.resumed ? await reissuedByAnEarlierAttempt(services, owner, upstream.id, req, res, operation, body, current.partner_id) : undefined;
      if (earlier) {
        return { status: 201, body: earlier };
      }
      throw new GatewayError('invalid_transition', 'A closed card cannot be re-issued', { extensions: { cardStatus: current.status, statusCode: oldStatusCode } });
    }
    const { cardKey: newKey } = await callIssuer(services, owner, req, res, operation, (ctx) => clients.issuer.reissue(ctx, oldKey, body, upstream.id));
    const fresh: IssuerCard = await clients.issuer.getCard(callContext(req, res), newKey);
    const status = statusOrFail(fresh.statusCode);
    const { card, outboxIds } = await db.transaction(async (tx) => {
      await tx.query("UPDATE cards SET status = 'CLOSED', status_code = 'S4', updated_at = now() WHERE card_key = $1", [oldKey]);
      const inserted = await insertCard(tx, {
        cardKey: newKey,
        partnerId: current.partner_id,
        individualId: owner.individualId,
        tenantId: owner.tenantId,
        cardMask: fresh.cardMask,
        type: current.type,
        status,
        statusCode: fresh.statusCode,
        currency: fresh.currency,
        productCode: fresh.productCode,
        holderClientCode: fresh.holderClientCode ?? current.holder_client_code,
        expDate: fresh.expDate,
        embossedName: fresh.embossedName || current.embossed_name,
        createdAt: fresh.createdAt,
      });
      const carried = await tx.query<CardRow>(
        `UPDATE cards SET nickname = $2, three_ds_phone = $3 WHERE card_key = $1 RETURNING ${CARD_COLUMNS}`,
        [newKey, current.nickname, current.three_ds_phone]
      );
      const reissued = carried.rowCount ? toCard(carried.rows[0]) : inserted;
      const history = { partnerId: current.partner_id, individualId: owner.individualId, operation, reason: body.reason ?? null, requestId: req.requestId };
      await recordStatusChange(tx, { ...history, cardKey: oldKey, oldStatus: current.status, newStatus: 'CLOSED', oldStatusCode, newStatusCode: 'S4' });
      await recordStatusChange(tx, { ...history, cardKey: newKey, oldStatus: null, newStatus: status, oldStatusCode: null, newStatusCode: fresh.statusCode });
      await recordAudit(tx, { ...cardAudit(owner, req, operation), outcome: 'success', details: { previousCardKey: oldKey, cardKey: newKey, previousStatusCode: oldStatusCode } });
      const event = { partnerId: current.partner_id, requestId: req.requestId };
      await emitEvent(tx, {
        ...event,
        type: 'card.status_changed',
        cardKey: oldKey,
        data: { cardKey: oldKey, previousStatus: current.status, status: 'CLOSED', statusCode: 'S4', previousStatusCode: oldStatusCode, source: 'partner', reason: body.reason ?? null },
      });
      await emitEvent(tx, { ...event, type: 'card.created', cardKey: newKey, data: { card: reissued, reason: 'reissued', previousCardKey: oldKey } });
      const context = { partnerId: current.partner_id, requestId: req.requestId };
      const statusUpdate = await enqueue(tx, { kind: 'processing.status_update', payload: { cardKey: oldKey, statusCode: oldStatusCode as IssuerStatusCode, reason: body.reason } }, context);
      const created = await enqueue(tx, { kind: 'processing.card_created', payload: cardCreatedEvent(reissued, oldKey, current.partner_id) }, context);
      const followed =
        (await cardState?.replaced(tx, { fromCardKey: oldKey, toCardKey: newKey, partnerId: current.partner_id, toStatusCode: fresh.statusCode, reason: 'reissued', requestId: req.requestId, eventNamesRequest: true })) ?? [];
      await announceOwnershipChange(tx, [oldKey, newKey]);
      return { card: reissued, outboxIds: [statusUpdate, created, ...followed] };
    });
    ownership.invalidate('card', oldKey);
    ownership.invalidate('card', newKey);
    await deliverNow(services, req, outboxIds);
    return { status: 201, body: card };
  };
}
