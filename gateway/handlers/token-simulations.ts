import type { Request } from 'express';
import { recordAudit, type AuditEntry } from '../audit/audit-log';
import { GatewayError, type ErrorCode, type ProblemExtension } from '../errors';
import { callContext } from '../http/call-context';
import { applyToken } from '../tokens/apply';
import { tokenByReference, tokenRow, toToken, type TokenRow } from '../tokens/store';
import { applyTransaction, findTransaction } from '../transactions/projection';
import { checkTransaction } from '../transactions/validate';
import { toPartnerTransaction } from '../upstreams/partner-transaction';
import type { Token as UpstreamToken, Transaction } from '../../contracts/upstreams';
import { cardAudit, loadCardRow } from './card-operations';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { OwnedResource } from '../http/request-facts';
import type { BodyFacts, OperationFacts, OperationHandler, OwnerFacts } from './context';
import type { RequestBodies } from './request-bodies';

/**
 * The token simulations (sandbox mode only; docs/tokens.md, "Sandbox simulations"): each drives a
 * control route of the processing sandbox over HTTP (upstreams.md 10.9), which plays the network and
 * talks to the gateway's listener as a real processor would (the tokenization request, the
 * verification, the authorization request, their notifications); the handler then applies the state
 * the sandbox answers (should its notification still be on its way: the notification then changes
 * nothing) and answers the resource as the read routes show it.
 */

/** Outside sandbox mode the pipeline is not mounted; this is the second line, the same 404 as a path no pipeline serves. */
function refuseOutsideSandbox(services: HandlerServices, req: Request): void {
  if (!services.sandboxMode) throw new GatewayError('route_not_found', `No route serves ${req.method} ${req.path}`);
}

/** The processing sandbox's refusals of a token simulation, as the partner's problem codes. */
const TOKEN_REFUSALS: Readonly<Record<string, { code: ErrorCode; detail: string }>> = {
  TOKENIZATION_ID_REUSED: { code: 'tokenization_id_reused', detail: 'The processor already used this tokenizationId for another card' },
  NOT_PENDING_VERIFICATION: { code: 'token_transition_invalid', detail: 'Only a pending_verification token takes a verification code' },
  AUTHORIZATION_ID_REUSED: { code: 'authorization_id_reused', detail: 'The processor already used this authorizationId for another card' },
};

function tokenRefusal(err: unknown, extensions: Record<string, ProblemExtension> = {}): unknown {
  const upstreamCode = err instanceof GatewayError && err.code === 'conflict' ? err.extensions?.upstreamCode : undefined;
  const refusal = typeof upstreamCode === 'string' ? TOKEN_REFUSALS[upstreamCode] : undefined;
  return refusal ? new GatewayError(refusal.code, refusal.detail, { extensions: { ...extensions, upstream: 'processing', upstreamCode: upstreamCode as string } }) : err;
}

/** Runs a sandbox call; a failure writes the failure audit entry (its code only) and is answered as its refusal. */
async function call<T>(services: HandlerServices, req: Request, audit: AuditEntry, run: () => Promise<T>, extensions?: Record<string, ProblemExtension>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const refused = tokenRefusal(err, extensions);
    const reason = refused instanceof GatewayError ? refused.code : 'error';
    await recordAudit(services.db, { ...audit, outcome: 'failure', details: { ...audit.details, reason } }).catch((auditError: unknown) =>
      services.log.warn({ err: auditError, requestId: req.requestId }, 'failure audit entry not written')
    );
    throw refused;
  }
}

/** Applies the processor's token as the sandbox answered it; the partner's Token after it. */
async function applyAnswered(services: HandlerServices, req: Request, owner: OwnedResource, token: UpstreamToken) {
  const applied = await services.db.transaction((tx) => applyToken(tx, token, { via: 'simulation', requestId: req.requestId }));
  if (applied.outcome === 'unknown_card') throw new GatewayError('not_found', "The token's card is no longer one of yours");
  // As GET /tokens/{id} shows it now (a notification may have applied a newer state meanwhile).
  const row = await tokenByReference(services.db, token.tokenReference);
  if (!row || row.partner_id !== owner.partnerId) throw new GatewayError('not_found', 'No token has this id');
  return toToken(row);
}

/** The token of the path, with its processor reference (the ownership step answered for another partner's). */
async function ownedTokenRow(services: HandlerServices, owned: OwnedResource<'token'>): Promise<TokenRow> {
  const row = await tokenRow(services.db, owned.id);
  if (!row || row.partner_id !== owned.partnerId) throw new GatewayError('not_found', 'No token has this id');
  return row;
}

/** The audit entry of a token's simulation: on the token's card, naming the token. */
function tokenAudit(owned: OwnedResource<'token'>, row: TokenRow, req: Request, operation: string): AuditEntry {
  return { ...cardAudit(owned, req, operation), targetId: row.card_key, outcome: 'success', details: { tokenId: row.id } };
}

/**
 * `POST /simulate/cards/{id}/tokenizations`: the processing sandbox runs a wallet's (or a merchant's)
 * tokenization request through the gateway's decision and makes the token as it answered (or, without
 * a usable answer, `declined` on its stand-in). The same `tokenizationId` again answers the same token.
 */
export function simulateCardTokenization(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'card'> & BodyFacts<RequestBodies['simulate-tokenization']> & OperationFacts> {
  const operation = auditActionOf(build);
  const { processing } = services.clients;
  return async function simulateTokenizationHandler({ ownership: card, body, operation: upstream }, req, res) {
    refuseOutsideSandbox(services, req);
    await loadCardRow(services.db, card.id);
    const { walletProvider, device, networkVerdict, tokenizationId } = body;
    const audit: AuditEntry = { ...cardAudit(card, req, operation), outcome: 'success', details: { walletProvider, networkVerdict: networkVerdict ?? 'approve' } };
    const answer = await call(services, req, audit, () =>
      processing.simulateTokenization(callContext(req, res), { cardId: card.id, walletProvider, device, networkVerdict, tokenizationId }, upstream.id)
    );
    const token = await applyAnswered(services, req, card, answer.token);
    await recordAudit(services.db, { ...audit, details: { ...audit.details, tokenId: token._id, decision: answer.decision.decision } });
    return { status: 201, body: token };
  };
}

/**
 * `POST /simulate/tokens/{id}/verify`: the cardholder types `code` into the wallet; the sandbox asks
 * the gateway (upstreams.md 10.4) and activates or declines the token as it answered. A wrong code
 * is 409 `verification_failed` with `attemptsLeft`. The code is in no audit entry and no log line.
 */
export function simulateTokenVerification(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'token'> & BodyFacts<RequestBodies['simulate-token-verification']>> {
  const operation = auditActionOf(build);
  const { processing } = services.clients;
  return async function simulateVerificationHandler({ ownership: owned, body }, req, res) {
    refuseOutsideSandbox(services, req);
    const row = await ownedTokenRow(services, owned);
    const audit = tokenAudit(owned, row, req, operation);
    const answer = await call(services, req, audit, () => processing.simulateVerification(callContext(req, res), row.processor_ref, { code: body.code }), { tokenStatus: row.status });
    const token = await applyAnswered(services, req, owned, answer.token);
    const attemptsLeft = answer.attemptsLeft ?? 0;
    await recordAudit(services.db, { ...audit, outcome: answer.verified ? 'success' : 'failure', details: { ...audit.details, verified: answer.verified, attemptsLeft: answer.verified ? null : attemptsLeft } });
    if (!answer.verified) {
      if (answer.reason === 'stand_in') throw new GatewayError('upstream_error', 'The verification got no usable answer in time: the token is unchanged', { extensions: { upstream: 'processing' } });
      throw new GatewayError('verification_failed', attemptsLeft > 0 ? 'The code is not the one sent' : 'The code was not accepted: the token is now declined', {
        extensions: { attemptsLeft, tokenStatus: token.status },
      });
    }
    return { status: 200, body: token };
  };
}

/**
 * `POST /simulate/tokens/{id}/authorizations`: a purchase made with the token (its wallet or the
 * merchant keeping the card on file), authorized by the processing sandbox on the token's card now
 * and decided by the gateway like any other: the transaction carries `tokenId` and `walletProvider`.
 */
export function simulateTokenPurchase(services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'token'> & BodyFacts<RequestBodies['simulate-authorization']> & OperationFacts> {
  const operation = auditActionOf(build);
  return async function simulateTokenAuthorizationHandler({ ownership: owned, body, operation: upstream }, req, res) {
    refuseOutsideSandbox(services, req);
    const row = await ownedTokenRow(services, owned);
    const { amount, currency, type, merchant, authorizationId } = body;
    const audit = tokenAudit(owned, row, req, operation);
    audit.details = { ...audit.details, amount, type: type ?? 'PURCHASE', authorizationId: authorizationId ?? null };
    const answered = await call(services, req, audit, async (): Promise<Transaction> => {
      const answer = await services.clients.processing.simulateAuthorization(callContext(req, res), { tokenReference: row.processor_ref, amount, currency, type, merchant, authorizationId }, upstream.id);
      try {
        return checkTransaction(answer);
      } catch {
        throw new GatewayError('upstream_error', 'The card processing system answered a transaction the gateway cannot read', { extensions: { upstream: 'processing' } });
      }
    });
    const outcome = await services.db.transaction((tx) => applyTransaction(tx, answered, { via: 'simulation', requestId: req.requestId }));
    if (outcome === 'unknown_card') throw new GatewayError('not_found', "The token's card is no longer one of yours");
    await recordAudit(services.db, { ...audit, targetId: answered.cardId, details: { ...audit.details, transactionId: answered.id } });
    return { status: 201, body: (await findTransaction(services.db, owned.partnerId, answered.id)) ?? toPartnerTransaction(answered, owned.individualId ?? null) };
  };
}
