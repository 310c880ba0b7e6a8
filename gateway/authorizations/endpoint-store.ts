import type { Database, Queryable } from '../db/database';
import { newObjectId } from '../ids';
import type { SecretKeyring } from '../outbound/secret-box';
import { addNewSecret, openSecrets, rotateSecretIn, type SecretRow } from '../outbound/secret-rows';

/** The secrets' table (secret-rows.ts): the same form, sealing and rotation as the webhook endpoints'. */
const SECRETS = 'authorization_endpoint_secrets';

/** The bounds and default of `timeoutMs` (docs/authorization-endpoint.md). */
export const AUTHORIZATION_TIMEOUT_MS = { min: 100, max: 1500, default: 1000 } as const;

export type DefaultDecision = 'approve' | 'decline';

/** The requests an endpoint can be sent (docs/authorization-endpoint.md, "Request types"). */
export const ENDPOINT_REQUEST_TYPES = ['authorization.request', 'tokenization.request'] as const;
export type EndpointRequestType = (typeof ENDPOINT_REQUEST_TYPES)[number];
/** What an endpoint is sent unless its partner enrols it for more: purchases only, so that an endpoint written for them never gets a request it does not know. */
export const DEFAULT_REQUEST_TYPES: readonly EndpointRequestType[] = ['authorization.request'];

/** The partner's decision endpoint as partners read it: never its secret. */
export interface AuthorizationEndpoint {
  id: string;
  url: string;
  timeoutMs: number;
  defaultDecision: DefaultDecision;
  status: 'enabled' | 'disabled';
  /** The requests it is sent, in the order of {@link ENDPOINT_REQUEST_TYPES}. */
  requestTypes: EndpointRequestType[];
  createdAt: string;
  updatedAt: string;
}

/** The endpoint as operators read it: who disabled it (the partner, or an operator), never the secret. */
export interface AuthorizationEndpointAdminView extends AuthorizationEndpoint {
  disabledBy: 'partner' | 'operator' | null;
}

/** What the caller needs to ask the endpoint: its settings and live secrets (current first). */
export interface AuthorizationEndpointTarget {
  id: string;
  url: string;
  timeoutMs: number;
  defaultDecision: DefaultDecision;
  status: 'enabled' | 'disabled';
  disabledBy: 'partner' | 'operator' | null;
  /** The requests it is sent (`authorization.request` unless enrolled for more). */
  requestTypes: EndpointRequestType[];
  /** The secret rows still signing (current first), opened by the caller: a key problem is the call's error, not the lookup's. */
  secretRows: SecretRow[];
}

/**
 * The partner's endpoint and its live secret rows (current first) as a scalar subquery of a
 * statement that reads the card (`card`: its alias, with `partner_id`): a jsonb object, null when
 * the partner has no endpoint; {@link endpointTargetOf} reads it. What {@link AuthorizationEndpointStore.target}
 * reads, in the decision's claim statement (one round trip less per decision). The secrets stay
 * sealed: the caller opens them, and never logs the row.
 */
export function endpointTargetColumn(card: string): string {
  return `(SELECT jsonb_build_object('id', e.id, 'url', e.url, 'timeout_ms', e.timeout_ms, 'default_decision', e.default_decision, 'status', e.status, 'disabled_by', e.disabled_by,
            'request_types', to_jsonb(e.request_types),
            'secrets', (SELECT jsonb_agg(jsonb_build_object('id', s.id, 'secret', s.secret, 'sealed_secret', s.sealed_secret) ORDER BY s.id DESC)
                          FROM authorization_endpoint_secrets s WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > now())))
             FROM authorization_endpoints e WHERE e.partner_id = ${card}.partner_id)`;
}

/** {@link endpointTargetColumn}'s value (parsed, or its JSON text) as a target; undefined when null. */
export function endpointTargetOf(value: unknown): AuthorizationEndpointTarget | undefined {
  if (value === null || value === undefined) return undefined;
  const row = (typeof value === 'string' ? JSON.parse(value) : value) as Omit<EndpointRow, 'created_at' | 'updated_at'> & { secrets: SecretRow[] | null };
  return {
    id: row.id,
    url: row.url,
    timeoutMs: row.timeout_ms,
    defaultDecision: row.default_decision,
    status: row.status,
    disabledBy: row.disabled_by,
    requestTypes: requestTypesOf(row.request_types),
    secretRows: (row.secrets ?? []).map((secret) => ({ id: secret.id, secret: secret.secret, sealed_secret: secret.sealed_secret })),
  };
}

/** The stored types (a text[], or absent from a row a previous version read), in the order of {@link ENDPOINT_REQUEST_TYPES}. */
function requestTypesOf(value: readonly string[] | string | null | undefined): EndpointRequestType[] {
  const list = typeof value === 'string' ? value.replace(/^\{|\}$/g, '').split(',').filter(Boolean) : (value ?? DEFAULT_REQUEST_TYPES);
  return ENDPOINT_REQUEST_TYPES.filter((type) => list.includes(type));
}

interface EndpointRow {
  id: string;
  url: string;
  timeout_ms: number;
  default_decision: DefaultDecision;
  status: 'enabled' | 'disabled';
  disabled_by: 'partner' | 'operator' | null;
  request_types: string[] | string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, url, timeout_ms, default_decision, status, disabled_by, request_types, created_at, updated_at';

function toEndpoint(row: EndpointRow): AuthorizationEndpoint {
  return {
    id: row.id,
    url: row.url,
    timeoutMs: row.timeout_ms,
    defaultDecision: row.default_decision,
    status: row.status,
    requestTypes: requestTypesOf(row.request_types),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Work to commit with a change of the endpoint (its audit entry), given the change's transaction and the endpoint id. */
export type AlsoInTransaction = (tx: Queryable, endpointId: string) => Promise<void>;
const noop: AlsoInTransaction = async () => undefined;

/** A change of the endpoint: by the partner (`PATCH`), or an operator's disable (admin API). */
export interface AuthorizationEndpointChange {
  url?: string;
  timeoutMs?: number;
  defaultDecision?: DefaultDecision;
  status?: 'enabled' | 'disabled';
  requestTypes?: EndpointRequestType[];
}

/**
 * The partners' decision endpoints (one per partner) and their signing secrets, in PostgreSQL
 * (migration 017). Every query is filtered by the partner. Secrets are stored, sealed and rotated
 * by the webhook endpoints' code (gateway/outbound/secret-rows.ts), under WEBHOOKS_SECRET_KEY.
 */
export class AuthorizationEndpointStore {
  constructor(
    private readonly db: Database,
    private readonly options: { secretOverlapSeconds: number; keyring?: SecretKeyring }
  ) {}

  /**
   * Creates the partner's endpoint and its first secret; answers the secret this once. Undefined
   * when the partner has one already (the unique index decides, so two concurrent creates cannot
   * both pass).
   */
  async create(partnerId: string, input: { url: string; timeoutMs?: number; defaultDecision?: DefaultDecision; requestTypes?: EndpointRequestType[] }, alsoInTransaction: AlsoInTransaction = noop): Promise<(AuthorizationEndpoint & { secret: string }) | undefined> {
    return this.db.transaction(async (tx) => {
      const id = `ae_${newObjectId()}`;
      const rows = await tx.query<EndpointRow>(
        `INSERT INTO authorization_endpoints (id, partner_id, url, timeout_ms, default_decision, request_types) VALUES ($1, $2, $3, $4, $5, $6::text[])
         ON CONFLICT (partner_id) DO NOTHING RETURNING ${COLUMNS}`,
        [id, partnerId, input.url, input.timeoutMs ?? AUTHORIZATION_TIMEOUT_MS.default, input.defaultDecision ?? 'decline', requestTypesOf(input.requestTypes)]
      );
      if (!rows.rowCount) return undefined;
      const secret = await addNewSecret(tx, SECRETS, id, this.options.keyring);
      await alsoInTransaction(tx, id);
      return { ...toEndpoint(rows.rows[0]), secret };
    });
  }

  async get(partnerId: string): Promise<AuthorizationEndpoint | undefined> {
    const rows = await this.db.query<EndpointRow>(`SELECT ${COLUMNS} FROM authorization_endpoints WHERE partner_id = $1`, [partnerId]);
    return rows.rows[0] && toEndpoint(rows.rows[0]);
  }

  /** The endpoint with who disabled it, for operators. */
  async adminView(partnerId: string): Promise<AuthorizationEndpointAdminView | undefined> {
    const rows = await this.db.query<EndpointRow>(`SELECT ${COLUMNS} FROM authorization_endpoints WHERE partner_id = $1`, [partnerId]);
    return rows.rows[0] && { ...toEndpoint(rows.rows[0]), disabledBy: rows.rows[0].disabled_by };
  }

  /**
   * Changes the endpoint. `by` says who: a status change records who disabled it (`disabled_by`),
   * and enabling clears it. Undefined when the partner has none.
   */
  async update(partnerId: string, change: AuthorizationEndpointChange, by: 'partner' | 'operator', alsoInTransaction: AlsoInTransaction = noop): Promise<AuthorizationEndpoint | undefined> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<EndpointRow>(
        `UPDATE authorization_endpoints
            SET url = COALESCE($2, url), timeout_ms = COALESCE($3, timeout_ms), default_decision = COALESCE($4, default_decision),
                status = COALESCE($5, status), request_types = COALESCE($7::text[], request_types),
                disabled_by = CASE WHEN $5 = 'disabled' THEN $6 WHEN $5 = 'enabled' THEN NULL ELSE disabled_by END,
                updated_at = now()
          WHERE partner_id = $1
          RETURNING ${COLUMNS}`,
        [partnerId, change.url ?? null, change.timeoutMs ?? null, change.defaultDecision ?? null, change.status ?? null, by, change.requestTypes === undefined ? null : requestTypesOf(change.requestTypes)]
      );
      if (!rows.rowCount) return undefined;
      await alsoInTransaction(tx, rows.rows[0].id);
      return toEndpoint(rows.rows[0]);
    });
  }

  /** Deletes the endpoint and its secrets (cascade). False when the partner has none. */
  async delete(partnerId: string, alsoInTransaction: AlsoInTransaction = noop): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<{ id: string }>('DELETE FROM authorization_endpoints WHERE partner_id = $1 RETURNING id', [partnerId]);
      if (!rows.rowCount) return false;
      await alsoInTransaction(tx, rows.rows[0].id);
      return true;
    });
  }

  /**
   * A new current secret; the one it replaces still signs for the overlap (WEBHOOKS_SECRET_OVERLAP_SECONDS,
   * 24 h). At most two live. Undefined when the partner has no endpoint.
   */
  async rotateSecret(partnerId: string, alsoInTransaction: AlsoInTransaction = noop): Promise<string | undefined> {
    return this.db.transaction(async (tx) => {
      const owned = await tx.query<{ id: string }>('SELECT id FROM authorization_endpoints WHERE partner_id = $1 FOR UPDATE', [partnerId]);
      if (!owned.rowCount) return undefined;
      const id = owned.rows[0].id;
      const secret = await rotateSecretIn(tx, SECRETS, id, this.options.secretOverlapSeconds, this.options.keyring);
      await alsoInTransaction(tx, id);
      return secret;
    });
  }

  /** The endpoint and its live secret rows, in one query (no transaction): what a decision call reads when its claim did not ({@link endpointTargetColumn}). */
  async target(partnerId: string): Promise<AuthorizationEndpointTarget | undefined> {
    const rows = await this.db.query<{ target: unknown }>(`SELECT ${endpointTargetColumn('p')} AS target FROM (SELECT $1::text AS partner_id) AS p`, [partnerId]);
    return endpointTargetOf(rows.rows[0]?.target);
  }

  /** Opens the target's secrets (throws SecretUnavailableError, secret-rows.ts). */
  openSecrets(target: AuthorizationEndpointTarget): string[] {
    return openSecrets(target.id, target.secretRows, this.options.keyring);
  }
}
