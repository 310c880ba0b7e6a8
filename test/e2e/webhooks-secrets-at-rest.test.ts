import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody } from '../support/api';
import { FAST_WEBHOOKS, runGatewayExpectingFailure, startGatewayProcess, waitForLogLine, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { createOwnDatabase, type RunDatabase } from '../support/test-database';
import { TestReceiver, type Received } from '../support/webhook-receiver';
import { signatureVerifies } from '../support/signatures';
import { keyIdOf, SecretKeyring } from '../../gateway/outbound/secret-box';
import { newSecret } from '../../gateway/outbound/signature';

/** Production mode (the unencrypted-storage warning is logged there), loopback receivers still allowed. */
const PRODUCTION = { ...FAST_WEBHOOKS, SANDBOX_MODE: 'false', WEBHOOKS_ALLOW_PRIVATE: 'true' };
const UNENCRYPTED_WARNING = 'webhook endpoint secrets are stored unencrypted in PostgreSQL: set WEBHOOKS_SECRET_KEY to encrypt them (docs/webhooks.md, "Storage of secrets")';
const ENCRYPTED_AT_REST = 'webhook secrets encrypted at rest';

/** A fresh 256-bit key: its base64 for the environment (recorded for the run's log scan) and its KeyObject. */
function newKey(): { env: string; key: crypto.KeyObject; id: string } {
  const bytes = crypto.randomBytes(32);
  const env = bytes.toString('base64');
  recordSecret('webhookSecretKey', env);
  recordSecret('webhookSecretKey', bytes.toString('base64url'));
  recordSecret('webhookSecretKey', bytes.toString('hex'));
  const key = crypto.createSecretKey(bytes);
  return { env, key, id: keyIdOf(key) };
}

interface SecretRow {
  id: string;
  endpoint_id: string;
  secret: string | null;
  sealed_secret: string | null;
}

/**
 * Webhook endpoint secrets encrypted at rest (docs/webhooks.md, "Storage of secrets"), end to end:
 * gateway processes one after another (and two at once) on one PostgreSQL database of this file's
 * own (a key set on the run's database would encrypt every other file's secrets), real HTTP
 * receivers, and the rows read back from PostgreSQL.
 */
describe('e2e: webhook secrets encrypted at rest (WEBHOOKS_SECRET_KEY)', function () {
  this.timeout(240_000);
  let own: RunDatabase;
  let db: Client;
  let gateway: GatewayProcess | undefined;
  let partner: TestPartner;
  const receivers: TestReceiver[] = [];
  const k1 = newKey();
  const k2 = newKey();
  const stranger = newKey();
  /** The endpoints made along the way, with every secret they were given. */
  const endpoints = {} as Record<'plain' | 'rotated' | 'copied', { id: string; secrets: string[]; receiver: TestReceiver }>;

  const start = async (env: Record<string, string>) => {
    gateway = await startGatewayProcess({ databaseUrl: own.url, env: { ...PRODUCTION, ...env } });
    return gateway;
  };
  const stop = async () => {
    await gateway?.stop();
    gateway = undefined;
  };
  const rows = async (): Promise<SecretRow[]> => (await db.query<SecretRow>('SELECT id::text, endpoint_id, secret, sealed_secret FROM webhook_endpoint_secrets ORDER BY id')).rows;
  const createEndpoint = async (g: GatewayProcess, name: keyof typeof endpoints) => {
    const receiver = await new TestReceiver().up();
    receivers.push(receiver);
    const created = await api(g, partner, 'POST', '/webhooks/endpoints', { body: { url: receiver.url, events: ['card.updated'] } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    recordSecret('webhookSecret', created.body.secret);
    endpoints[name] = { id: created.body.id, secrets: [created.body.secret], receiver };
  };
  /** A card of this gateway's sandbox issuer (a restarted gateway has a new sandbox). */
  const newCard = async (g: GatewayProcess) => {
    const individual = await api(g, partner, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status).to.equal(201);
    const card = await api(g, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return card.body.cardKey as string;
  };
  /** Changes the card's nickname; resolves with the event id of its card.updated. */
  const nickname = async (g: GatewayProcess, cardKey: string, value: string): Promise<string> => {
    expect((await api(g, partner, 'PATCH', `/cards/${cardKey}/nickname`, { body: { nickname: value } })).status).to.equal(200);
    const events = await api(g, partner, 'GET', '/events?limit=1');
    expect(events.body.data[0].type).to.equal('card.updated');
    return events.body.data[0].id as string;
  };
  const deliveryOf = async (receiver: TestReceiver, eventId: string): Promise<Received> => {
    await receiver.waitFor((got) => got.some((r) => r.event.id === eventId), 20_000, eventId);
    return receiver.received.find((r) => r.event.id === eventId)!;
  };
  const signature = (r: Received) => r.headers['partner-gateway-signature'] as string;
  const v1Count = (r: Received) => signature(r).split(',').filter((p) => p.startsWith('v1=')).length;
  /** Every request `receiver` got verifies with one of the endpoint's secrets: none came unsigned or signed otherwise. */
  const everyDeliveryVerifies = (name: keyof typeof endpoints) => {
    const { receiver, secrets } = endpoints[name];
    for (const r of receiver.received) expect(signatureVerifies(signature(r), r.raw, secrets), `${name}: ${signature(r)}`).to.equal(true);
  };
  const attemptsOf = async (g: GatewayProcess, endpointId: string) => (await api(g, partner, 'GET', `/webhooks/endpoints/${endpointId}/deliveries?limit=100`)).body.data as any[];
  /** No row holds a plaintext secret, nor any piece of one, and every row is sealed under `keyId`. */
  const expectAllSealed = async (keyId: string, secrets: string[]) => {
    const all = await rows();
    expect(all.length).to.be.greaterThan(0);
    for (const row of all) {
      expect(row.secret, `row ${row.id}`).to.equal(null);
      expect(row.sealed_secret, `row ${row.id}`).to.match(new RegExp(`^v1:${keyId}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{22}$`));
    }
    const text = JSON.stringify(all);
    expect(text).to.not.include('whsec_');
    for (const secret of secrets) {
      const body = secret.slice('whsec_'.length);
      for (let i = 0; i + 12 <= body.length; i += 4) expect(text, 'a piece of a secret in the table').to.not.include(body.slice(i, i + 12));
    }
  };

  before(async function () {
    own = await createOwnDatabase();
    db = new Client({ connectionString: own.url });
    await db.connect();
  });

  after(async function () {
    await stop();
    for (const r of receivers) await r.close();
    await db?.end();
    await own?.drop();
  });

  it('a bad WEBHOOKS_SECRET_KEY refuses the boot with a message naming the variable, never the value', async function () {
    const bad = crypto.randomBytes(31).toString('base64');
    recordSecret('webhookSecretKey', bad);
    // The two refusals read nothing of each other: they run at once.
    const envs = [{ WEBHOOKS_SECRET_KEY: bad }, { WEBHOOKS_SECRET_KEY: k1.env, WEBHOOKS_SECRET_KEY_PREVIOUS: bad }];
    const refusals = await Promise.all(envs.map((env) => runGatewayExpectingFailure({ databaseUrl: own.url, env: { ...PRODUCTION, ...env } })));
    for (const [i, env] of envs.entries()) {
      const refused = refusals[i]!;
      expect(refused.code).to.equal(1);
      const variable = env.WEBHOOKS_SECRET_KEY_PREVIOUS ? 'WEBHOOKS_SECRET_KEY_PREVIOUS' : 'WEBHOOKS_SECRET_KEY';
      expect(refused.output).to.include(`partner-gateway: ${variable} must be the base64 or base64url of exactly 32 random bytes`);
      expect(refused.output).to.not.include(bad).and.not.include(bad.slice(0, 12)).and.not.include(k1.env.slice(0, 12));
    }
  });

  it('without the key: stored in plaintext as before, and one warning at boot outside sandbox mode', async function () {
    const g = await start({});
    partner = await registerPartner(g, 'acme-at-rest');
    await createEndpoint(g, 'plain');
    const [row] = await rows();
    expect(row).to.include({ endpoint_id: endpoints.plain.id, secret: endpoints.plain.secrets[0], sealed_secret: null });
    expect(g.logLines().filter((l) => l.msg === UNENCRYPTED_WARNING)).to.have.length(1);
    expect(g.logLines().filter((l) => l.msg === UNENCRYPTED_WARNING)[0].level).to.equal('warn');
    expect(g.logLines().some((l) => l.msg === ENCRYPTED_AT_REST)).to.equal(false);
    const eventId = await nickname(g, await newCard(g), 'plain');
    await deliveryOf(endpoints.plain.receiver, eventId);
    everyDeliveryVerifies('plain');
    await stop();
  });

  it('with the key: the plaintext row is encrypted at boot, new and rotated secrets are stored encrypted, and deliveries still verify (two v1= in a rotation\'s overlap)', async function () {
    const before = await rows();
    const g = await start({ WEBHOOKS_SECRET_KEY: k1.env });
    const line = g.logLines().find((l) => l.msg === ENCRYPTED_AT_REST)!;
    expect(line).to.include({ keyId: k1.id, sealed: 1, resealed: 0, unreadable: 0 });
    expect(g.logLines().some((l) => l.msg === UNENCRYPTED_WARNING)).to.equal(false);
    const [sealed] = await rows();
    expect(sealed.id).to.equal(before[0].id);
    expect(new SecretKeyring(k1.key).open(endpoints.plain.id, sealed.sealed_secret!)).to.equal(endpoints.plain.secrets[0]);

    await createEndpoint(g, 'rotated');
    await createEndpoint(g, 'copied');
    const rotated = await api(g, partner, 'POST', `/webhooks/endpoints/${endpoints.rotated.id}/rotate-secret`, { body: {} });
    expect(rotated.status).to.equal(200);
    recordSecret('webhookSecret', rotated.body.secret);
    endpoints.rotated.secrets.unshift(rotated.body.secret);
    await expectAllSealed(k1.id, Object.values(endpoints).flatMap((e) => e.secrets));
    expect(await rows()).to.have.length(4);

    const eventId = await nickname(g, await newCard(g), 'sealed');
    const rotatedDelivery = await deliveryOf(endpoints.rotated.receiver, eventId);
    expect(v1Count(rotatedDelivery)).to.equal(2);
    // Either secret alone verifies it: the receiver that has not switched yet, and the one that has.
    for (const secret of endpoints.rotated.secrets) expect(signatureVerifies(signature(rotatedDelivery), rotatedDelivery.raw, [secret])).to.equal(true);
    expect(v1Count(await deliveryOf(endpoints.plain.receiver, eventId))).to.equal(1);
    await deliveryOf(endpoints.copied.receiver, eventId);
    for (const name of ['plain', 'rotated', 'copied'] as const) everyDeliveryVerifies(name);
  });

  it('a sealed secret copied to another endpoint\'s row does not decrypt: that endpoint\'s delivery is held (secret_unavailable), never sent unsigned, and goes once the row is right', async function () {
    const g = gateway!;
    const copied = endpoints.copied;
    const original = (await db.query<{ sealed_secret: string }>('SELECT sealed_secret FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [copied.id])).rows[0].sealed_secret;
    const plainSealed = (await db.query<{ sealed_secret: string }>('SELECT sealed_secret FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [endpoints.plain.id])).rows[0].sealed_secret;
    await db.query('UPDATE webhook_endpoint_secrets SET sealed_secret = $2 WHERE endpoint_id = $1', [copied.id, plainSealed]);
    const receivedBefore = copied.receiver.received.length;

    const eventId = await nickname(g, await newCard(g), 'copied');
    await deliveryOf(endpoints.plain.receiver, eventId);
    const deadline = Date.now() + 20_000;
    let held: any[] = [];
    while (held.length < 2) {
      if (Date.now() > deadline) throw new Error(`never held: ${JSON.stringify(await attemptsOf(g, copied.id))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      held = (await attemptsOf(g, copied.id)).filter((a) => a.eventId === eventId && a.error === 'secret_unavailable');
    }
    expect(held.every((a) => a.outcome === 'retrying' && a.httpStatus === null && a.nextRetryAt !== null)).to.equal(true);
    // Held before sending: the receiver got nothing of it (twice held, not once sent).
    expect(copied.receiver.received.length).to.equal(receivedBefore);
    const logged = await waitForLogLine(g, (l) => l.msg === 'webhook delivery held: a signing secret of its endpoint cannot be read' && l.endpointId === copied.id);
    expect(logged).to.include({ level: 'error', reason: 'not_authentic', keyId: k1.id, eventId });

    await db.query('UPDATE webhook_endpoint_secrets SET sealed_secret = $2 WHERE endpoint_id = $1', [copied.id, original]);
    await deliveryOf(copied.receiver, eventId);
    everyDeliveryVerifies('copied');
    await stop();
  });

  it('with the key removed, or another key, the boot is refused naming the variable and key ids, and the rows stay as they are', async function () {
    const before = await rows();
    // Both refuse before writing anything: they run at once, and the rows are compared after both.
    const [removed, other] = await Promise.all([
      runGatewayExpectingFailure({ databaseUrl: own.url, env: PRODUCTION }),
      runGatewayExpectingFailure({ databaseUrl: own.url, env: { ...PRODUCTION, WEBHOOKS_SECRET_KEY: stranger.env } }),
    ]);
    expect(removed.code).to.equal(1);
    expect(removed.output).to.include(`webhook endpoint secrets are stored encrypted (4 under key id ${k1.id}) but WEBHOOKS_SECRET_KEY is not set`);
    expect(other.code).to.equal(1);
    expect(other.output).to.include(`webhook endpoint secrets are encrypted under a key that is not configured (4 under key id ${k1.id}; WEBHOOKS_SECRET_KEY has key id ${stranger.id})`);
    expect(await rows()).to.deep.equal(before);
  });

  it('a key rotation (WEBHOOKS_SECRET_KEY_PREVIOUS) re-encrypts every row under the new key at boot; deliveries still verify', async function () {
    const g = await start({ WEBHOOKS_SECRET_KEY: k2.env, WEBHOOKS_SECRET_KEY_PREVIOUS: k1.env });
    expect(g.logLines().find((l) => l.msg === ENCRYPTED_AT_REST)).to.include({ keyId: k2.id, sealed: 0, resealed: 4, unreadable: 0 });
    await expectAllSealed(k2.id, Object.values(endpoints).flatMap((e) => e.secrets));
    const eventId = await nickname(g, await newCard(g), 'rotated key');
    const rotatedDelivery = await deliveryOf(endpoints.rotated.receiver, eventId);
    expect(v1Count(rotatedDelivery)).to.equal(2);
    for (const secret of endpoints.rotated.secrets) expect(signatureVerifies(signature(rotatedDelivery), rotatedDelivery.raw, [secret])).to.equal(true);
    await deliveryOf(endpoints.plain.receiver, eventId);
    await deliveryOf(endpoints.copied.receiver, eventId);
    for (const name of ['plain', 'rotated', 'copied'] as const) everyDeliveryVerifies(name);
    await stop();
  });

  it('two instances starting at once with the key encrypt each plaintext row exactly once (1,200 rows, batches of 500), and the new key alone suffices after the rotation', async function () {
    // Rows a gateway without the key would have written: 1,200 (disabled) endpoints, plaintext.
    const ids = Array.from({ length: 1200 }, (_, i) => `we_${(0xb000000 + i).toString(16).padStart(24, '0')}`);
    const secrets = ids.map(() => newSecret());
    for (const secret of secrets) recordSecret('webhookSecret', secret);
    await db.query("INSERT INTO webhook_endpoints (id, partner_id, url, status) SELECT id, $2, 'https://bulk.example/hook', 'disabled' FROM unnest($1::text[]) AS id", [ids, partner.id]);
    await db.query('INSERT INTO webhook_endpoint_secrets (endpoint_id, secret) SELECT * FROM unnest($1::text[], $2::text[])', [ids, secrets]);

    const both = await Promise.all([0, 1].map(() => startGatewayProcess({ databaseUrl: own.url, env: { ...PRODUCTION, WEBHOOKS_SECRET_KEY: k2.env } })));
    try {
      const passes = both.map((g) => g.logLines().find((l) => l.msg === ENCRYPTED_AT_REST)!);
      for (const pass of passes) expect(pass).to.include({ keyId: k2.id, resealed: 0, unreadable: 0 });
      expect(passes.map((p) => p.sealed as number).reduce((a, b) => a + b)).to.equal(1200);
    } finally {
      await Promise.all(both.map((g) => g.stop()));
    }
    await expectAllSealed(k2.id, []);
    const keyring = new SecretKeyring(k2.key);
    const byEndpoint = new Map((await rows()).map((row) => [row.endpoint_id, row.sealed_secret!]));
    ids.forEach((id, i) => expect(keyring.open(id, byEndpoint.get(id)!), id).to.equal(secrets[i]));
  });
});
