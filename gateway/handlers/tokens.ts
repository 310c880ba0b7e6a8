import { GatewayError } from '../errors';
import { callContext } from '../http/call-context';
import { signedCursorKey } from '../db/signed-cursor';
import { decodeTokenCursor, encodeTokenCursor, searchTokens, type TokenPosition } from '../tokens/search';
import { cardTokens, findToken } from '../tokens/store';
import type { TokensSearchQuery } from '../schemas';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { BodyFacts, OperationFacts, OperationHandler, OwnerFacts, PartnerFacts, QueryFacts } from './context';
import type { RequestBodies } from './request-bodies';
import { changeTokenStatus, type TokenStatusOrder } from '../tokens/operations';

/**
 * The partner's network tokens (docs/tokens.md, "Reading tokens" and the routes' table): read from
 * PostgreSQL, where the tokenization decision, the processor's notifications, the cascade and the
 * token reconciler keep them; changed at the processor first (part C's `changeTokenStatus`).
 */

/** `GET /cards/{id}/tokens`: every token of the card, newest first (the ownership step answered 400 / 403 / 404 for the others). */
export function listCardTokens(services: HandlerServices): OperationHandler<OwnerFacts<'card'>> {
  const { db } = services;
  return async function listCardTokensHandler({ ownership: card }) {
    return { status: 200, body: { data: await cardTokens(db, card.partnerId, card.id) } };
  };
}

/**
 * `GET /tokens?cardKey&status&walletProvider&limit&cursor`: the partner's tokens across all its
 * cards, newest first, as `{data, nextCursor}`. A `cardKey` of another partner matches nothing; a
 * cursor this gateway did not give for this partner and these filters is 400 naming `cursor`.
 */
export function listTokens(services: HandlerServices): OperationHandler<PartnerFacts & QueryFacts<TokensSearchQuery>> {
  const { db } = services;
  return async function listTokensHandler({ partner, query }) {
    const { limit, cursor, ...filters } = query;
    const partnerId = partner._id;
    const key = await signedCursorKey(db);
    let after: TokenPosition | undefined;
    if (cursor !== undefined) {
      after = decodeTokenCursor(key, partnerId, filters, cursor);
      if (after === undefined) {
        throw new GatewayError('validation_failed', 'The cursor is not one this API gave for this search', {
          invalidParams: [{ name: 'cursor', reason: 'must be the nextCursor of a previous page of the same search' }],
        });
      }
    }
    const page = await searchTokens(db, partnerId, filters, { limit, after });
    return { status: 200, body: { data: page.data, nextCursor: page.last ? encodeTokenCursor(key, partnerId, filters, page.last) : null } };
  };
}

/** `GET /tokens/{id}`: one of the partner's tokens with its history. */
export function getToken(services: HandlerServices): OperationHandler<OwnerFacts<'token'>> {
  const { db } = services;
  return async function getTokenHandler({ ownership: owned }) {
    const token = await findToken(db, owned.id, owned.partnerId);
    if (!token) throw new GatewayError('not_found', 'No token has this id');
    return { status: 200, body: token };
  };
}

/**
 * `POST /tokens/{id}/suspend` | `resume` | `deactivate`: the change is made at the processor with
 * the request's operation id (its claimed Idempotency-Key's: a retry is applied once), then its
 * answer, history, audit entry and `token.updated` event are recorded in one transaction before the
 * 200 (part C's `changeTokenStatus`, which answers the refusals of the routes' table). A resume the
 * card's lock overtook meanwhile queues the token's suspension, delivered right after (not awaited
 * by the answer; the outbox retries it).
 */
export function changeToken(action: TokenStatusOrder['action']) {
  return (services: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'token'> & BodyFacts<RequestBodies['token-change']> & OperationFacts> => {
    const operation = auditActionOf(build);
    const { db, clients, log, outbox } = services;
    return async function changeTokenHandler({ ownership: owned, body, operation: upstream }, req, res) {
      const { token, queued } = await changeTokenStatus(
        { db, processing: clients.processing, log },
        {
          tokenId: owned.id,
          partnerId: owned.partnerId,
          action,
          ...(body.reason === undefined ? {} : { reason: body.reason }),
          operationId: upstream.id,
          operation,
          requestId: req.requestId,
          ctx: callContext(req, res),
        }
      );
      if (queued.length > 0) void outbox.deliver(queued).catch((err: unknown) => log.warn({ err, requestId: req.requestId }, 'outbox delivery deferred'));
      return { status: 200, body: token };
    };
  };
}
