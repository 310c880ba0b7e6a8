import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { createIssuerSandbox, createProcessingSandbox, Notifier, notifyTargetFromEnv, startSandboxes, type Sandboxes } from '../../sandbox';
import { call, type ErrorBody } from './http-client';
import { Receiver } from './notification-receiver';

const MAIN = path.resolve(__dirname, '..', '..', 'sandbox', 'main.js');

const secret = () => crypto.randomBytes(32).toString('base64url');
const CARD = { type: 'virtual', clientCode: 'CLIENT-NT-1', expDate: '12/2030', currency: 'EUR', productCode: 'P-STD' };

async function issueCard(issuer: string): Promise<string> {
  const created = await call<{ cardKey: string }>(`${issuer}/cards`, { method: 'POST', body: CARD });
  expect(created.status, created.text).to.equal(201);
  return created.body.cardKey;
}

describe('sandbox: the notify target control route (PUT/GET/DELETE /__sandbox/notify-target)', function () {
  this.timeout(20_000);
  let sandboxes: Sandboxes;
  let receiver: Receiver;
  let receiverUrl: string;
  const issuerSecret = secret();
  const processingSecret = secret();

  before(async () => {
    sandboxes = await startSandboxes();
    receiver = new Receiver(issuerSecret);
    receiverUrl = await receiver.up();
  });
  after(async () => {
    await sandboxes?.close();
    await receiver?.close();
  });

  it('without a target GET answers url null; PUT sets it and answers {sandbox, url, backlog}, never the secret', async () => {
    for (const [name, url] of [['issuer', sandboxes.issuer.url], ['processing', sandboxes.processing.url]] as const) {
      const before = await call(`${url}/__sandbox/notify-target`);
      expect(before.status).to.equal(200);
      expect(before.body).to.deep.equal({ sandbox: name, url: null, backlog: 0 });
    }
    const put = await call(`${sandboxes.issuer.url}/__sandbox/notify-target`, { method: 'PUT', body: { url: `${receiverUrl}/`, secret: issuerSecret } });
    expect(put.status, put.text).to.equal(200);
    expect(put.body).to.deep.equal({ sandbox: 'issuer', url: receiverUrl, backlog: 0 });
    expect(put.text).to.not.include(issuerSecret);
    const read = await call(`${sandboxes.issuer.url}/__sandbox/notify-target`);
    expect(read.body).to.deep.equal({ sandbox: 'issuer', url: receiverUrl, backlog: 0 });
    expect(read.text).to.not.include(issuerSecret);
    // The processing sandbox is aimed on its own: still none.
    expect((await call(`${sandboxes.processing.url}/__sandbox/notify-target`)).body).to.include({ url: null });
  });

  it('the issuer and the processing system then notify there, each signed with the secret given to it', async () => {
    await call(`${sandboxes.issuer.url}/__sandbox/notify-target`, { method: 'PUT', body: { url: receiverUrl, secret: issuerSecret } });
    const cardKey = await issueCard(sandboxes.issuer.url);
    const changed = await call(`${sandboxes.issuer.url}/__sandbox/cards/${cardKey}/issuer-status`, { method: 'POST', body: { statusCode: 'S5', reason: 'fraud team' } });
    expect(changed.status, changed.text).to.equal(200);
    expect(changed.body).to.deep.include({ cardKey, statusCode: 'S5', notified: true });
    const got = await receiver.waitFor((r) => r.body.cardKey === cardKey);
    expect(got).to.deep.include({ path: '/upstream-notifications/issuer', signed: true, id: got.body.id });
    expect(got.body).to.include({ type: 'card.status_changed', statusCode: 'S5', previousStatusCode: '00', reason: 'fraud team' });

    // The processing sandbox, with a secret of its own: the receiver checks that one now.
    receiver.secret = processingSecret;
    const put = await call(`${sandboxes.processing.url}/__sandbox/notify-target`, { method: 'PUT', body: { url: receiverUrl, secret: processingSecret } });
    expect(put.status, put.text).to.equal(200);
    const recorded = await call<{ id: string }>(`${sandboxes.processing.url}/__sandbox/transactions`, { method: 'POST', body: { cardId: cardKey, amount: 9.99, currency: 'EUR' } });
    expect(recorded.status, recorded.text).to.equal(201);
    const tx = await receiver.waitFor((r) => (r.body.transaction as { id?: string } | undefined)?.id === recorded.body.id);
    expect(tx).to.deep.include({ path: '/upstream-notifications/processing', signed: true });
    expect(tx.body.type).to.equal('transaction.created');
    receiver.secret = issuerSecret;
  });

  it('DELETE stops sending: a change queues (backlog 1, notified false) and goes, same id, once a target is set again', async () => {
    const deleted = await call(`${sandboxes.issuer.url}/__sandbox/notify-target`, { method: 'DELETE' });
    expect(deleted.status).to.equal(204);
    expect((await call(`${sandboxes.issuer.url}/__sandbox/notify-target`)).body).to.deep.equal({ sandbox: 'issuer', url: null, backlog: 0 });
    const cardKey = await issueCard(sandboxes.issuer.url);
    const changed = await call(`${sandboxes.issuer.url}/__sandbox/cards/${cardKey}/issuer-status`, { method: 'POST', body: { statusCode: 'L1' } });
    expect(changed.body).to.deep.include({ notified: false });
    expect((await call(`${sandboxes.issuer.url}/__sandbox/notify-target`)).body).to.deep.include({ url: null, backlog: 1 });
    expect(receiver.received.some((r) => r.body.cardKey === cardKey), 'nothing sent without a target').to.equal(false);

    await call(`${sandboxes.issuer.url}/__sandbox/notify-target`, { method: 'PUT', body: { url: receiverUrl, secret: issuerSecret } });
    const got = await receiver.waitFor((r) => r.body.cardKey === cardKey);
    expect(got).to.deep.include({ signed: true });
    expect(got.body.statusCode).to.equal('L1');
  });

  const refusals: [string, unknown][] = [
    ['no body', undefined],
    ['an array', [1]],
    ['no url', { secret: 'S'.repeat(40) }],
    ['no secret', { url: 'http://127.0.0.1:1' }],
    ['an ftp url', { url: 'ftp://127.0.0.1/', secret: 'S'.repeat(40) }],
    ['a relative url', { url: '/upstream-notifications', secret: 'S'.repeat(40) }],
    ['credentials in the url', { url: 'http://user:pw@127.0.0.1:1', secret: 'S'.repeat(40) }],
    ['a query', { url: 'http://127.0.0.1:1/?a=1', secret: 'S'.repeat(40) }],
    ['a fragment', { url: 'http://127.0.0.1:1/#x', secret: 'S'.repeat(40) }],
    ['a secret of 31 characters', { url: 'http://127.0.0.1:1', secret: 'S'.repeat(31) }],
    ['a secret with a comma', { url: 'http://127.0.0.1:1', secret: `${'S'.repeat(20)},${'T'.repeat(20)}` }],
    ['a secret with surrounding spaces', { url: 'http://127.0.0.1:1', secret: ` ${'S'.repeat(40)} ` }],
    ['a secret that is not a string', { url: 'http://127.0.0.1:1', secret: 12345678901234567890123456789012345 }],
    ['an unknown field', { url: 'http://127.0.0.1:1', secret: 'S'.repeat(40), secrets: ['x'] }],
  ];
  for (const [what, body] of refusals) {
    it(`refuses ${what}: 400 VALIDATION_ERROR naming the field, never the secret, and the target stays`, async () => {
      await call(`${sandboxes.issuer.url}/__sandbox/notify-target`, { method: 'PUT', body: { url: receiverUrl, secret: issuerSecret } });
      const refused = await call<ErrorBody>(`${sandboxes.issuer.url}/__sandbox/notify-target`, { method: 'PUT', body });
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.errorCode).to.equal('VALIDATION_ERROR');
      expect(refused.body.details!.length).to.be.greaterThan(0);
      const sent = body as { secret?: unknown } | undefined;
      if (typeof sent?.secret === 'string') expect(refused.text).to.not.include(sent.secret.trim().slice(0, 20));
      expect((await call(`${sandboxes.issuer.url}/__sandbox/notify-target`)).body).to.include({ url: receiverUrl });
    });
  }

  it('is a control route: not in the request log, not faulted', async () => {
    await call(`${sandboxes.issuer.url}/__sandbox/faults`, { method: 'POST', body: { path: '/*', mode: 'status', status: 503, times: 0 } });
    try {
      const put = await call(`${sandboxes.issuer.url}/__sandbox/notify-target`, { method: 'PUT', body: { url: receiverUrl, secret: issuerSecret } });
      expect(put.status).to.equal(200);
    } finally {
      await call(`${sandboxes.issuer.url}/__sandbox/faults`, { method: 'DELETE' });
    }
    const log = await call<unknown[]>(`${sandboxes.issuer.url}/__sandbox/requests`);
    expect(log.text).to.not.include('notify-target');
    expect(log.text).to.not.include(issuerSecret);
  });
});

describe('sandbox: notifications that fail are retried and logged, without the secret', function () {
  this.timeout(20_000);

  it('a 401 (secrets differ) is logged with the status, retried, and "delivered again" is logged once it passes', async () => {
    const lines: Record<string, unknown>[] = [];
    const notifier = new Notifier('processing', { baseDelayMs: 20, maxDelayMs: 50, log: (fields) => lines.push(fields) });
    const app = createProcessingSandbox({ notifier });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const right = secret();
    const receiver = new Receiver(right);
    const receiverUrl = await receiver.up();
    try {
      await call(`${url}/__sandbox/cards`, { method: 'POST', body: { cardKey: 'CK-NT-RETRY', accountId: '12345678' } });
      const wrong = secret();
      expect((await call(`${url}/__sandbox/notify-target`, { method: 'PUT', body: { url: receiverUrl, secret: wrong } })).status).to.equal(200);
      const recorded = await call<{ id: string }>(`${url}/__sandbox/transactions`, { method: 'POST', body: { cardId: 'CK-NT-RETRY', amount: 1, currency: 'EUR' } });
      expect(recorded.status, recorded.text).to.equal(201);
      const first = await receiver.waitFor((r) => !r.signed);
      // Retried (same id) while the secrets differ.
      await receiver.waitFor((r) => r.id === first.id && r !== first);
      const failure = lines.find((l) => l.msg === 'notification not delivered');
      expect(failure, JSON.stringify(lines)).to.deep.include({ url: receiverUrl, notificationId: first.id, attempt: 1, status: 401 });
      // The right secret: the queued notification goes through, and the recovery is logged.
      await call(`${url}/__sandbox/notify-target`, { method: 'PUT', body: { url: receiverUrl, secret: right } });
      const ok = await receiver.waitFor((r) => r.id === first.id && r.signed);
      expect((ok.body.transaction as { id: string }).id).to.equal(recorded.body.id);
      const until = Date.now() + 5000;
      while (!lines.some((l) => l.msg === 'notifications delivered again') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(lines.map((l) => l.msg)).to.include('notifications delivered again');
      // One line for several failed attempts (one a minute at most), none holding a secret.
      expect(receiver.received.filter((r) => !r.signed).length).to.be.at.least(2);
      expect(lines.filter((l) => l.msg === 'notification not delivered')).to.have.length(1);
      expect(JSON.stringify(lines)).to.not.include(wrong).and.to.not.include(right);
    } finally {
      notifier.clear();
      await receiver.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never lets a new notification overtake an older one that waits for its retry: the receiver applies them in the order made', async () => {
    const right = secret();
    const receiver = new Receiver(right);
    const receiverUrl = await receiver.up();
    const notifier = new Notifier('processing', { baseDelayMs: 200, maxDelayMs: 200, log: () => undefined });
    try {
      notifier.setTarget({ url: receiverUrl, secret: right });
      receiver.forced = 503;
      const body = (n: number) => ({ id: `ntf_order_${n}_${crypto.randomBytes(4).toString('hex')}`, type: 'transaction.created', occurredAt: new Date().toISOString(), n });
      const first = body(1);
      expect(await notifier.send(first as never)).to.equal(false);
      expect(notifier.backlog, 'the first waits for its retry').to.equal(1);
      receiver.forced = undefined;
      const second = body(2);
      // Made while the first waits: queued behind it, not sent ahead.
      expect(await notifier.send(second as never)).to.equal(false);
      await receiver.waitFor((r) => r.id === second.id && r.signed);
      // The first attempt (answered 503), its retry, then the second: never the second before the first.
      expect(receiver.received.map((r) => r.id)).to.deep.equal([first.id, first.id, second.id]);
    } finally {
      notifier.clear();
      await receiver.close();
    }
  });

  it('an unreachable target is logged as its connection error (ECONNREFUSED), not as the request', async () => {
    const lines: Record<string, unknown>[] = [];
    const notifier = new Notifier('issuer', { baseDelayMs: 60_000, log: (fields) => lines.push(fields) });
    const app = createIssuerSandbox({ notifier });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A port nobody listens on: bind one and close it.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const deadPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const s = secret();
    try {
      await call(`${url}/__sandbox/notify-target`, { method: 'PUT', body: { url: `http://127.0.0.1:${deadPort}`, secret: s } });
      const cardKey = await issueCard(url);
      const changed = await call(`${url}/__sandbox/cards/${cardKey}/issuer-status`, { method: 'POST', body: { statusCode: 'S2' } });
      expect(changed.body).to.deep.include({ notified: false });
      const failure = lines.find((l) => l.msg === 'notification not delivered');
      expect(failure, JSON.stringify(lines)).to.deep.include({ error: 'ECONNREFUSED', attempt: 1, retryInMs: 60_000, backlog: 1 });
      expect(JSON.stringify(lines)).to.not.include(s);
    } finally {
      notifier.clear();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('sandbox: GATEWAY_NOTIFY_URL and the notify secrets (npm run sandbox)', function () {
  const a = 'A'.repeat(32);
  const b = 'B'.repeat(40);

  it('reads the URL and the secrets under the gateway\'s names; the first of two (a rotation) signs', () => {
    expect(notifyTargetFromEnv({})).to.equal(undefined);
    expect(notifyTargetFromEnv({ ISSUER_NOTIFY_SECRET: a }), 'secrets alone: the gateway\'s own environment').to.equal(undefined);
    expect(notifyTargetFromEnv({ GATEWAY_NOTIFY_URL: 'http://10.0.0.5:9877/', ISSUER_NOTIFY_SECRET: a, PROCESSING_NOTIFY_SECRET: `${b}, ${a}` })).to.deep.equal({
      url: 'http://10.0.0.5:9877',
      issuerSecret: a,
      processingSecret: b,
    });
    expect(notifyTargetFromEnv({ GATEWAY_NOTIFY_URL: 'https://gw.internal', PROCESSING_NOTIFY_SECRET: b })).to.deep.equal({ url: 'https://gw.internal', processingSecret: b });
  });

  const bad: [string, NodeJS.ProcessEnv, RegExp][] = [
    ['a URL without any secret', { GATEWAY_NOTIFY_URL: 'http://127.0.0.1:9877' }, /neither ISSUER_NOTIFY_SECRET nor PROCESSING_NOTIFY_SECRET/],
    ['a URL that is not http', { GATEWAY_NOTIFY_URL: 'file:///etc/passwd', ISSUER_NOTIFY_SECRET: a }, /^GATEWAY_NOTIFY_URL must be/],
    ['a URL with a password', { GATEWAY_NOTIFY_URL: 'http://u:hunter2hunter2@127.0.0.1:9877', ISSUER_NOTIFY_SECRET: a }, /^GATEWAY_NOTIFY_URL must be/],
    ['a short secret', { GATEWAY_NOTIFY_URL: 'http://127.0.0.1:9877', ISSUER_NOTIFY_SECRET: 'short-secret-value' }, /^ISSUER_NOTIFY_SECRET must be/],
    ['three secrets', { GATEWAY_NOTIFY_URL: 'http://127.0.0.1:9877', PROCESSING_NOTIFY_SECRET: [a, b, a].join(',') }, /^PROCESSING_NOTIFY_SECRET must be/],
  ];
  for (const [what, env, message] of bad) {
    it(`refuses ${what}, naming the variable and never its value`, () => {
      let thrown: Error | undefined;
      try {
        notifyTargetFromEnv(env);
      } catch (err) {
        thrown = err as Error;
      }
      expect(thrown?.message).to.match(message);
      for (const value of Object.values(env)) expect(thrown!.message).to.not.include(String(value).slice(0, 18));
    });
  }

  it('node dist/sandbox/main.js with a bad secret exits 1 with the variable\'s name on stderr, not its value', async () => {
    const value = 'too-short-but-secret';
    const child = spawn(process.execPath, [MAIN], { env: { ...process.env, GATEWAY_NOTIFY_URL: 'http://127.0.0.1:9877', ISSUER_NOTIFY_SECRET: value }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, out).to.equal(1);
    expect(out).to.include('ISSUER_NOTIFY_SECRET must be');
    expect(out).to.not.include(value);
  });
});
