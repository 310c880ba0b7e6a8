import crypto, { type KeyObject } from 'node:crypto';
import type { Database, Queryable } from '../db/database';
import { recordAudit } from '../audit/audit-log';
import { newObjectId } from '../ids';
import { keyThumbprint, parsePartnerPublicKey, toSpkiPem } from './public-key';

export type PartnerStatus = 'active' | 'disabled';

/** A partner as the admin API and `/me` show it. */
export interface Partner {
  _id: string;
  name: string;
  issuer: string;
  status: PartnerStatus;
  /** Whether the partner has the card processing system configured (transactions). */
  processingEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A partner key as the admin API shows it (the PEM only to operators). */
export interface PartnerKey {
  kid: string;
  status: 'active' | 'revoked';
  publicKey: string;
  createdAt: string;
  revokedAt: string | null;
}

/** A B2B tenant of a partner (`b2bAccounts` of `/me`). */
export interface B2bTenant {
  _id: string;
  name: string;
  createdAt: string;
}

/** What the JWT policy needs to authenticate a partner: its issuer, status and active keys. */
export interface PartnerCredentials {
  partner: Partner;
  keys: { kid: string; key: KeyObject }[];
  revokedKids: Set<string>;
}

interface PartnerRow {
  id: string;
  name: string;
  issuer: string;
  status: PartnerStatus;
  processing_enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

interface KeyRow {
  kid: string;
  status: 'active' | 'revoked';
  public_key: string;
  created_at: Date;
  revoked_at: Date | null;
}

function toPartner(row: PartnerRow): Partner {
  return {
    _id: row.id,
    name: row.name,
    issuer: row.issuer,
    status: row.status,
    processingEnabled: row.processing_enabled,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function toKey(row: KeyRow): PartnerKey {
  return {
    kid: row.kid,
    status: row.status,
    publicKey: row.public_key,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}

/** The requested change would break a rule (duplicate kid, unknown partner, ...). */
/** What a partner change did: a revoked key or a disabled partner withdraws credentials. */
export interface PartnerChange {
  withdrawsCredentials: boolean;
}

export class PartnerStoreError extends Error {
  constructor(readonly reason: 'not_found' | 'conflict', message: string) {
    super(message);
  }
}

const PARTNER_COLUMNS = 'id, name, issuer, status, processing_enabled, created_at, updated_at';

/**
 * Partners, their ES512 public keys and their B2B tenants in PostgreSQL. Imported keys are kept
 * as KeyObjects in a small map keyed by their PEM so that verification never re-parses a PEM.
 */
export class PartnerStore {
  private readonly keyObjects = new Map<string, KeyObject>();
  private readonly listeners: ((partnerId: string, change: PartnerChange) => void | Promise<void>)[] = [];

  constructor(private readonly db: Database) {}

  /**
   * Calls `listener(partnerId)` after every change of a partner (created, keys or settings changed)
   * in this process; the change's method resolves only once every listener has (e.g. once every
   * cluster worker dropped the partner's cached tokens).
   */
  onChange(listener: (partnerId: string, change: PartnerChange) => void | Promise<void>): void {
    this.listeners.push(listener);
  }

  /**
   * Announces a change: through NOTIFY to every other instance first, so that a slow or failed
   * cluster broadcast in this instance never keeps it from them, then to this process's listeners.
   */
  private async changed(partnerId: string, change: PartnerChange): Promise<void> {
    try {
      await this.db.query("SELECT pg_notify('partner_changed', $1)", [partnerId]);
    } finally {
      for (const listener of this.listeners) await listener(partnerId, change);
    }
  }

  /** Registers a partner with its first key; `kid` defaults to the key's JWK thumbprint. */
  async create(input: { name: string; issuer: string; publicKey: string; kid?: string }): Promise<Partner & { keys: PartnerKey[] }> {
    const key = parsePartnerPublicKey(input.publicKey);
    const kid = input.kid ?? (await keyThumbprint(key));
    const id = newObjectId();
    const created = await this.db.transaction(async (tx) => {
      const partner = await tx.query<PartnerRow>(
        `INSERT INTO partners (id, name, issuer) VALUES ($1, $2, $3) RETURNING ${PARTNER_COLUMNS}`,
        [id, input.name, input.issuer]
      );
      const keyRow = await tx.query<KeyRow>(
        `INSERT INTO partner_keys (partner_id, kid, public_key) VALUES ($1, $2, $3)
         RETURNING kid, status, public_key, created_at, revoked_at`,
        [id, kid, toSpkiPem(key)]
      );
      return { ...toPartner(partner.rows[0]), keys: keyRow.rows.map(toKey) };
    });
    // Drops a remembered "no such partner" of this id everywhere.
    await this.changed(id, { withdrawsCredentials: false });
    return created;
  }

  async list(): Promise<(Partner & { keys: PartnerKey[] })[]> {
    const partners = await this.db.query<PartnerRow>(`SELECT ${PARTNER_COLUMNS} FROM partners ORDER BY created_at, id`);
    const keys = await this.db.query<KeyRow & { partner_id: string }>(
      'SELECT partner_id, kid, status, public_key, created_at, revoked_at FROM partner_keys ORDER BY created_at, kid'
    );
    return partners.rows.map((row) => ({
      ...toPartner(row),
      keys: keys.rows.filter((k) => k.partner_id === row.id).map(toKey),
    }));
  }

  async get(id: string, db: Queryable = this.db): Promise<(Partner & { keys: PartnerKey[] }) | undefined> {
    const partner = await db.query<PartnerRow>(`SELECT ${PARTNER_COLUMNS} FROM partners WHERE id = $1`, [id]);
    if (partner.rowCount === 0) return undefined;
    const keys = await db.query<KeyRow>(
      'SELECT kid, status, public_key, created_at, revoked_at FROM partner_keys WHERE partner_id = $1 ORDER BY created_at, kid',
      [id]
    );
    return { ...toPartner(partner.rows[0]), keys: keys.rows.map(toKey) };
  }

  /** Adds a key (rotation); a kid already used by this partner is a conflict, even if revoked. */
  async addKey(id: string, input: { publicKey: string; kid?: string }): Promise<PartnerKey> {
    const key = parsePartnerPublicKey(input.publicKey);
    const kid = input.kid ?? (await keyThumbprint(key));
    const exists = await this.db.query('SELECT 1 FROM partners WHERE id = $1', [id]);
    if (exists.rowCount === 0) throw new PartnerStoreError('not_found', `partner ${id} not found`);
    const inserted = await this.db.query<KeyRow>(
      `INSERT INTO partner_keys (partner_id, kid, public_key) VALUES ($1, $2, $3)
       ON CONFLICT (partner_id, kid) DO NOTHING
       RETURNING kid, status, public_key, created_at, revoked_at`,
      [id, kid, toSpkiPem(key)]
    );
    if (inserted.rowCount === 0) throw new PartnerStoreError('conflict', `partner ${id} already has a key with kid ${kid}`);
    await this.changed(id, { withdrawsCredentials: false });
    return toKey(inserted.rows[0]);
  }

  /** Revokes a key; tokens signed with it are refused from the next request on. */
  async revokeKey(id: string, kid: string): Promise<PartnerKey> {
    const updated = await this.db.query<KeyRow>(
      `UPDATE partner_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, now())
       WHERE partner_id = $1 AND kid = $2 RETURNING kid, status, public_key, created_at, revoked_at`,
      [id, kid]
    );
    if (updated.rowCount === 0) throw new PartnerStoreError('not_found', `partner ${id} has no key ${kid}`);
    await this.changed(id, { withdrawsCredentials: true });
    return toKey(updated.rows[0]);
  }

  /**
   * Changes the status, the processing flag and/or `tokenizeBeforeActivation` (docs/tokens.md
   * "Decisions": whether a physical card not activated yet may be tokenized and paid with through
   * its tokens) of a partner.
   */
  async update(
    id: string,
    change: { status?: PartnerStatus; processingEnabled?: boolean; tokenizeBeforeActivation?: boolean },
    requestId?: string
  ): Promise<Partner & { keys: PartnerKey[] }> {
    const updated = await this.db.transaction(async (tx) => {
      const result = await tx.query(
        `UPDATE partners SET status = coalesce($2, status), processing_enabled = coalesce($3, processing_enabled),
                tokenize_before_activation = coalesce($4, tokenize_before_activation), updated_at = now()
          WHERE id = $1`,
        [id, change.status ?? null, change.processingEnabled ?? null, change.tokenizeBeforeActivation ?? null]
      );
      if (result.rowCount !== 0 && change.tokenizeBeforeActivation !== undefined) {
        // A risk choice of the card programme, kept in the partner's audit log with the change.
        await recordAudit(tx, {
          partnerId: id,
          operation: 'admin.partner.tokenize-before-activation',
          targetType: 'partner',
          targetId: id,
          requestId: requestId ?? `admin-${id}`,
          outcome: 'success',
          details: { tokenizeBeforeActivation: change.tokenizeBeforeActivation, source: 'operator' },
        });
      }
      return result;
    });
    if (updated.rowCount === 0) throw new PartnerStoreError('not_found', `partner ${id} not found`);
    await this.changed(id, { withdrawsCredentials: change.status === 'disabled' });
    return (await this.get(id))!;
  }

  async setStatus(id: string, status: PartnerStatus): Promise<Partner & { keys: PartnerKey[] }> {
    return this.update(id, { status });
  }

  /** The partner's `tokenizeBeforeActivation` (an operator's setting, shown by the admin API only); false for an unknown partner. */
  async tokenizeBeforeActivation(id: string): Promise<boolean> {
    const rows = await this.db.query<{ tokenize_before_activation: boolean }>('SELECT tokenize_before_activation FROM partners WHERE id = $1', [id]);
    return rows.rows[0]?.tokenize_before_activation ?? false;
  }

  /** Whether the partner has the card processing system configured. */
  async processingEnabled(id: string): Promise<boolean> {
    const rows = await this.db.query<{ processing_enabled: boolean }>('SELECT processing_enabled FROM partners WHERE id = $1', [id]);
    return rows.rows[0]?.processing_enabled ?? false;
  }

  async addTenant(id: string, name: string): Promise<B2bTenant> {
    const exists = await this.db.query('SELECT 1 FROM partners WHERE id = $1', [id]);
    if (exists.rowCount === 0) throw new PartnerStoreError('not_found', `partner ${id} not found`);
    const row = await this.db.query<{ id: string; name: string; created_at: Date }>(
      'INSERT INTO b2b_tenants (id, partner_id, name) VALUES ($1, $2, $3) RETURNING id, name, created_at',
      [newObjectId(), id, name]
    );
    return { _id: row.rows[0].id, name: row.rows[0].name, createdAt: row.rows[0].created_at.toISOString() };
  }

  async tenants(id: string): Promise<B2bTenant[]> {
    const rows = await this.db.query<{ id: string; name: string; created_at: Date }>(
      'SELECT id, name, created_at FROM b2b_tenants WHERE partner_id = $1 ORDER BY created_at, id',
      [id]
    );
    return rows.rows.map((r) => ({ _id: r.id, name: r.name, createdAt: r.created_at.toISOString() }));
  }

  /** The partner, its active keys and its revoked kids, for token verification; undefined when unknown. */
  async credentials(id: string): Promise<PartnerCredentials | undefined> {
    const rows = await this.db.query<PartnerRow & { kid: string | null; public_key: string | null; key_status: string | null }>(
      `SELECT p.id, p.name, p.issuer, p.status, p.processing_enabled, p.created_at, p.updated_at, k.kid, k.public_key, k.status AS key_status
         FROM partners p LEFT JOIN partner_keys k ON k.partner_id = p.id
        WHERE p.id = $1
        ORDER BY k.created_at`,
      [id]
    );
    if (rows.rowCount === 0) return undefined;
    const keys: PartnerCredentials['keys'] = [];
    const revokedKids = new Set<string>();
    for (const row of rows.rows) {
      if (row.kid === null || row.public_key === null) continue;
      if (row.key_status === 'active') keys.push({ kid: row.kid, key: this.keyObject(row.public_key) });
      else revokedKids.add(row.kid);
    }
    return { partner: toPartner(rows.rows[0]), keys, revokedKids };
  }

  private keyObject(pem: string): KeyObject {
    let key = this.keyObjects.get(pem);
    if (!key) {
      key = crypto.createPublicKey(pem);
      if (this.keyObjects.size >= 10_000) this.keyObjects.clear();
      this.keyObjects.set(pem, key);
    }
    return key;
  }
}
