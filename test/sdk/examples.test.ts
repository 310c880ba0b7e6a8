import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { PartnerGateway } from '../../sdk/src';
import { createWebhookReceiver } from '../../examples/webhook-receiver';
import { cardBody, individualBody } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { ExampleProcess } from '../support/example-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';

describe('sdk examples: the webhook receiver and the decision endpoint (purchases and tokenizations) against a gateway', function () {
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

  it("examples/authorization-endpoint.ts decides the gateway's signed tokenization requests: the network's decline declined, a device outside DEVICE_COUNTRIES sent to verification, the others approved; a forged one refused", async function () {
    // A partner of its own: one decision endpoint per partner, and the purchases' test has this file's.
    const tokenizer = await registerPartner(gateway, 'sdk-examples-tokenization');
    const own = new PartnerGateway({ partnerId: tokenizer.id, issuer: tokenizer.issuer, privateKey: tokenizer.keys.privateKey, kid: tokenizer.kid, baseUrl: `${gateway.baseUrl}/api/partner` });
    const endpoint = await own.authorizationEndpoint.create({ url: 'http://127.0.0.1:9/decide', timeoutMs: 1500, requestTypes: ['authorization.request', 'tokenization.request'] });
    recordSecret('webhookSecret', endpoint.secret);
    const { example, port } = await ExampleProcess.start('authorization-endpoint.js', { PORT: '0', AUTHORIZATION_SECRET: endpoint.secret, DEVICE_COUNTRIES: 'PT,ES' }, /decision endpoint on http:\/\/localhost:(\d+)/);
    examples.push(example);
    await own.authorizationEndpoint.update({ url: `http://127.0.0.1:${port}/decide` });
    const individual = await own.individuals.create(individualBody() as never);
    const card = await own.individuals.issueVirtualCard(individual._id, cardBody(individual.clientID!) as never);

    const tokenize = (body: Parameters<typeof own.simulate.cardTokenization>[1]) => own.simulate.cardTokenization(card.cardKey, body);
    const approved = await tokenize({ walletProvider: 'apple_pay', device: { type: 'phone', name: 'Ada’s iPhone', ipCountry: 'PT' } });
    const abroad = await tokenize({ walletProvider: 'google_pay', device: { type: 'phone', name: 'Ada’s Pixel', ipCountry: 'US' } });
    const unknownCountry = await tokenize({ walletProvider: 'samsung_pay', device: { type: 'watch' } });
    const networkDeclined = await tokenize({ walletProvider: 'apple_pay', device: { type: 'phone', ipCountry: 'ES' }, networkVerdict: 'decline' });
    const networkAsked = await tokenize({ walletProvider: 'apple_pay', device: { type: 'tablet', ipCountry: 'ES' }, networkVerdict: 'require_verification' });
    const outcome = (token: typeof approved) => [token.status, token.history[0]?.by];
    // Each decided by the endpoint's answer (`by: partner`), not by the network's verdict alone.
    expect(outcome(approved), JSON.stringify({ approved, output: example.output })).to.deep.equal(['active', 'partner']);
    expect(outcome(abroad)).to.deep.equal(['pending_verification', 'partner']);
    expect(outcome(unknownCountry)).to.deep.equal(['pending_verification', 'partner']);
    expect(outcome(networkDeclined)).to.deep.equal(['declined', 'partner']);
    expect(networkDeclined.history[0]?.reason).to.equal('partner_declined');
    expect(outcome(networkAsked)).to.deep.equal(['pending_verification', 'partner']);
    await example.waitFor(new RegExp(`^${networkAsked._id} `, 'm'));
    expect(example.output).to.include(`${approved._id} apple_pay PT: approve\n`);
    expect(example.output).to.include(`${abroad._id} google_pay US: require_verification\n`);
    expect(example.output).to.include(`${unknownCountry._id} samsung_pay -: require_verification\n`);
    expect(example.output).to.include(`${networkDeclined._id} apple_pay ES: decline (network_declined)\n`);
    expect(example.output).to.include(`${networkAsked._id} apple_pay ES: require_verification\n`);
    expect((await own.cards.listTokens(card.cardKey)).data.map((t) => t._id)).to.have.members([approved._id, abroad._id, unknownCountry._id, networkDeclined._id, networkAsked._id]);

    // Unsigned, or signed with another secret: refused before any decision, whichever type it names.
    const forgedBody = JSON.stringify({ id: 'treq_forged', type: 'tokenization.request', data: { tokenization: { id: 'tkz_forged', tokenId: 'tok_forged', walletProvider: 'apple_pay', networkVerdict: { decision: 'approve' }, device: { type: 'phone', ipCountry: 'PT' } } } });
    const forged = await fetch(`http://127.0.0.1:${port}/decide`, { method: 'POST', headers: { 'Partner-Gateway-Event-Type': 'tokenization.request', 'Partner-Gateway-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` }, body: forgedBody });
    expect(forged.status).to.equal(400);
    const t = Math.floor(Date.now() / 1000);
    const otherSecret = await fetch(`http://127.0.0.1:${port}/decide`, { method: 'POST', headers: { 'Partner-Gateway-Event-Type': 'tokenization.request', 'Partner-Gateway-Signature': `t=${t},v1=${crypto.createHmac('sha256', `whsec_${'d'.repeat(43)}`).update(`${t}.${forgedBody}`).digest('hex')}` }, body: forgedBody });
    expect(otherSecret.status).to.equal(400);
    expect(example.output).to.not.include('tok_forged');
    expect(example.output).to.not.include(endpoint.secret);
  });

  it('examples/quickstart.ts, as a registered partner, sends PARTNER_KID as its tokens\' kid: a kid of no key of the partner is refused', async function () {
    const registered = await registerPartner(gateway, 'sdk-quickstart-kid');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-quickstart-kid-'));
    const keyFile = path.join(dir, 'private.pem');
    fs.writeFileSync(keyFile, registered.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const quickstart = path.resolve(__dirname, '..', '..', 'examples', 'quickstart.js');
    const run = (kid: string) =>
      promisify(execFile)(process.execPath, [quickstart], {
        timeout: 60_000,
        env: { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '', PARTNER_API_URL: `${gateway.baseUrl}/api/partner`, PARTNER_ID: registered.id, PARTNER_ISSUER: registered.issuer, PARTNER_KEY_FILE: keyFile, PARTNER_KID: kid },
      }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
        (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr })
      );
    try {
      // Without the kid passed through, this token would name no key and the gateway would try the partner's keys.
      const wrong = await run('not-a-key-of-this-partner');
      expect(wrong.code, wrong.stdout).to.equal(1);
      expect(wrong.stderr).to.include('401 key_unknown');
      const right = await run(registered.kid);
      expect(right.code, `${right.stdout}\n${right.stderr}`).to.equal(0);
      expect(right.stdout).to.match(new RegExp(`^identity\\s+using the registered partner ${registered.id} \\(kid ${registered.kid.replace(/[-]/g, '\\$&')}\\)$`, 'm'));
      expect(right.stdout).to.match(/^done\s+\{/m);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sdk examples: the webhook receiver\'s seen-id set is bounded', function () {
  const SECRET = `whsec_${'c'.repeat(43)}`;
  /** One signed delivery handed to the receiver's handler in process; answers the status it wrote. */
  function deliver(handler: http.RequestListener, id: string): number {
    const raw = JSON.stringify({ id, type: 'card.status_changed', createdAt: '2026-11-27T10:00:00.000Z', partnerId: '65f1a2b3c4d5e6f708192a00', data: { cardKey: 'CK1', status: 'LOCKED', statusCode: 'L1', previousStatus: 'ACTIVE', source: 'partner', reason: null, card: { cardKey: 'CK1', status: 'LOCKED' } }, requestId: 'r-1' });
    const t = Math.floor(Date.now() / 1000);
    const req = Object.assign(new EventEmitter(), { method: 'POST', headers: { 'partner-gateway-signature': `t=${t},v1=${crypto.createHmac('sha256', SECRET).update(`${t}.${raw}`).digest('hex')}` }, destroy() {} });
    let status = 0;
    const res = { writeHead: (code: number) => ((status = code), { end: () => undefined }) };
    handler(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse);
    req.emit('data', Buffer.from(raw));
    req.emit('end');
    return status;
  }

  it('acts on each event id once among the newest maxSeenIds ids; an older id is forgotten', function () {
    const acted: string[] = [];
    const handler = createWebhookReceiver({ secrets: [SECRET], maxSeenIds: 3, onEvent: (event) => acted.push(event.id) });
    for (const id of ['evt_1', 'evt_2', 'evt_3', 'evt_1', 'evt_4', 'evt_1', 'evt_4', 'evt_3']) expect(deliver(handler, id)).to.equal(204);
    // evt_4 pushed evt_1 out; evt_1 again pushed evt_2 out; evt_3 and evt_4 are still among the newest 3.
    expect(acted).to.deep.equal(['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_1']);
  });

  it('keeps the newest 10,000 ids by default', function () {
    const acted: string[] = [];
    const handler = createWebhookReceiver({ secrets: [SECRET], onEvent: (event) => acted.push(event.id) });
    for (let n = 0; n <= 10_000; n++) deliver(handler, `evt_${n}`);
    expect(acted).to.have.length(10_001);
    deliver(handler, 'evt_1'); // still among the newest 10,000
    deliver(handler, 'evt_0'); // the oldest, dropped by the 10,001st
    expect(acted.slice(10_001)).to.deep.equal(['evt_0']);
  });
});
