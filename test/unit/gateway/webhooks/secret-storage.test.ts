import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { Client } from 'pg';
import { Database } from '../../../../gateway/db/database';
import { migrate } from '../../../../gateway/db/migrate';
import { createLogger, type Logger } from '../../../../gateway/logging/logger';
import { SecretUnavailableError } from '../../../../gateway/webhooks/endpoint-store';
import { SecretKeyring } from '../../../../gateway/outbound/secret-box';
import { openSecrets, type SecretRow } from '../../../../gateway/outbound/secret-rows';
import { prepareSecretStorage, sealStoredSecrets, warnIfSecretsUnencrypted } from '../../../../gateway/webhooks/secret-storage';
import { newSecret } from '../../../../gateway/outbound/signature';
import { recordSecret } from '../../../support/secrets';
import { createOwnDatabase, type RunDatabase } from '../../../support/test-database';

/**
 * The endpoint's live secret rows (the current one first, then one in its overlap), as the
 * dispatcher's step reads them, opened by the dispatcher's own `openSecrets`.
 */
async function liveSecrets(db: Database, endpointId: string, keyring: SecretKeyring | undefined): Promise<string[]> {
  const rows = await db.query<SecretRow>('SELECT id, secret, sealed_secret FROM webhook_endpoint_secrets WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now()) ORDER BY id DESC', [endpointId]);
  return openSecrets(endpointId, rows.rows, keyring);
}

/** A logger whose JSON lines are kept in `lines`. */
function capturingLogger(): { log: Logger; lines: () => Record<string, unknown>[] } {
  let written = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      written += chunk.toString();
      cb();
    },
  });
  return { log: createLogger({ level: 'info', destination: sink }), lines: () => written.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) };
}

const newKey = () => {
  const bytes = crypto.randomBytes(32);
  recordSecret('webhookSecretKey', bytes.toString('base64'));
  return crypto.createSecretKey(bytes);
};

/**
 * The encryption passes over `webhook_endpoint_secrets` on real PostgreSQL (a database of this
 * file's own, migrated): concurrent passes, rows held by another transaction, rows that do not
 * open, and what a delivery reads.
 */
describe('unit: webhook secrets at rest in PostgreSQL (gateway/webhooks/secret-storage.ts)', function () {
  this.timeout(60_000);
  let own: RunDatabase;
  let db: Database;
  let partnerId: string;
  const silent = createLogger({ level: 'silent' });
  let next = 0;

  /** `count` endpoints, each with one plaintext secret; answers their ids and secrets. */
  const plaintextEndpoints = async (count: number): Promise<{ ids: string[]; secrets: string[] }> => {
    const ids = Array.from({ length: count }, () => `we_${(next++).toString(16).padStart(24, '0')}`);
    const secrets = ids.map(() => newSecret());
    for (const secret of secrets) recordSecret('webhookSecret', secret);
    await db.query("INSERT INTO webhook_endpoints (id, partner_id, url) SELECT id, $2, 'https://x.example/hook' FROM unnest($1::text[]) AS id", [ids, partnerId]);
    await db.query('INSERT INTO webhook_endpoint_secrets (endpoint_id, secret) SELECT * FROM unnest($1::text[], $2::text[])', [ids, secrets]);
    return { ids, secrets };
  };
  const plaintextLeft = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoint_secrets WHERE secret IS NOT NULL')).rows[0].n;

  before(async function () {
    own = await createOwnDatabase();
    db = new Database(own.url, { max: 4, log: silent });
    await migrate(db, silent);
    partnerId = crypto.randomBytes(12).toString('hex');
    await db.query("INSERT INTO partners (id, name, issuer) VALUES ($1, 'sealing', 'https://sealing.example')", [partnerId]);
  });

  afterEach(async function () {
    await db.query('DELETE FROM webhook_endpoint_secrets');
  });

  after(async function () {
    await db?.close();
    await own?.drop();
  });

  it('seals the decision endpoints\' secrets too (authorization_endpoint_secrets, migration 017), bound to their endpoint id, and counts them at start', async function () {
    const id = `ae_${'a'.repeat(24)}`;
    const secret = newSecret();
    recordSecret('webhookSecret', secret);
    await db.query("INSERT INTO authorization_endpoints (id, partner_id, url) VALUES ($1, $2, 'https://x.example/decide')", [id, partnerId]);
    await db.query('INSERT INTO authorization_endpoint_secrets (endpoint_id, secret) VALUES ($1, $2)', [id, secret]);
    try {
      const keyring = new SecretKeyring(newKey());
      expect(await sealStoredSecrets(db, keyring, silent)).to.deep.equal({ sealed: 1, resealed: 0, unreadable: 0 });
      const row = (await db.query<{ secret: string | null; sealed_secret: string }>('SELECT secret, sealed_secret FROM authorization_endpoint_secrets WHERE endpoint_id = $1', [id])).rows[0];
      expect(row.secret).to.equal(null);
      expect(keyring.open(id, row.sealed_secret)).to.equal(secret);
      expect(() => keyring.open(`we_${'a'.repeat(24)}`, row.sealed_secret)).to.throw(/not_authentic/);
      await expectRejected(prepareSecretStorage(db, undefined, silent), `webhook endpoint secrets are stored encrypted (1 under key id ${keyring.currentId}) but WEBHOOKS_SECRET_KEY is not set`);
    } finally {
      await db.query('DELETE FROM authorization_endpoints WHERE id = $1', [id]);
    }
  });

  it('two passes at once on two pools seal every row exactly once (4,000 rows, batches of 500) and each row opens to its secret', async function () {
    const { ids, secrets } = await plaintextEndpoints(4000);
    const keyring = new SecretKeyring(newKey());
    const other = new Database(own.url, { max: 2, log: silent });
    try {
      const passes = await Promise.all([sealStoredSecrets(db, keyring, silent), sealStoredSecrets(other, keyring, silent)]);
      expect(passes[0].sealed + passes[1].sealed).to.equal(4000);
      expect(passes.every((p) => p.resealed === 0 && p.unreadable === 0)).to.equal(true);
    } finally {
      await other.close();
    }
    expect(await plaintextLeft()).to.equal(0);
    const rows = (await db.query<{ endpoint_id: string; sealed_secret: string }>('SELECT endpoint_id, sealed_secret FROM webhook_endpoint_secrets')).rows;
    const byEndpoint = new Map(rows.map((row) => [row.endpoint_id, row.sealed_secret]));
    ids.forEach((id, i) => expect(keyring.open(id, byEndpoint.get(id)!)).to.equal(secrets[i]));
    // Idempotent: a later pass finds nothing to do.
    expect(await sealStoredSecrets(db, keyring, silent)).to.deep.equal({ sealed: 0, resealed: 0, unreadable: 0 });
  });

  it('skips a row another transaction holds (a rotation in progress) instead of waiting, and seals it at the next pass', async function () {
    const { ids, secrets } = await plaintextEndpoints(3);
    const keyring = new SecretKeyring(newKey());
    const holder = new Client({ connectionString: own.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM webhook_endpoint_secrets WHERE endpoint_id = $1 FOR UPDATE', [ids[1]]);
      // Would hang (and time out) if the pass waited on the held row.
      expect(await sealStoredSecrets(db, keyring, silent)).to.deep.equal({ sealed: 2, resealed: 0, unreadable: 0 });
      expect(await plaintextLeft()).to.equal(1);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    expect(await sealStoredSecrets(db, keyring, silent)).to.deep.equal({ sealed: 1, resealed: 0, unreadable: 0 });
    expect(await liveSecrets(db, ids[1], keyring)).to.deep.equal([secrets[1]]);
  });

  it('re-seals rows under the previous key; leaves a row that does not authenticate as it is and logs it (ids and key id, never a secret)', async function () {
    const { ids, secrets } = await plaintextEndpoints(3);
    const oldKey = newKey();
    const old = new SecretKeyring(oldKey);
    await sealStoredSecrets(db, old, silent);
    // Endpoint 2's row now holds endpoint 0's ciphertext: bound to endpoint 0, it does not open for 2.
    await db.query('UPDATE webhook_endpoint_secrets SET sealed_secret = (SELECT sealed_secret FROM webhook_endpoint_secrets WHERE endpoint_id = $1) WHERE endpoint_id = $2', [ids[0], ids[2]]);
    const copied = (await db.query<{ id: string; sealed_secret: string }>('SELECT id::text, sealed_secret FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [ids[2]])).rows[0];
    const rotating = new SecretKeyring(newKey(), oldKey);
    const { log, lines } = capturingLogger();
    expect(await sealStoredSecrets(db, rotating, log)).to.deep.equal({ sealed: 0, resealed: 2, unreadable: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    const logged = lines();
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include({ level: 'error', secretId: copied.id, endpointId: ids[2], keyId: old.currentId, reason: 'not_authentic' });
    expect(JSON.stringify(logged)).to.not.include('whsec_').and.not.include(copied.sealed_secret);
    expect((await db.query('SELECT sealed_secret FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [ids[2]])).rows[0].sealed_secret).to.equal(copied.sealed_secret);
    expect(await liveSecrets(db, ids[0], rotating)).to.deep.equal([secrets[0]]);
    expect(await liveSecrets(db, ids[1], rotating)).to.deep.equal([secrets[1]]);
    // The delivery path refuses the same row: held, not signed with another endpoint's secret.
    const refusal = await liveSecrets(db, ids[2], rotating).then(
      () => undefined,
      (err: unknown) => err
    );
    expect(refusal).to.be.instanceOf(SecretUnavailableError);
    expect(refusal).to.include({ reason: 'not_authentic', secretId: copied.id, keyId: old.currentId });
  });

  it('a delivery reads no secret: when the endpoint has none, and when a row is sealed but no key is configured', async function () {
    const { ids } = await plaintextEndpoints(2);
    await db.query('DELETE FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [ids[0]]);
    const noSecret = await liveSecrets(db, ids[0], undefined).catch((err: unknown) => err);
    expect(noSecret).to.be.instanceOf(SecretUnavailableError).and.to.include({ reason: 'no_secret' });
    const keyring = new SecretKeyring(newKey());
    await sealStoredSecrets(db, keyring, silent);
    const noKey = await liveSecrets(db, ids[1], undefined).catch((err: unknown) => err);
    expect(noKey).to.be.instanceOf(SecretUnavailableError).and.to.include({ reason: 'no_key', keyId: keyring.currentId });
  });

  it('at start: refuses sealed rows without a key or under a key not configured, and accepts plaintext rows without a key', async function () {
    await plaintextEndpoints(2);
    await prepareSecretStorage(db, undefined, silent);
    const keyring = new SecretKeyring(newKey());
    await prepareSecretStorage(db, keyring, silent);
    expect(await plaintextLeft()).to.equal(0);
    await expectRejected(prepareSecretStorage(db, undefined, silent), `webhook endpoint secrets are stored encrypted (2 under key id ${keyring.currentId}) but WEBHOOKS_SECRET_KEY is not set`);
    const stranger = new SecretKeyring(newKey());
    await expectRejected(prepareSecretStorage(db, stranger, silent), `(2 under key id ${keyring.currentId}; WEBHOOKS_SECRET_KEY has key id ${stranger.currentId})`);
    const withPrevious = new SecretKeyring(newKey(), newKey());
    await expectRejected(prepareSecretStorage(db, withPrevious, silent), `WEBHOOKS_SECRET_KEY has key id ${withPrevious.keyIds[0]}, WEBHOOKS_SECRET_KEY_PREVIOUS ${withPrevious.keyIds[1]}`);
  });

  it('warns once that secrets are stored unencrypted outside sandbox mode without a key; never in sandbox mode or with a key', async function () {
    for (const [settings, warned] of [
      [{ sandboxMode: false, webhooksSecretKey: undefined }, 1],
      [{ sandboxMode: true, webhooksSecretKey: undefined }, 0],
      [{ sandboxMode: false, webhooksSecretKey: newKey() }, 0],
    ] as const) {
      const { log, lines } = capturingLogger();
      warnIfSecretsUnencrypted(settings, log);
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines().filter((line) => line.level === 'warn' && line.setting === 'WEBHOOKS_SECRET_KEY'), JSON.stringify(settings)).to.have.length(warned);
    }
  });
});

async function expectRejected(promise: Promise<unknown>, message: string): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e as Error
  );
  expect(err, 'rejected').to.be.instanceOf(Error);
  expect(err!.message).to.include(message);
}
