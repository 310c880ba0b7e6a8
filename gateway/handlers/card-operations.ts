import type { Request } from 'express';
import { recordAudit } from '../audit/audit-log';
import { cardStatusOf } from '../cards/card-status';
import { CARD_COLUMNS, toCard, type Card, type CardRow } from '../cards/card-store';
import { applyStatusChange, type StatusChangeDeps } from '../cards/status-change';
import type { CardStateFollowers, CardStateListener } from '../cards/card-state-listener';
import type { Database, Queryable } from '../db/database';
import { GatewayError } from '../errors';
import { callContext } from '../http/call-context';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { StatusChangeOperation } from '../catalog';
import type { CallContext, IssuerClient } from '../upstreams';
import type { CardLimit, LimitName } from '../../contracts/upstreams';
import { emitEvent, type NewPartnerEvent, type UpdatedCardField } from '../outbox/partner-events';
import type { OwnedResource } from '../http/request-facts';
import type { Owner } from '../ownership';
import type { BodyFacts, OperationFacts, OperationHandler, OwnerFacts, HandlerResponse } from './context';
import type { CardStatusChangeBody, LimitBody, RequestBodies } from './request-bodies';

/** The facts of a handler acting on the card of its path (its owner checked by the pipeline). */
type CardFacts = OwnerFacts<'card'>;

/** The card's current record; 404 if it vanished since the ownership check (replaced, re-issued). */
export async function loadCardRow(db: Queryable, cardKey: string): Promise<CardRow> {
  const rows = await db.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_key = $1`, [cardKey]);
  if (rows.rowCount === 0) throw new GatewayError('not_found', 'No card has this cardKey');
  return rows.rows[0];
}

/** The audit fields every card operation shares: the owner of the resource acted on (the card, or a transaction of it), its id the target. */
export function cardAudit(owner: OwnedResource, req: Request, operation: string) {
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
export async function callIssuer<T>(
  { db, log }: Pick<HandlerServices, 'db' | 'log'>,
  owner: OwnedResource,
  req: Request,
  res: HandlerResponse,
  operation: string,
  call: (ctx: CallContext) => Promise<T>
): Promise<T> {
  try {
    return await call(callContext(req, res));
  } catch (err) {
    const reason = err instanceof GatewayError ? err.code : 'error';
    await recordAudit(db, { ...cardAudit(owner, req, operation), outcome: 'failure', details: { reason } }).catch((auditError: unknown) =>
      log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written')
    );
    throw err;
  }
}

/**
 * The card's followers a card change of a handler takes along (docs/tokens.md "The cascade"): the
 * listener the composition root put on the services, and the outbox's delivery of what it queued.
 * `cardState` is read through a widened type until `HandlerServices` (handlers/services.ts) declares
 * it: `cardState?: CardStateListener`, set by gateway/compose-services.ts. Without it (a gateway or a
 * test built without tokens) cards change alone, as before.
 */
export function cardFollowers(services: HandlerServices): Required<Pick<CardStateFollowers, 'deliver'>> & CardStateFollowers {
  const { cardState } = services as HandlerServices & { cardState?: CardStateListener };
  return { cardState, deliver: async (ids) => void (await services.outbox.deliver(ids)) };
}

/**
 * Lock, unlock, activate, temporary lock and the restrict family (spec 4.3): the partner's side of
 * `applyStatusChange` (gateway/cards/status-change.ts, shared with the operator's admin route).
 * The transition is checked first (409 `invalid_transition`, issuer not called); after the issuer
 * accepts, one transaction updates the card's status and code and writes the status-history and
 * audit entries, and the `card.status_changed` event (`source: partner`, the request's id) when the
 * code changed. The issuer's `Idempotency-Key` is the request's upstream operation id (the same on
 * every retry of its `Idempotency-Key`). The card's tokens follow in the same transaction (their
 * operations sent after the commit, not awaited). Answers the card status result (2.4).
 */
export function changeCardStatus(services: HandlerServices, build: HandlerBuild<StatusChangeOperation>): OperationHandler<CardFacts & BodyFacts<CardStatusChangeBody> & OperationFacts> {
  const operation = build.operation.audit;
  const change = build.operation.statusChange;
  const deps: StatusChangeDeps = { db: services.db, clients: services.clients, log: services.log, ...cardFollowers(services) };
  return async function changeCardStatusHandler({ ownership: card, body, operation: upstream }, req, res) {
    const result = await applyStatusChange(deps, {
      cardKey: card.id,
      change,
      issuerBody: body,
      operationId: upstream.id,
      resumed: upstream.resumed,
      actor: { source: 'partner', operation, requestId: req.requestId, eventNamesRequest: true },
      ctx: callContext(req, res),
    });
    return { status: 200, body: result };
  };
}

/**
 * An issuer operation on the card that changes nothing we store (3DS answer, PIN tries, authorize):
 * on success, the audit entry, then the full card from our record.
 */
function issuerActionAnsweringCard<Facts extends CardFacts>(
  call: (issuer: IssuerClient, facts: Facts, ctx: CallContext) => Promise<unknown>
): (services: HandlerServices, build: HandlerBuild) => OperationHandler<Facts> {
  return function issuerActionFactory(services, build) {
    const operation = auditActionOf(build);
    const { db, clients } = services;
    return async function issuerActionHandler(facts, req, res) {
      const owned = facts.ownership;
      await loadCardRow(db, owned.id);
      await callIssuer(services, owned, req, res, operation, (ctx) => call(clients.issuer, facts, ctx));
      const card = await db.transaction(async (tx) => {
        await recordAudit(tx, { ...cardAudit(owned, req, operation), outcome: 'success' });
        return toCard(await loadCardRow(tx, owned.id));
      });
      return { status: 200, body: card };
    };
  };
}

/** `PUT /cards/{id}/3ds/answer`: forwarded to the issuer, never stored or logged by us. */
export const setCard3dsAnswer = issuerActionAnsweringCard<CardFacts & BodyFacts<RequestBodies['three-ds-answer']>>((issuer, { ownership: card, body }, ctx) =>
  issuer.setThreeDsAnswer(ctx, card.id, body.answer)
);

/** `POST /cards/{id}/pin/reset-tries`: answers the full card. */
export const resetCardPinTries = issuerActionAnsweringCard<CardFacts>((issuer, { ownership: card }, ctx) => issuer.resetPinTries(ctx, card.id));

/** `POST /cards/{id}/authorize` (PIN-less action): answers the full card. */
export const authorizeCardholder = issuerActionAnsweringCard<CardFacts & BodyFacts<RequestBodies['card-authorize']>>((issuer, { ownership: card, body }, ctx) =>
  issuer.authorize(ctx, card.id, { pin: body.pin })
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
export function changeCardPin(services: HandlerServices, build: HandlerBuild): OperationHandler<CardFacts & BodyFacts<RequestBodies['pin-change']>> {
  const inner = issuerActionAnsweringCard<CardFacts & BodyFacts<RequestBodies['pin-change']>>((issuer, { ownership: card, body }, ctx) =>
    issuer.changePin(ctx, card.id, { expDate: body.expDate, pin: body.pin })
  )(services, build);
  return async function changePinHandler(facts, req, res) {
    try {
      return await inner(facts, req, res);
    } catch (err) {
      throw knownLimitation(err, 'PIN change');
    }
  };
}

/** `POST /cards/{id}/pin/force-lock`: answers the card status result (the issuer refuses it today). */
export function forceCardPinLock(services: HandlerServices, build: HandlerBuild): OperationHandler<CardFacts & BodyFacts<RequestBodies['pin-force-lock']>> {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return async function forcePinLockHandler({ ownership: card, body }, req, res) {
    await loadCardRow(db, card.id);
    try {
      await callIssuer(services, card, req, res, operation, (ctx) => clients.issuer.forcePinLock(ctx, card.id, { expDate: body.expDate }));
    } catch (err) {
      throw knownLimitation(err, 'force PIN lock');
    }
    const status = await clients.issuer.getStatus(callContext(req, res), card.id);
    await recordAudit(db, { ...cardAudit(card, req, operation), outcome: 'success' });
    return { status: 200, body: { cardKey: card.id, status: cardStatusOf(status.statusCode), statusCode: status.statusCode } };
  };
}

/** `PATCH /cards/{id}/emboss-name`: the issuer changes it, then our record, its audit entry and its `card.updated` event; answers the full card. */
export function setCardEmbossName(services: HandlerServices, build: HandlerBuild): OperationHandler<CardFacts & BodyFacts<RequestBodies['card-emboss-name']>> {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return async function setEmbossNameHandler({ ownership: owned, body }, req, res) {
    const cardKey = owned.id;
    await loadCardRow(db, cardKey);
    const { embossedName } = body;
    await callIssuer(services, owned, req, res, operation, (ctx) => clients.issuer.setEmbossName(ctx, cardKey, embossedName));
    const card: Card = await db.transaction(async (tx) => {
      const rows = await tx.query<CardRow>(`UPDATE cards SET embossed_name = $2, updated_at = now() WHERE card_key = $1 RETURNING ${CARD_COLUMNS}`, [cardKey, embossedName]);
      await recordAudit(tx, { ...cardAudit(owned, req, operation), outcome: 'success', details: { embossedName } });
      const updated = toCard(rows.rows[0]);
      await emitEvent(tx, cardUpdated(owned, req, updated, ['embossedName']));
      return updated;
    });
    return { status: 200, body: card };
  };
}

/** The `card.updated` event of a change the partner asked for: the names of the fields, never their secrets. */
export function cardUpdated(owner: Owner, req: Request, card: Card, changed: UpdatedCardField[], limits?: { name: string; value: number }[]): NewPartnerEvent<'card.updated'> {
  return {
    type: 'card.updated',
    partnerId: owner.partnerId,
    cardKey: card.cardKey,
    requestId: req.requestId,
    data: { cardKey: card.cardKey, changed, card, ...(limits ? { limits } : {}) },
  };
}

/** After the issuer set limits: one transaction writes the audit entry and the `card.updated` event with the card as it is. */
async function recordLimitsChange(db: Database, owned: OwnedResource<'card'>, req: Request, operation: string, items: { name: LimitName; value: number }[]): Promise<void> {
  await db.transaction(async (tx) => {
    await recordAudit(tx, { ...cardAudit(owned, req, operation), outcome: 'success', details: Object.fromEntries(items.map((i) => [i.name, i.value])) });
    const card = toCard(await loadCardRow(tx, owned.id));
    await emitEvent(tx, cardUpdated(owned, req, card, ['limits'], items.map(({ name, value }) => ({ name, value }))));
  });
}

function limitOf(limit: CardLimit): CardLimit {
  return { name: limit.name, value: limit.value, currency: limit.currency, used: limit.used, available: limit.available };
}

/** `PATCH /cards/{id}/limits`: several limits at once (audit entry and `card.updated` event in one transaction); answers every limit. */
export function patchCardLimits(services: HandlerServices, build: HandlerBuild): OperationHandler<CardFacts & BodyFacts<LimitBody[]>> {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return async function patchLimitsHandler({ ownership: card, body: items }, req, res) {
    const limits = await callIssuer(services, card, req, res, operation, (ctx) => clients.issuer.patchLimits(ctx, card.id, items));
    await recordLimitsChange(db, card, req, operation, items);
    return { status: 200, body: limits.map(limitOf) };
  };
}

/** `PUT /cards/{id}/limits/{limitName}`: one limit; the body's name must be the path's. */
export function setCardLimit(services: HandlerServices, build: HandlerBuild): OperationHandler<CardFacts & BodyFacts<LimitBody>> {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return async function setLimitHandler({ ownership: card, body }, req, res) {
    if (body.name !== req.params.limitName) {
      throw new GatewayError('validation_failed', 'The body names another limit than the path', {
        invalidParams: [{ name: 'name', reason: `must be ${req.params.limitName}, the limit of the path` }],
      });
    }
    const limit = await callIssuer(services, card, req, res, operation, (ctx) => clients.issuer.setLimit(ctx, card.id, body.name, body));
    await recordLimitsChange(db, card, req, operation, [{ name: body.name, value: body.value }]);
    return { status: 200, body: limitOf(limit) };
  };
}
