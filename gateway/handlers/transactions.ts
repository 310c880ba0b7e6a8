import { cardBelongsToIndividual } from '../cards/card-store';
import { GatewayError } from '../errors';
import { callContext } from '../http/call-context';
import { pagination } from '../http/pagination';
import { cursorKey, decodeTransactionCursor, encodeTransactionCursor } from '../transactions/list-cursor';
import { instant } from '../transactions/validate';
import { authorizationsOf, findTransaction, listTransactions, type TransactionPosition } from '../transactions/projection';
import type { HandlerServices } from './services';
import type { OperationHandler, OwnerFacts, PartnerFacts, QueryFacts } from './context';
import type { TransactionsQuery, TransactionsSearchQuery } from '../schemas';
import { toPartnerTransaction } from '../upstreams/partner-transaction';

/**
 * `GET /individual/accounts/{id}/transactions?page&limit[&cardKey]` (spec 4.2): from the card
 * processing system, by the individual's account identification (its clientID) and, when given,
 * one of its cards. A partner without the processing system configured gets an empty page. The
 * processor answers it rather than the projection (docs/transactions.md, "Where the data comes
 * from"): it is the spec's page-numbered list with an exact total, and holds the account's whole
 * history, also what it recorded before the gateway was told of it.
 */
export function listIndividualTransactions(services: HandlerServices): OperationHandler<PartnerFacts & OwnerFacts<'individual'> & QueryFacts<TransactionsQuery>> {
  const { db, clients, individuals, partners } = services;
  return async function listTransactionsHandler({ partner, ownership: individual, query }, req, res) {
    const page = { page: query.page, limit: query.limit };
    const individualId = individual.id;
    if (query.cardKey !== undefined && !(await cardBelongsToIndividual(db, query.cardKey, individualId))) {
      throw new GatewayError('validation_failed', 'cardKey is not a card of this individual', {
        invalidParams: [{ name: 'cardKey', reason: 'is not a card of this individual' }],
      });
    }
    const [processingEnabled, clientId] = await Promise.all([partners.processingEnabled(partner._id), individuals.clientId(individualId)]);
    if (!processingEnabled || !clientId) {
      return { status: 200, body: { data: [], pagination: pagination(page, 0) } };
    }
    const result = await clients.processing.listTransactions(callContext(req, res), {
      accountId: clientId,
      cardId: query.cardKey,
      page: page.page,
      limit: page.limit,
    });
    // How the gateway decided each authorization is its own record, not the processor's.
    const decided = await authorizationsOf(db, result.data.map((t) => t.id));
    return {
      status: 200,
      body: {
        data: result.data.map((t) => toPartnerTransaction(t, individualId, decided.get(t.id) ?? null)),
        pagination: pagination(page, result.total),
      },
    };
  };
}

function badParam(name: string, reason: string, detail: string): GatewayError {
  return new GatewayError('validation_failed', detail, { invalidParams: [{ name, reason }] });
}

/**
 * `GET /transactions?cardKey&individualId&status&type&from&to&limit&cursor`: the partner's
 * transactions across all its individuals and B2B cards, newest first, from the gateway's
 * projection, as `{data, nextCursor}`. A filter naming another partner's card or individual simply
 * matches nothing. A partner without the processing system gets an empty page, as the individual list.
 */
export function listPartnerTransactions(services: HandlerServices): OperationHandler<PartnerFacts & QueryFacts<TransactionsSearchQuery>> {
  const { db, partners } = services;
  return async function listPartnerTransactionsHandler({ partner, query }) {
    const { limit, cursor, ...filters } = query;
    for (const name of ['from', 'to'] as const) {
      if (filters[name] !== undefined && instant(filters[name]) === undefined) throw badParam(name, 'must be an RFC 3339 date-time', `${name} is not a date-time`);
    }
    if (filters.from !== undefined && filters.to !== undefined && Date.parse(filters.from) > Date.parse(filters.to)) {
      throw badParam('from', 'must not be after to', 'from is after to');
    }
    const partnerId = partner._id;
    const [key, processingEnabled] = await Promise.all([cursorKey(db), partners.processingEnabled(partnerId)]);
    let after: TransactionPosition | undefined;
    if (cursor !== undefined) {
      after = decodeTransactionCursor(key, partnerId, filters, cursor);
      if (after === undefined) throw badParam('cursor', 'must be the nextCursor of a previous page of the same search', 'The cursor is not one this API gave for this search');
    }
    if (!processingEnabled) {
      return { status: 200, body: { data: [], nextCursor: null } };
    }
    const page = await listTransactions(db, partnerId, filters, { limit, after });
    return { status: 200, body: { data: page.data, nextCursor: page.last ? encodeTransactionCursor(key, partnerId, filters, page.last) : null } };
  };
}

/** `GET /transactions/{id}`: one of the partner's transactions with its history (the ownership step answered 400 / 403 / 404 for the others). */
export function getPartnerTransaction(services: HandlerServices): OperationHandler<OwnerFacts<'transaction'>> {
  const { db, partners } = services;
  return async function getTransactionHandler({ ownership: owned }, _req, res) {
    // As the list: a partner without the processing system has no transactions to read.
    const transaction = (await partners.processingEnabled(owned.partnerId)) ? await findTransaction(db, owned.partnerId, owned.id) : undefined;
    if (!transaction) throw new GatewayError('not_found', 'No transaction has this id');
    return { status: 200, body: transaction };
  };
}
