import type { Response } from 'express';
import { listAuditForIndividual } from '../audit/audit-log';
import { listActiveCardsOfIndividual, listStatusHistoryOfIndividual, toCardListItem } from '../cards/card-store';
import { GatewayError } from '../errors';
import type { CountedPage, PageRequest } from '../db/paging';
import { pagination, type Pagination } from '../http/pagination';
import type { HandlerServices } from './services';
import type { OperationHandler, OwnerFacts, PartnerFacts } from './context';

/** `GET /individual/accounts?page&limit`: `{count, data}` (spec 4.2), newest first. */
export function listIndividuals(services: HandlerServices): OperationHandler<PartnerFacts> {
  const { individuals } = services;
  return async function listIndividualsHandler({ partner }, req, res) {
    res.json(await individuals.list(partner._id, req.query as unknown as PageRequest));
  };
}

/** `GET /individual/accounts/{id}`: the individual account (spec 2.1). */
export function getIndividual(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { individuals } = services;
  return async function getIndividualHandler({ ownership: individual }, _req, res) {
    const account = await individuals.get(individual.id);
    if (!account) throw new GatewayError('not_found', 'No individual account has this id');
    res.json(account);
  };
}

/**
 * `GET /individual/accounts/{id}/cards[?page&limit]`: the individual's ACTIVE cards, first nine
 * fields of 2.3, as the spec's array: at most `limit` (default and most 100), and, when more
 * follow, `Link: <…?page=N+1&limit=L>; rel="next"` (docs/individuals.md).
 */
export function listIndividualCards(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { db } = services;
  return async function listIndividualCardsHandler({ ownership: individual }, req, res) {
    const page = req.query as unknown as PageRequest;
    const { cards, hasMore } = await listActiveCardsOfIndividual(db, individual.id, page);
    if (hasMore) res.setHeader('Link', `<${req.originalUrl.split('?')[0]}?page=${page.page + 1}&limit=${page.limit}>; rel="next"`);
    res.json(cards.map(toCardListItem));
  };
}

/**
 * A page of an individual's history as answered: `{data, pagination}`, `total` exact up to
 * HISTORY_COUNT_CAP and a lower bound past it, which `X-Total-Capped: true` says (docs/pagination.md).
 */
function historyPage<T>(res: Response, page: PageRequest, items: T[], counted: Omit<CountedPage<unknown>, 'rows'>): { data: T[]; pagination: Pagination } {
  if (counted.capped) res.setHeader('X-Total-Capped', 'true');
  return { data: items, pagination: pagination(page, counted.total, counted.hasMore) };
}

/** `GET /individual/accounts/{id}/audit-logs?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualAuditLogs(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { db } = services;
  return async function listAuditLogsHandler({ ownership: individual }, req, res) {
    const page = req.query as unknown as PageRequest;
    const { items, ...counted } = await listAuditForIndividual(db, individual.id, page);
    res.json(historyPage(res, page, items, counted));
  };
}

/** `GET /individual/accounts/{id}/card-status-history?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualCardStatusHistory(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { db } = services;
  return async function listStatusHistoryHandler({ ownership: individual }, req, res) {
    const page = req.query as unknown as PageRequest;
    const { items, ...counted } = await listStatusHistoryOfIndividual(db, individual.id, page);
    res.json(historyPage(res, page, items, counted));
  };
}
