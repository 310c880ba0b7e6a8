import type { Queryable } from '../db/database';
import { sealedKeyId, SecretOpenError, type OpenFailure, type SecretKeyring } from './secret-box';
import { newSecret } from './signature';

/**
 * The tables of signing secrets, all of one form (`endpoint_id`, `secret` or `sealed_secret`,
 * `expires_at`: migrations 010, 013 and 017): the webhook endpoints' and the authorization
 * endpoints' (docs/authorization-endpoint.md). The same code stores, rotates, reads and
 * (re-)encrypts them (`gateway/webhooks/secret-storage.ts`), under the same WEBHOOKS_SECRET_KEY; an endpoint id
 * (`we_…`, `ae_…`) is the sealed secret's additional data, so a row copied to another endpoint,
 * of either table, does not open.
 */
export const SECRET_TABLES = ['webhook_endpoint_secrets', 'authorization_endpoint_secrets'] as const;
export type SecretTable = (typeof SECRET_TABLES)[number];

/**
 * Makes a new secret of the endpoint and stores it: sealed (AES-256-GCM, bound to the endpoint id)
 * when a key is configured, in plaintext otherwise (docs/webhooks.md, "Storage of secrets").
 * Returns the secret, for the one answer that shows it.
 */
export async function addNewSecret(tx: Queryable, table: SecretTable, endpointId: string, keyring: SecretKeyring | undefined): Promise<string> {
  const secret = newSecret();
  if (keyring) await tx.query(`INSERT INTO ${table} (endpoint_id, sealed_secret) VALUES ($1, $2)`, [endpointId, keyring.seal(endpointId, secret)]);
  else await tx.query(`INSERT INTO ${table} (endpoint_id, secret) VALUES ($1, $2)`, [endpointId, secret]);
  return secret;
}

/**
 * A new current secret of the endpoint, in `tx` (the caller holds the endpoint's row lock); the one
 * it replaces still signs for `overlapSeconds`. At most two live: a rotation within the overlap
 * drops the older rotated-out one.
 */
export async function rotateSecretIn(tx: Queryable, table: SecretTable, endpointId: string, overlapSeconds: number, keyring: SecretKeyring | undefined): Promise<string> {
  await tx.query(`DELETE FROM ${table} WHERE endpoint_id = $1 AND expires_at IS NOT NULL`, [endpointId]);
  await tx.query(`UPDATE ${table} SET expires_at = now() + make_interval(secs => $2) WHERE endpoint_id = $1 AND expires_at IS NULL`, [endpointId, overlapSeconds]);
  return addNewSecret(tx, table, endpointId, keyring);
}

/** Why an endpoint's signing secrets cannot be read: a sealed one that does not open, one sealed without a key configured, or none at all. */
export type SecretUnavailableReason = OpenFailure | 'no_key' | 'no_secret';

/**
 * The endpoint's signing secrets cannot all be read: nothing is sent unsigned or signed with fewer
 * secrets than the receiver may hold. Names the row and key id, never a secret.
 */
export class SecretUnavailableError extends Error {
  constructor(
    readonly reason: SecretUnavailableReason,
    readonly secretId: string | undefined,
    readonly keyId: string | undefined
  ) {
    super(`webhook signing secret unavailable: ${reason}`);
    this.name = 'SecretUnavailableError';
  }
}

/** A stored secret row: plaintext or sealed. */
export interface SecretRow {
  id: string;
  secret: string | null;
  sealed_secret: string | null;
}

/**
 * The secrets of `rows` (the live ones of one endpoint, newest first), opened with `keyring`.
 * Throws a {@link SecretUnavailableError} when there is none, or one cannot be read (sealed while
 * no key is configured, under a key not configured, or not authentic).
 */
export function openSecrets(endpointId: string, rows: readonly SecretRow[], keyring: SecretKeyring | undefined): string[] {
  if (rows.length === 0) throw new SecretUnavailableError('no_secret', undefined, undefined);
  return rows.map((row) => {
    if (row.secret !== null) return row.secret;
    const sealed = row.sealed_secret!;
    if (!keyring) throw new SecretUnavailableError('no_key', row.id, sealedKeyId(sealed));
    try {
      return keyring.open(endpointId, sealed);
    } catch (err) {
      if (err instanceof SecretOpenError) throw new SecretUnavailableError(err.reason, row.id, err.keyId);
      throw err;
    }
  });
}
