import { RESULT_WINDOW, searchCards } from '../cards/card-search';
import { GatewayError } from '../errors';
import type { PageRequest } from '../db/paging';
import { pagination, TOTAL_CAPPED } from '../http/pagination';
import type { HandlerServices } from './services';
import type { CardsListQuery } from '../schemas';
import type { OperationHandler, PartnerFacts, QueryFacts } from './context';

/**
 * `GET /cards?page&limit&status&type&search` (spec 4.3): every card of the calling partner,
 * individual and B2B alike (not tenant-scoped), newest first, as `{success, data, pagination}`.
 * `total` is exact without a search; with one, exact up to 10,000 matching cards, and above 10,000
 * with `X-Total-Capped: true`. Only the first 10,000 matches can be paged through: a page starting
 * beyond them is a 400 while more match, `totalPages` counts the pages of those 10,000 and
 * `hasMore` is false on the last of them (docs/card-search.md, docs/pagination.md).
 */
export function listCards(services: HandlerServices): OperationHandler<PartnerFacts & QueryFacts<CardsListQuery>> {
  const { db } = services;
  return async function listCardsHandler({ partner, query }) {
    const page: PageRequest = { page: query.page, limit: query.limit };
    const result = await searchCards(db, { partnerId: partner._id, status: query.status, type: query.type, search: query.search }, page);
    if (!result.withinWindow) {
      throw new GatewayError('validation_failed', `Only the first ${RESULT_WINDOW} matching cards can be paged through; narrow the list with status, type or search`, {
        invalidParams: [{ name: 'page', reason: `page × limit must be at most ${RESULT_WINDOW} when more than ${RESULT_WINDOW} cards match` }],
      });
    }
    // totalPages counts the pages that can be fetched: those of the result window.
    const answer = { ...pagination(page, result.total, result.hasMore), totalPages: Math.ceil(Math.min(result.total, RESULT_WINDOW) / page.limit) };
    return { status: 200, body: { success: true, data: result.items, pagination: answer }, ...(result.totalCapped ? { headers: TOTAL_CAPPED } : {}) };
  };
}
