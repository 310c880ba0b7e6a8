import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import { SecretOpenError, type SecretKeyring } from '../outbound/secret-box';
import { SECRET_TABLES, type SecretTable } from '../outbound/secret-rows';

/**
 * How webhook endpoint secrets, and the authorization endpoints' secrets stored in the same form
 * (secret-rows.ts, docs/authorization-endpoint.md), are kept at rest, checked and converged at
 * start (docs/webhooks.md, "Storage of secrets"):
 * - with `WEBHOOKS_SECRET_KEY`: every plaintext secret and every secret sealed under the previous
 *   key is (re-)sealed under the current key, at start and then every 10 minutes;
 * - a secret sealed under a key that is not configured refuses the start (the key was removed, or
 *   is not the one the rows were sealed under): the gateway would otherwise hold those endpoints'
 *   deliveries, since it never sends them unsigned;
 * - without the key, outside sandbox mode, one warning at start says they are stored unencrypted.
 */

/** Rows (re-)sealed per transaction of a pass. */
const SEAL_BATCH = 500;

/** What one sealing pass did. */
export interface SealPass {
  /** Plaintext secrets now sealed under the current key. */
  sealed: number;
  /** Secrets sealed under the previous key, now under the current one. */
  resealed: number;
  /** Secrets sealed under a configured key that do not authenticate (altered, or copied from another endpoint): left as they are. */
  unreadable: number;
}

/**
 * Seals the plaintext secrets and re-seals those under another key than the current one, in
 * batches of {@link SEAL_BATCH} rows, each batch one transaction that locks its rows
 * (`FOR UPDATE SKIP LOCKED`): instances running it at once never seal one row twice or wait on
 * each other (a row another transaction holds is left to the next pass), and an endpoint's
 * creation, rotation or deletion is never blocked for long. Idempotent: a second pass finds nothing.
 * A row that does not open is logged (its id, endpoint and key id) and left alone; deliveries to
 * its endpoint are held until it is replaced (a secret rotation) or removed.
 */
export async function sealStoredSecrets(db: Database, keyring: SecretKeyring, log: Logger): Promise<SealPass> {
  const pass: SealPass = { sealed: 0, resealed: 0, unreadable: 0 };
  // Both tables of signing secrets (secret-rows.ts): the webhook endpoints' and the authorization endpoints'.
  for (const table of SECRET_TABLES) await sealTable(db, table, keyring, log, pass);
  return pass;
}

async function sealTable(db: Database, table: SecretTable, keyring: SecretKeyring, log: Logger, pass: SealPass): Promise<void> {
  const current = `v1:${keyring.currentId}:`;
  let afterId = '0';
  for (;;) {
    const more = await db.transaction(async (tx) => {
      const rows = await tx.query<{ id: string; endpoint_id: string; secret: string | null; sealed_secret: string | null }>(
        `SELECT id, endpoint_id, secret, sealed_secret FROM ${table}
          WHERE (secret IS NOT NULL OR NOT starts_with(sealed_secret, $1)) AND id > $2
          ORDER BY id LIMIT $3
          FOR UPDATE SKIP LOCKED`,
        [current, afterId, SEAL_BATCH]
      );
      const ids: string[] = [];
      const sealed: string[] = [];
      for (const row of rows.rows) {
        let secret: string;
        try {
          secret = row.secret ?? keyring.open(row.endpoint_id, row.sealed_secret!);
        } catch (err) {
          if (!(err instanceof SecretOpenError)) throw err;
          pass.unreadable++;
          log.error({ table, secretId: row.id, endpointId: row.endpoint_id, keyId: err.keyId, reason: err.reason }, 'webhook secret does not open: left as it is; deliveries to its endpoint are held until it is rotated out');
          continue;
        }
        if (row.secret === null) pass.resealed++;
        else pass.sealed++;
        ids.push(row.id);
        sealed.push(keyring.seal(row.endpoint_id, secret));
      }
      if (ids.length) {
        await tx.query(
          `UPDATE ${table} s SET secret = NULL, sealed_secret = v.sealed
             FROM unnest($1::bigint[], $2::text[]) AS v(id, sealed) WHERE s.id = v.id`,
          [ids, sealed]
        );
      }
      if (rows.rows.length) afterId = rows.rows[rows.rows.length - 1].id;
      return rows.rows.length === SEAL_BATCH;
    });
    if (!more) return;
  }
}

/**
 * Checks at start that every sealed secret in the database can be opened with the configured
 * keys, then seals what is not under the current key. Throws (the start is refused) when secrets
 * are sealed and `WEBHOOKS_SECRET_KEY` is unset, or sealed under a key that is neither it nor
 * `WEBHOOKS_SECRET_KEY_PREVIOUS`: the message names the variables and key ids, never a key.
 */
export async function prepareSecretStorage(db: Database, keyring: SecretKeyring | undefined, log: Logger): Promise<void> {
  // Counted over both tables of signing secrets (webhook and authorization endpoints): one key seals both.
  const sealedRows = SECRET_TABLES.map((table) => `SELECT sealed_secret FROM ${table} WHERE sealed_secret IS NOT NULL`).join(' UNION ALL ');
  const byKey = await db.query<{ key_id: string; n: number }>(
    `SELECT split_part(sealed_secret, ':', 2) AS key_id, count(*)::int AS n FROM (${sealedRows}) s GROUP BY 1 ORDER BY 1`
  );
  const describe = (rows: { key_id: string; n: number }[]) => rows.map((row) => `${row.n} under key id ${row.key_id}`).join(', ');
  if (!keyring) {
    if (byKey.rows.length) {
      throw new Error(
        `webhook endpoint secrets are stored encrypted (${describe(byKey.rows)}) but WEBHOOKS_SECRET_KEY is not set: ` +
          'set it to the key they were encrypted under (the gateway never sends a webhook unsigned)'
      );
    }
    return;
  }
  const unknown = byKey.rows.filter((row) => !keyring.keyIds.includes(row.key_id));
  if (unknown.length) {
    const [current, previous] = keyring.keyIds;
    const configured = `WEBHOOKS_SECRET_KEY has key id ${current}${previous ? `, WEBHOOKS_SECRET_KEY_PREVIOUS ${previous}` : ''}`;
    throw new Error(
      `webhook endpoint secrets are encrypted under a key that is not configured (${describe(unknown)}; ${configured}): ` +
        'set WEBHOOKS_SECRET_KEY, or WEBHOOKS_SECRET_KEY_PREVIOUS during a key rotation, to the key they were encrypted under'
    );
  }
  const pass = await sealStoredSecrets(db, keyring, log);
  log.info({ keyId: keyring.currentId, ...pass }, 'webhook secrets encrypted at rest');
}

/**
 * The one warning of a gateway outside sandbox mode whose webhook secrets are stored unencrypted
 * (no `WEBHOOKS_SECRET_KEY`). Logged once per instance: by the single process, or by the cluster
 * primary (its workers do not repeat it).
 */
export function warnIfSecretsUnencrypted(settings: { sandboxMode: boolean; webhooksSecretKey: unknown }, log: Logger): void {
  if (settings.sandboxMode || settings.webhooksSecretKey) return;
  log.warn({ setting: 'WEBHOOKS_SECRET_KEY' }, 'webhook endpoint secrets are stored unencrypted in PostgreSQL: set WEBHOOKS_SECRET_KEY to encrypt them (docs/webhooks.md, "Storage of secrets")');
}
