import { listAuditForIndividual } from '../audit/audit-log';
import { listActiveCardsOfIndividual, listStatusHistoryOfIndividual, toCardListItem } from '../cards/card-store';
import { GatewayError } from '../errors';
import type { PageRequest } from '../db/paging';
import { pagination } from '../http/pagination';
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

/** `GET /individual/accounts/{id}/cards`: the individual's ACTIVE cards, first nine fields of 2.3. */
export function listIndividualCards(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { db } = services;
  return async function listIndividualCardsHandler({ ownership: individual }, _req, res) {
    const cards = await listActiveCardsOfIndividual(db, individual.id);
    res.json(cards.map(toCardListItem));
  };
}

/** `GET /individual/accounts/{id}/audit-logs?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualAuditLogs(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { db } = services;
  return async function listAuditLogsHandler({ ownership: individual }, req, res) {
    const page = req.query as unknown as PageRequest;
    const { total, items } = await listAuditForIndividual(db, individual.id, page);
    res.json({ data: items, pagination: pagination(page, total) });
  };
}

/** `GET /individual/accounts/{id}/card-status-history?page&limit`: `{data, pagination}`, newest first. */
export function listIndividualCardStatusHistory(services: HandlerServices): OperationHandler<OwnerFacts<'individual'>> {
  const { db } = services;
  return async function listStatusHistoryHandler({ ownership: individual }, req, res) {
    const page = req.query as unknown as PageRequest;
    const { total, items } = await listStatusHistoryOfIndividual(db, individual.id, page);
    res.json({ data: items, pagination: pagination(page, total) });
  };
}
