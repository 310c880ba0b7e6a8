import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Database } from '../../../../gateway/db/database';
import { migrate } from '../../../../gateway/db/migrate';
import { createLogger } from '../../../../gateway/logging/logger';
import { AuthorizationEndpointStore } from '../../../../gateway/authorizations/endpoint-store';
import {
  askPartner,
  askPartnerTokenization,
  MAX_ANSWER_BYTES,
  parseAnswer,
  parseTokenizationAnswer,
  PartnerCallState,
  type AuthorizationRequestData,
  type PartnerEndpointDeps,
  type TokenizationRequestData,
} from '../../../../gateway/authorizations/partner-endpoint';
import { SecretKeyring } from '../../../../gateway/outbound/secret-box';
import { verifySignature } from '../../../../gateway/outbound/signature';
import { createOutbound } from '../../../../gateway/outbound';
import { verifyStandardAuthorizationRequest } from '../../../../sdk/src';
import { ExampleProcess } from '../../../support/example-process';
import { signatureVerifies } from '../../../support/signatures';
import { recordSecret } from '../../../support/secrets';
import { createOwnDatabase, type RunDatabase } from '../../../support/test-database';
import { TestReceiver } from '../../../support/webhook-receiver';

const REQUEST: AuthorizationRequestData = {
  authorization: { id: 'auth_001', amount: 4200, currency: 'EUR', type: 'purchase', merchant: { name: 'Corner Shop', mcc: '5411', city: 'Lisbon', country: 'PT' } },
  card: {
    cardKey: 'ck_test_1',
    cardMask: '123456******7890',
    type: 'virtual',
    status: 'ACTIVE',
    statusCode: '00',
    currency: 'EUR',
    ownerType: 'individual',
    ownerId: '0123456789abcdef01234567',
    createdAt: '2026-01-01T00:00:00.000Z',
    productCode: 'P1',
    holderClientCode: null,
    expDate: '2030-01',
    embossedName: null,
    nickname: null,
    threeDsPhone: null,
  } as AuthorizationRequestData['card'],
};

/**
 * askPartner (gateway/authorizations/partner-endpoint.ts) against real local HTTP receivers and a
 * real PostgreSQL database of this file's own: every answer shape and failure, the budget, the
 * per-partner in-flight cap, the signature and a secret rotation.
 */
describe('unit: askPartner, the partner decision endpoint call (gateway/authorizations/partner-endpoint.ts)', function () {
  this.timeout(30_000);
  let own: RunDatabase;
  let db: Database;
  let store: AuthorizationEndpointStore;
  let deps: PartnerEndpointDeps;
  const silent = createLogger({ level: 'silent' });
  const receivers: TestReceiver[] = [];
  const receiver = async () => {
    const r = await new TestReceiver().up();
    receivers.push(r);
    return r;
  };
  const newPartner = async () => {
    const id = crypto.randomBytes(12).toString('hex');
    await db.query("INSERT INTO partners (id, name, issuer) VALUES ($1, 'decider', 'https://decider.example')", [id]);
    return id;
  };
  const enroll = async (url: string, more: { timeoutMs?: number; defaultDecision?: 'approve' | 'decline' } = {}) => {
    const partnerId = await newPartner();
    const created = (await store.create(partnerId, { url, ...more }))!;
    recordSecret('webhookSecret', created.secret);
    return { partnerId, secret: created.secret, id: created.id };
  };
  const ask = (partnerId: string, budgetMs = 1500, using = deps) => askPartner(using, { partnerId, request: REQUEST, budgetMs });
  const answer = (body: unknown, status = 200): TestReceiver['behaviour'] => ({ kind: 'respond', status, body: typeof body === 'string' ? body : JSON.stringify(body) });

  before(async function () {
    own = await createOwnDatabase();
    db = new Database(own.url, { max: 4, log: silent });
    await migrate(db, silent);
    store = new AuthorizationEndpointStore(db, { secretOverlapSeconds: 86400 });
    deps = { endpoints: store, outbound: createOutbound({ allowPrivate: true }), calls: new PartnerCallState(), log: silent };
  });

  after(async function () {
    for (const r of receivers) await r.close();
    deps?.outbound.close();
    await db?.close();
    await own?.drop();
  });

  it('approves on {approved: true}, with its latency, and sends the signed authorization.request the docs describe (no card number, CVV or PIN)', async function () {
    const r = await receiver();
    r.behaviour = answer({ approved: true });
    const { partnerId, secret } = await enroll(r.url);
    const decision = await ask(partnerId);
    expect(decision).to.include({ kind: 'answered', approved: true });
    expect((decision as { latencyMs: number }).latencyMs).to.be.a('number').and.at.least(0);
    expect(r.received).to.have.length(1);
    const got = r.received[0];
    expect(got.headers['content-type']).to.equal('application/json');
    expect(got.headers['partner-gateway-event-type']).to.equal('authorization.request');
    expect(got.headers['partner-gateway-event-id']).to.match(/^areq_[0-9a-f]{24}$/).and.equal(got.event.id);
    expect(got.event).to.have.all.keys('id', 'type', 'createdAt', 'partnerId', 'data');
    expect(got.event).to.include({ type: 'authorization.request', partnerId });
    expect(got.event.data).to.deep.equal(REQUEST);
    expect(got.raw).to.not.match(/"(pan|cardNumber|cvv|cvv2|pin|pinBlock)"/i);
    const header = got.headers['partner-gateway-signature'] as string;
    expect(header).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, got.raw, [secret], 300)).to.equal(true);
    expect(signatureVerifies(header, got.raw, [secret])).to.equal(true);
    expect(verifySignature(header, got.raw, ['whsec_' + 'x'.repeat(43)], 300)).to.equal(false);
    // The Standard Webhooks headers beside it: webhook-id is the request's id.
    expect(got.headers['webhook-id']).to.equal(got.event.id);
    expect(got.headers['webhook-timestamp']).to.equal(header.slice(2, header.indexOf(',')));
    expect(verifyStandardAuthorizationRequest(got.raw, got.headers, [secret])).to.deep.equal(got.event);
  });

  it('declines on {approved: false, declineReason}, keeping the reason; {approved: false} alone is a decline without one', async function () {
    const r = await receiver();
    r.behaviour = answer({ approved: false, declineReason: 'insufficient_balance', extra: 'ignored' });
    const { partnerId } = await enroll(r.url);
    expect(await ask(partnerId)).to.deep.include({ kind: 'answered', approved: false, declineReason: 'insufficient_balance' });
    r.behaviour = answer({ approved: false });
    const plain = await ask(partnerId);
    expect(plain).to.include({ kind: 'answered', approved: false });
    expect(plain).to.not.have.property('declineReason');
  });

  it('a hanging endpoint gives the default decision (reason timeout) within min(timeoutMs, budget)', async function () {
    const r = await receiver();
    r.behaviour = { kind: 'hang' };
    const slowBudget = await enroll(r.url, { timeoutMs: 1500, defaultDecision: 'approve' });
    let started = Date.now();
    const byBudget = await ask(slowBudget.partnerId, 300);
    const tookBudget = Date.now() - started;
    expect(byBudget).to.include({ kind: 'default', reason: 'timeout', approved: true });
    expect(tookBudget).to.be.within(250, 600);
    const short = await enroll(r.url, { timeoutMs: 200 });
    started = Date.now();
    const byTimeout = await ask(short.partnerId, 1500);
    const tookTimeout = Date.now() - started;
    expect(byTimeout).to.include({ kind: 'default', reason: 'timeout', approved: false });
    expect(tookTimeout).to.be.within(150, 500);
    expect(await ask(short.partnerId, 0)).to.include({ kind: 'default', reason: 'timeout', approved: false });
  });

  it('a 500, a 204 without a body, garbage, a body of another shape or a reason too long give the default decision (reason error)', async function () {
    const r = await receiver();
    const { partnerId } = await enroll(r.url, { defaultDecision: 'approve' });
    const cases: [TestReceiver['behaviour'], string][] = [
      [answer({ approved: false }, 500), 'http_status'],
      [answer('', 204), 'invalid_answer'],
      [answer('<html>not json</html>'), 'invalid_answer'],
      [answer({ approved: 'yes' }), 'invalid_answer'],
      [answer([true]), 'invalid_answer'],
      [answer({ approved: false, declineReason: 'x'.repeat(201) }), 'invalid_answer'],
      [answer({ approved: false, declineReason: 42 }), 'invalid_answer'],
    ];
    for (const [behaviour, error] of cases) {
      r.behaviour = behaviour;
      expect(await ask(partnerId), JSON.stringify(behaviour)).to.include({ kind: 'default', reason: 'error', error, approved: true });
    }
  });

  it('an answer larger than 4 KiB gives the default decision: reading stops past the cap, declared or streamed', async function () {
    const r = await receiver();
    const { partnerId } = await enroll(r.url);
    const big = JSON.stringify({ approved: true, padding: 'x'.repeat(MAX_ANSWER_BYTES) });
    r.behaviour = answer(big);
    expect(await ask(partnerId)).to.include({ kind: 'default', reason: 'error', error: 'answer_too_large', approved: false });
    // Streamed without a Content-Length: 64 KiB of valid-looking JSON, cut at the cap.
    const streamed = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"approved":true,"padding":"');
      const timer = setInterval(() => res.write('y'.repeat(1024)), 5);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => streamed.listen(0, '127.0.0.1', resolve));
    try {
      const other = await enroll(`http://127.0.0.1:${(streamed.address() as AddressInfo).port}/decide`);
      const started = Date.now();
      expect(await ask(other.partnerId)).to.include({ kind: 'default', reason: 'error', error: 'answer_too_large' });
      expect(Date.now() - started).to.be.below(1000);
    } finally {
      streamed.closeAllConnections();
      streamed.close();
    }
  });

  it('a redirect is not followed: the default decision (reason error), and the redirect target is never asked', async function () {
    const elsewhere = await receiver();
    elsewhere.behaviour = answer({ approved: true });
    const r = await receiver();
    r.behaviour = { kind: 'respond', status: 307, body: '', headers: { Location: elsewhere.url } };
    const { partnerId } = await enroll(r.url, { defaultDecision: 'decline' });
    expect(await ask(partnerId)).to.include({ kind: 'default', reason: 'error', error: 'redirect', approved: false });
    r.behaviour = { kind: 'respond', status: 302, body: '', headers: { Location: elsewhere.url } };
    expect(await ask(partnerId)).to.include({ kind: 'default', reason: 'error', error: 'redirect' });
    expect(elsewhere.received).to.have.length(0);
  });

  it('a connection refused, and a URL the target guard refuses at the call, give the default decision (reason error)', async function () {
    const r = await receiver();
    const { partnerId } = await enroll(r.url);
    await r.down();
    expect(await ask(partnerId)).to.include({ kind: 'default', reason: 'error', error: 'connection' });
    await r.up();
    r.behaviour = answer({ approved: true });
    const strict: PartnerEndpointDeps = { ...deps, outbound: createOutbound({ allowPrivate: false }) };
    expect(await ask(partnerId, 1500, strict)).to.include({ kind: 'default', reason: 'error', error: 'target_refused' });
    strict.outbound.close();
    expect(r.received).to.have.length(0);
  });

  it('a connection the guard refuses once connected (a vetting gone stale) gives the default decision (target_refused), and nothing reaches the partner', async function () {
    const r = await receiver();
    r.behaviour = answer({ approved: true });
    const { partnerId } = await enroll(r.url);
    const production = createOutbound({ allowPrivate: false });
    const stale: PartnerEndpointDeps = { ...deps, outbound: { ...production, check: async (url) => ({ ok: true, url: new URL(url), address: '127.0.0.1', family: 4 }) } };
    try {
      expect(await ask(partnerId, 1500, stale)).to.include({ kind: 'default', reason: 'error', error: 'target_refused' });
      expect(r.received).to.have.length(0);
    } finally {
      production.close();
    }
  });

  it('past the cap of calls in flight for one partner: overloaded, at once, while another partner is answered without delay', async function () {
    const slow = await receiver();
    slow.behaviour = { kind: 'hang' };
    const fast = await receiver();
    fast.behaviour = answer({ approved: true });
    const capped: PartnerEndpointDeps = { ...deps, calls: new PartnerCallState(2) };
    try {
      const a = await enroll(slow.url, { defaultDecision: 'approve' });
      const b = await enroll(fast.url);
      const hanging = [ask(a.partnerId, 800, capped), ask(a.partnerId, 800, capped)];
      await slow.waitFor((got) => got.length === 2, 5000, 'the two calls in flight');
      let started = Date.now();
      const third = await ask(a.partnerId, 800, capped);
      expect(Date.now() - started).to.be.below(100);
      expect(third).to.deep.equal({ kind: 'default', reason: 'overloaded', approved: true, latencyMs: 0 });
      started = Date.now();
      expect(await ask(b.partnerId, 800, capped)).to.include({ kind: 'answered', approved: true });
      expect(Date.now() - started).to.be.below(200);
      expect((await Promise.all(hanging)).map((d) => d.kind === 'default' && d.reason)).to.deep.equal(['timeout', 'timeout']);
      expect(slow.received).to.have.length(2);
      const health = capped.calls.health(a.partnerId)!;
      expect(health).to.include({ inFlight: 0, calls: 2, timeouts: 2, overloaded: 1, answered: 0 });
      // The slots are free again.
      slow.behaviour = answer({ approved: false });
      expect(await ask(a.partnerId, 800, capped)).to.include({ kind: 'answered', approved: false });
    } finally {
      capped.outbound.close();
    }
  });

  it('no endpoint, or one the partner disabled: none; one an operator disabled: its default decision (reason disabled); nobody is called', async function () {
    const r = await receiver();
    r.behaviour = answer({ approved: true });
    expect(await ask(await newPartner())).to.deep.equal({ kind: 'none' });
    const { partnerId } = await enroll(r.url, { defaultDecision: 'decline' });
    await store.update(partnerId, { status: 'disabled' }, 'partner');
    expect(await ask(partnerId)).to.deep.equal({ kind: 'none' });
    await store.update(partnerId, { status: 'disabled' }, 'operator');
    expect(await ask(partnerId)).to.deep.equal({ kind: 'default', reason: 'disabled', approved: false, latencyMs: 0 });
    expect(r.received).to.have.length(0);
    await store.update(partnerId, { status: 'enabled' }, 'partner');
    expect(await ask(partnerId)).to.include({ kind: 'answered', approved: true });
  });

  it('after a rotation both secrets sign (the new one first) for the overlap; a second rotation drops the oldest', async function () {
    const r = await receiver();
    r.behaviour = answer({ approved: true });
    const { partnerId, secret: first } = await enroll(r.url);
    const second = (await store.rotateSecret(partnerId))!;
    recordSecret('webhookSecret', second);
    await ask(partnerId);
    const header = r.received[0].headers['partner-gateway-signature'] as string;
    const v1 = header.split(',').filter((part) => part.startsWith('v1='));
    expect(v1).to.have.length(2);
    const t = Number(header.split(',')[0].slice(2));
    expect(verifySignature(`t=${t},${v1[0]}`, r.received[0].raw, [second], 300)).to.equal(true);
    expect(verifySignature(`t=${t},${v1[1]}`, r.received[0].raw, [first], 300)).to.equal(true);
    expect(signatureVerifies(header, r.received[0].raw, [first])).to.equal(true);
    const third = (await store.rotateSecret(partnerId))!;
    recordSecret('webhookSecret', third);
    await ask(partnerId);
    const later = r.received[1];
    expect(verifySignature(later.headers['partner-gateway-signature'] as string, later.raw, [first], 300)).to.equal(false);
    expect(verifySignature(later.headers['partner-gateway-signature'] as string, later.raw, [second], 300)).to.equal(true);
    expect(verifySignature(later.headers['partner-gateway-signature'] as string, later.raw, [third], 300)).to.equal(true);
  });

  it('secrets sealed under WEBHOOKS_SECRET_KEY sign the call; without the key it is not sent (default, secret_unavailable)', async function () {
    const bytes = crypto.randomBytes(32);
    recordSecret('webhookSecretKey', bytes.toString('base64'));
    const keyring = new SecretKeyring(crypto.createSecretKey(bytes));
    const sealedStore = new AuthorizationEndpointStore(db, { secretOverlapSeconds: 86400, keyring });
    const r = await receiver();
    r.behaviour = answer({ approved: true });
    const partnerId = await newPartner();
    const { secret } = (await sealedStore.create(partnerId, { url: r.url }))!;
    recordSecret('webhookSecret', secret);
    const stored = await db.query<{ secret: string | null; sealed_secret: string | null }>('SELECT s.secret, s.sealed_secret FROM authorization_endpoint_secrets s JOIN authorization_endpoints e ON e.id = s.endpoint_id WHERE e.partner_id = $1', [partnerId]);
    expect(stored.rows[0].secret).to.equal(null);
    expect(stored.rows[0].sealed_secret).to.match(/^v1:/).and.not.include(secret);
    expect(await ask(partnerId, 1500, { ...deps, endpoints: sealedStore })).to.include({ kind: 'answered', approved: true });
    expect(verifySignature(r.received[0].headers['partner-gateway-signature'] as string, r.received[0].raw, [secret], 300)).to.equal(true);
    expect(await ask(partnerId)).to.include({ kind: 'default', reason: 'error', error: 'secret_unavailable' });
    expect(r.received).to.have.length(1);
  });

  it('a kept-alive socket is reused only for the address the target guard vetted: a call vetted for another address connects there', async function () {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.socket.localAddress ?? '');
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"approved":true}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const { partnerId } = await enroll(`http://localhost:${port}/decide`);
      // The name resolves first to 127.0.0.1, then (a DNS change) to 127.0.0.2: each call connects where its check said.
      const vetted = ['127.0.0.1', '127.0.0.1', '127.0.0.2'];
      let calls = 0;
      const pinned: PartnerEndpointDeps = { ...deps, outbound: createOutbound({ allowPrivate: true, resolve: async () => [{ address: vetted[Math.min(calls++, vetted.length - 1)], family: 4 }] }) };
      for (let i = 0; i < 3; i++) expect((await ask(partnerId, 1500, pinned)).kind).to.equal('answered');
      expect(seen).to.deep.equal(['127.0.0.1', '127.0.0.1', '127.0.0.2']);
      pinned.outbound.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('parses only the documented answer shapes', function () {
    expect(parseAnswer('{"approved":true}')).to.deep.equal({ kind: 'answer', approved: true });
    expect(parseAnswer('{"approved":false,"declineReason":null}')).to.deep.equal({ kind: 'answer', approved: false });
    expect(parseAnswer('null')).to.deep.equal({ kind: 'error', error: 'invalid_answer' });
    expect(parseAnswer('{}')).to.deep.equal({ kind: 'error', error: 'invalid_answer' });
  });
});

/**
 * examples/authorization-endpoint.ts run as a partner would run it (its own process, the compiled
 * file), asked by askPartner with real signed requests.
 */
describe('example: the standalone decision endpoint (examples/authorization-endpoint.ts)', function () {
  this.timeout(30_000);
  let own: RunDatabase;
  let db: Database;
  let example: ExampleProcess | undefined;
  const silent = createLogger({ level: 'silent' });

  before(async function () {
    own = await createOwnDatabase();
    db = new Database(own.url, { max: 2, log: silent });
    await migrate(db, silent);
  });

  after(async function () {
    example?.stop();
    await db?.close();
    await own?.drop();
  });

  it('verifies the signature and approves up to MAX_AMOUNT, declines above it with its reason; refuses an unsigned request', async function () {
    const store = new AuthorizationEndpointStore(db, { secretOverlapSeconds: 86400 });
    const partnerId = crypto.randomBytes(12).toString('hex');
    await db.query("INSERT INTO partners (id, name, issuer) VALUES ($1, 'example', 'https://example.example')", [partnerId]);
    // Enrolled first (to learn the secret), then pointed at the example's port.
    const created = (await store.create(partnerId, { url: 'http://127.0.0.1:1/decide' }))!;
    recordSecret('webhookSecret', created.secret);
    const started = await ExampleProcess.start('authorization-endpoint.js', { PORT: '0', AUTHORIZATION_SECRET: created.secret, MAX_AMOUNT: '5000' }, /decision endpoint on http:\/\/localhost:(\d+)/);
    example = started.example;
    const port = started.port;
    await store.update(partnerId, { url: `http://127.0.0.1:${port}/decide` }, 'partner');
    const deps: PartnerEndpointDeps = { endpoints: store, outbound: createOutbound({ allowPrivate: true }), calls: new PartnerCallState(), log: silent };
    try {
      const small = await askPartner(deps, { partnerId, request: REQUEST, budgetMs: 1500 });
      expect(small).to.include({ kind: 'answered', approved: true });
      const large = await askPartner(deps, { partnerId, request: { ...REQUEST, authorization: { ...REQUEST.authorization, id: 'auth_002', amount: 5001 } }, budgetMs: 1500 });
      expect(large).to.deep.include({ kind: 'answered', approved: false, declineReason: 'amount_over_limit' });
      // A forged request (wrong secret) is refused: the gateway would apply the default.
      const forged = await fetch(`http://127.0.0.1:${port}/decide`, { method: 'POST', headers: { 'Partner-Gateway-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` }, body: '{"type":"authorization.request"}' });
      expect(forged.status).to.equal(400);
      await example.waitFor(/auth_002 5001 EUR: declined \(amount_over_limit\)/);
      expect(example.output).to.not.include(created.secret);
    } finally {
      deps.outbound.close();
    }
  });
});

/**
 * The same endpoint asked about a tokenization (issue 35; docs/authorization-endpoint.md,
 * "Tokenizations"): only once enrolled for `tokenization.request`, the same signature and
 * transport, its own answer shape; a purchase's answer is not a tokenization's.
 */
describe('unit: askPartnerTokenization, the decision endpoint asked about a tokenization (gateway/authorizations/partner-endpoint.ts)', function () {
  this.timeout(30_000);
  let own: RunDatabase;
  let db: Database;
  let store: AuthorizationEndpointStore;
  let deps: PartnerEndpointDeps;
  const silent = createLogger({ level: 'silent' });
  const receivers: TestReceiver[] = [];
  const TOKENIZATION: TokenizationRequestData = {
    tokenization: {
      id: 'tkz_001',
      tokenId: 'tok_6b0237a240487492a2ee0de6',
      walletProvider: 'apple_pay',
      tokenRequestorId: '50110030273',
      device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' },
      networkVerdict: { decision: 'approve', riskScore: 2, reasons: [] },
    },
    card: REQUEST.card,
  };
  const enrolledEndpoint = async (requestTypes?: Array<'authorization.request' | 'tokenization.request'>) => {
    const r = await new TestReceiver().up();
    receivers.push(r);
    const partnerId = crypto.randomBytes(12).toString('hex');
    await db.query("INSERT INTO partners (id, name, issuer) VALUES ($1, 'tokenizer', 'https://tokenizer.example')", [partnerId]);
    const created = (await store.create(partnerId, { url: r.url, ...(requestTypes ? { requestTypes } : {}) }))!;
    recordSecret('webhookSecret', created.secret);
    return { r, partnerId, secret: created.secret, created };
  };
  const ask = (partnerId: string, budgetMs = 1500) => askPartnerTokenization(deps, { partnerId, request: TOKENIZATION, budgetMs });

  before(async function () {
    own = await createOwnDatabase();
    db = new Database(own.url, { max: 4, log: silent });
    await migrate(db, silent);
    store = new AuthorizationEndpointStore(db, { secretOverlapSeconds: 86400 });
    deps = { endpoints: store, outbound: createOutbound({ allowPrivate: true }), calls: new PartnerCallState(), log: silent };
  });
  after(async function () {
    for (const r of receivers) await r.close();
    deps?.outbound.close();
    await db?.close();
    await own?.drop();
  });

  it('an endpoint enrolled for purchases only (the default) is not asked about tokenizations, nor one enrolled for tokenizations only about purchases', async function () {
    const purchases = await enrolledEndpoint();
    expect(purchases.created.requestTypes).to.deep.equal(['authorization.request']);
    expect(await ask(purchases.partnerId)).to.deep.equal({ kind: 'none' });
    expect(purchases.r.received).to.have.length(0);
    const tokenizations = await enrolledEndpoint(['tokenization.request']);
    expect(await askPartner(deps, { partnerId: tokenizations.partnerId, request: REQUEST, budgetMs: 1500 })).to.deep.equal({ kind: 'none' });
    expect(tokenizations.r.received).to.have.length(0);
    // PATCH enrols it; the answer lists the types in their order.
    const updated = (await store.update(purchases.partnerId, { requestTypes: ['tokenization.request', 'authorization.request'] }, 'partner'))!;
    expect(updated.requestTypes).to.deep.equal(['authorization.request', 'tokenization.request']);
    purchases.r.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ decision: 'approve' }) };
    expect(await ask(purchases.partnerId)).to.include({ kind: 'answered', decision: 'approve' });
  });

  it('sends the signed tokenization.request the docs describe (no card or token number) and reads each answer', async function () {
    const { r, partnerId, secret } = await enrolledEndpoint(['authorization.request', 'tokenization.request']);
    r.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ decision: 'require_verification', extra: 'ignored' }) };
    expect(await ask(partnerId)).to.include({ kind: 'answered', decision: 'require_verification' });
    const got = r.received[0]!;
    expect(got.headers['partner-gateway-event-type']).to.equal('tokenization.request');
    expect(got.headers['partner-gateway-event-id']).to.match(/^treq_[0-9a-f]{24}$/).and.equal(got.event.id);
    expect(got.event).to.have.all.keys('id', 'type', 'createdAt', 'partnerId', 'data');
    expect(got.event).to.include({ type: 'tokenization.request', partnerId });
    expect(got.event.data).to.deep.equal(TOKENIZATION);
    expect(got.raw).to.not.match(/"(pan|cardNumber|cvv|pin|tokenNumber|tokenReference)"/i);
    expect(verifySignature(got.headers['partner-gateway-signature'] as string, got.raw, [secret], 300)).to.equal(true);
    r.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ decision: 'decline', declineReason: 'risky device' }) };
    expect(await ask(partnerId)).to.deep.include({ kind: 'answered', decision: 'decline', declineReason: 'risky device' });
    r.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ approved: true }) };
    expect(await ask(partnerId)).to.deep.include({ kind: 'default', reason: 'error', error: 'invalid_answer' });
    r.behaviour = { kind: 'status', status: 500, times: 1 };
    expect(await ask(partnerId)).to.deep.include({ kind: 'default', reason: 'error', error: 'http_status' });
    r.behaviour = { kind: 'hang' };
    expect(await ask(partnerId, 300)).to.deep.include({ kind: 'default', reason: 'timeout' });
    await store.update(partnerId, { status: 'disabled' }, 'operator');
    expect(await ask(partnerId)).to.deep.equal({ kind: 'default', reason: 'disabled', latencyMs: 0 });
    await store.update(partnerId, { status: 'disabled' }, 'partner');
    expect(await ask(partnerId)).to.deep.equal({ kind: 'none' });
  });

  it('parses only {decision, declineReason?}: a reason with a decline only, at most 200 characters', function () {
    expect(parseTokenizationAnswer('{"decision":"approve","declineReason":"ignored"}')).to.deep.equal({ kind: 'answer', answer: { decision: 'approve' } });
    expect(parseTokenizationAnswer('{"decision":"decline"}')).to.deep.equal({ kind: 'answer', answer: { decision: 'decline' } });
    expect(parseTokenizationAnswer('{"decision":"decline","declineReason":null}')).to.deep.equal({ kind: 'answer', answer: { decision: 'decline' } });
    expect(parseTokenizationAnswer(JSON.stringify({ decision: 'decline', declineReason: 'x'.repeat(201) }))).to.deep.equal({ kind: 'error', error: 'invalid_answer' });
    for (const bad of ['', 'null', '[]', '{}', '{"decision":"APPROVE"}', '{"approved":true}', '{"decision":true}']) {
      expect(parseTokenizationAnswer(bad), bad).to.deep.equal({ kind: 'error', error: 'invalid_answer' });
    }
  });
});
