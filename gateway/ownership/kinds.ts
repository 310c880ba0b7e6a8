import type { Queryable } from '../db/database';
import { CARD_KEY, EVENT_ID, OBJECT_ID, TOKEN_ID, TRANSACTION_ID, WEBHOOK_ENDPOINT_ID } from '../ids';

/** Who owns a resource: the partner, and the individual or tenant it sits under. */
export interface Owner {
  partnerId: string;
  individualId?: string;
  tenantId?: string;
}

/** One kind of resource whose owner is checked: how its id looks, how a refusal names it, and where its owner is read. */
export interface OwnedKindSpec {
  /** The resource as a refusal names it (`No card has this id`). */
  noun: string;
  /** A well-formed id (anchored); the OpenAPI document's path parameter pattern for a kind a path names. */
  id: RegExp;
  /** What a malformed id must be (the 400's `invalidParams[].reason`). */
  shape: string;
  /** What `resource:` means in the ownership step's schema (policies/ownership/schema.ts). */
  describe: string;
  /** Reads the owner from PostgreSQL; undefined for an unknown resource. */
  load(db: Queryable, id: string): Promise<Owner | undefined>;
}

/** A clientID as the account-creation upstream makes them, and the fee-check schema bounds them. */
const CLIENT_ID = /^[\x21-\x7e]{1,64}$/;

type OwnerRow = { partner_id: string; individual_id: string | null; tenant_id: string | null };
const withScope = (row: OwnerRow): Owner => ({ partnerId: row.partner_id, individualId: row.individual_id ?? undefined, tenantId: row.tenant_id ?? undefined });

/**
 * Every kind of resource whose ownership is checked (spec section 5, docs/ownership.md), declared
 * once: the ownership policy's checks, its step's `resource` enum, the catalog's ownership checks,
 * the request's `ownership` and the cache's keys all derive from this table.
 */
export const OWNED_KINDS = {
  /** An individual onboarding, by its `_id` (only fully provisioned ones exist for partners). */
  individual: {
    noun: 'individual account',
    id: OBJECT_ID,
    shape: 'must be a 24-character hexadecimal id',
    describe: 'the onboarding _id',
    async load(db, id) {
      const rows = await db.query<{ partner_id: string }>("SELECT partner_id FROM individual_onboardings WHERE id = $1 AND provisioning = 'complete'", [id]);
      return rows.rowCount ? { partnerId: rows.rows[0].partner_id, individualId: id } : undefined;
    },
  },
  /** A card, by its cardKey. */
  card: {
    noun: 'card',
    id: CARD_KEY,
    shape: 'must be a cardKey',
    describe: 'the cardKey',
    async load(db, cardKey) {
      const rows = await db.query<OwnerRow>('SELECT partner_id, individual_id, tenant_id FROM cards WHERE card_key = $1', [cardKey]);
      return rows.rowCount ? withScope(rows.rows[0]) : undefined;
    },
  },
  /**
   * An individual by its clientID (the account-creation upstream's id, which the fee checks name as
   * `clientId`). ClientIDs are unique in that upstream; were one ever stored twice, the earliest
   * record owns it.
   */
  client: {
    noun: 'individual account (clientId)',
    id: CLIENT_ID,
    shape: 'must be a clientId',
    describe: "an individual's clientID (the fee checks' clientId)",
    async load(db, clientId) {
      const rows = await db.query<{ id: string; partner_id: string }>(
        "SELECT id, partner_id FROM individual_onboardings WHERE client_id = $1 AND provisioning = 'complete' ORDER BY created_at, id LIMIT 1",
        [clientId]
      );
      return rows.rowCount ? { partnerId: rows.rows[0].partner_id, individualId: rows.rows[0].id } : undefined;
    },
  },
  /** A partner event (one still in the event log). */
  event: {
    noun: 'event',
    id: EVENT_ID,
    shape: 'must be an event id (evt_ and 24 hexadecimal characters)',
    describe: "a partner event's id (evt_…)",
    async load(db, id) {
      const rows = await db.query<{ partner_id: string }>('SELECT partner_id FROM partner_events WHERE id = $1', [id]);
      return rows.rowCount ? { partnerId: rows.rows[0].partner_id } : undefined;
    },
  },
  /** A webhook endpoint (a deleted one is unknown). */
  'webhook-endpoint': {
    noun: 'webhook endpoint',
    id: WEBHOOK_ENDPOINT_ID,
    shape: 'must be a webhook endpoint id (we_ and 24 hexadecimal characters)',
    describe: "a webhook endpoint's id (we_…)",
    async load(db, id) {
      const rows = await db.query<{ partner_id: string }>('SELECT partner_id FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL', [id]);
      return rows.rowCount ? { partnerId: rows.rows[0].partner_id } : undefined;
    },
  },
  /** A card transaction (the gateway's projection: docs/transactions.md). */
  transaction: {
    noun: 'transaction',
    id: TRANSACTION_ID,
    shape: 'must be a transaction id (1 to 64 of A-Z a-z 0-9 _ -)',
    describe: "a card transaction's id (the processing system's)",
    async load(db, id) {
      const rows = await db.query<OwnerRow>('SELECT partner_id, individual_id, tenant_id FROM card_transactions WHERE id = $1', [id]);
      return rows.rowCount ? withScope(rows.rows[0]) : undefined;
    },
  },
  /**
   * A network token (docs/tokens.md), by its `_id`. Its owner is the partner the token's row names,
   * and the card's individual or tenant (a token moved by a replacement keeps its card's owner).
   */
  token: {
    noun: 'token',
    id: TOKEN_ID,
    shape: 'must be a token id (tok_ and 24 hexadecimal characters)',
    describe: "a network token's _id (tok_…)",
    async load(db, id) {
      const rows = await db.query<OwnerRow>('SELECT partner_id, individual_id, tenant_id FROM tokens WHERE id = $1', [id]);
      return rows.rowCount ? withScope(rows.rows[0]) : undefined;
    },
  },
} as const satisfies Record<string, OwnedKindSpec>;

/** A kind of resource whose ownership is checked (`client`: an individual named by its clientID). */
export type OwnedKind = keyof typeof OWNED_KINDS;

/** Every owned kind, in the table's order (the ownership step's `resource` enum). */
export const OWNED_KIND_NAMES = Object.keys(OWNED_KINDS) as OwnedKind[];
