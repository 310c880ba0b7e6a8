import { recordAudit, type AuditEntry } from '../audit/audit-log';
import type { Queryable } from '../db/database';
import { GatewayError } from '../errors';
import type { Logger } from '../logging/logger';

/**
 * The audit entry of an upstream call made for a partner: who (the owner the ownership policy
 * established), what (`operation`, e.g. `card.cvv.read`), on which target, in which request. The
 * outcome is added by {@link auditUpstreamSuccess} or {@link auditUpstreamFailure}.
 */
export type UpstreamCallAudit = Omit<AuditEntry, 'outcome' | 'details'>;

/** The owner of the resource a call is made for, as the ownership step established it (the OWNERSHIP fact, gateway/http/request-facts.ts). */
export interface AuditedOwner {
  partnerId: string;
  individualId?: string;
  tenantId?: string;
}

/**
 * The audit entry of a call on a card.
 *
 * @example upstreamCallOnCard(card, 'card.cvv.read', card.id, req.requestId) // card: the OWNERSHIP fact
 */
export function upstreamCallOnCard(owner: AuditedOwner, operation: string, cardKey: string, requestId: string): UpstreamCallAudit {
  return { partnerId: owner.partnerId, individualId: owner.individualId, tenantId: owner.tenantId, operation, targetType: 'card', targetId: cardKey, requestId };
}

/**
 * Writes the `success` entry of a call. A failed write throws: the caller must not answer what it
 * could not audit (a card secret is not revealed unaudited). `details` must hold no secret.
 */
export async function auditUpstreamSuccess(db: Queryable, call: UpstreamCallAudit, details?: AuditEntry['details']): Promise<void> {
  await recordAudit(db, { ...call, outcome: 'success', ...(details ? { details } : {}) });
}

/**
 * Writes the `failure` entry of a call that failed with `err`, its reason being the problem's code
 * (`upstream_rejected`, `upstream_timeout`...): a security reviewer sees every attempt. Best
 * effort: a failed write is logged and never thrown, so the partner gets the original problem.
 */
export async function auditUpstreamFailure(db: Queryable, log: Logger, call: UpstreamCallAudit, err: unknown): Promise<void> {
  const reason = err instanceof GatewayError ? err.code : 'error';
  await recordAudit(db, { ...call, outcome: 'failure', details: { reason } }).catch((auditError: unknown) =>
    log.warn({ err: auditError, requestId: call.requestId }, 'failure audit entry not written')
  );
}
