import crypto from 'node:crypto';
import type { Queryable } from '../../../../gateway/db/database';
import type { UpstreamToken } from '../../../../gateway/tokens/contract-stub';
import type { InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';

/**
 * What the token unit tests set up on the run's real PostgreSQL: a partner with a tenant, its cards
 * inserted as the issuer would have made them, and processor tokens shaped as upstreams.md 10.1 says.
 */

export interface PartnerFixture {
  partnerId: string;
  tenantId: string;
}

export async function newPartner(services: InProcessServices, name = 'tokens'): Promise<PartnerFixture> {
  const partner = await services.partners.create({ name: `${name}-${crypto.randomBytes(3).toString('hex')}`, issuer: `https://${name}.example`, publicKey: makeKeyPair().publicPem });
  const tenantId = (await services.partners.addTenant(partner._id, 'Fleet'))._id;
  return { partnerId: partner._id, tenantId };
}

/** A card of the partner, in the status given (ACTIVE `00` by default); its key. */
export async function addCard(db: Queryable, partner: PartnerFixture, status = 'ACTIVE', statusCode = '00', type: 'virtual' | 'physical' = 'virtual'): Promise<string> {
  const cardKey = `CKTK${crypto.randomBytes(7).toString('hex').toUpperCase()}`;
  await db.query(
    `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date)
     VALUES ($1, $2, 'b2b', $3, $3, '5355 70** **** 0001', $4, $5, $6, 'EUR', 'P-STD', '09/2030')`,
    [cardKey, partner.partnerId, partner.tenantId, type, status, statusCode]
  );
  return cardKey;
}

/** A new processor token reference (`tref_` and 24 hex). */
export function newReference(): string {
  return `tref_${crypto.randomBytes(12).toString('hex')}`;
}

/** The processor's token (10.1) of `cardKey`: active, version 1, unless `over` says otherwise. */
export function upstreamToken(cardKey: string, over: Partial<UpstreamToken> = {}): UpstreamToken {
  const at = new Date().toISOString();
  return {
    tokenReference: newReference(),
    cardKey,
    tokenizationId: null,
    walletProvider: 'apple_pay',
    tokenRequestorId: '50110030273',
    last4: '4821',
    tokenExpDate: '11/2029',
    device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' },
    status: 'active',
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...over,
  };
}

/** The partner's events, oldest first, as stored (parsed envelopes); of `type` when given. */
export async function eventsOf(db: Queryable, partnerId: string, type?: string): Promise<Array<{ type: string; data: any; requestId?: string }>> {
  const rows = await db.query<{ payload: string }>(
    `SELECT payload FROM partner_events WHERE partner_id = $1 ${type ? 'AND type = $2' : ''} ORDER BY seq`,
    type ? [partnerId, type] : [partnerId]
  );
  return rows.rows.map((r) => JSON.parse(r.payload));
}

/** The partner's audit entries of `operation`, oldest first. */
export async function auditOf(db: Queryable, partnerId: string, operation: string): Promise<Array<{ target_id: string; request_id: string; details: Record<string, unknown> }>> {
  const rows = await db.query<{ target_id: string; request_id: string; details: Record<string, unknown> }>(
    'SELECT target_id, request_id, details FROM audit_log WHERE partner_id = $1 AND operation = $2 ORDER BY id',
    [partnerId, operation]
  );
  return rows.rows;
}
