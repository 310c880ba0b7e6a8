import type { Request } from 'express';
import { recordAudit } from '../audit/audit-log';
import { statusCodeFor } from '../cards/card-status';
import { markIssuerCheckDue } from '../cards/card-sync';
import { GatewayError, type ErrorCode } from '../errors';
import { callContext } from '../http/call-context';
import { findTransaction, applyTransaction } from '../transactions/projection';
import { checkTransaction } from '../transactions/validate';
import { toPartnerTransaction, type PartnerTransaction } from '../upstreams/partner-transaction';
import type { IssuerStatusCode, SimulatedStep, Transaction } from '../../contracts/upstreams';
import { callIssuer, cardAudit, loadCardRow } from './card-operations';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { OwnedResource } from '../http/request-facts';
import type { BodyFacts, OperationFacts, OperationHandler, OwnerFacts } from './context';
import type { RequestBodies } from './request-bodies';

/**
 * Outside sandbox mode the route does not exist for the partner: its pipeline is not even mounted
 * (`servedPipelines`, gateway/runtime/served-pipelines.ts); this refusal is the second line, the same 404
 * as a path no pipeline serves.
 */
function refuseOutsideSandbox(services: HandlerServices, req: Request): void {
  if (!services.sandboxMode) throw new GatewayError('route_not_found', `No route serves ${req.method} ${req.path}`);
}

/** The processing sandbox's refusals of a lifecycle step, as the partner's problem codes. */
const LIFECYCLE_REFUSALS: Readonly<Record<string, { code: ErrorCode; detail: string }>> = {
  TRANSACTION_NOT_PENDING: { code: 'transaction_not_pending', detail: 'Only a PENDING transaction can be cleared, reversed or expire' },
  AMOUNT_EXCEEDS_AUTHORIZED: { code: 'amount_exceeds_remaining', detail: "The amount is more than the transaction's amount" },
  AMOUNT_EXCEEDS_REMAINING: { code: 'amount_exceeds_remaining', detail: 'The amount is more than is left of the transaction' },
  REFUND_NOT_ALLOWED: { code: 'refund_not_allowed', detail: 'Only a SETTLED purchase can be refunded' },
  REFUND_EXCEEDS_SETTLED: { code: 'refund_exceeds_settled', detail: 'The amount is more than is left of the settled amount after earlier refunds' },
  AUTHORIZATION_ID_REUSED: { code: 'authorization_id_reused', detail: 'The processor already used this authorizationId for another card' },
};

function lifecycleRefusal(err: unknown): unknown {
  const upstreamCode = err instanceof GatewayError && err.code === 'conflict' ? err.extensions?.upstreamCode : undefined;
  const refusal = typeof upstreamCode === 'string' ? LIFECYCLE_REFUSALS[upstreamCode] : undefined;
  return refusal ? new GatewayError(refusal.code, refusal.detail, { extensions: { upstream: 'processing', upstreamCode: upstreamCode as string } }) : err;
}

/** The sandbox's answer, checked as any state of a transaction (an invalid one is the upstream's fault: 502). */
function checkAnswer(answer: Transaction): Transaction {
  try {
    return checkTransaction(answer);
  } catch {
    throw new GatewayError('upstream_error', 'The card processing system answered a transaction the gateway cannot read', { extensions: { upstream: 'processing' } });
  }
}

/**
 * Runs a processing sandbox call that records a transaction or a step of one, then applies the
 * state it answers to the projection (the sandbox notified it before answering; should that
 * notification still be on its way, this applies it first, and the notification then changes
 * nothing). Audited on the transaction's card; answers the transaction as `GET /transactions/{id}`
 * shows it.
 */
async function simulate(
  services: HandlerServices,
  owner: OwnedResource,
  req: Request,
  operation: string,
  cardKey: string,
  call: () => Promise<Transaction>,
  details: Record<string, string | number | boolean | null>
): Promise<PartnerTransaction> {
  const { db, log } = services;
  const audit = { ...cardAudit(owner, req, operation), targetId: cardKey };
  let transaction: Transaction;
  try {
    transaction = checkAnswer(await call());
  } catch (err) {
    const refused = lifecycleRefusal(err);
    const reason = refused instanceof GatewayError ? refused.code : 'error';
    await recordAudit(db, { ...audit, outcome: 'failure', details: { ...details, reason } }).catch((auditError: unknown) =>
      log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written')
    );
    throw refused;
  }
  const outcome = await db.transaction((tx) => applyTransaction(tx, transaction, { via: 'simulation', requestId: req.requestId }));
  if (outcome === 'unknown_card') throw new GatewayError('not_found', 'The transaction\'s card is no longer one of yours');
  await recordAudit(db, { ...audit, outcome: 'success', details: { ...details, transactionId: transaction.id } });
  return (await findTransaction(db, owner.partnerId, transaction.id)) ?? toPartnerTransaction(transaction, owner.individualId ?? null);
}

/**
 * `POST /simulate/cards/{id}/transactions` (sandbox mode only), the shortcut: the processing sandbox
 * records an authorization (PENDING), a force-posted clearing (SETTLED) or a decline, and notifies
 * the gateway before it answers, so its event comes through the inbound listener as a real one
 * would (docs/upstreams.md section 9).
 */
export function simulateCardTransaction(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'card'> & BodyFacts<RequestBodies['simulate-transaction']> & OperationFacts> {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return async function simulateTransactionHandler({ ownership: card, body: validated, operation: upstream }, req, res) {
    refuseOutsideSandbox(services, req);
    const cardKey = card.id;
    await loadCardRow(db, cardKey);
    const { amount, currency, type, merchant, declineReason } = validated;
    const body = { cardId: cardKey, amount, currency, type, merchant, declineReason };
    const transaction = await simulate(services, card, req, operation, cardKey, () => clients.processing.simulateTransaction(callContext(req, res), body, upstream.id), {
      amount,
      currency,
      type: type ?? 'authorization',
    });
    return { status: 201, body: transaction };
  };
}

/**
 * `POST /simulate/cards/{id}/authorizations` (sandbox mode only): the processing sandbox authorizes a
 * purchase or withdrawal (PENDING). The same `authorizationId` again is the processor's retry of
 * that authorization: the same transaction, nothing new.
 */
export function simulateCardAuthorization(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'card'> & BodyFacts<RequestBodies['simulate-authorization']> & OperationFacts> {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return async function simulateAuthorizationHandler({ ownership: card, body: validated, operation: upstream }, req, res) {
    refuseOutsideSandbox(services, req);
    const cardKey = card.id;
    await loadCardRow(db, cardKey);
    const { amount, currency, type, merchant, authorizationId } = validated;
    const body = { cardId: cardKey, amount, currency, type, merchant, authorizationId };
    const transaction = await simulate(services, card, req, operation, cardKey, () => clients.processing.simulateAuthorization(callContext(req, res), body, upstream.id), {
      amount,
      type: type ?? 'PURCHASE',
      authorizationId: authorizationId ?? null,
    });
    return { status: 201, body: transaction };
  };
}

/**
 * `POST /simulate/transactions/{id}/clearing | reversal | expiry | refund` (sandbox mode only): the
 * processing sandbox plays that step of the transaction's life. A step the lifecycle forbids is 409
 * with its code (docs/transactions.md); a refund answers the new REFUND transaction (201).
 */
export function simulateTransactionStep(step: SimulatedStep): (services: HandlerServices, build: HandlerBuild) => OperationHandler<OwnerFacts<'transaction'> & BodyFacts<RequestBodies['simulate-transaction-step']> & OperationFacts> {
  return (services, build) => {
    const operation = auditActionOf(build);
    const { db, clients } = services;
    return async function simulateStepHandler({ ownership: transactionOwned, body, operation: upstream }, req, res) {
      refuseOutsideSandbox(services, req);
      const id = transactionOwned.id;
      const cardKey = (await db.query<{ card_key: string }>('SELECT card_key FROM card_transactions WHERE id = $1', [id])).rows[0]?.card_key;
      if (cardKey === undefined) throw new GatewayError('not_found', 'No transaction has this id');
      const { amount } = body;
      const transaction = await simulate(services, transactionOwned, req, operation, cardKey, () => clients.processing.simulateStep(callContext(req, res), id, step, { amount }, upstream.id), {
        step,
        of: id,
        amount: amount ?? null,
      });
      return { status: step === 'refund' ? 201 : 200, body: transaction };
    };
  };
}

/**
 * `POST /simulate/cards/{id}/issuer-status` (sandbox mode only): the issuer sandbox sets the status on
 * its own and notifies the gateway, whose inbound listener records it with its `card.status_changed`
 * event (source issuer). The card is marked for an issuer check first: should the notification be
 * lost, the card reconciler takes the change over all the same.
 */
export function simulateCardIssuerStatus(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'card'> & BodyFacts<RequestBodies['simulate-issuer-status']>> {
  const operation = auditActionOf(build);
  const { db, clients } = services;
  return async function simulateIssuerStatusHandler({ ownership: card, body }, req, res) {
    refuseOutsideSandbox(services, req);
    const cardKey = card.id;
    const row = await loadCardRow(db, cardKey);
    if (row.status === 'CLOSED') throw new GatewayError('invalid_transition', 'A CLOSED card cannot change status');
    const { status, reason } = body;
    const statusCode = statusCodeFor(status) as IssuerStatusCode;
    await markIssuerCheckDue(db, cardKey);
    await callIssuer(services, card, req, res, operation, (ctx) => clients.issuer.simulateStatus(ctx, cardKey, { statusCode, reason }));
    await recordAudit(db, { ...cardAudit(card, req, operation), outcome: 'success', details: { status, statusCode, previousStatus: row.status } });
    return { status: 200, body: { cardKey, status, statusCode } };
  };
}
