import type { Request, RequestHandler, Response } from 'express';
import { recordAudit } from '../audit/audit-log';
import { cardStatusOf } from '../cards/card-status';
import { CARD_COLUMNS, toCard, type Card, type CardRow } from '../cards/card-store';
import { applyStatusChange } from '../cards/status-change';
import type { Database, Queryable } from '../db/database';
import { GatewayError } from '../errors';
import { asyncHandler, callContext } from '../http/async-handler';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { StatusChangeOperation } from '../catalog';
import type { CallContext, IssuerClient } from '../upstreams';
import type { CardLimit, LimitName } from '../upstreams/types';
import { upstreamOperationId } from '../idempotency/operation-id';
import { emitEvent, type NewPartnerEvent, type UpdatedCardField } from '../outbox/partner-events';
import { sendJson } from '../http/send-json';

/** The card's current record; 404 if it vanished since the ownership check (replaced, re-issued). */
export async function loadCardRow(db: Queryable, cardKey: string): Promise<CardRow> {
  const rows = await db.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_key = $1`, [cardKey]);
  if (rows.rowCount === 0) throw new GatewayError('not_found', 'No card has this cardKey');
  return rows.rows[0];
}

/** The audit fields every card operation shares. */
export function cardAudit(req: Request, operation: string) {
  const owner = req.ownership!;
  return {
    partnerId: owner.partnerId,
    individualId: owner.individualId,
    tenantId: owner.tenantId,
    operation,
    targetType: 'card' as const,
    targetId: owner.id,
    requestId: req.requestId,
  };
}

/**
 * Runs an issuer call for a card operation: on failure, writes a `failure` audit entry (nothing
 * changed) and rethrows the mapped problem.
 */
export async function callIssuer<T>({ db, log }: Pick<HandlerServices, 'db' | 'log'>, req: Request, res: Response, operation: string, call: (ctx: CallContext) => Promise<T>): Promise<T> {
  try {
    return await call(callContext(req, res));
  } catch (err) {
    const reason = err instanceof GatewayError ? err.code : 'error';
    await recordAudit(db, { ...cardAudit(req, operation), outcome: 'failure', details: { reason } }).catch((auditError: unknown) =>
      log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written')
    );
    throw err;
  }
}

/**
 * Lock, unlock, activate, temporary lock and the restrict family (spec 4.3): the partner's side of
 * `applyStatusChange` (gateway/cards/status-change.ts, shared with the operator's admin route).
 * The transition is checked first (409 `invalid_transition`, issuer not called); after the issuer
 * accepts, one transaction updates the card's status and code and writes the status-history and
 * audit entries, and the `card.status_changed` event (`source: partner`, the request's id) when the
 * code changed. The issuer's `Idempotency-Key` is the request's upstream operation id (the same on
 * every retry of its `Idempotency-Key`). Answers the card status result (2.4).
 */
export function changeCardStatus(services: HandlerServices, build: HandlerBuild<StatusChangeOperation>): RequestHandler {
  const operation = build.operation.audit;
  const change = build.operation.statusChange;
  return asyncHandler(async function changeCardStatusHandler(req, res) {
    const body = req.body as { expDate?: string; reason?: string; description?: string; cardLocation?: string };
    const result = await applyStatusChange(services, {
      cardKey: req.ownership!.id,
      change,
      issuerBody: body,
      operationId: upstreamOperationId(req),
      resumed: req.upstreamOperation?.resumed,
      actor: { source: 'partner', operation, requestId: req.requestId, eventNamesRequest: true },
      ctx: callContext(req, res),
    });
    sendJson(res, 200, result);
  });
}

/**
 * An issuer operation on the card that changes nothing we store (3DS answer, PIN tries, authorize):
 * on success, the audit entry, then the full card from our record.
 */
function issuerActionAnsweringCard(call: (issuer: IssuerClient, req: Request, ctx: CallContext) => Promise<unknown>): (services: HandlerServices, build: HandlerBuild) => RequestHandler {
  return function issuerActionFactory(services, build) {
    const operation = auditActionOf(build);
    const { db, clients } = services;
    return asyncHandler(async function issuerActionHandler(req, res) {
      await loadCardRow(db, req.ownership!.id);
      await callIssuer(services, req, res, operation, (ctx) => call(clients.issuer, req, ctx));
      const card = await db.transaction(async (tx) => {
        await recordAudit(tx, { ...cardAudit(req, operation), outcome: 'success' });
        return toCard(await loadCardRow(tx, req.ownership!.id));
      });
      sendJson(res, 200, card);
    });
  };
}

/** `PUT /cards/{id}/3ds/answer`: forwarded to the issuer, never stored or logged by us. */
export const setCard3dsAnswer = issuerActionAnsweringCard((issuer, req, ctx) =>
  issuer.setThreeDsAnswer(ctx, req.ownership!.id, (req.body as { answer: string }).answer)
);

/** `POST /cards/{id}/pin/reset-tries`: answers the full card. */
export const resetCardPinTries = issuerActionAnsweringCard((issuer, req, ctx) => issuer.resetPinTries(ctx, req.ownership!.id));

/** `POST /cards/{id}/authorize` (PIN-less action): answers the full card. */
export const authorizeCardholder = issuerActionAnsweringCard((issuer, req, ctx) =>
  issuer.authorize(ctx, req.ownership!.id, { pin: (req.body as { pin: string }).pin })
);

/**
 * The spec's known limitation: the issuer platform answers PIN change and force PIN lock with an
 * error. The partner gets 502 `upstream_error` with `upstreamCode` and a detail that says so.
 */
function knownLimitation(err: unknown, what: string): unknown {
  if (err instanceof GatewayError && err.extensions?.upstreamCode === 'OPERATION_NOT_SUPPORTED') {
    return new GatewayError('upstream_error', `The card issuer platform does not support ${what} yet (known limitation); the card is unchanged`, {
      extensions: err.extensions,
    });
  }
  return err;
}

/** `POST /cards/{id}/pin/change`: answers the full card (the issuer refuses it today). */
export function changeCardPin(services: HandlerServices, build: HandlerBuild): RequestHandler {
  const inner = issuerActionAnsweringCard((issuer, req, ctx) => {
    const body = req.body as { expDate: string; pin: string };
    return issuer.changePin(ctx, req.ownership!.id, { expDate: body.expDate, pin: body.pin });
  })(services, build);
  return (req, res, next) => inner(req, res, (err?: unknown) => next(err === undefined ? undefined : knownLimitation(err, 'PIN change')));
}

/** `POST /cards/{id}/pin/force-lock`: answers the card status result (the issuer refuses it today). */
export function forceCardPinLock(services: HandlerServices, build: HandlerBuild): RequestHandler {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return asyncHandler(async function forcePinLockHandler(req, res) {
    await loadCardRow(db, req.ownership!.id);
    try {
      await callIssuer(services, req, res, operation, (ctx) => clients.issuer.forcePinLock(ctx, req.ownership!.id, { expDate: (req.body as { expDate: string }).expDate }));
    } catch (err) {
      throw knownLimitation(err, 'force PIN lock');
    }
    const status = await clients.issuer.getStatus(callContext(req, res), req.ownership!.id);
    await recordAudit(db, { ...cardAudit(req, operation), outcome: 'success' });
    sendJson(res, 200, { cardKey: req.ownership!.id, status: cardStatusOf(status.statusCode), statusCode: status.statusCode });
  });
}

/** `PATCH /cards/{id}/emboss-name`: the issuer changes it, then our record, its audit entry and its `card.updated` event; answers the full card. */
export function setCardEmbossName(services: HandlerServices, build: HandlerBuild): RequestHandler {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return asyncHandler(async function setEmbossNameHandler(req, res) {
    const cardKey = req.ownership!.id;
    await loadCardRow(db, cardKey);
    const { embossedName } = req.body as { embossedName: string };
    await callIssuer(services, req, res, operation, (ctx) => clients.issuer.setEmbossName(ctx, cardKey, embossedName));
    const card: Card = await db.transaction(async (tx) => {
      const rows = await tx.query<CardRow>(`UPDATE cards SET embossed_name = $2, updated_at = now() WHERE card_key = $1 RETURNING ${CARD_COLUMNS}`, [cardKey, embossedName]);
      await recordAudit(tx, { ...cardAudit(req, operation), outcome: 'success', details: { embossedName } });
      const updated = toCard(rows.rows[0]);
      await emitEvent(tx, cardUpdated(req, updated, ['embossedName']));
      return updated;
    });
    sendJson(res, 200, card);
  });
}

/** The `card.updated` event of a change the partner asked for: the names of the fields, never their secrets. */
export function cardUpdated(req: Request, card: Card, changed: UpdatedCardField[], limits?: { name: string; value: number }[]): NewPartnerEvent<'card.updated'> {
  return {
    type: 'card.updated',
    partnerId: req.ownership!.partnerId,
    cardKey: card.cardKey,
    requestId: req.requestId,
    data: { cardKey: card.cardKey, changed, card, ...(limits ? { limits } : {}) },
  };
}

/** After the issuer set limits: one transaction writes the audit entry and the `card.updated` event with the card as it is. */
async function recordLimitsChange(db: Database, req: Request, operation: string, items: { name: LimitName; value: number }[]): Promise<void> {
  await db.transaction(async (tx) => {
    await recordAudit(tx, { ...cardAudit(req, operation), outcome: 'success', details: Object.fromEntries(items.map((i) => [i.name, i.value])) });
    const card = toCard(await loadCardRow(tx, req.ownership!.id));
    await emitEvent(tx, cardUpdated(req, card, ['limits'], items.map(({ name, value }) => ({ name, value }))));
  });
}

function limitOf(limit: CardLimit): CardLimit {
  return { name: limit.name, value: limit.value, currency: limit.currency, used: limit.used, available: limit.available };
}

/** `PATCH /cards/{id}/limits`: several limits at once (audit entry and `card.updated` event in one transaction); answers every limit. */
export function patchCardLimits(services: HandlerServices, build: HandlerBuild): RequestHandler {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return asyncHandler(async function patchLimitsHandler(req, res) {
    const items = req.body as { name: LimitName; value: number }[];
    const limits = await callIssuer(services, req, res, operation, (ctx) => clients.issuer.patchLimits(ctx, req.ownership!.id, items));
    await recordLimitsChange(db, req, operation, items);
    sendJson(res, 200, limits.map(limitOf));
  });
}

/** `PUT /cards/{id}/limits/{limitName}`: one limit; the body's name must be the path's. */
export function setCardLimit(services: HandlerServices, build: HandlerBuild): RequestHandler {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return asyncHandler(async function setLimitHandler(req, res) {
    const body = req.body as { name: LimitName; value: number };
    if (body.name !== req.params.limitName) {
      throw new GatewayError('validation_failed', 'The body names another limit than the path', {
        invalidParams: [{ name: 'name', reason: `must be ${req.params.limitName}, the limit of the path` }],
      });
    }
    const limit = await callIssuer(services, req, res, operation, (ctx) => clients.issuer.setLimit(ctx, req.ownership!.id, body.name, body));
    await recordLimitsChange(db, req, operation, [{ name: body.name, value: body.value }]);
    sendJson(res, 200, limitOf(limit));
  });
}
