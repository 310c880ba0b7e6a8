import { expect } from 'chai';
import { Client } from 'pg';
import { api, sandboxUrls } from '../support/api';
import { sharedGateway, waitForRequestLog, type Gateway } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { runDatabaseUrl } from '../support/test-database';
import { TestReceiver } from '../support/webhook-receiver';
import { Database } from '../../gateway/db/database';
import { createLogger } from '../../gateway/logging/logger';
import { AuthorizationEndpointStore } from '../../gateway/authorizations/endpoint-store';
import { askPartner, PartnerCallState, type AuthorizationRequestData, type PartnerEndpointDeps } from '../../gateway/authorizations/partner-endpoint';
import { createOutbound } from '../../gateway/outbound';
import { signatureVerifies } from '../support/signatures';

const REQUEST = {
  authorization: { id: 'auth_e2e_1', amount: 1999, currency: 'EUR', type: 'purchase', merchant: { name: 'Book Shop', mcc: '5942', city: 'Porto', country: 'PT' } },
  card: { cardKey: 'ck_e2e', cardMask: '123456******0001', type: 'virtual', status: 'ACTIVE', statusCode: '00', currency: 'EUR', ownerType: 'individual', ownerId: '0123456789abcdef01234567', createdAt: '2026-01-01T00:00:00.000Z', productCode: 'P1', holderClientCode: null, expDate: '2030-01', embossedName: null, nickname: null, threeDsPhone: null },
} as AuthorizationRequestData;

/**
 * The partner's decision endpoint routes end to end (docs/authorization-endpoint.md) on the run's
 * shared gateway (sandbox mode: loopback URLs are accepted) and its PostgreSQL: CRUD, one per
 * partner, the secret shown only at creation and rotation, audit entries, partner isolation, the
 * admin API's view and disable, and a rotation's two signatures on a real call (askPartner, run in
 * this process on the gateway's database, against a real receiver).
 */
describe('e2e: the partner decision endpoint (/authorization-endpoint)', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let globex: TestPartner;
  let pg: Client;
  let db: Database;
  let deps: PartnerEndpointDeps;
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await new TestReceiver().up();
    r.behaviour = { kind: 'respond', status: 200, body: '{"approved":true}' };
    receivers.push(r);
    return r;
  };
  const auditOf = async (partner: TestPartner) =>
    (await pg.query<{ operation: string; target_type: string; target_id: string; details: Record<string, unknown> }>("SELECT operation, target_type, target_id, details FROM audit_log WHERE partner_id = $1 AND target_type = 'authorization-endpoint' ORDER BY id", [partner.id])).rows;

  before(async function () {
    gateway = await sharedGateway();
    acme = await registerPartner(gateway, 'acme-decisions');
    globex = await registerPartner(gateway, 'globex-decisions');
    pg = new Client({ connectionString: runDatabaseUrl() });
    await pg.connect();
    const silent = createLogger({ level: 'silent' });
    db = new Database(runDatabaseUrl(), { max: 2, log: silent });
    // The shared gateway keeps secrets in plaintext (no WEBHOOKS_SECRET_KEY) and allows loopback (sandbox mode).
    deps = { endpoints: new AuthorizationEndpointStore(db, { secretOverlapSeconds: 86400 }), outbound: createOutbound({ allowPrivate: true }), calls: new PartnerCallState(), log: silent };
  });

  after(async function () {
    for (const r of receivers) await r.close();
    deps?.outbound.close();
    await db?.close();
    await pg?.end();
  });

  it('creates the endpoint (201, the secret shown only here, no-store), reads it without the secret, and refuses a second one (409 authorization_endpoint_exists)', async function () {
    const r = await receiver();
    expect((await api(gateway, acme, 'GET', '/authorization-endpoint')).status).to.equal(404);
    const created = await api(gateway, acme, 'POST', '/authorization-endpoint', { body: { url: r.url } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    recordSecret('webhookSecret', created.body.secret);
    expect(created.headers.get('cache-control')).to.equal('no-store');
    expect(created.body).to.include({ url: r.url, timeoutMs: 1000, defaultDecision: 'decline', status: 'enabled' });
    expect(created.body.id).to.match(/^ae_[0-9a-f]{24}$/);
    expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9_-]{43,}$/);
    const read = await api(gateway, acme, 'GET', '/authorization-endpoint');
    expect(read.status).to.equal(200);
    const { secret: _secret, ...withoutSecret } = created.body;
    expect(read.body).to.deep.equal(withoutSecret);
    expect(read.body).to.not.have.property('secret');
    expect(JSON.stringify(read.body)).to.not.include(created.body.secret);
    const again = await api(gateway, acme, 'POST', '/authorization-endpoint', { body: { url: r.url, defaultDecision: 'approve' } });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('authorization_endpoint_exists');
    expect((await api(gateway, acme, 'GET', '/authorization-endpoint')).body.defaultDecision).to.equal('decline');
  });

  it('validates the body: timeoutMs 100 to 1500, defaultDecision, unknown fields, an empty PATCH, a URL the target guard refuses', async function () {
    const bad: [string, string, unknown, string][] = [
      ['POST', '/authorization-endpoint', { url: 'http://127.0.0.1:9/x', timeoutMs: 99 }, 'timeoutMs'],
      ['POST', '/authorization-endpoint', { url: 'http://127.0.0.1:9/x', timeoutMs: 1501 }, 'timeoutMs'],
      ['POST', '/authorization-endpoint', { url: 'http://127.0.0.1:9/x', defaultDecision: 'maybe' }, 'defaultDecision'],
      ['POST', '/authorization-endpoint', { url: 'http://127.0.0.1:9/x', secret: 'mine' }, 'secret'],
      ['POST', '/authorization-endpoint', { timeoutMs: 500 }, 'url'],
      ['POST', '/authorization-endpoint', { url: 'ftp://example.com/decide' }, 'url'],
      ['POST', '/authorization-endpoint', { url: 'http://169.254.169.254/latest' }, 'url'],
      ['PATCH', '/authorization-endpoint', { status: 'paused' }, 'status'],
      ['PATCH', '/authorization-endpoint', { url: 'http://169.254.169.254/latest' }, 'url'],
    ];
    for (const [method, path, body, field] of bad) {
      const answer = await api(gateway, globex, method, path, { body });
      expect(answer.status, `${method} ${JSON.stringify(body)}`).to.equal(400);
      expect(answer.body.invalidParams.map((p: { name: string }) => p.name).join(','), JSON.stringify(body)).to.include(field);
    }
    expect((await api(gateway, globex, 'PATCH', '/authorization-endpoint', { body: {} })).status).to.equal(400);
    expect((await api(gateway, globex, 'GET', '/authorization-endpoint')).status).to.equal(404);
  });

  it("refuses in sandbox mode, on POST and PATCH of the decision endpoint and of webhooks, this gateway's own listeners (partner, admin, notifications, a sandbox) and a sandbox's control routes (400 on url)", async function () {
    const ready = gateway.logLines().find((line) => line.msg === 'gateway ready')!;
    const sandboxes = sandboxUrls(gateway);
    const own = [
      `${gateway.adminUrl}/admin/partners`,
      `http://localhost:${String(ready.adminPort)}/admin/partners`,
      `http://[::ffff:127.0.0.1]:${String(ready.adminPort)}/admin/partners`,
      `http://127.0.0.1:${String(ready.notifyPort)}/upstream-notifications/processing/authorizations`,
      `${gateway.baseUrl}/api/partner/me`,
      `${sandboxes.issuer}/cards`,
      `${sandboxes.issuer}/__sandbox/reset`,
      `${sandboxes.processing}/__SANDBOX/reset`,
      `${sandboxes.accounts}/%5F%5Fsandbox/faults`,
    ];
    const partner = await registerPartner(gateway, 'own-listeners');
    const refused = async (method: string, path: string, url: string) => {
      const answer = await api(gateway, partner, method, path, { body: { url } });
      expect(answer.status, `${method} ${path} ${url}: ${JSON.stringify(answer.body)}`).to.equal(400);
      expect(answer.body.code).to.equal('validation_failed');
      expect(answer.body.invalidParams.map((p: { name: string }) => p.name)).to.deep.equal(['url']);
      return answer.body.invalidParams[0].reason as string;
    };
    for (const url of own) {
      await refused('POST', '/authorization-endpoint', url);
      await refused('POST', '/webhooks/endpoints', url);
    }
    expect(await refused('POST', '/authorization-endpoint', own[0])).to.equal(`is this gateway's own admin API listener (port ${String(ready.adminPort)})`);
    expect(await refused('POST', '/webhooks/endpoints', own[6])).to.equal("must not address a sandbox's control routes (/__sandbox...)");
    const r = await receiver();
    const decision = await api(gateway, partner, 'POST', '/authorization-endpoint', { body: { url: r.url } });
    expect(decision.status).to.equal(201);
    recordSecret('webhookSecret', decision.body.secret);
    const webhook = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url: r.url, events: ['card.status_changed'] } });
    expect(webhook.status).to.equal(201);
    recordSecret('webhookSecret', webhook.body.secret);
    for (const url of own) {
      await refused('PATCH', '/authorization-endpoint', url);
      await refused('PATCH', `/webhooks/endpoints/${webhook.body.id}`, url);
    }
    expect((await api(gateway, partner, 'GET', '/authorization-endpoint')).body.url).to.equal(r.url);
    expect((await api(gateway, partner, 'GET', `/webhooks/endpoints/${webhook.body.id}`)).body.url).to.equal(r.url);
  });

  it('changes the settings (PATCH), disables and enables it, each change audited without a secret', async function () {
    const r = await receiver();
    const changed = await api(gateway, acme, 'PATCH', '/authorization-endpoint', { body: { url: r.url, timeoutMs: 250, defaultDecision: 'approve' } });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body).to.include({ url: r.url, timeoutMs: 250, defaultDecision: 'approve', status: 'enabled' });
    expect((await api(gateway, acme, 'PATCH', '/authorization-endpoint', { body: { status: 'disabled' } })).body.status).to.equal('disabled');
    expect(await askPartner(deps, { partnerId: acme.id, request: REQUEST, budgetMs: 1500 })).to.deep.equal({ kind: 'none' });
    expect((await api(gateway, acme, 'PATCH', '/authorization-endpoint', { body: { status: 'enabled' } })).body.status).to.equal('enabled');
    expect(await askPartner(deps, { partnerId: acme.id, request: REQUEST, budgetMs: 1500 })).to.include({ kind: 'answered', approved: true });
    const audit = await auditOf(acme);
    expect(audit.map((a) => a.operation)).to.deep.equal(['authorization.endpoint.create', 'authorization.endpoint.update', 'authorization.endpoint.update', 'authorization.endpoint.update']);
    expect(audit[1].details).to.deep.equal({ url: r.url, timeoutMs: 250, defaultDecision: 'approve', status: null });
    expect(JSON.stringify(audit)).to.not.include('whsec_');
  });

  it('rotates the secret ({secret}, no-store): for the overlap a call carries both signatures, each verifying with its secret', async function () {
    const r = await receiver();
    expect((await api(gateway, acme, 'PATCH', '/authorization-endpoint', { body: { url: r.url } })).status).to.equal(200);
    // The creation's secret is not readable back: the test rotates twice to hold two it knows.
    const first = await api(gateway, acme, 'POST', '/authorization-endpoint/rotate-secret', { body: {} });
    expect(first.status).to.equal(200);
    recordSecret('webhookSecret', first.body.secret);
    expect(first.headers.get('cache-control')).to.equal('no-store');
    expect(Object.keys(first.body)).to.deep.equal(['secret']);
    const second = await api(gateway, acme, 'POST', '/authorization-endpoint/rotate-secret', { body: {} });
    recordSecret('webhookSecret', second.body.secret);
    expect(second.body.secret).to.not.equal(first.body.secret);
    expect(await askPartner(deps, { partnerId: acme.id, request: REQUEST, budgetMs: 1500 })).to.include({ kind: 'answered', approved: true });
    const got = r.received.at(-1)!;
    const header = got.headers['partner-gateway-signature'] as string;
    expect(header.split(',').filter((p) => p.startsWith('v1='))).to.have.length(2);
    expect(signatureVerifies(header, got.raw, [second.body.secret])).to.equal(true);
    expect(signatureVerifies(header, got.raw, [first.body.secret])).to.equal(true);
    expect(got.event.partnerId).to.equal(acme.id);
    expect((await auditOf(acme)).filter((a) => a.operation === 'authorization.endpoint.secret.rotate')).to.have.length(2);
  });

  it("partner B can neither read nor change A's endpoint, and never receives A's requests", async function () {
    const mine = await receiver();
    expect((await api(gateway, globex, 'GET', '/authorization-endpoint')).status).to.equal(404);
    expect((await api(gateway, globex, 'PATCH', '/authorization-endpoint', { body: { timeoutMs: 100 } })).status).to.equal(404);
    expect((await api(gateway, globex, 'POST', '/authorization-endpoint/rotate-secret', { body: {} })).status).to.equal(404);
    expect((await api(gateway, globex, 'DELETE', '/authorization-endpoint')).status).to.equal(404);
    const created = await api(gateway, globex, 'POST', '/authorization-endpoint', { body: { url: mine.url } });
    expect(created.status).to.equal(201);
    recordSecret('webhookSecret', created.body.secret);
    expect((await api(gateway, acme, 'GET', '/authorization-endpoint')).body.id).to.not.equal(created.body.id);
    expect((await api(gateway, acme, 'GET', '/authorization-endpoint')).body.timeoutMs).to.equal(250);
    await askPartner(deps, { partnerId: acme.id, request: REQUEST, budgetMs: 1500 });
    expect(mine.received).to.have.length(0);
    await askPartner(deps, { partnerId: globex.id, request: REQUEST, budgetMs: 1500 });
    expect(mine.received.map((x) => x.event.partnerId)).to.deep.equal([globex.id]);
    expect(signatureVerifies(mine.received[0].headers['partner-gateway-signature'] as string, mine.received[0].raw, [created.body.secret])).to.equal(true);
  });

  it('operators see the endpoint and its health, never a secret, and disable it (audited): its default decision then applies', async function () {
    const shown = await adminCall(gateway, 'GET', `/admin/partners/${acme.id}/authorization-endpoint`);
    expect(shown.status).to.equal(200);
    expect(shown.body).to.include({ status: 'enabled', disabledBy: null, timeoutMs: 250, defaultDecision: 'approve' });
    expect(shown.body).to.have.property('health');
    expect(JSON.stringify(shown.body)).to.not.include('whsec_');
    const disabled = await adminCall(gateway, 'POST', `/admin/partners/${acme.id}/authorization-endpoint/disable`);
    expect(disabled.status, JSON.stringify(disabled.body)).to.equal(200);
    expect(disabled.body).to.include({ status: 'disabled', disabledBy: 'operator' });
    expect((await api(gateway, acme, 'GET', '/authorization-endpoint')).body.status).to.equal('disabled');
    expect(await askPartner(deps, { partnerId: acme.id, request: REQUEST, budgetMs: 1500 })).to.deep.equal({ kind: 'default', reason: 'disabled', approved: true, latencyMs: 0 });
    expect((await auditOf(acme)).at(-1)).to.include({ operation: 'admin.authorization.endpoint.disable' });
    expect((await adminCall(gateway, 'POST', `/admin/partners/${acme.id}/authorization-endpoint/disable`, { status: 'enabled' })).status).to.equal(400);
    const stranger = await registerPartner(gateway, 'no-endpoint');
    expect((await adminCall(gateway, 'GET', `/admin/partners/${stranger.id}/authorization-endpoint`)).status).to.equal(404);
    expect((await adminCall(gateway, 'POST', `/admin/partners/${stranger.id}/authorization-endpoint/disable`)).status).to.equal(404);
  });

  it('deletes the endpoint (204, audited); then it is gone, not asked, and may be created again', async function () {
    const removed = await api(gateway, acme, 'DELETE', '/authorization-endpoint', { headers: { 'x-request-id': 'delete-authorization-endpoint-1' } });
    expect(removed.status).to.equal(204);
    await waitForRequestLog(gateway, 'delete-authorization-endpoint-1');
    expect((await api(gateway, acme, 'GET', '/authorization-endpoint')).status).to.equal(404);
    expect((await api(gateway, acme, 'DELETE', '/authorization-endpoint')).status).to.equal(404);
    expect(await askPartner(deps, { partnerId: acme.id, request: REQUEST, budgetMs: 1500 })).to.deep.equal({ kind: 'none' });
    expect((await pg.query("SELECT count(*)::int AS n FROM authorization_endpoint_secrets s WHERE NOT EXISTS (SELECT 1 FROM authorization_endpoints e WHERE e.id = s.endpoint_id)")).rows[0].n).to.equal(0);
    expect((await auditOf(acme)).at(-1)).to.include({ operation: 'authorization.endpoint.delete' });
    const r = await receiver();
    const recreated = await api(gateway, acme, 'POST', '/authorization-endpoint', { body: { url: r.url } });
    expect(recreated.status).to.equal(201);
    recordSecret('webhookSecret', recreated.body.secret);
  });
});
