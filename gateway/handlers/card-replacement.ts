import type { Request, RequestHandler } from 'express';
import { recordAudit } from '../audit/audit-log';
import { cardStatusOf } from '../cards/card-status';
import { CARD_COLUMNS, insertCard, maskedCardNumber, recordStatusChange, toCard, type Card, type CardRow } from '../cards/card-store';
import { GatewayError } from '../errors';
import { asyncHandler, callContext } from '../http/async-handler';
import { enqueue } from '../outbox/outbox';
import { services } from '../services';
import type { CardCreatedEvent, IssuerCard, IssuerStatusCode } from '../upstreams/types';
import { callIssuer, cardAudit, loadCardRow } from './card-operations';
import { upstreamOperationId } from '../idempotency/operation-id';

type ReplaceBody = { expDate: string; reason?: string; pinMailer?: string };

function cardCreatedEvent(card: Card, previousCardKey: string, partnerId: string): CardCreatedEvent {
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

function statusOrFail(code: string) {
  const status = cardStatusOf(code);
  if (!status) throw new GatewayError('upstream_error', 'The card issuer platform answered an unknown status code', { extensions: { upstream: 'issuer' } });
  return status;
}

/** Delivers the outbox messages a request wrote, right after its commit; failures are retried later. */
async function deliverNow(req: Request, ids: string[]): Promise<void> {
  const { outbox, log } = services();
  await outbox.deliver(ids).catch((err: unknown) => log.warn({ err, requestId: req.requestId }, 'outbox delivery deferred'));
}

/**
 * `POST /cards/{id}/replace` (physical cards; spec 3.1): the issuer returns a new cardKey, the
 * gateway fetches the new card's mask, and one transaction moves our record to the new key (the old
 * key is 404 from then on), writes the status history and the audit entry, and queues the
 * `card_created` webhook for the processing system, delivered after the commit.
 */
export function replaceCard(): RequestHandler {
  const { db, clients, ownership } = services();
  return asyncHandler(async function replaceCardHandler(req, res) {
    const oldKey = req.ownership!.id;
    const current = await loadCardRow(db, oldKey);
    if (current.type !== 'physical') throw new GatewayError('conflict', 'Only physical cards can be replaced; re-issue a virtual card');
    if (current.status_code === 'S4') throw new GatewayError('invalid_transition', 'A closed card cannot be replaced', { extensions: { cardStatus: current.status, statusCode: current.status_code } });
    const body = req.body as ReplaceBody;
    const { cardKey: newKey } = await callIssuer(req, res, 'card.replace', (ctx) => clients.issuer.replace(ctx, oldKey, body, upstreamOperationId(req)));
    const fresh: IssuerCard = await clients.issuer.getCard(callContext(req, res), newKey);
    const status = statusOrFail(fresh.statusCode);
    const { card, outboxIds } = await db.transaction(async (tx) => {
      const rows = await tx.query<CardRow>(
        `UPDATE cards SET card_key = $2, card_mask = $3, status = $4, status_code = $5, exp_date = $6, updated_at = now()
          WHERE card_key = $1 RETURNING ${CARD_COLUMNS}`,
        [oldKey, newKey, maskedCardNumber(fresh.cardMask), status, fresh.statusCode, fresh.expDate]
      );
      const replaced = toCard(rows.rows[0]);
      await recordStatusChange(tx, {
        cardKey: newKey,
        partnerId: current.partner_id,
        individualId: req.ownership!.individualId,
        oldStatus: current.status,
        newStatus: status,
        oldStatusCode: current.status_code,
        newStatusCode: fresh.statusCode,
        operation: 'card.replace',
        reason: body.reason ?? null,
        requestId: req.requestId,
      });
      await recordAudit(tx, { ...cardAudit(req, 'card.replace'), outcome: 'success', details: { previousCardKey: oldKey, cardKey: newKey, cardMask: fresh.cardMask } });
      const id = await enqueue(tx, { kind: 'processing.card_created', payload: cardCreatedEvent(replaced, oldKey, current.partner_id) }, { partnerId: current.partner_id, requestId: req.requestId });
      return { card: replaced, outboxIds: [id] };
    });
    ownership.invalidate('card', oldKey);
    ownership.invalidate('card', newKey);
    await deliverNow(req, outboxIds);
    res.status(200).json(card);
  });
}

/**
 * `POST /cards/{id}/reissue` (spec 3.1): the old statusCode is read before the local update; the
 * issuer returns the new cardKey; one transaction closes the old card locally (S4), stores the new
 * one under the same owner (nickname and 3DS phone carried over), writes history and audit, and
 * queues, in this order, the processing system's status update for the OLD cardKey with the OLD
 * statusCode and the `card_created` webhook of the new card.
 */
export function reissueCard(): RequestHandler {
  const { db, clients, ownership } = services();
  return asyncHandler(async function reissueCardHandler(req, res) {
    const oldKey = req.ownership!.id;
    const current = await loadCardRow(db, oldKey);
    const oldStatusCode = current.status_code;
    if (oldStatusCode === 'S4') throw new GatewayError('invalid_transition', 'A closed card cannot be re-issued', { extensions: { cardStatus: current.status, statusCode: oldStatusCode } });
    const body = req.body as ReplaceBody;
    const { cardKey: newKey } = await callIssuer(req, res, 'card.reissue', (ctx) => clients.issuer.reissue(ctx, oldKey, body, upstreamOperationId(req)));
    const fresh: IssuerCard = await clients.issuer.getCard(callContext(req, res), newKey);
    const status = statusOrFail(fresh.statusCode);
    const owner = req.ownership!;
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
      const history = { partnerId: current.partner_id, individualId: owner.individualId, operation: 'card.reissue', reason: body.reason ?? null, requestId: req.requestId };
      await recordStatusChange(tx, { ...history, cardKey: oldKey, oldStatus: current.status, newStatus: 'CLOSED', oldStatusCode, newStatusCode: 'S4' });
      await recordStatusChange(tx, { ...history, cardKey: newKey, oldStatus: null, newStatus: status, oldStatusCode: null, newStatusCode: fresh.statusCode });
      await recordAudit(tx, { ...cardAudit(req, 'card.reissue'), outcome: 'success', details: { previousCardKey: oldKey, cardKey: newKey, previousStatusCode: oldStatusCode } });
      const context = { partnerId: current.partner_id, requestId: req.requestId };
      const statusUpdate = await enqueue(tx, { kind: 'processing.status_update', payload: { cardKey: oldKey, statusCode: oldStatusCode as IssuerStatusCode, reason: body.reason } }, context);
      const created = await enqueue(tx, { kind: 'processing.card_created', payload: cardCreatedEvent(reissued, oldKey, current.partner_id) }, context);
      return { card: reissued, outboxIds: [statusUpdate, created] };
    });
    ownership.invalidate('card', oldKey);
    ownership.invalidate('card', newKey);
    await deliverNow(req, outboxIds);
    res.status(201).json(card);
  });
}
