import type { Queryable } from '../../gateway/db/database';
import type { OwnedKind, Owner } from './ownership-cache';

/** Loads the owner of an individual onboarding (only fully provisioned ones exist for partners). */
export async function loadIndividualOwner(db: Queryable, id: string): Promise<Owner | undefined> {
  const rows = await db.query<{ partner_id: string }>(
    "SELECT partner_id FROM individual_onboardings WHERE id = $1 AND provisioning = 'complete'",
    [id]
  );
  return rows.rowCount ? { partnerId: rows.rows[0].partner_id, individualId: id } : undefined;
}

/** Loads the owner of a card by its cardKey. */
export async function loadCardOwner(db: Queryable, cardKey: string): Promise<Owner | undefined> {
  const rows = await db.query<{ partner_id: string; individual_id: string | null; tenant_id: string | null }>(
    'SELECT partner_id, individual_id, tenant_id FROM cards WHERE card_key = $1',
    [cardKey]
  );
  if (!rows.rowCount) return undefined;
  const row = rows.rows[0];
  return { partnerId: row.partner_id, individualId: row.individual_id ?? undefined, tenantId: row.tenant_id ?? undefined };
}

/**
 * Loads the owner of an individual by its clientID (the account-creation upstream's id, which the
 * fee checks name as `clientId`). ClientIDs are unique in that upstream; were one ever stored twice,
 * the earliest record owns it.
 */
export async function loadClientOwner(db: Queryable, clientId: string): Promise<Owner | undefined> {
  const rows = await db.query<{ id: string; partner_id: string }>(
    "SELECT id, partner_id FROM individual_onboardings WHERE client_id = $1 AND provisioning = 'complete' ORDER BY created_at, id LIMIT 1",
    [clientId]
  );
  return rows.rowCount ? { partnerId: rows.rows[0].partner_id, individualId: rows.rows[0].id } : undefined;
}

/** Loads the owner of a partner event (one still in the event log). */
export async function loadEventOwner(db: Queryable, id: string): Promise<Owner | undefined> {
  const rows = await db.query<{ partner_id: string }>('SELECT partner_id FROM partner_events WHERE id = $1', [id]);
  return rows.rowCount ? { partnerId: rows.rows[0].partner_id } : undefined;
}

/** Loads the owner of a webhook endpoint (a deleted one is unknown). */
export async function loadWebhookEndpointOwner(db: Queryable, id: string): Promise<Owner | undefined> {
  const rows = await db.query<{ partner_id: string }>('SELECT partner_id FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL', [id]);
  return rows.rowCount ? { partnerId: rows.rows[0].partner_id } : undefined;
}

/** Loads the owner of a card transaction (the gateway's projection: docs/transactions.md). */
export async function loadTransactionOwner(db: Queryable, id: string): Promise<Owner | undefined> {
  const rows = await db.query<{ partner_id: string; individual_id: string | null; tenant_id: string | null }>(
    'SELECT partner_id, individual_id, tenant_id FROM card_transactions WHERE id = $1',
    [id]
  );
  if (!rows.rowCount) return undefined;
  const row = rows.rows[0];
  return { partnerId: row.partner_id, individualId: row.individual_id ?? undefined, tenantId: row.tenant_id ?? undefined };
}

/** The loader of each kind. */
export const OWNER_LOADERS: Record<OwnedKind, (db: Queryable, id: string) => Promise<Owner | undefined>> = {
  individual: loadIndividualOwner,
  card: loadCardOwner,
  client: loadClientOwner,
  event: loadEventOwner,
  'webhook-endpoint': loadWebhookEndpointOwner,
  transaction: loadTransactionOwner,
};
