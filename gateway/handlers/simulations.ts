import type { Request, RequestHandler } from 'express';
import { recordAudit } from '../audit/audit-log';
import { statusCodeFor, type CardStatus } from '../cards/card-status';
import { markIssuerCheckDue } from '../cards/card-sync';
import { GatewayError } from '../errors';
import { asyncHandler, callContext } from '../http/async-handler';
import { upstreamOperationId } from '../idempotency/operation-id';
import type { IssuerStatusCode, Transaction } from '../upstreams/types';
import { callIssuer, cardAudit, loadCardRow } from './card-operations';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import { toPartnerTransaction } from '../upstreams/partner-transaction';

/**
 * Outside sandbox mode the route does not exist for the partner: its pipeline is not even mounted
 * (`servedPipelines`, gateway/boot/config-guards.ts); this refusal is the second line, the same 404
 * as a path no pipeline serves.
 */
function refuseOutsideSandbox(services: HandlerServices, req: Request): void {
  if (!services.sandboxMode) throw new GatewayError('route_not_found', `No route serves ${req.method} ${req.path}`);
}

/**
 * `POST /simulate/cards/{id}/transactions` (sandbox mode only): the processing sandbox records the
 * transaction and notifies the gateway before it answers, so the `transaction.created` event comes
 * through the inbound listener as a real one would (docs/upstreams.md section 9).
 */
export function simulateCardTransaction(services: HandlerServices, build: HandlerBuild): RequestHandler {
  const operation = auditActionOf(build);
  const { db, clients, log } = services;
  return asyncHandler(async function simulateTransactionHandler(req, res) {
    refuseOutsideSandbox(services, req);
    const cardKey = req.ownership!.id;
    await loadCardRow(db, cardKey);
    const { amount, currency, type, merchant, declineReason } = req.body as {
      amount: number;
      currency: string;
      type?: 'authorization' | 'clearing' | 'decline';
      merchant?: { name?: string; mcc?: string; country?: string };
      declineReason?: string;
    };
    let transaction: Transaction;
    try {
      transaction = await clients.processing.simulateTransaction(
        callContext(req, res),
        { cardId: cardKey, amount, currency, type, merchant, declineReason },
        upstreamOperationId(req),
      );
    } catch (err) {
      const reason = err instanceof GatewayError ? err.code : 'error';
      await recordAudit(db, { ...cardAudit(req, operation), outcome: 'failure', details: { reason } }).catch((auditError: unknown) =>
        log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written')
      );
      throw err;
    }
    await recordAudit(db, { ...cardAudit(req, operation), outcome: 'success', details: { transactionId: transaction.id, amount, currency, type: type ?? 'authorization' } });
    res.status(201).json(toPartnerTransaction(transaction));
  });
}

/**
 * `POST /simulate/cards/{id}/issuer-status` (sandbox mode only): the issuer sandbox sets the status on
 * its own and notifies the gateway, whose inbound listener records it with its `card.status_changed`
 * event (source issuer). The card is marked for an issuer check first: should the notification be
 * lost, the card reconciler takes the change over all the same.
 */
export function simulateCardIssuerStatus(services: HandlerServices, build: HandlerBuild): RequestHandler {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return asyncHandler(async function simulateIssuerStatusHandler(req, res) {
    refuseOutsideSandbox(services, req);
    const cardKey = req.ownership!.id;
    const row = await loadCardRow(db, cardKey);
    if (row.status === 'CLOSED') throw new GatewayError('invalid_transition', 'A CLOSED card cannot change status');
    const { status, reason } = req.body as { status: CardStatus; reason?: string };
    const statusCode = statusCodeFor(status) as IssuerStatusCode;
    await markIssuerCheckDue(db, cardKey);
    await callIssuer(services, req, res, operation, (ctx) => clients.issuer.simulateStatus(ctx, cardKey, { statusCode, reason }));
    await recordAudit(db, { ...cardAudit(req, operation), outcome: 'success', details: { status, statusCode, previousStatus: row.status } });
    res.json({ cardKey, status, statusCode });
  });
}
