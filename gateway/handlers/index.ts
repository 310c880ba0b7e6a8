import type { RequestHandler } from 'express';
import { issueCard } from './card-issue';
import { healthCheck } from './health-check';
import { createIndividual } from './individual-create';
import { getIndividual, listIndividualAuditLogs, listIndividualCards, listIndividualCardStatusHistory, listIndividuals } from './individuals';
import { me } from './me';
import { listIndividualTransactions } from './transactions';

/**
 * Handlers that answer from the gateway itself (PostgreSQL), ending a pipeline through the
 * `local-handler` policy (`handler: <name>`). Each factory runs once when the pipeline is built.
 */
export const LOCAL_HANDLERS = {
  'health-check': healthCheck,
  me,
  'list-individuals': listIndividuals,
  'get-individual': getIndividual,
  'list-individual-cards': listIndividualCards,
  'list-individual-audit-logs': listIndividualAuditLogs,
  'list-individual-card-status-history': listIndividualCardStatusHistory,
} satisfies Record<string, () => RequestHandler>;

/**
 * Handlers that call upstreams through the typed clients and keep PostgreSQL consistent with them,
 * ending a pipeline through the `orchestrate` policy (`operation: <name>`).
 */
export const ORCHESTRATIONS = {
  'create-individual': createIndividual,
  'issue-virtual-card': issueCard('virtual'),
  'issue-physical-card': issueCard('physical'),
  'list-individual-transactions': listIndividualTransactions,
} satisfies Record<string, () => RequestHandler>;

export type LocalHandlerName = keyof typeof LOCAL_HANDLERS;
export type OrchestrationName = keyof typeof ORCHESTRATIONS;
