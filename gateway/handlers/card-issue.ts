import { recordAudit } from '../audit/audit-log';
import { cardStatusOf } from '../cards/card-status';
import { findCard, insertCard, recordStatusChange } from '../cards/card-store';
import { GatewayError } from '../errors';
import { callContext } from '../http/call-context';
import { emitEvent } from '../outbox/partner-events';
import type { CardIssueBody } from '../schemas/card-issue';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { BodyFacts, OperationFacts, OperationHandler, OwnerFacts, PartnerFacts } from './context';

/**
 * `POST /individual/accounts/{id}/cards/virtual|physical` (spec 4.2): the issuer creates the card,
 * then one transaction stores it under partner → individual with its first status-history entry,
 * the audit entry and the `card.created` event (`reason: issued`). An issuer failure stores nothing (and is audited as a failure). A virtual card
 * starts ACTIVE (`00`), a physical card LOCKED (`I1`) until activated. The issuer call carries the
 * operation id of the request's Idempotency-Key (docs/upstreams.md): a retry after a crash or a
 * 5xx gets the same card back from the issuer, never a second one.
 */
export function issueCard(type: 'virtual' | 'physical'): (services: HandlerServices, build: HandlerBuild) => OperationHandler<PartnerFacts & OwnerFacts<'individual'> & BodyFacts<CardIssueBody> & OperationFacts> {
  return function issueCardFactory(services, build) {
    const operation = auditActionOf(build);
    const { db, clients, individuals, ownership, log } = services;
    return async function issueCardHandler({ partner, ownership: individual, body, operation: upstream }, req, res) {
      const partnerId = partner._id;
      const individualId = individual.id;
      const clientId = await individuals.clientId(individualId);
      if (body.clientCode !== clientId) {
        throw new GatewayError('validation_failed', "clientCode must be the individual's clientID", {
          invalidParams: [{ name: 'clientCode', reason: "must be the individual's clientID" }],
        });
      }
      const audit = { partnerId, individualId, operation, targetType: 'card' as const, requestId: req.requestId };
      let issued;
      try {
        // The same operation id on every retry of the key: the issuer answers the first card again.
        issued = await clients.issuer.createCard(callContext(req, res), { type, ...body }, upstream.id);
      } catch (err) {
        await recordAudit(db, { ...audit, targetId: individualId, outcome: 'failure', details: { reason: err instanceof GatewayError ? err.code : 'error' } }).catch(
          (auditError: unknown) => log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written')
        );
        throw err;
      }
      const status = cardStatusOf(issued.statusCode);
      if (!status) throw new GatewayError('upstream_error', `The card issuer platform answered an unknown status code`, { extensions: { upstream: 'issuer' } });
      if (upstream.resumed) {
        // An earlier attempt of this key may have stored the card before it stopped: answer that one.
        const known = await findCard(db, issued.cardKey, partnerId);
        if (known) {
          return { status: 201, body: known };
        }
      }
      const card = await db.transaction(async (tx) => {
        const stored = await insertCard(tx, {
          cardKey: issued.cardKey,
          partnerId,
          individualId,
          cardMask: issued.cardMask,
          type,
          status,
          statusCode: issued.statusCode,
          currency: issued.currency,
          productCode: issued.productCode,
          holderClientCode: issued.holderClientCode ?? null,
          expDate: issued.expDate,
          embossedName: issued.embossedName || null,
          createdAt: issued.createdAt,
        });
        await recordStatusChange(tx, {
          cardKey: stored.cardKey,
          partnerId,
          individualId,
          oldStatus: null,
          newStatus: status,
          oldStatusCode: null,
          newStatusCode: issued.statusCode,
          operation: 'card.issue',
          requestId: req.requestId,
        });
        await recordAudit(tx, { ...audit, targetId: stored.cardKey, outcome: 'success', details: { cardMask: stored.cardMask, type } });
        await emitEvent(tx, { type: 'card.created', partnerId, cardKey: stored.cardKey, requestId: req.requestId, data: { card: stored, reason: 'issued' } });
        return stored;
      });
      ownership.invalidate('card', card.cardKey);
      return { status: 201, body: card };
    };
  };
}
