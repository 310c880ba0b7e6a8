import crypto from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { SignatureVerificationError, verifyAuthorizationRequest, verifyStandardAuthorizationRequest, verifyStandardWebhook, verifyWebhook } from '../../sdk/src';
import { api, cardBody, individualBody } from '../support/api';
import { FAST_WEBHOOKS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { TestReceiver, type Received } from '../support/webhook-receiver';

const PROCESSING_SECRET = crypto.randomBytes(32).toString('base64url');

/** The secret as a Standard Webhooks library takes it (docs/webhooks.md, "Standard Webhooks"): `whsec_` and the standard base64 of the same 32 bytes. */
const forStandardLibrary = (secret: string) => `whsec_${Buffer.from(secret.slice('whsec_'.length), 'base64url').toString('base64')}`;

/** The three Standard Webhooks headers of a received request, as the library reads them. */
const standardHeaders = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

/**
 * Both signatures of what the gateway POSTs to partners (docs/webhooks.md, "Signatures";
 * docs/authorization-endpoint.md), on a real gateway process (its own database, sandbox mode) and
 * real loopback receivers: a webhook delivery and a decision request are each verified by the
 * `standardwebhooks` npm package (what a partner using a Standard Webhooks library runs) and by the
 * SDK, by both headers; during a secret rotation by either secret.
 */
describe('e2e: Standard Webhooks signatures of webhook deliveries and decision requests', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;
  let partner: TestPartner;
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await new TestReceiver().up();
    receivers.push(r);
    return r;
  };

  before(async function () {
    recordSecret('notifySecret', PROCESSING_SECRET);
    gateway = await startGatewayProcess({ ownDatabase: true, env: { ...FAST_WEBHOOKS, PROCESSING_NOTIFY_SECRET: PROCESSING_SECRET } });
    partner = await registerPartner(gateway, 'standard-webhooks');
  });

  after(async function () {
    for (const r of receivers) await r.close();
    await gateway?.stop();
  });

  /** Verifies `got` by every way a partner may: the npm package (both key forms), and the SDK by each header. */
  const expectVerified = (got: Received, secret: string, kind: 'webhook' | 'decision') => {
    const headers = standardHeaders(got);
    expect(new Webhook(forStandardLibrary(secret)).verify(got.raw, headers)).to.deep.equal(got.event);
    expect(new Webhook(Buffer.from(secret.slice('whsec_'.length), 'base64url'), { format: 'raw' }).verify(got.raw, headers)).to.deep.equal(got.event);
    if (kind === 'webhook') {
      expect(verifyStandardWebhook(got.raw, got.headers, [secret])).to.deep.equal(got.event);
      expect(verifyWebhook(got.raw, got.headers['partner-gateway-signature'], [secret])).to.deep.equal(got.event);
    } else {
      expect(verifyStandardAuthorizationRequest(got.raw, got.headers, [secret])).to.deep.equal(got.event);
      expect(verifyAuthorizationRequest(got.raw, got.headers['partner-gateway-signature'], [secret])).to.deep.equal(got.event);
    }
    // One byte changed: neither the package nor the SDK accepts it.
    const altered = got.raw.replace(/}$/, ' }');
    expect(() => new Webhook(forStandardLibrary(secret)).verify(altered, headers)).to.throw();
    expect(() => verifyStandardWebhook(altered, got.headers, [secret])).to.throw(SignatureVerificationError);
  };

  it('a webhook delivery carries webhook-id (the event id, the same on a retry), webhook-timestamp and webhook-signature, verified by the standardwebhooks package and the SDK; after a rotation, by either secret', async function () {
    const r = await receiver();
    // The first attempt fails (a 500): the retry carries the same webhook-id.
    r.behaviour = { kind: 'status', status: 500, times: 1 };
    const created = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url: r.url } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const secret = created.body.secret as string;
    recordSecret('webhookSecret', secret);
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status).to.equal(201);
    await r.waitFor((got) => got.length >= 2, 20_000, 'the first attempt and its retry');
    const [first, retry] = r.received;
    expect(first.headers['webhook-id']).to.equal(first.event.id).and.equal(first.headers['partner-gateway-event-id']);
    expect(retry.headers['webhook-id'], 'the same message id on the retry').to.equal(first.headers['webhook-id']);
    expect(Number(first.headers['webhook-timestamp'])).to.be.closeTo(Date.now() / 1000, 60);
    expect(first.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(first.headers['partner-gateway-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    expectVerified(retry, secret, 'webhook');

    const rotated = await api(gateway, partner, 'POST', `/webhooks/endpoints/${created.body.id}/rotate-secret`, { body: {} });
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
    const next = rotated.body.secret as string;
    recordSecret('webhookSecret', next);
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    await r.waitFor((got) => got.some((x) => x.event.type === 'card.created'), 20_000, 'card.created');
    const during = r.received.find((x) => x.event.type === 'card.created')!;
    expect(String(during.headers['webhook-signature']).split(' ')).to.have.length(2);
    expectVerified(during, next, 'webhook');
    expectVerified(during, secret, 'webhook');
  });

  it('a decision request carries webhook-id (the request id), webhook-timestamp and webhook-signature, verified by the standardwebhooks package and the SDK', async function () {
    const r = await receiver();
    r.behaviour = { kind: 'respond', status: 200, body: '{"approved":true}' };
    const created = await api(gateway, partner, 'POST', '/authorization-endpoint', { body: { url: r.url, timeoutMs: 1500 } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const secret = created.body.secret as string;
    recordSecret('webhookSecret', secret);
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    const id = `auth_${crypto.randomBytes(12).toString('hex')}`;
    const at = new Date().toISOString();
    const raw = JSON.stringify({
      id,
      type: 'authorization.request',
      occurredAt: at,
      authorization: { id, transactionId: crypto.randomBytes(12).toString('hex'), cardId: card.body.cardKey, amount: 12, currency: 'EUR', type: 'PURCHASE', merchant: { name: 'Corner Shop', mcc: '5411', city: 'Berlin', country: 'DE' }, at },
    });
    const t = Math.floor(Date.now() / 1000);
    const answer = await fetch(`${gateway.notifyUrl}/upstream-notifications/processing/authorizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstream-notification-id': id, 'upstream-signature': `t=${t},v1=${crypto.createHmac('sha256', PROCESSING_SECRET).update(`${t}.${raw}`).digest('hex')}` },
      body: raw,
    });
    expect(answer.status).to.equal(200);
    expect(await answer.json()).to.deep.equal({ approved: true });
    const got = r.received.find((x) => x.event.type === 'authorization.request' && x.event.data.authorization.id === id)!;
    expect(got, 'the partner was asked').to.not.equal(undefined);
    expect(got.headers['webhook-id']).to.match(/^areq_[0-9a-f]{24}$/).and.equal(got.event.id);
    expectVerified(got, secret, 'decision');
  });
});
