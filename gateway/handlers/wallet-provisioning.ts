import type { Request } from 'express';
import { recordAudit } from '../audit/audit-log';
import type { Queryable } from '../db/database';
import { GatewayError } from '../errors';
import { callContext } from '../http/call-context';
import type { CardRow } from '../cards/card-store';
import { cardAudit, loadCardRow } from './card-operations';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { OwnedResource } from '../http/request-facts';
import type { BodyFacts, OperationHandler, OwnerFacts } from './context';
import type { RequestBodies } from './request-bodies';
import { tokenizableCardState } from '../tokens/decision';

/**
 * Push provisioning (docs/tokens.md, "Provisioning"; upstreams.md 10.2): the wallet's inputs and the
 * card go to the processor, whose payload for the wallet is answered as it came. Neither the inputs
 * nor the payload are written anywhere: no table, no replay store (the pipeline has no idempotency
 * step), no audit entry (it names the card and the wallet only), no log line (the pipeline's
 * `sensitive-data` step keeps the URL out of the access log and sets no-store; the field names are
 * in the logger's redaction list should any reach a logged object).
 */

type Wallet = 'apple_pay' | 'google_pay';

/** The partner's setting that lets a physical card not yet activated be tokenized (migration 028; docs/tokens.md, "Decisions"). */
async function tokenizeBeforeActivation(db: Queryable, partnerId: string): Promise<boolean> {
  const rows = await db.query<{ tokenize_before_activation: boolean }>('SELECT tokenize_before_activation FROM partners WHERE id = $1', [partnerId]);
  return rows.rows[0]?.tokenize_before_activation === true;
}

/** 409 `card_not_active`, with the card's status and code, as `invalid_transition` carries them. */
function cardNotActive(card: Pick<CardRow, 'status' | 'status_code'>): GatewayError {
  return new GatewayError('card_not_active', `A ${card.status} card (${card.status_code}) cannot be added to a wallet`, {
    extensions: { cardStatus: card.status, statusCode: card.status_code },
  });
}

/**
 * The card's state, checked before the processor is called: ACTIVE, or `I1` with the partner's
 * setting. The setting is read only for a card it could let through.
 */
export async function checkTokenizable(db: Queryable, partnerId: string, card: CardRow): Promise<void> {
  const allowed = card.status !== 'ACTIVE' && card.status_code === 'I1' ? await tokenizeBeforeActivation(db, partnerId) : false;
  if (!tokenizableCardState({ statusCode: card.status_code }, allowed)) throw cardNotActive(card);
}

/** The processor's refusal of a card its network will not tokenize (`CARD_NOT_TOKENIZABLE`) is the partner's 409 `card_not_active`. */
function provisioningRefusal(err: unknown, card: CardRow): unknown {
  const upstreamCode = err instanceof GatewayError && err.code === 'conflict' ? err.extensions?.upstreamCode : undefined;
  return upstreamCode === 'CARD_NOT_TOKENIZABLE' ? cardNotActive(card) : err;
}

/**
 * Runs the provisioning call. A refusal that the card's state or the processor's own 409 explain
 * writes nothing; a failure of the processor (502, 504) writes the failure audit entry other card
 * operations write.
 */
async function provision<T>(services: HandlerServices, owned: OwnedResource, req: Request, operation: string, wallet: Wallet, call: () => Promise<T>): Promise<T> {
  const { db, log } = services;
  const card = await loadCardRow(db, owned.id);
  await checkTokenizable(db, owned.partnerId, card);
  const audit = cardAudit(owned, req, operation);
  let payload: T;
  try {
    payload = await call();
  } catch (err) {
    const refused = provisioningRefusal(err, card);
    if (!(refused instanceof GatewayError && refused.code === 'card_not_active')) {
      const reason = refused instanceof GatewayError ? refused.code : 'error';
      await recordAudit(db, { ...audit, outcome: 'failure', details: { wallet, reason } }).catch((auditError: unknown) =>
        log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written')
      );
    }
    throw refused;
  }
  await recordAudit(db, { ...audit, outcome: 'success', details: { wallet } });
  return payload;
}

/** `POST /cards/{id}/wallet-provisioning/apple-pay`: Apple Pay In-App Provisioning. */
export function provisionApplePay(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'card'> & BodyFacts<RequestBodies['wallet-provisioning-apple-pay']>> {
  const operation = auditActionOf(build);
  const { processing } = services.clients;
  return async function provisionApplePayHandler({ ownership: card, body }, req, res) {
    const { certificates, nonce, nonceSignature } = body;
    const payload = await provision(services, card, req, operation, 'apple_pay', () =>
      processing.provisionApplePay(callContext(req, res), { cardKey: card.id, certificates: [...certificates], nonce, nonceSignature })
    );
    return { status: 200, body: payload };
  };
}

/** `POST /cards/{id}/wallet-provisioning/google-pay`: Google Pay Push Provisioning. */
export function provisionGooglePay(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'card'> & BodyFacts<RequestBodies['wallet-provisioning-google-pay']>> {
  const operation = auditActionOf(build);
  const { processing } = services.clients;
  return async function provisionGooglePayHandler({ ownership: card, body }, req, res) {
    const { walletAccountId, deviceId } = body;
    const payload = await provision(services, card, req, operation, 'google_pay', () =>
      processing.provisionGooglePay(callContext(req, res), { cardKey: card.id, walletAccountId, deviceId })
    );
    return { status: 200, body: payload };
  };
}
