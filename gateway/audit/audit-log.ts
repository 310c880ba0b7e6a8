import type { Queryable } from '../db/database';
import { pageOfIndividualHistory, type CountedPage, type PageRequest } from '../db/paging';
import { newObjectId } from '../ids';

/** One audit entry to write. `details` must never hold a secret (no PAN, CVV, PIN, document number). */
export interface AuditEntry {
  partnerId: string;
  individualId?: string;
  tenantId?: string;
  operation: string;
  /** `partner`: a change of the partner's own settings (its default spend controls), `targetId` its id. */
  targetType: 'individual' | 'card' | 'webhook-endpoint' | 'partner' | 'authorization-endpoint';
  targetId: string;
  requestId: string;
  outcome: 'success' | 'failure';
  details?: Record<string, string | number | boolean | null>;
}

/** An audit entry as partners read it (docs/individuals.md). */
export interface AuditLogItem {
  /** The entry's public id (24 hex, random: migration 004), never the internal sequence. */
  _id: string;
  operation: string;
  targetType: string;
  targetId: string;
  outcome: string;
  requestId: string | null;
  details: Record<string, unknown>;
  createdAt: string;
}

/** The columns an audit entry is written with, in {@link auditValues}' order. */
export const AUDIT_COLUMNS = 'public_id, partner_id, individual_id, tenant_id, operation, target_type, target_id, request_id, outcome, details';

/** An entry's values for {@link AUDIT_COLUMNS} (10 parameters; `details` as JSON text). */
export function auditValues(entry: AuditEntry): unknown[] {
  return [
    newObjectId(),
    entry.partnerId,
    entry.individualId ?? null,
    entry.tenantId ?? null,
    entry.operation,
    entry.targetType,
    entry.targetId,
    entry.requestId,
    entry.outcome,
    JSON.stringify(entry.details ?? {}),
  ];
}

/** Writes an audit entry; call it with the transaction of the change it records. */
export async function recordAudit(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.query(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)`, auditValues(entry));
}

/** A page of an individual's audit entries, newest first, with its total (exact up to HISTORY_COUNT_CAP) and whether more follow. */
export async function listAuditForIndividual(db: Queryable, individualId: string, page: PageRequest): Promise<Omit<CountedPage<unknown>, 'rows'> & { items: AuditLogItem[] }> {
  const { rows, ...counted } = await pageOfIndividualHistory<{
    public_id: string;
    operation: string;
    target_type: string;
    target_id: string;
    outcome: string;
    request_id: string | null;
    details: Record<string, unknown>;
    created_at: Date;
  }>(db, 'audit_log', 'public_id, operation, target_type, target_id, outcome, request_id, details, created_at', individualId, page);
  return {
    ...counted,
    items: rows.map((r) => ({
      _id: r.public_id,
      operation: r.operation,
      targetType: r.target_type,
      targetId: r.target_id,
      outcome: r.outcome,
      requestId: r.request_id,
      details: r.details,
      createdAt: r.created_at.toISOString(),
    })),
  };
}
