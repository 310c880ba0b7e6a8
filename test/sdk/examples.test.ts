import { expect } from 'chai';
import { PartnerGateway } from '../../sdk/src';
import { cardBody, individualBody } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { ExampleProcess } from '../support/example-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';

describe('sdk examples: the webhook receiver and the decision endpoint against a gateway', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let partner: TestPartner;
  let client: PartnerGateway;
  const examples: ExampleProcess[] = [];

  async function newCard() {
    const individual = await client.individuals.create(individualBody() as never);
    const card = await client.individuals.issueVirtualCard(individual._id, cardBody(individual.clientID!) as never);
    return { individual, card };
  }

  before(async function () {
    gateway = await sharedGateway();
    partner = await registerPartner(gateway, 'sdk-examples');
    client = new PartnerGateway({ partnerId: partner.id, issuer: partner.issuer, privateKey: partner.keys.privateKey, kid: partner.kid, baseUrl: `${gateway.baseUrl}/api/partner` });
  });

  after(function () {
    for (const example of examples) example.stop();
  });

  it('examples/webhook-receiver.ts verifies the gateway\'s deliveries (printing each event once) and refuses a forged one', async function () {
    // Enrolled first (the secret is shown only then), then pointed at the example's port.
    const endpoint = await client.webhookEndpoints.create({ url: 'http://127.0.0.1:9/hooks', events: ['individual.created', 'card.status_changed'] });
    recordSecret('webhookSecret', endpoint.secret);
    const { example, port } = await ExampleProcess.start('webhook-receiver.js', { PORT: '0', WEBHOOK_SECRET: endpoint.secret }, /webhook receiver on http:\/\/localhost:(\d+)/);
    examples.push(example);
    await client.webhookEndpoints.update(endpoint.id, { url: `http://127.0.0.1:${port}/hooks` });

    const { individual, card } = await newCard();
    await client.cards.lock(card.cardKey, { expDate: card.expDate!, reason: 'example' });
    const created = await example.waitFor(/^individual\.created (evt_\w+)$/m);
    const changed = await example.waitFor(/^card\.status_changed (evt_\w+)$/m);
    const events = (await client.events.list({ limit: 100 }).toArray()).filter((e) => e.type === 'individual.created' || e.type === 'card.status_changed');
    expect(events.map((e) => e.id)).to.include.members([created[1], changed[1]]);
    expect(JSON.stringify(events)).to.include(individual._id);

    const forged = await fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', headers: { 'Partner-Gateway-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` }, body: '{"id":"evt_x","type":"card.created","data":{}}' });
    expect(forged.status).to.equal(400);
    const unsigned = await fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', body: '{}' });
    expect(unsigned.status).to.equal(400);
    expect(example.output).to.not.include('evt_x');
    expect(example.output).to.not.include(endpoint.secret);
  });

  it('examples/authorization-endpoint.ts decides the gateway\'s signed authorization requests: approves up to MAX_AMOUNT, declines above', async function () {
    const endpoint = await client.authorizationEndpoint.create({ url: 'http://127.0.0.1:9/decide', timeoutMs: 1500 });
    recordSecret('webhookSecret', endpoint.secret);
    const { example, port } = await ExampleProcess.start('authorization-endpoint.js', { PORT: '0', AUTHORIZATION_SECRET: endpoint.secret, MAX_AMOUNT: '50' }, /decision endpoint on http:\/\/localhost:(\d+)/);
    examples.push(example);
    await client.authorizationEndpoint.update({ url: `http://127.0.0.1:${port}/decide` });

    const { card } = await newCard();
    const approved = await client.simulate.cardAuthorization(card.cardKey, { amount: 12.5, merchant: { name: 'Corner Shop', mcc: '5411', country: 'PT' } });
    expect(approved).to.deep.include({ status: 'PENDING', amount: 12.5 });
    expect(approved.authorization).to.deep.include({ decidedBy: 'partner' });
    const declined = await client.simulate.cardAuthorization(card.cardKey, { amount: 75 });
    expect(declined, JSON.stringify({ approved, declined, output: example.output })).to.deep.include({ status: 'DECLINED', declineReason: 'partner_declined' });
    expect(declined.authorization).to.deep.include({ decidedBy: 'partner' });
    await example.waitFor(/: declined \(amount_over_limit\)$/m);
    expect(example.output).to.match(/^\S+ 12\.5 EUR: approved$/m);
    expect(example.output).to.match(/^\S+ 75 EUR: declined \(amount_over_limit\)$/m);
    expect(example.output).to.not.include(endpoint.secret);
  });
});
