import type { RequestHandler } from 'express';
import { apiDocsPage, openApiDocument } from './api-docs';
import { issueCard } from './card-issue';
import { setCard3dsPhone, setCardNickname } from './card-local';
import {
  authorizeCardholder,
  changeCardPin,
  changeCardStatus,
  forceCardPinLock,
  patchCardLimits,
  resetCardPinTries,
  setCard3dsAnswer,
  setCardEmbossName,
  setCardLimit,
} from './card-operations';
import { reissueCard, replaceCard } from './card-replacement';
import { listCards } from './cards-list';
import { healthCheck } from './health-check';
import { createIndividual } from './individual-create';
import { getIndividual, listIndividualAuditLogs, listIndividualCards, listIndividualCardStatusHistory, listIndividuals } from './individuals';
import { me } from './me';
import { listIndividualTransactions } from './transactions';
import type { LocalHandlerName, OrchestrationName } from './names';

export { LOCAL_HANDLER_NAMES, ORCHESTRATION_NAMES, type LocalHandlerName, type OrchestrationName } from './names';

/**
 * Handlers that answer from the gateway itself (PostgreSQL), ending a pipeline through the
 * `local-handler` policy (`handler: <name>`). Each factory runs once when the pipeline is built.
 */
export const LOCAL_HANDLERS = {
  'health-check': healthCheck,
  'openapi-document': openApiDocument,
  'api-docs': apiDocsPage,
  me,
  'list-individuals': listIndividuals,
  'get-individual': getIndividual,
  'list-individual-cards': listIndividualCards,
  'list-individual-audit-logs': listIndividualAuditLogs,
  'list-individual-card-status-history': listIndividualCardStatusHistory,
  'list-cards': listCards,
  'set-card-nickname': setCardNickname,
  'set-card-3ds-phone': setCard3dsPhone,
} satisfies Record<LocalHandlerName, () => RequestHandler>;

/**
 * Handlers that call upstreams through the typed clients and keep PostgreSQL consistent with them,
 * ending a pipeline through the `orchestrate` policy (`operation: <name>`).
 */
export const ORCHESTRATIONS = {
  'create-individual': createIndividual,
  'issue-virtual-card': issueCard('virtual'),
  'issue-physical-card': issueCard('physical'),
  'list-individual-transactions': listIndividualTransactions,
  'lock-card': changeCardStatus('lock'),
  'unlock-card': changeCardStatus('unlock'),
  'activate-card': changeCardStatus('activate'),
  'temporary-lock-card': changeCardStatus('temporary-lock'),
  'restrict-card': changeCardStatus('restrict'),
  'restrict-card-lost': changeCardStatus('lost'),
  'restrict-card-stolen': changeCardStatus('stolen'),
  'restrict-card-closed': changeCardStatus('closed'),
  'restrict-card-fraud': changeCardStatus('fraud'),
  'restrict-card-mobile-lost': changeCardStatus('mobile-lost'),
  'set-card-emboss-name': setCardEmbossName,
  'replace-card': replaceCard,
  'reissue-card': reissueCard,
  'set-card-3ds-answer': setCard3dsAnswer,
  'reset-card-pin-tries': resetCardPinTries,
  'change-card-pin': changeCardPin,
  'force-card-pin-lock': forceCardPinLock,
  'authorize-cardholder': authorizeCardholder,
  'patch-card-limits': patchCardLimits,
  'set-card-limit': setCardLimit,
} satisfies Record<OrchestrationName, () => RequestHandler>;
