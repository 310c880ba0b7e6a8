import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { logsSettled, sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';

/** `depth` nested arrays (`[[[…]]]`) or objects (`{"a":{"a":…}}`), as raw JSON text. */
function nested(kind: 'arrays' | 'objects', depth: number): string {
  return kind === 'arrays' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`;
}

/**
 * Deeply nested JSON bodies (issue 11, item 6): a 10 KB body of 5,000 nested arrays used to overflow
 * the stack (500 internal_error) on these routes. Now: 400 `body_too_deep` at any depth that fits in
 * 64 KB, 413 above that, nothing changed, and no stack overflow in the log.
 */
describe('e2e: deeply nested JSON bodies are refused with 400 body_too_deep, never a 5xx', function () {
  this.timeout(120_000);
  // On the run's shared gateway: every request of this file carries an x-request-id of its own (the
  // gateway logs it and passes it to the upstreams), and every row it reads is its partner's.
  let gateway: Gateway;
  let partner: TestPartner;
  let sandboxes: { issuer: string; processing: string; accounts: string };
  let db: Client;
  let ada: any;
  let card: any;

  const tag = `deep-json-${crypto.randomBytes(4).toString('hex')}`;
  let sent = 0;
  const nextRequestId = () => `${tag}-${(sent += 1)}`;

  before(async function () {
    gateway = await sharedGateway();
    sandboxes = sandboxUrls(gateway);
    partner = await registerPartner(gateway, tag);
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    const created = nextRequestId();
    ada = (await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody(), headers: { 'x-request-id': created } })).body;
    card = (await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID) })).body;
    expect(card.cardKey).to.be.a('string');
    // What proves "no upstream call" below: the request id a request carried is the one its upstream calls carry.
    expect(await upstreamCalls(created), 'the account creation reached the accounts sandbox under its request id').to.be.at.least(1);
  });

  after(async function () {
    await db?.end();
  });

  const routes = () => [
    { name: 'nickname', method: 'PATCH', path: `/cards/${card.cardKey}/nickname` },
    { name: '3DS answer', method: 'PUT', path: `/cards/${card.cardKey}/3ds/answer` },
    { name: 'limits', method: 'PATCH', path: `/cards/${card.cardKey}/limits` },
    { name: 'create-individual', method: 'POST', path: '/individual/accounts' },
    { name: 'fee check', method: 'POST', path: '/fees/card-issuing' },
  ];

  /** What the partner's rows hold now. */
  async function state() {
    const rows = await db.query(
      `SELECT (SELECT count(*) FROM individual_onboardings WHERE partner_id = $1)::int AS individuals,
              (SELECT json_agg(json_build_array(nickname, three_ds_phone, status_code, updated_at)) FROM cards WHERE partner_id = $1) AS cards,
              (SELECT count(*) FROM audit_log WHERE partner_id = $1)::int AS audit`,
      [partner.id]
    );
    return rows.rows[0];
  }

  /** Calls the three sandboxes received for the request with this id. */
  async function upstreamCalls(requestId: string): Promise<number> {
    const received = await Promise.all([sandboxes.issuer, sandboxes.processing, sandboxes.accounts].map((url) => sandboxControl(url, 'GET', '/__sandbox/requests')));
    return received.flat().filter((request: { requestId: string | null }) => request.requestId === requestId).length;
  }

  async function send(method: string, path: string, text: string): Promise<{ status: number; type: string | null; body: any; requestId: string }> {
    const requestId = nextRequestId();
    const response = await fetch(`${gateway.baseUrl}/api/partner${path}`, {
      method,
      headers: { authorization: `Bearer ${await partner.token()}`, 'content-type': 'application/json', 'x-request-id': requestId },
      body: text,
    });
    return { status: response.status, type: response.headers.get('content-type'), body: await response.json(), requestId };
  }

  for (const kind of ['arrays', 'objects'] as const) {
    // 5,000 levels: the reviewer's ~10 KB body; 10,000 objects and 30,000 arrays: the deepest that fit in 64 KB.
    for (const depth of kind === 'arrays' ? [5_000, 30_000] : [5_000, 10_000]) {
      it(`${depth.toLocaleString('en')} nested ${kind} → 400 body_too_deep on every route, nothing changed`, async function () {
        const text = nested(kind, depth);
        expect(Buffer.byteLength(text)).to.be.below(64 * 1024);
        for (const route of routes()) {
          const before = await state();
          const response = await send(route.method, route.path, text);
          expect(response.status, `${route.name}: ${JSON.stringify(response.body)}`).to.equal(400);
          expect(response.type).to.match(/^application\/problem\+json/);
          expect(response.body).to.include({ code: 'body_too_deep', status: 400 });
          expect(response.body.detail).to.match(/deeper than 32 levels/);
          expect(await state(), `${route.name}: nothing changed`).to.deep.equal(before);
          expect(await upstreamCalls(response.requestId), `${route.name}: no upstream call`).to.equal(0);
        }
      });
    }
  }

  it('100,000 nested arrays (200 KB) → 413 payload_too_large before any parsing; no 5xx', async function () {
    for (const route of routes()) {
      const response = await send(route.method, route.path, nested('arrays', 100_000));
      expect(response.status, route.name).to.equal(413);
      expect(response.body).to.include({ code: 'payload_too_large' });
    }
  });

  it('32 levels are parsed and validated as usual (400 validation_failed), 33 are body_too_deep', async function () {
    const route = routes()[0];
    const at = await send(route.method, route.path, nested('arrays', 32));
    expect(at.status).to.equal(400);
    expect(at.body.code).to.equal('validation_failed');
    const beyond = await send(route.method, route.path, `{"nickname":${nested('objects', 32)}}`);
    expect(beyond.body.code).to.equal('body_too_deep');
  });

  it('the gateway logged no stack overflow and no 5xx for any of these requests', async function () {
    await logsSettled(gateway);
    expect(gateway.output()).to.not.match(/Maximum call stack|RangeError/);
    const mine = gateway.logLines().filter((line) => String(line.requestId ?? '').startsWith(`${tag}-`));
    expect(mine.filter((line) => line.msg === 'request').length, 'the access-log lines of this file\'s requests').to.equal(sent);
    const failures = mine.filter((line) => line.msg === 'request failed' || (typeof line.status === 'number' && line.status >= 500));
    expect(failures, JSON.stringify(failures.slice(0, 2))).to.deep.equal([]);
  });
});
