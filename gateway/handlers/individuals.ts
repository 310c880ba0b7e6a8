import type { RequestHandler } from 'express';
import { listAuditForIndividual } from '../audit/audit-log';
import { listActiveCardsOfIndividual, listStatusHistoryOfIndividual, toCardListItem } from '../cards/card-store';
import { GatewayError } from '../errors';
import { asyncHandler } from '../http/async-handler';
import type { PageRequest } from '../db/paging';
import { pagination } from '../http/pagination';
import type { HandlerServices } from './services';

/** `GET /individual/accounts?page&limit`: `{count, data}` (spec 4.2), newest first. */
export function listIndividuals(services: HandlerServices): RequestHandler {
  const { individuals } = services;
  return asyncHandler(async function listIndividualsHandler(req, res) {
    res.json(await individuals.list(req.partner!._id, req.query as unknown as PageRequest));
  });
}

/** `GET /individual/accounts/{id}`: the individual account (spec 2.1). */
export function getIndividual(services: HandlerServices): RequestHandler {
  const { individuals } = services;
  return asyncHandler(async function getIndividualHandler(req, res) {
    const account = await individuals.get(req.ownership!.id);
    if (!account) throw new GatewayError('not_found', 'No individual account has this id');
    res.json(account);
  });
}

/** `GET /individual/accounts/{id}/cards`: the individual's ACTIVE cards, first nine fields of 2.3. */
export function listIndividualCards(services: HandlerServices): RequestHandler {
  const { db } = services;
  return asyncHandler(async function listIndividualCardsHandler(req, res) {
    const cards = await listActiveCardsOfIndividual(db, req.ownership!.id);
    res.json(cards.map(toCardListItem));
  });
}

/** `GET /individual/accounts/{id}/audit-logs?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualAuditLogs(services: HandlerServices): RequestHandler {
  const { db } = services;
  return asyncHandler(async function listAuditLogsHandler(req, res) {
    const page = req.query as unknown as PageRequest;
    const { total, items } = await listAuditForIndividual(db, req.ownership!.id, page);
    res.json({ data: items, pagination: pagination(page, total) });
  });
}

/** `GET /individual/accounts/{id}/card-status-history?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualCardStatusHistory(services: HandlerServices): RequestHandler {
  const { db } = services;
  return asyncHandler(async function listStatusHistoryHandler(req, res) {
    const page = req.query as unknown as PageRequest;
    const { total, items } = await listStatusHistoryOfIndividual(db, req.ownership!.id, page);
    res.json({ data: items, pagination: pagination(page, total) });
  });
}
