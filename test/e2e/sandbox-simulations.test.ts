import { expect } from 'chai';
import { api, cardBody, individualBody } from '../support/api';
import { sharedGateway, startGatewayProcess, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { TestReceiver } from '../support/webhook-receiver';

/**
 * The sandbox simulations (docs/sandbox.md): in sandbox mode they make the sandboxes act on their
 * own, and the result reaches the partner through the inbound notifications, the transactions list
 * and a real HTTP webhook receiver; outside sandbox mode the routes do not exist.
 */
describe('e2e: sandbox simulations', function () {
  this.timeout(90_000);

  const newCard = async (gateway: Gateway, partner: TestPartner) => {
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status, JSON.stringify(individual.body)).to.equal(201);
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return { individualId: individual.body._id as string, cardKey: card.body.cardKey as string };
  };

  // The run's shared gateway runs in sandbox mode (the default); a new event wakes its webhook dispatcher at once.
  describe('in sandbox mode', function () {
    let gateway: Gateway;
    let partner: TestPartner;
    let other: TestPartner;
    let receiver: TestReceiver;

    before(async () => {
      receiver = await new TestReceiver().up();
      gateway = await sharedGateway();
      partner = await registerPartner(gateway);
      other = await registerPartner(gateway);
      expect(gateway.logLines().find((line) => line.msg === 'gateway ready')).to.include({ sandboxMode: true });
      const endpoint = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url: receiver.url, events: ['transaction.created', 'card.status_changed'] } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
      recordSecret('webhookSecret', endpoint.body.secret);
    });
    after(async () => {
      await receiver?.close();
    });

    it('a simulated transaction answers 201, appears in the transactions list and reaches the receiver as transaction.created', async () => {
      const { individualId, cardKey } = await newCard(gateway, partner);
      const simulated = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/transactions`, {
        body: { amount: 42.5, currency: 'EUR', type: 'clearing', merchant: { name: 'Corner Cafe', mcc: '5814', country: 'FR' } },
      });
      expect(simulated.status, JSON.stringify(simulated.body)).to.equal(201);
      expect(simulated.body).to.deep.include({ cardKey, amount: 42.5, currency: 'EUR', type: 'PURCHASE', status: 'SETTLED' });
      expect(simulated.body.merchant).to.deep.equal({ name: 'Corner Cafe', mcc: '5814', city: 'Online', country: 'FR' });
      expect(Object.keys(simulated.body).sort()).to.deep.equal([
        '_id', 'amount', 'authorization', 'cardKey', 'createdAt', 'currency', 'declineReason', 'history', 'individualId', 'merchant', 'relatedTransactionId', 'settledAmount', 'status', 'type', 'updatedAt',
      ]);
      expect(simulated.body).to.deep.include({ individualId, settledAmount: 42.5, declineReason: null, relatedTransactionId: null, authorization: null });
      expect(simulated.body.history.map((s: any) => s.kind), 'a force-post: a clearing with no authorization before it').to.deep.equal(['clearing']);

      const list = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/transactions?limit=100`);
      expect(list.status, JSON.stringify(list.body)).to.equal(200);
      expect(list.body.data, 'the simulated transaction, as listed').to.deep.include(simulated.body);

      const arrived = await receiver.waitFor((r) => r.some((d) => d.event.type === 'transaction.created' && d.event.data.transaction._id === simulated.body._id), 20_000, 'transaction.created');
      const delivery = arrived.find((d) => d.event.type === 'transaction.created' && d.event.data.transaction._id === simulated.body._id)!;
      expect(delivery.event.data.transaction).to.deep.include({ cardKey, amount: 42.5, currency: 'EUR', status: 'SETTLED' });

      const declined = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/transactions`, { body: { amount: 5, currency: 'EUR', type: 'decline' } });
      expect(declined.status, JSON.stringify(declined.body)).to.equal(201);
      expect(declined.body.status).to.equal('DECLINED');
    });

    it('a simulated issuer status arrives as card.status_changed with source issuer, and the card takes it', async () => {
      const { cardKey } = await newCard(gateway, partner);
      const simulated = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/issuer-status`, { body: { status: 'FRAUD', reason: 'fraud team' } });
      expect(simulated.status, JSON.stringify(simulated.body)).to.equal(200);
      expect(simulated.body).to.deep.equal({ cardKey, status: 'FRAUD', statusCode: 'S5' });

      const arrived = await receiver.waitFor((r) => r.some((d) => d.event.type === 'card.status_changed' && d.event.data.cardKey === cardKey), 20_000, 'card.status_changed');
      const delivery = arrived.find((d) => d.event.type === 'card.status_changed' && d.event.data.cardKey === cardKey)!;
      expect(delivery.event.data).to.include({ source: 'issuer', status: 'FRAUD', statusCode: 'S5', previousStatus: 'ACTIVE', reason: 'fraud team' });
      const card = await api(gateway, partner, 'GET', `/cards/${cardKey}`);
      expect(card.body).to.include({ status: 'FRAUD', statusCode: 'S5' });
    });

    it('a retry with the same Idempotency-Key replays the first answer: one transaction, one event', async () => {
      const { individualId, cardKey } = await newCard(gateway, partner);
      const send = () =>
        api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/transactions`, { body: { amount: 7.25, currency: 'EUR' }, headers: { 'idempotency-key': `sim-${cardKey}` } });
      // Two at once (one may be told 409: the first is still running), then a retry after both.
      const [first, second] = await Promise.all([send(), send()]);
      const third = await send();
      for (const answer of [first, second, third]) expect(answer.status, JSON.stringify(answer.body)).to.be.oneOf([201, 409]);
      const created = [first, second, third].filter((a) => a.status === 201);
      expect(new Set(created.map((a) => a.body._id)).size, 'every 201 is the same transaction').to.equal(1);
      expect(third.status, 'a retry after the first finished replays it').to.equal(201);
      const list = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/transactions?limit=100`);
      expect((list.body.data as any[]).filter((t) => t.cardKey === cardKey && t.amount === 7.25), 'one transaction recorded').to.have.length(1);
      const events = await api(gateway, partner, 'GET', '/events?type=transaction.created&limit=100');
      expect((events.body.data as any[]).filter((e) => e.data.transaction.cardKey === cardKey), 'one transaction.created event').to.have.length(1);
    });

    it("another partner's card is 403 on both routes, and nothing is recorded on it", async () => {
      const { individualId, cardKey } = await newCard(gateway, partner);
      const transaction = await api(gateway, other, 'POST', `/simulate/cards/${cardKey}/transactions`, { body: { amount: 1, currency: 'EUR' } });
      expect(transaction.status, JSON.stringify(transaction.body)).to.equal(403);
      const status = await api(gateway, other, 'POST', `/simulate/cards/${cardKey}/issuer-status`, { body: { status: 'LOCKED' } });
      expect(status.status, JSON.stringify(status.body)).to.equal(403);
      const card = await api(gateway, partner, 'GET', `/cards/${cardKey}`);
      expect(card.body.status).to.equal('ACTIVE');
      const list = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/transactions?limit=100`);
      expect((list.body.data as any[]).filter((t) => t.amount === 1 && t.merchant.city === 'Online')).to.have.length(0);
    });
  });

  it('outside sandbox mode (SANDBOX_MODE=false, the sandboxes still reachable) both routes answer 404, before authentication and validation', async () => {
    const gateway = await startGatewayProcess({ ownDatabase: true, env: { SANDBOX_MODE: 'false' } });
    try {
      expect(gateway.logLines().find((line) => line.msg === 'gateway ready'), 'the ready line says the simulations are off').to.include({ sandboxMode: false });
      const partner = await registerPartner(gateway, 'acme-live');
      const { cardKey } = await newCard(gateway, partner);
      const transaction = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/transactions`, { body: { amount: 1, currency: 'EUR' } });
      expect(transaction.status, JSON.stringify(transaction.body)).to.equal(404);
      expect(transaction.body.code).to.equal('route_not_found');
      const status = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/issuer-status`, { body: { status: 'FRAUD' } });
      expect(status.status, JSON.stringify(status.body)).to.equal(404);
      expect(status.body.code).to.equal('route_not_found');
      // The routes are not mounted: 404 before any step of theirs, so no token, a bad body or an
      // unknown card are answered the same way (not 401, 400 or 403).
      const path = `/api/partner/simulate/cards/${cardKey}/transactions`;
      const anonymous = await fetch(`${gateway.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":1,"currency":"EUR"}' });
      expect(anonymous.status).to.equal(404);
      expect(anonymous.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(((await anonymous.json()) as { code: string }).code).to.equal('route_not_found');
      const badBody = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/issuer-status`, { body: { status: 42 } });
      expect([badBody.status, badBody.body.code]).to.deep.equal([404, 'route_not_found']);
      const unknownCard = await api(gateway, partner, 'POST', '/simulate/cards/CK0000000000000000/transactions', { body: { amount: 1, currency: 'EUR' } });
      expect([unknownCard.status, unknownCard.body.code]).to.deep.equal([404, 'route_not_found']);
      const card = await api(gateway, partner, 'GET', `/cards/${cardKey}`);
      expect(card.body.status, 'the issuer was not asked').to.equal('ACTIVE');
    } finally {
      await gateway.stop();
    }
  });
});
