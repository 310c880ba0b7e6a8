import crypto from 'node:crypto';
import net from 'node:net';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody } from '../support/api';
import { FAST_WEBHOOKS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { createOwnDatabase, type RunDatabase } from '../support/test-database';
import { waitFor } from '../support/wait';
import { TestReceiver } from '../support/webhook-receiver';

const PROCESSING_SECRET = crypto.randomBytes(32).toString('base64url');

/** The processor asking for a decision on a purchase of `cardKey` (docs/authorizations.md), signed with the processing secret. */
async function askForDecision(gateway: GatewayProcess, cardKey: string): Promise<{ status: number; body: unknown }> {
  const id = `auth_${crypto.randomBytes(12).toString('hex')}`;
  const at = new Date().toISOString();
  const raw = JSON.stringify({
    id,
    type: 'authorization.request',
    occurredAt: at,
    authorization: { id, transactionId: crypto.randomBytes(12).toString('hex'), cardId: cardKey, amount: 25, currency: 'EUR', type: 'PURCHASE', merchant: { name: 'Corner Shop', mcc: '5411', city: 'Berlin', country: 'DE' }, at },
  });
  const t = Math.floor(Date.now() / 1000);
  const signature = `t=${t},v1=${crypto.createHmac('sha256', PROCESSING_SECRET).update(`${t}.${raw}`).digest('hex')}`;
  const response = await fetch(`${gateway.notifyUrl}/upstream-notifications/processing/authorizations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'upstream-notification-id': id, 'upstream-signature': signature },
    body: raw,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * Every test of this file runs on one database and one of two settings: private targets admitted
 * (WEBHOOKS_ALLOW_PRIVATE=true, outside sandbox mode; the SIGKILL test kills that gateway and
 * starts it again), then the guard (outside sandbox mode, private targets refused, a processing
 * secret), started on first use. Each test has its own partners, endpoints and receiver, and
 * reads only their rows.
 */
describe('e2e: the guard of partner URLs outside sandbox mode (webhooks and the decision endpoint), and deliveries across a SIGKILL', function () {
  this.timeout(120_000);
  let own: RunDatabase;
  let guard: Promise<GatewayProcess> | undefined;
  /** The gateway that refuses private targets: started once, on this file's database. */
  const guardGateway = () =>
    (guard ??= startGatewayProcess({ databaseUrl: own.url, env: { ...FAST_WEBHOOKS, SANDBOX_MODE: 'false', PROCESSING_NOTIFY_SECRET: PROCESSING_SECRET } }));

  before(async function () {
    recordSecret('notifySecret', PROCESSING_SECRET);
    own = await createOwnDatabase();
  });

  after(async function () {
    await (await guard?.catch(() => undefined))?.stop();
    await own?.drop();
  });

  /**
   * Private targets allowed: `allowed` is the gateway of this setting running now (the SIGKILL test
   * replaces the one it kills). The refused-at-delivery test stops it last and goes on with the guard.
   * These run before the guard starts: its dispatcher would refuse their deliveries to loopback.
   */
  describe('with private targets allowed (WEBHOOKS_ALLOW_PRIVATE=true, outside sandbox mode)', function () {
    const ALLOWED_ENV = { ...FAST_WEBHOOKS, SANDBOX_MODE: 'false', WEBHOOKS_ALLOW_PRIVATE: 'true' };
    let allowed: GatewayProcess | undefined;

    before(async function () {
      allowed = await startGatewayProcess({ databaseUrl: own.url, env: ALLOWED_ENV });
    });

    after(async function () {
      await allowed?.stop();
    });

    it('WEBHOOKS_ALLOW_PRIVATE=true admits loopback URLs outside sandbox mode', async function () {
      const partner = await registerPartner(allowed!, 'acme-allowed');
      const created = await api(allowed!, partner, 'POST', '/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/hook' } });
      recordSecret('webhookSecret', created.body.secret);
      expect(created.status).to.equal(201);
    });

    it('SIGKILL in the middle of deliveries: after a restart on the same database every event arrives, with its own id', async function () {
      const receiver = await new TestReceiver().up();
      // Each answer takes a while, so that some deliveries are in flight when the gateway is killed.
      receiver.behaviour = { kind: 'slow', ms: 300 };
      try {
        const gateway = allowed!;
        const partner = await registerPartner(gateway, 'acme-crash');
        const created = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url: receiver.url, events: ['card.updated'] } });
        recordSecret('webhookSecret', created.body.secret);
        const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
        const cards: string[] = [];
        for (let i = 0; i < 4; i++) {
          const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
          cards.push(card.body.cardKey);
        }
        for (let round = 0; round < 5; round++) {
          for (const cardKey of cards) expect((await api(gateway, partner, 'PATCH', `/cards/${cardKey}/nickname`, { body: { nickname: `n${round}` } })).status).to.equal(200);
        }
        await receiver.waitFor((got) => got.length >= 3);
        gateway.child.kill('SIGKILL');
        await new Promise((resolve) => gateway.child.once('exit', resolve));
        allowed = undefined;
        const eventsDb = new Client({ connectionString: own.url });
        await eventsDb.connect();
        const ids = (await eventsDb.query<{ id: string }>("SELECT id FROM partner_events WHERE type = 'card.updated' AND partner_id = $1", [partner.id])).rows.map((r) => r.id);
        expect(ids).to.have.length(20);
        // The restarted gateway takes the dead one's claims over once their leases expire (the send
        // timeout + 20 s). Their expiry is brought forward here instead of waited for: the takeover
        // path is the same (lease_until in the past), the suite spends 20 s less.
        const leased = await eventsDb.query("UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE state = 'in_flight' AND endpoint_id = $1", [created.body.id]);
        await eventsDb.end();
        expect(leased.rowCount, 'deliveries the killed gateway had claimed').to.be.greaterThan(0);
        const restarted = (allowed = await startGatewayProcess({ databaseUrl: own.url, env: ALLOWED_ENV }));
        await receiver.waitFor((got) => ids.every((id) => got.some((x) => x.event.id === id)), 60_000, 'every event after the restart');
        const attempts = (await api(restarted, partner, 'GET', `/webhooks/endpoints/${created.body.id}/deliveries?limit=100`)).body.data;
        expect(attempts.some((a: any) => a.error === 'interrupted')).to.equal(true);
      } finally {
        await receiver.close();
      }
    });

    it('a delivery to an endpoint registered while private targets were allowed is refused at delivery without them (target_refused), and nothing arrives', async function () {
      const receiver = await new TestReceiver().up();
      try {
        const partner = await registerPartner(allowed!, 'acme-refused');
        const created = await api(allowed!, partner, 'POST', '/webhooks/endpoints', { body: { url: receiver.url, events: ['card.updated'] } });
        recordSecret('webhookSecret', created.body.secret);
        expect(created.status).to.equal(201);
        await allowed!.stop();
        allowed = undefined;
        const gateway = await guardGateway();
        const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
        const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
        expect(card.status).to.equal(201);
        expect((await api(gateway, partner, 'PATCH', `/cards/${card.body.cardKey}/nickname`, { body: { nickname: 'x' } })).status).to.equal(200);
        const deadline = Date.now() + 20_000;
        let attempts: any[] = [];
        while (!attempts.some((a) => a.error === 'target_refused')) {
          if (Date.now() > deadline) throw new Error(JSON.stringify(attempts));
          await new Promise((resolve) => setTimeout(resolve, 50));
          attempts = (await api(gateway, partner, 'GET', `/webhooks/endpoints/${created.body.id}/deliveries`)).body.data;
        }
        expect(receiver.received).to.have.length(0);
      } finally {
        await receiver.close();
      }
    });
  });

  describe('outside sandbox mode', function () {
    let gateway: GatewayProcess;
    let partner: TestPartner;
    /** A loopback TCP listener (IPv4 and IPv6) that counts every connection it is offered: the gateway must never connect. */
    let trap: net.Server;
    let trapPort: number;
    let trapConnections = 0;
    /** Spellings of loopback (and one of 10/8) on the trap's port that an IPv6 or numeric form might have let through. */
    const spellings = () => [
      `https://[::127.0.0.1]:${trapPort}/`,
      `https://[::7f00:1]:${trapPort}/`,
      `https://[::ffff:127.0.0.1]:${trapPort}/`,
      `https://[0:0:0:0:0:ffff:7f00:1]:${trapPort}/`,
      `https://[64:ff9b::127.0.0.1]:${trapPort}/`,
      `https://[2002:7f00:1::1]:${trapPort}/`,
      `https://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${trapPort}/`,
      `https://[::1]:${trapPort}/`,
      `https://2130706433:${trapPort}/`,
      `https://0x7f.1:${trapPort}/`,
      `https://[::ffff:a00:1]:${trapPort}/`,
    ];
    const expectUrlRefused = (answer: { status: number; body: any }, what: string) => {
      expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).to.equal(400);
      expect(answer.body.code, what).to.equal('validation_failed');
      expect(answer.body.invalidParams.map((p: { name: string }) => p.name), what).to.deep.equal(['url']);
    };

    before(async function () {
      trap = net.createServer((socket) => {
        trapConnections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => trap.listen(0, '::', resolve));
      trapPort = (trap.address() as net.AddressInfo).port;
      // The notification listener (a processing secret) lets the test ask for authorization decisions.
      gateway = await guardGateway();
      partner = await registerPartner(gateway, 'acme-guard');
    });

    after(async function () {
      await new Promise((resolve) => trap?.close(resolve));
    });

    it('refuses loopback and private URLs (400 on url)', async function () {
      for (const url of ['http://127.0.0.1:9/hook', 'https://127.0.0.1/', 'https://localhost/', 'https://[::1]/', 'https://10.1.2.3/', 'https://192.168.0.1/', 'https://169.254.169.254/latest']) {
        expectUrlRefused(await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url } }), url);
      }
    });

    it('refuses IPv6 and numeric spellings of loopback with 400 on POST and PATCH, of webhook endpoints and of the decision endpoint', async function () {
      const other = await registerPartner(gateway, 'acme-guard-spellings');
      // Public URLs that nothing in this test makes the gateway call (no event of this type, no decision for this partner).
      const webhook = await api(gateway, other, 'POST', '/webhooks/endpoints', { body: { url: 'https://93.184.216.34/hook', events: ['card.status_changed'] } });
      expect(webhook.status, JSON.stringify(webhook.body)).to.equal(201);
      recordSecret('webhookSecret', webhook.body.secret);
      const decision = await api(gateway, other, 'POST', '/authorization-endpoint', { body: { url: 'https://93.184.216.34/decide' } });
      expect(decision.status, JSON.stringify(decision.body)).to.equal(201);
      recordSecret('webhookSecret', decision.body.secret);
      for (const url of spellings()) {
        expectUrlRefused(await api(gateway, other, 'POST', '/webhooks/endpoints', { body: { url } }), `POST webhook ${url}`);
        expectUrlRefused(await api(gateway, other, 'PATCH', `/webhooks/endpoints/${webhook.body.id}`, { body: { url } }), `PATCH webhook ${url}`);
        expectUrlRefused(await api(gateway, other, 'PATCH', '/authorization-endpoint', { body: { url } }), `PATCH decision endpoint ${url}`);
      }
      const refused = await api(gateway, other, 'POST', '/webhooks/endpoints', { body: { url: `https://[::127.0.0.1]:${trapPort}/` } });
      expect(refused.body.invalidParams[0].reason).to.equal('resolves to a non-public address: a loopback address (IPv4-compatible)');
      const third = await registerPartner(gateway, 'acme-guard-spellings-2');
      for (const url of spellings()) expectUrlRefused(await api(gateway, third, 'POST', '/authorization-endpoint', { body: { url } }), `POST decision endpoint ${url}`);
      expect((await api(gateway, other, 'GET', `/webhooks/endpoints/${webhook.body.id}`)).body.url).to.equal('https://93.184.216.34/hook');
      expect((await api(gateway, other, 'GET', '/authorization-endpoint')).body.url).to.equal('https://93.184.216.34/decide');
      expect((await api(gateway, third, 'GET', '/authorization-endpoint')).status).to.equal(404);
      expect(trapConnections).to.equal(0);
    });

    it('a URL planted in the database (as if registered before these rules) is never connected to: the delivery attempt and the decision are target_refused', async function () {
      const planted = `https://[::127.0.0.1]:${trapPort}/`;
      const owner = await registerPartner(gateway, 'acme-guard-planted');
      const webhook = await api(gateway, owner, 'POST', '/webhooks/endpoints', { body: { url: 'https://93.184.216.34/hook', events: ['card.created'] } });
      recordSecret('webhookSecret', webhook.body.secret);
      const decision = await api(gateway, owner, 'POST', '/authorization-endpoint', { body: { url: 'https://93.184.216.34/decide', defaultDecision: 'decline' } });
      recordSecret('webhookSecret', decision.body.secret);
      const db = new Client({ connectionString: gateway.databaseUrl });
      await db.connect();
      try {
        await db.query('UPDATE webhook_endpoints SET url = $1 WHERE id = $2', [planted, webhook.body.id]);
        await db.query('UPDATE authorization_endpoints SET url = $1 WHERE id = $2', [planted, decision.body.id]);
      } finally {
        await db.end();
      }
      const individual = await api(gateway, owner, 'POST', '/individual/accounts', { body: individualBody() });
      const card = await api(gateway, owner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
      expect(card.status, JSON.stringify(card.body)).to.equal(201);
      // The card.created delivery's first attempt, refused by the dispatcher's check.
      const attempts = await waitFor('the planted webhook refused at delivery', async () => {
        const data = (await api(gateway, owner, 'GET', `/webhooks/endpoints/${webhook.body.id}/deliveries`)).body.data as { error: string | null }[];
        return data.length > 0 && data;
      });
      expect(attempts.every((a) => a.error === 'target_refused'), JSON.stringify(attempts)).to.equal(true);
      // A purchase on the card: the decision asks the planted endpoint, which is refused before any connection.
      const answer = await askForDecision(gateway, card.body.cardKey);
      expect(answer).to.deep.equal({ status: 200, body: { approved: false, declineReason: 'partner_error' } });
      const health = (await adminCall(gateway, 'GET', `/admin/partners/${owner.id}/authorization-endpoint`)).body.health;
      expect(health).to.deep.include({ errors: 1, errorKinds: { target_refused: 1 } });
      expect(trapConnections).to.equal(0);
    });
  });
});
