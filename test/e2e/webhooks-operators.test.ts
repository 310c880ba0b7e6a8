import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody } from '../support/api';
import { FAST_WEBHOOKS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { TestReceiver } from '../support/webhook-receiver';
import { metricSample } from '../support/metrics';

const sample = metricSample;

/**
 * What operators see of webhooks: the admin API's endpoint list with delivery health and its
 * disable switch, and the delivery metrics on `/admin/metrics`, against real receivers on 127.0.0.1
 * and a gateway on its own database.
 */
describe('e2e: webhook operations (admin API and metrics)', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let globex: TestPartner;
  let db: Client;
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await new TestReceiver().up();
    receivers.push(r);
    return r;
  };
  const createEndpoint = async (partner: TestPartner, url: string) => {
    const created = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    recordSecret('webhookSecret', created.body.secret);
    return created.body as { id: string; secret: string };
  };
  const newCard = async (partner: TestPartner) => {
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status).to.equal(201);
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return card.body as { cardKey: string };
  };
  const health = async (partner: TestPartner) => {
    const listed = await adminCall(gateway, 'GET', `/admin/partners/${partner.id}/webhook-endpoints`);
    expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
    return listed.body.data as any[];
  };
  const waitForHealth = async (partner: TestPartner, predicate: (endpoints: any[]) => boolean) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const endpoints = await health(partner);
      if (predicate(endpoints)) return endpoints;
      if (Date.now() > deadline) throw new Error(`health never matched: ${JSON.stringify(endpoints)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  let healthy: { id: string; secret: string };
  let failing: { id: string; secret: string };
  let good: TestReceiver;
  let bad: TestReceiver;

  before(async function () {
    gateway = await startGatewayProcess({ ownDatabase: true, env: FAST_WEBHOOKS });
    acme = await registerPartner(gateway, 'acme-webhook-ops');
    globex = await registerPartner(gateway, 'globex-webhook-ops');
    db = new Client({ connectionString: gateway.databaseUrl });
    await db.connect();
    good = await receiver();
    bad = await receiver();
    bad.behaviour = { kind: 'status', status: 500, times: 1_000_000 };
    healthy = await createEndpoint(acme, good.url);
    failing = await createEndpoint(acme, bad.url);
    await newCard(acme);
  });

  after(async function () {
    await db?.end();
    for (const r of receivers) await r.close();
    await gateway?.stop();
  });

  it('lists a partner\'s endpoints with their delivery health: last success, last failure and its error, failures in a row, backlog; never a secret', async function () {
    const endpoints = await waitForHealth(acme, (list) => {
      const [ok, ko] = [list.find((e) => e.id === healthy.id), list.find((e) => e.id === failing.id)];
      return ok?.lastSuccessAt && ok.backlog === 0 && ko?.consecutiveFailures >= 2;
    });
    const ok = endpoints.find((e) => e.id === healthy.id);
    const ko = endpoints.find((e) => e.id === failing.id);
    expect(ok).to.include({ url: good.url, status: 'enabled', consecutiveFailures: 0, lastFailure: null, backlog: 0, oldestPendingAt: null });
    expect(Date.parse(ok.lastSuccessAt)).to.be.at.most(Date.parse(ok.lastAttemptAt));
    expect(ko).to.include({ url: bad.url, status: 'enabled', lastSuccessAt: null });
    expect(ko.lastFailure).to.include({ error: 'http_status', httpStatus: 500 });
    // Both events (individual.created, card.created) wait for the receiver that answers 500.
    expect(ko.backlog).to.equal(2);
    expect(Date.parse(ko.oldestPendingAt)).to.be.a('number').and.not.NaN;
    const raw = JSON.stringify(endpoints);
    for (const secret of [healthy.secret, failing.secret]) expect(raw).to.not.include(secret);
    expect(raw).to.not.include('whsec_');

    // Another partner's list has none of them; an unknown partner is 404; no token is 401.
    expect((await health(globex)).map((e) => e.id)).to.not.include.members([healthy.id, failing.id]);
    expect((await adminCall(gateway, 'GET', '/admin/partners/ffffffffffffffffffffffff/webhook-endpoints')).status).to.equal(404);
    const anonymous = await fetch(`${gateway.adminUrl}/admin/partners/${acme.id}/webhook-endpoints`);
    expect(anonymous.status).to.equal(401);
  });

  it('exposes deliveries by outcome and error kind, attempt duration, delivery lag and the backlog on /admin/metrics', async function () {
    const text = await (await fetch(`${gateway.adminUrl}/admin/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } })).text();
    expect(sample(text, 'webhook_deliveries_total', { outcome: 'delivered', error: 'none' })).to.be.at.least(2);
    expect(sample(text, 'webhook_deliveries_total', { outcome: 'retrying', error: 'http_status' })).to.be.at.least(2);
    expect(sample(text, 'webhook_attempt_duration_seconds_count')).to.be.at.least(4);
    expect(sample(text, 'webhook_delivery_lag_seconds_count')).to.be.at.least(2);
    expect(sample(text, 'webhook_backlog_total')).to.be.at.least(2);
    expect(sample(text, 'webhook_backlog', { endpoint: failing.id })).to.equal(2);
    // An endpoint with nothing waiting is not a series (the label set stays bounded).
    expect(sample(text, 'webhook_backlog', { endpoint: healthy.id })).to.equal(undefined);
    expect(text).to.not.include(good.url);
  });

  it('disables an endpoint: audited, the partner sees it disabled, new events are not queued for it; unknown ids are 404, bad bodies 400', async function () {
    expect((await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}/webhook-endpoints/${failing.id}`, { status: 'paused' })).status).to.equal(400);
    expect((await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}/webhook-endpoints/${failing.id}`, { status: 'disabled', url: good.url })).status).to.equal(400);
    expect((await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}/webhook-endpoints/we_ffffffffffffffffffffffff`, { status: 'disabled' })).status).to.equal(404);
    expect((await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}/webhook-endpoints/nope`, { status: 'disabled' })).status).to.equal(404);
    // Another partner's path never reaches acme's endpoint.
    expect((await adminCall(gateway, 'PATCH', `/admin/partners/${globex.id}/webhook-endpoints/${failing.id}`, { status: 'disabled' })).status).to.equal(404);
    expect((await api(gateway, acme, 'GET', `/webhooks/endpoints/${failing.id}`)).body.status).to.equal('enabled');

    const disabled = await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}/webhook-endpoints/${failing.id}`, { status: 'disabled' });
    expect(disabled.status, JSON.stringify(disabled.body)).to.equal(200);
    expect(disabled.body).to.include({ id: failing.id, status: 'disabled' });
    expect(JSON.stringify(disabled.body)).to.not.include('whsec_');
    expect((await api(gateway, acme, 'GET', `/webhooks/endpoints/${failing.id}`)).body.status).to.equal('disabled');
    const audit = await db.query("SELECT partner_id, target_type, details, request_id FROM audit_log WHERE operation = 'admin.webhook.endpoint.update' AND target_id = $1", [failing.id]);
    expect(audit.rows).to.have.length(1);
    expect(audit.rows[0]).to.include({ partner_id: acme.id, target_type: 'webhook-endpoint', request_id: disabled.headers.get('x-request-id') });
    expect(audit.rows[0].details).to.deep.equal({ status: 'disabled' });

    const card = await newCard(acme);
    await good.waitFor((got) => got.some((x) => x.event.data.card?.cardKey === card.cardKey), 20_000, 'the new card.created');
    const queued = await db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [failing.id]);
    expect(queued.rows[0].n).to.equal(2);

    const enabled = await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}/webhook-endpoints/${failing.id}`, { status: 'enabled' });
    expect(enabled.body).to.include({ status: 'enabled', consecutiveFailures: 0 });
  });
});
