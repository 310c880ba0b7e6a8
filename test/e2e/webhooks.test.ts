import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody } from '../support/api';
import { FAST_WEBHOOKS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { TestReceiver, type Received } from '../support/webhook-receiver';
import { signatureVerifies } from '../support/signatures';

/**
 * Signed webhooks end to end (docs/webhooks.md): a real gateway on its own PostgreSQL database (a
 * gateway of another test file on the run's database would send these deliveries too), in sandbox
 * mode (loopback receivers allowed), and real HTTP receivers on 127.0.0.1.
 */
describe('e2e: webhook endpoints and signed deliveries', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let globex: TestPartner;
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await new TestReceiver().up();
    receivers.push(r);
    return r;
  };
  const createEndpoint = async (partner: TestPartner, url: string, more: Record<string, unknown> = {}) => {
    const created = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url, ...more } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    recordSecret('webhookSecret', created.body.secret);
    return created.body as { id: string; secret: string };
  };
  const signatureOf = (r: Received) => r.headers['partner-gateway-signature'] as string;
  const v1Count = (r: Received) => signatureOf(r).split(',').filter((p) => p.startsWith('v1=')).length;
  const newCard = async (partner: TestPartner) => {
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status).to.equal(201);
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return card.body as { cardKey: string; expDate: string };
  };
  const nickname = async (partner: TestPartner, cardKey: string, value: string) => {
    const changed = await api(gateway, partner, 'PATCH', `/cards/${cardKey}/nickname`, { body: { nickname: value } });
    expect(changed.status).to.equal(200);
  };
  const attemptsOf = async (partner: TestPartner, endpointId: string) => {
    const page = await api(gateway, partner, 'GET', `/webhooks/endpoints/${endpointId}/deliveries?limit=100`);
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    return page.body.data as any[];
  };
  /** Polls the deliveries list until `predicate` holds (attempts are recorded just after the receiver answered). */
  const waitForAttempts = async (partner: TestPartner, endpointId: string, predicate: (attempts: any[]) => boolean) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const attempts = await attemptsOf(partner, endpointId);
      if (predicate(attempts)) return attempts;
      if (Date.now() > deadline) throw new Error(`attempts never matched: ${JSON.stringify(attempts)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  before(async function () {
    gateway = await startGatewayProcess({ ownDatabase: true, env: FAST_WEBHOOKS });
    acme = await registerPartner(gateway, 'acme-webhooks');
    globex = await registerPartner(gateway, 'globex-webhooks');
  });

  after(async function () {
    for (const r of receivers) await r.close();
    await gateway?.stop();
  });

  it('delivers every event type (card.created for an issue, a replacement and a re-issue; card.status_changed from the partner and the issuer), signed so that the standalone receiver verifies it; the body is the event log\'s bytes', async function () {
    const r = await receiver();
    const endpoint = await createEndpoint(acme, r.url, { description: 'all types' });
    expect(endpoint).to.include({ url: r.url, status: 'enabled', description: 'all types' });
    expect(endpoint.secret).to.match(/^whsec_[A-Za-z0-9_-]{43,}$/);
    const card = await newCard(acme);
    await nickname(acme, card.cardKey, 'Travel');
    expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } })).status).to.equal(200);
    const types = ['individual.created', 'card.created', 'card.updated', 'card.status_changed'];
    await r.waitFor((got) => types.every((t) => got.some((x) => x.event.type === t)), 20_000, types.join(', '));
    for (const got of r.received) {
      expect(signatureVerifies(signatureOf(got), got.raw, [endpoint.secret]), got.raw).to.equal(true);
      expect(signatureVerifies(signatureOf(got), got.raw, ['whsec_' + 'x'.repeat(43)])).to.equal(false);
      expect(got.headers['partner-gateway-event-id']).to.equal(got.event.id);
      expect(got.headers['partner-gateway-event-type']).to.equal(got.event.type);
      expect(got.event.partnerId).to.equal(acme.id);
      const logged = await fetch(`${gateway.baseUrl}/api/partner/events/${got.event.id}`, { headers: { authorization: `Bearer ${await acme.token()}` } });
      expect(await logged.text()).to.equal(got.raw);
    }
    // A card's events arrive in the order they happened.
    const ofCard = r.received.filter((x) => x.event.data.cardKey === card.cardKey || x.event.data.card?.cardKey === card.cardKey).map((x) => x.event.type);
    expect(ofCard).to.deep.equal(['card.created', 'card.updated', 'card.status_changed']);

    // The other reasons and sources: a physical card replaced, then re-issued; a transaction and a
    // status change of the issuer's own (the sandbox simulations: this gateway runs in sandbox mode).
    const individual = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Replaced' }) });
    const physical = await api(gateway, acme, 'POST', `/individual/accounts/${individual.body._id}/cards/physical`, { body: cardBody(individual.body.clientID) });
    expect(physical.status, JSON.stringify(physical.body)).to.equal(201);
    const expDate = `06/${new Date().getUTCFullYear() + 5}`;
    const replaced = await api(gateway, acme, 'POST', `/cards/${physical.body.cardKey}/replace`, { body: { expDate, reason: 'damaged' } });
    expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
    const reissued = await api(gateway, acme, 'POST', `/cards/${replaced.body.cardKey}/reissue`, { body: { expDate, reason: 'expiry' } });
    expect(reissued.status, JSON.stringify(reissued.body)).to.equal(201);
    const transaction = await api(gateway, acme, 'POST', `/simulate/cards/${reissued.body.cardKey}/transactions`, { body: { amount: 12.5, currency: 'EUR' } });
    expect(transaction.status, JSON.stringify(transaction.body)).to.equal(201);
    const before = (await api(gateway, acme, 'GET', `/cards/${reissued.body.cardKey}`)).body.status;
    const issuerStatus = await api(gateway, acme, 'POST', `/simulate/cards/${reissued.body.cardKey}/issuer-status`, { body: { status: 'FRAUD' } });
    expect(issuerStatus.status, JSON.stringify(issuerStatus.body)).to.equal(200);
    const created = (reason: string, cardKey: string) => (x: Received) => x.event.type === 'card.created' && x.event.data.reason === reason && x.event.data.card.cardKey === cardKey;
    const expected = {
      replaced: created('replaced', replaced.body.cardKey),
      reissued: created('reissued', reissued.body.cardKey),
      transaction: (x: Received) => x.event.type === 'transaction.created' && x.event.data.transaction._id === transaction.body._id,
      issuer: (x: Received) => x.event.type === 'card.status_changed' && x.event.data.cardKey === reissued.body.cardKey && x.event.data.source === 'issuer',
    };
    await r.waitFor((got) => Object.values(expected).every((match) => got.some(match)), 20_000, Object.keys(expected).join(', '));
    const one = (match: (x: Received) => boolean) => r.received.filter(match)[0]!;
    expect(one(expected.replaced).event.data.previousCardKey).to.equal(physical.body.cardKey);
    expect(one(expected.reissued).event.data.previousCardKey).to.equal(replaced.body.cardKey);
    expect(one(expected.transaction).event.data.transaction).to.include({ cardKey: reissued.body.cardKey, amount: 12.5, currency: 'EUR' });
    expect(one(expected.issuer).event.data).to.include({ status: 'FRAUD', previousStatus: before });
    const emitted = new Set(r.received.map((x) => x.event.type));
    expect([...emitted].sort(), 'every event type of the contract arrived').to.deep.equal(['card.created', 'card.status_changed', 'card.updated', 'individual.created', 'transaction.created']);
    for (const got of r.received) {
      expect(signatureVerifies(signatureOf(got), got.raw, [endpoint.secret]), got.raw).to.equal(true);
      expect(got.headers['partner-gateway-event-type']).to.equal(got.event.type);
    }

    const attempts = await waitForAttempts(acme, endpoint.id, (a) => a.length >= r.received.length);
    expect(attempts.every((a) => a.outcome === 'delivered' && a.httpStatus === 200 && a.error === null && a.nextRetryAt === null)).to.equal(true);
    expect((await api(gateway, acme, 'DELETE', `/webhooks/endpoints/${endpoint.id}`)).status).to.equal(204);
    expect((await api(gateway, acme, 'GET', `/webhooks/endpoints/${endpoint.id}`)).status).to.equal(404);
  });

  it('never answers a secret after creation; another partner\'s endpoint is 403, an unknown one 404, a malformed id 400', async function () {
    const r = await receiver();
    const endpoint = await createEndpoint(acme, r.url, { events: ['card.updated'] });
    const read = await api(gateway, acme, 'GET', `/webhooks/endpoints/${endpoint.id}`);
    expect(read.status).to.equal(200);
    expect(read.body).to.not.have.property('secret');
    expect(JSON.stringify(read.body)).to.not.include(endpoint.secret);
    const list = await api(gateway, acme, 'GET', '/webhooks/endpoints');
    expect(list.body.data.map((e: any) => e.id)).to.include(endpoint.id);
    expect(JSON.stringify(list.body)).to.not.include('whsec_');
    expect(read.body.events).to.deep.equal(['card.updated']);
    const created = await api(gateway, globex, 'POST', '/webhooks/endpoints', { body: { url: r.url } });
    recordSecret('webhookSecret', created.body.secret);
    expect(created.headers.get('cache-control')).to.include('no-store');

    for (const [method, path, body] of [
      ['GET', `/webhooks/endpoints/${endpoint.id}`, undefined],
      ['PATCH', `/webhooks/endpoints/${endpoint.id}`, { status: 'disabled' }],
      ['DELETE', `/webhooks/endpoints/${endpoint.id}`, undefined],
      ['POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, {}],
      ['GET', `/webhooks/endpoints/${endpoint.id}/deliveries`, undefined],
    ] as const) {
      expect((await api(gateway, globex, method, path, { body })).status, `${method} ${path}`).to.equal(403);
    }
    expect((await api(gateway, globex, 'GET', '/webhooks/endpoints')).body.data.map((e: any) => e.id)).to.not.include(endpoint.id);
    expect((await api(gateway, acme, 'GET', '/webhooks/endpoints/we_000000000000000000000000')).status).to.equal(404);
    const malformed = await api(gateway, acme, 'GET', '/webhooks/endpoints/nope');
    expect(malformed.status).to.equal(400);
    expect(malformed.body.code).to.equal('invalid_id');
    // Globex's receiver (the same URL) gets none of Acme's events.
    const card = await newCard(acme);
    await nickname(acme, card.cardKey, 'Mine');
    await r.waitFor((got) => got.some((x) => x.event.type === 'card.updated' && x.event.data.cardKey === card.cardKey));
    // Acme's endpoint takes only card.updated; Globex's takes everything of Globex, and Globex made no change.
    expect(r.received.every((x) => x.event.partnerId === acme.id && x.event.type === 'card.updated')).to.equal(true);
    // A resend of Acme's event by Globex is 403.
    const eventId = r.received[0].event.id;
    expect((await api(gateway, globex, 'POST', `/events/${eventId}/resend`, { body: {} })).status).to.equal(403);
  });

  it('retries after a 500, a timeout and a receiver that is down, with the same event id, and records every attempt', async function () {
    const r = await receiver();
    const endpoint = await createEndpoint(acme, r.url, { events: ['card.updated'] });
    const card = await newCard(acme);
    r.behaviour = { kind: 'status', status: 500, times: 2 };
    await nickname(acme, card.cardKey, 'Retry');
    await r.waitFor((got) => got.length >= 3);
    expect(new Set(r.received.map((x) => x.event.id)).size).to.equal(1);
    let attempts = await waitForAttempts(acme, endpoint.id, (a) => a.some((x) => x.outcome === 'delivered'));
    attempts = attempts.reverse();
    expect(attempts.map((a) => [a.attempt, a.httpStatus, a.outcome])).to.deep.equal([
      [1, 500, 'retrying'],
      [2, 500, 'retrying'],
      [3, 200, 'delivered'],
    ]);
    expect(attempts[0].nextRetryAt).to.be.a('string');

    // A receiver that hangs past the timeout: the attempt is a timeout, then delivered once it answers.
    r.behaviour = { kind: 'hang' };
    const before = r.received.length;
    await nickname(acme, card.cardKey, 'Hang');
    await r.waitFor((got) => got.length > before);
    const hungId = r.received[before].event.id;
    r.behaviour = { kind: 'ok' };
    await waitForAttempts(acme, endpoint.id, (a) => a.some((x) => x.eventId === hungId && x.outcome === 'delivered'));
    const hung = (await attemptsOf(acme, endpoint.id)).filter((a) => a.eventId === hungId);
    expect(hung.some((a) => a.error === 'timeout')).to.equal(true);
    expect(r.received.filter((x) => x.event.id === hungId).length).to.be.at.least(2);

    // Down: connection errors, then the same id once it is back on its port.
    await r.down();
    await nickname(acme, card.cardKey, 'Down');
    await waitForAttempts(acme, endpoint.id, (a) => a.filter((x) => x.error === 'connection').length >= 2);
    const downId = (await attemptsOf(acme, endpoint.id)).find((a) => a.error === 'connection').eventId;
    await r.up();
    await r.waitFor((got) => got.some((x) => x.event.id === downId));
    await waitForAttempts(acme, endpoint.id, (a) => a.some((x) => x.eventId === downId && x.outcome === 'delivered'));
  });

  it('audits every change of an endpoint (create, update, rotate, delete) under its catalog action, never with a secret', async function () {
    const r = await receiver();
    const endpoint = await createEndpoint(acme, r.url, { events: ['card.updated'] });
    expect((await api(gateway, acme, 'PATCH', `/webhooks/endpoints/${endpoint.id}`, { body: { events: ['card.created', 'card.updated'] } })).status).to.equal(200);
    const rotated = await api(gateway, acme, 'POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, { body: {} });
    recordSecret('webhookSecret', rotated.body.secret);
    // Another partner's change is refused (403) and audited nowhere under this endpoint.
    expect((await api(gateway, globex, 'DELETE', `/webhooks/endpoints/${endpoint.id}`)).status).to.equal(403);
    expect((await api(gateway, acme, 'DELETE', `/webhooks/endpoints/${endpoint.id}`)).status).to.equal(204);
    const db = new Client({ connectionString: gateway.databaseUrl });
    await db.connect();
    try {
      const rows = (
        await db.query<{ partner_id: string; operation: string; target_type: string; details: Record<string, unknown> }>(
          'SELECT partner_id, operation, target_type, details FROM audit_log WHERE target_id = $1 ORDER BY id',
          [endpoint.id]
        )
      ).rows;
      expect(rows.map((row) => row.operation)).to.deep.equal(['webhook.endpoint.create', 'webhook.endpoint.update', 'webhook.secret.rotate', 'webhook.endpoint.delete']);
      expect(rows.every((row) => row.partner_id === acme.id && row.target_type === 'webhook-endpoint')).to.equal(true);
      expect(rows[0].details).to.include({ url: r.url, events: 'card.updated' });
      expect(rows[1].details).to.include({ events: 'card.created,card.updated' });
      const text = JSON.stringify(rows);
      expect(text).to.not.include(endpoint.secret).and.not.include(rotated.body.secret).and.not.include('whsec_');
    } finally {
      await db.end();
    }
  });

  it('signs with both secrets after a rotation: a receiver holding either one verifies', async function () {
    const r = await receiver();
    const endpoint = await createEndpoint(acme, r.url, { events: ['card.updated'] });
    const card = await newCard(acme);
    await nickname(acme, card.cardKey, 'Before');
    await r.waitFor((got) => got.length >= 1);
    expect(v1Count(r.received[0])).to.equal(1);
    const rotated = await api(gateway, acme, 'POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`, { body: {} });
    expect(rotated.status).to.equal(200);
    recordSecret('webhookSecret', rotated.body.secret);
    expect(rotated.body.secret).to.match(/^whsec_/).and.not.equal(endpoint.secret);
    expect(rotated.headers.get('cache-control')).to.include('no-store');
    await nickname(acme, card.cardKey, 'After');
    await r.waitFor((got) => got.length >= 2);
    const after = r.received[1];
    expect(v1Count(after)).to.equal(2);
    expect(signatureVerifies(signatureOf(after), after.raw, [rotated.body.secret])).to.equal(true);
    expect(signatureVerifies(signatureOf(after), after.raw, [endpoint.secret])).to.equal(true);
    // The new secret signs first.
    const newFirst = signatureOf(after).split(',')[1];
    expect(signatureVerifies(`${signatureOf(after).split(',')[0]},${newFirst}`, after.raw, [rotated.body.secret])).to.equal(true);
  });

  it('resends an event: 202, and the receiver gets it again with the same id', async function () {
    // A partner with this one endpoint only: the resend's count is that endpoint's delivery.
    const initech = await registerPartner(gateway, 'initech-webhooks');
    const r = await receiver();
    await createEndpoint(initech, r.url, { events: ['card.updated'] });
    const card = await newCard(initech);
    await nickname(initech, card.cardKey, 'Once');
    await r.waitFor((got) => got.length >= 1);
    const resent = await api(gateway, initech, 'POST', `/events/${r.received[0].event.id}/resend`, { body: {} });
    expect(resent.status).to.equal(202);
    expect(resent.body).to.deep.equal({ id: r.received[0].event.id, deliveries: 1 });
    await r.waitFor((got) => got.length >= 2);
    expect(r.received[1].raw).to.equal(r.received[0].raw);
  });

  it('one endpoint that hangs does not delay another partner\'s deliveries', async function () {
    const dead = await receiver();
    dead.behaviour = { kind: 'hang' };
    const fast = await receiver();
    await createEndpoint(acme, dead.url, { events: ['card.updated'] });
    await createEndpoint(globex, fast.url, { events: ['card.updated'] });
    const acmeCard = await newCard(acme);
    const globexCard = await newCard(globex);
    // More of Acme's changes than the per-endpoint limit, all hanging for the timeout (1.5 s).
    for (let i = 0; i < 8; i++) await nickname(acme, acmeCard.cardKey, `dead ${i}`);
    await dead.waitFor((got) => got.length >= 1);
    const started = Date.now();
    await nickname(globex, globexCard.cardKey, 'fast');
    await fast.waitFor((got) => got.length >= 1);
    // Well under one timeout of the hanging endpoint.
    expect(Date.now() - started).to.be.below(1000);
  });
});
