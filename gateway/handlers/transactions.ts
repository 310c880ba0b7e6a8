import type { RequestHandler } from 'express';
import { cardBelongsToIndividual } from '../cards/card-store';
import { GatewayError } from '../errors';
import { asyncHandler, callContext } from '../http/async-handler';
import type { PageRequest } from '../db/paging';
import { pagination } from '../http/pagination';
import type { HandlerServices } from './services';
import { toPartnerTransaction } from '../upstreams/partner-transaction';

/**
 * `GET /individual/accounts/{id}/transactions?page&limit[&cardKey]` (spec 4.2): from the card
 * processing system, by the individual's account identification (its clientID) and, when given,
 * one of its cards. A partner without the processing system configured gets an empty page.
 */
export function listIndividualTransactions(services: HandlerServices): RequestHandler {
  const { db, clients, individuals, partners } = services;
  return asyncHandler(async function listTransactionsHandler(req, res) {
    const query = req.query as unknown as PageRequest & { cardKey?: string };
    const page = { page: query.page, limit: query.limit };
    const individualId = req.ownership!.id;
    if (query.cardKey !== undefined && !(await cardBelongsToIndividual(db, query.cardKey, individualId))) {
      throw new GatewayError('validation_failed', 'cardKey is not a card of this individual', {
        invalidParams: [{ name: 'cardKey', reason: 'is not a card of this individual' }],
      });
    }
    const [processingEnabled, clientId] = await Promise.all([partners.processingEnabled(req.partner!._id), individuals.clientId(individualId)]);
    if (!processingEnabled || !clientId) {
      res.json({ data: [], pagination: pagination(page, 0) });
      return;
    }
    const result = await clients.processing.listTransactions(callContext(req, res), {
      accountId: clientId,
      cardId: query.cardKey,
      page: page.page,
      limit: page.limit,
    });
    res.json({
      data: result.data.map(toPartnerTransaction),
      pagination: pagination(page, result.total),
    });
  });
}
