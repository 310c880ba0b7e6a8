import type { HandlerAnswer } from '../http/answer';
import { listAuditForIndividual } from '../audit/audit-log';
import { listActiveCardsOfIndividual, listStatusHistoryOfIndividual, toCardListItem } from '../cards/card-store';
import { GatewayError } from '../errors';
import type { CountedPage, PageRequest } from '../db/paging';
import type { IndividualCardsQuery, PaginationQuery } from '../schemas';
import { pagination, TOTAL_CAPPED, type Pagination } from '../http/pagination';
import type { HandlerServices } from './services';
import type { OperationHandler, OwnerFacts, PartnerFacts, QueryFacts } from './context';

/** `GET /individual/accounts?page&limit`: `{count, data}` (spec 4.2), newest first. */
export function listIndividuals(services: HandlerServices): OperationHandler<PartnerFacts & QueryFacts<PaginationQuery>> {
  const { individuals } = services;
  return async function listIndividualsHandler({ partner, query: page }) {
    return { status: 200, body: await individuals.list(partner._id, page) };
  };
}

/** `GET /individual/accounts/{id}`: the individual account (spec 2.1). */
export function getIndividual(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { individuals } = services;
  return async function getIndividualHandler({ ownership: individual }, _req, res) {
    const account = await individuals.get(individual.id);
    if (!account) throw new GatewayError('not_found', 'No individual account has this id');
    return { status: 200, body: account };
  };
}

/**
 * `GET /individual/accounts/{id}/cards[?page&limit]`: the individual's ACTIVE cards, first nine
 * fields of 2.3, as the spec's array: at most `limit` (default and most 100), and, when more
 * follow, `Link: <…?page=N+1&limit=L>; rel="next"` (docs/individuals.md).
 */
export function listIndividualCards(services: HandlerServices): OperationHandler<OwnerFacts<'individual'> & QueryFacts<IndividualCardsQuery>> {
  const { db } = services;
  return async function listIndividualCardsHandler({ ownership: individual, query: page }, req) {
    const { cards, hasMore } = await listActiveCardsOfIndividual(db, individual.id, page);
    const body = cards.map(toCardListItem);
    if (!hasMore) return { status: 200, body };
    return { status: 200, body, headers: { Link: `<${req.originalUrl.split('?')[0]}?page=${page.page + 1}&limit=${page.limit}>; rel="next"` } };
  };
}

/**
 * A page of an individual's history as answered: `{data, pagination}`, `total` exact up to
 * HISTORY_COUNT_CAP and a lower bound past it, which `X-Total-Capped: true` says (docs/pagination.md).
 */
function historyPage<T>(page: PageRequest, items: T[], counted: Omit<CountedPage<unknown>, 'rows'>): HandlerAnswer {
  const body: { data: T[]; pagination: Pagination } = { data: items, pagination: pagination(page, counted.total, counted.hasMore) };
  return counted.capped ? { status: 200, body, headers: TOTAL_CAPPED } : { status: 200, body };
}

/** `GET /individual/accounts/{id}/audit-logs?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualAuditLogs(services: HandlerServices): OperationHandler<OwnerFacts<'individual'> & QueryFacts<PaginationQuery>> {
  const { db } = services;
  return async function listAuditLogsHandler({ ownership: individual, query: page }) {
    const { items, ...counted } = await listAuditForIndividual(db, individual.id, page);
    return historyPage(page, items, counted);
  };
}

/** `GET /individual/accounts/{id}/card-status-history?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualCardStatusHistory(services: HandlerServices): OperationHandler<OwnerFacts<'individual'> & QueryFacts<PaginationQuery>> {
  const { db } = services;
  return async function listStatusHistoryHandler({ ownership: individual, query: page }) {
    const { items, ...counted } = await listStatusHistoryOfIndividual(db, individual.id, page);
    return historyPage(page, items, counted);
  };
}
