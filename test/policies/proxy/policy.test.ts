import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express, { type RequestHandler } from 'express';
import proxyPolicy from '../../../policies/proxy';
import type { ProxyParams } from '../../../policies/proxy/schema';
import { insertCard } from '../../../gateway/cards/card-store';
import { jsonBody } from '../../../gateway/http/body';
import { notFound, problemHandler } from '../../../gateway/http/problem';
import { requestContext } from '../../../gateway/http/request-context';
import { newObjectId } from '../../../gateway/ids';
import { MAX_SOCKETS_PER_ORIGIN } from '../../../gateway/upstreams/agents';
import { makeKeyPair } from '../../support/partners';
import { openServices, policyContext, type InProcessServices } from '../../support/in-process';
import { refusedUrl, startFakeUpstream, type FakeUpstream } from './fake-upstream';

/** Upstream error text that must never reach a partner (it may carry card data). */
/** Stand-in RSA-2048 OAEP ciphertexts: base64 of 256 bytes (the reveal transforms check the size). */
const CIPHERTEXT_CVV = Buffer.alloc(256, 0x5c).toString('base64');
const CIPHERTEXT_PAN = Buffer.alloc(256, 0x3e).toString('base64');
const UPSTREAM_SECRET = 'issuer-internal 5355701234567890 cvv=987';

interface Mounted {
  url: string;
  /** `res.locals.upstreamLatencyMs` of the last finished request. */
  lastLatency(): number | undefined;
  close(): Promise<void>;
}

describe('upstream-proxy policy in-process (the shared upstream client, loopback upstream, real PostgreSQL)', function () {
  this.timeout(20_000);
  let services: InProcessServices;
  let upstream: FakeUpstream;
  let refused: string;
  let partnerId: string;
  let individualId: string;
  const mounted: Mounted[] = [];

  /** The policy behind the partner app's own middlewares (request context, JSON body, problems). */
  async function mount(params: ProxyParams, route = '/probe/:id', method: 'get' | 'post' = 'get', before: RequestHandler[] = []): Promise<Mounted> {
    const step = proxyPolicy.policy(params, policyContext(services));
    let latency: number | undefined;
    const app = express();
    app.use(requestContext(services.log, 'test'));
    app.use(jsonBody());
    app.use((_req, res, next) => {
      res.on('finish', () => (latency = res.locals.upstreamLatencyMs));
      next();
    });
    app[method](route, ...before, step);
    app.use(notFound());
    app.use(problemHandler(services.log));
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const m: Mounted = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      lastLatency: () => latency,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
    mounted.push(m);
    return m;
  }

  /** Stands in for es512-jwt and ownership (tested on their own). */
  const owner = (ownerPartnerId = () => partnerId): RequestHandler =>
    function standIn(req, _res, next) {
      req.ownership = { kind: 'card', id: req.params.id, partnerId: ownerPartnerId(), individualId };
      next();
    };

  /** Resolves once `condition` holds (polled every 10 ms), or fails after 5 s. */
  async function until(condition: () => boolean): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not reached within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function call(m: Mounted, path: string, init: RequestInit = {}) {
    const response = await fetch(`${m.url}${path}`, init);
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  before(async function () {
    upstream = await startFakeUpstream();
    refused = await refusedUrl();
    services = await openServices({ issuer: upstream.url, processing: refused, accounts: refused });
    partnerId = (await services.partners.create({ name: 'proxy-unit', issuer: 'https://proxy-unit.example', publicKey: makeKeyPair().publicPem }))._id;
    individualId = newObjectId();
    const userId = newObjectId();
    await services.db.query("INSERT INTO users (id, partner_id, email, first_name, last_name) VALUES ($1, $2, 'x@example.com', 'X', 'Y')", [userId, partnerId]);
    await services.db.query(
      `INSERT INTO individual_onboardings (id, partner_id, user_id, personal_info, address, application_status, dashboard_status, provisioning)
       VALUES ($1, $2, $3, '{}', '{}', 'APPROVED', 'ACTIVE', 'complete')`,
      [individualId, partnerId, userId]
    );
  });

  beforeEach(function () {
    upstream.seen.length = 0;
    upstream.behave = () => ({ kind: 'json', body: { cardKey: 'CK1', statusCode: '00' } });
  });

  after(async function () {
    for (const m of mounted) await m.close();
    await upstream?.close();
    await services?.close();
  });

  describe('request sent upstream', function () {
    it('sends only accept, x-request-id and the host: never authorization, cookies, idempotency-key or anything else', async function () {
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      const response = await call(m, '/probe/CK1', {
        headers: {
          authorization: 'Bearer partner-token-must-not-travel',
          cookie: 'session=abc',
          'idempotency-key': 'idem-1',
          'x-forwarded-for': '10.0.0.1',
          'x-api-key': 'k',
          'x-request-id': 'proxy-unit-1',
          'proxy-authorization': 'Basic x',
        },
      });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ cardKey: 'CK1', status: 'ACTIVE', statusCode: '00' });
      expect(upstream.seen).to.have.length(1);
      const seen = upstream.seen[0];
      expect(seen.method).to.equal('GET');
      expect(seen.url).to.equal('/cards/CK1/status');
      expect(seen.headers).to.not.have.any.keys('authorization', 'cookie', 'idempotency-key', 'x-forwarded-for', 'x-api-key', 'proxy-authorization', 'content-type');
      expect(seen.headers['x-request-id']).to.equal('proxy-unit-1');
      expect(seen.headers.accept).to.equal('application/json');
      expect(Object.keys(seen.headers).sort()).to.deep.equal(['accept', 'connection', 'host', 'x-request-id']);
      expect(seen.body).to.equal('');
    });

    it('forwards the generated request id when the partner sent none', async function () {
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      const response = await call(m, '/probe/CK1');
      expect(upstream.seen[0].headers['x-request-id']).to.equal(response.headers.get('x-request-id')).and.match(/^[0-9a-f-]{36}$/);
    });

    it('forwards only the listed query parameters, URL-encoded (a base64 key keeps + / =), and encodes path parameters', async function () {
      const securityKey = 'MIIBIjANBgkq+hkiG9w0BAQEFAAOC/AQ8AMIIBCgKCAQEA==';
      upstream.behave = () => ({ kind: 'json', body: { cvv: CIPHERTEXT_CVV } });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/cvv', query: ['expDate', 'securityKey'], response: 'cvv' });
      const query = new URLSearchParams({ expDate: '12/2030', securityKey, debug: 'true', callback: 'http://evil.example' });
      const response = await call(m, `/probe/${encodeURIComponent('a b/..')}?${query}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ cvv: CIPHERTEXT_CVV });
      const seen = new URL(upstream.seen[0].url, 'http://x');
      expect(seen.pathname).to.equal('/cards/a%20b%2F../cvv');
      expect([...seen.searchParams.keys()]).to.deep.equal(['expDate', 'securityKey']);
      expect(seen.searchParams.get('securityKey')).to.equal(securityKey);
      expect(seen.searchParams.get('expDate')).to.equal('12/2030');
    });

    it('escapes a ".." path parameter so that no hop can normalise it away', async function () {
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      // Raw request: fetch would resolve %2E%2E as a dot-segment itself.
      const status = await new Promise<number>((resolve, reject) => {
        const { hostname, port } = new URL(m.url);
        http.get({ hostname, port, path: '/probe/%2E%2E' }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject);
      });
      expect(status).to.equal(200);
      expect(upstream.seen[0].url).to.equal('/cards/%2E%2E/status');
    });

    it('re-serialises the parsed body with setBody merged over it (POST), with content-type and content-length', async function () {
      upstream.behave = () => ({ kind: 'json', body: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R002', fee: 5, currency: 'EUR', echo: 'x' } });
      const m = await mount({ upstream: 'issuer', method: 'POST', path: '/fees', setBody: { OperationType: 'CARD_ISSUING_FEE' }, response: 'fee' }, '/fees', 'post');
      const response = await call(m, '/fees', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer t', 'idempotency-key': 'k1' },
        body: JSON.stringify({ CustomerType: 'Consumer Debit', ProductType: 'R002', OperationType: 'CARD_DELIVERY_FEE', cardKey: 'CK1' }),
      });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R002', fee: 5, currency: 'EUR' });
      const seen = upstream.seen[0];
      expect(seen.method).to.equal('POST');
      expect(JSON.parse(seen.body)).to.deep.equal({ CustomerType: 'Consumer Debit', ProductType: 'R002', OperationType: 'CARD_ISSUING_FEE', cardKey: 'CK1' });
      expect(seen.headers['content-type']).to.equal('application/json');
      expect(seen.headers['content-length']).to.equal(String(Buffer.byteLength(seen.body)));
      expect(seen.headers).to.not.have.any.keys('authorization', 'idempotency-key', 'transfer-encoding');
    });

    it('body: none sends no body even when the partner sent one', async function () {
      upstream.behave = () => ({ kind: 'json', body: { cardKey: 'CK1', statusCode: '00' } });
      const m = await mount({ upstream: 'issuer', method: 'POST', path: '/cards/{id}/status', body: 'none', response: 'card-status' }, '/probe/:id', 'post');
      const response = await call(m, '/probe/CK1', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"action":"closed"}' });
      expect(response.status).to.equal(200);
      expect(upstream.seen[0].body).to.equal('');
      expect(upstream.seen[0].headers['content-length']).to.equal('0');
    });

    it('uses the request method when none is configured, and sends no body on a GET', async function () {
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      await call(m, '/probe/CK1');
      expect(upstream.seen[0].method).to.equal('GET');
      expect(upstream.seen[0].headers).to.not.have.any.keys('content-length', 'transfer-encoding');
    });

    it('shares one keep-alive pool per upstream with the typed client (bounded sockets) and reuses its connection', async function () {
      expect(services.clients.http.issuer.pool.connections).to.equal(MAX_SOCKETS_PER_ORIGIN);
      const a = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      const b = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      await call(a, '/probe/CK1');
      await call(b, '/probe/CK1');
      // A handler's typed call to the same upstream rides the same pool.
      await services.clients.issuer.getStatus({ requestId: 'typed-1' }, 'CK1');
      await call(a, '/probe/CK1');
      expect(upstream.seen).to.have.length(4);
      expect(new Set(upstream.seen.map((s) => s.connection)).size, 'one connection for four calls from two steps and a client method').to.equal(1);
    });

    it('retries a GET once when a reused keep-alive socket turns out to be closed', async function () {
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      expect((await call(m, '/probe/CK1')).status).to.equal(200);
      upstream.behave = () => ({ kind: 'stale-then', then: { kind: 'json', body: { cardKey: 'CK1', statusCode: 'L1' } } });
      const response = await call(m, '/probe/CK1');
      expect(response.status).to.equal(200);
      expect(response.body.statusCode).to.equal('L1');
      expect(upstream.seen.at(-2)!.previousOnConnection, 'first sent on the reused connection').to.be.above(0);
      expect(upstream.seen.at(-1)!.previousOnConnection, 'answered on a fresh connection').to.equal(0);
    });

    it('does not retry a POST on a closed keep-alive socket (502)', async function () {
      upstream.behave = () => ({ kind: 'json', body: { OperationType: 'A', CustomerType: 'B', ProductType: 'C', fee: 1, currency: 'EUR' } });
      const m = await mount({ upstream: 'issuer', method: 'POST', path: '/fees', response: 'fee' }, '/fees', 'post');
      const post = () => call(m, '/fees', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect((await post()).status).to.equal(200);
      upstream.behave = () => ({ kind: 'stale-then', then: { kind: 'json', body: {} } });
      const before = upstream.seen.length;
      const response = await post();
      expect(response.status).to.equal(502);
      expect(response.body.code).to.equal('upstream_error');
      expect(upstream.seen.length - before, 'sent once').to.equal(1);
    });
  });

  describe('failures', function () {
    it('times out after timeoutMs: 504 upstream_timeout, and the upstream connection is closed', async function () {
      upstream.behave = () => ({ kind: 'hang' });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status', timeoutMs: 300 });
      const started = Date.now();
      const response = await call(m, '/probe/CK1');
      const elapsed = Date.now() - started;
      expect(response.status).to.equal(504);
      expect(response.body).to.include({ code: 'upstream_timeout', upstream: 'issuer' });
      expect(elapsed).to.be.within(250, 3000);
      expect(m.lastLatency()).to.be.a('number').and.to.be.at.least(250);
      // The hung connection is destroyed (undici may open a fresh idle one in its place).
      const hung = upstream.seen[upstream.seen.length - 1]!.connection;
      await until(() => !upstream.isOpen(hung));
    });

    it('when the partner leaves before the upstream answered, the upstream request is destroyed and nothing is answered', async function () {
      upstream.behave = () => ({ kind: 'hang' });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status', timeoutMs: 10_000 });
      const { hostname, port } = new URL(m.url);
      const partner = http.get({ hostname, port, path: '/probe/CKLEFT' });
      partner.on('error', () => undefined);
      await until(() => upstream.seen.length === 1 && upstream.openConnections() === 1);
      partner.destroy();
      await until(() => !upstream.isOpen(upstream.seen[0]!.connection));
      expect(upstream.seen).to.have.length(1);
    });

    it('answers 502 upstream_error when the port refuses connections', async function () {
      const m = await mount({ upstream: 'processing', path: '/delivery-methods', response: 'delivery-methods' });
      const response = await call(m, '/probe/x');
      expect(response.status).to.equal(502);
      expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(response.body).to.include({ code: 'upstream_error', upstream: 'processing' });
      expect(response.body.detail).to.include('ECONNREFUSED');
    });

    it('answers 502 when the connection is reset mid-response', async function () {
      upstream.behave = () => ({ kind: 'reset' });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/cvv', response: 'cvv' });
      const response = await call(m, '/probe/CK1');
      expect(response.status).to.equal(502);
      expect(response.body.code).to.equal('upstream_error');
      expect(response.text).to.not.include('partial answer');
    });

    const statuses: { description: string; status: number; errorCode: string; expectedStatus: number; expectedCode: string; upstreamCode?: string }[] = [
      { description: '400 VALIDATION_ERROR', status: 400, errorCode: 'VALIDATION_ERROR', expectedStatus: 422, expectedCode: 'upstream_rejected', upstreamCode: 'VALIDATION_ERROR' },
      { description: '400 INVALID_SECURITY_KEY', status: 400, errorCode: 'INVALID_SECURITY_KEY', expectedStatus: 422, expectedCode: 'upstream_rejected', upstreamCode: 'INVALID_SECURITY_KEY' },
      { description: '422 EXP_DATE_MISMATCH', status: 422, errorCode: 'EXP_DATE_MISMATCH', expectedStatus: 422, expectedCode: 'upstream_rejected', upstreamCode: 'EXP_DATE_MISMATCH' },
      { description: '404 CARD_NOT_FOUND', status: 404, errorCode: 'CARD_NOT_FOUND', expectedStatus: 404, expectedCode: 'not_found', upstreamCode: 'CARD_NOT_FOUND' },
      { description: '404 ROUTE_NOT_FOUND (misconfigured upstream)', status: 404, errorCode: 'ROUTE_NOT_FOUND', expectedStatus: 502, expectedCode: 'upstream_error', upstreamCode: 'ROUTE_NOT_FOUND' },
      { description: '409 CARD_CLOSED', status: 409, errorCode: 'CARD_CLOSED', expectedStatus: 409, expectedCode: 'conflict', upstreamCode: 'CARD_CLOSED' },
      { description: '401 (our credentials)', status: 401, errorCode: 'UNAUTHORIZED', expectedStatus: 502, expectedCode: 'upstream_error', upstreamCode: 'UNAUTHORIZED' },
      { description: '500 INTERNAL_ERROR', status: 500, errorCode: 'INTERNAL_ERROR', expectedStatus: 502, expectedCode: 'upstream_error', upstreamCode: 'INTERNAL_ERROR' },
      { description: 'an errorCode that is free text is not echoed', status: 400, errorCode: 'pan 5355701234567890 is bad', expectedStatus: 422, expectedCode: 'upstream_rejected' },
    ];
    for (const testCase of statuses) {
      it(`maps upstream ${testCase.description} to ${testCase.expectedStatus} ${testCase.expectedCode}, never the upstream body`, async function () {
        upstream.behave = () => ({ kind: 'json', status: testCase.status, body: { errorCode: testCase.errorCode, message: UPSTREAM_SECRET, details: [{ path: '/x', message: UPSTREAM_SECRET }] } });
        const m = await mount({ upstream: 'issuer', path: '/cards/{id}/cvv', query: ['expDate'], response: 'cvv' });
        const response = await call(m, '/probe/CK1?expDate=12/2030');
        expect(response.status).to.equal(testCase.expectedStatus);
        expect(response.body.code).to.equal(testCase.expectedCode);
        expect(response.body.upstream).to.equal('issuer');
        if (testCase.upstreamCode) expect(response.body.upstreamCode).to.equal(testCase.upstreamCode);
        else expect(response.body).to.not.have.property('upstreamCode');
        // The random request id (a UUID) may contain "987" by chance: check everything else.
        const { requestId: _requestId, ...problem } = response.body as Record<string, unknown>;
        expect(JSON.stringify(problem)).to.not.include('issuer-internal').and.not.include('5355701234567890').and.not.include('987');
      });
    }

    it('maps 503 to 502 with the upstream\'s Retry-After', async function () {
      upstream.behave = () => ({ kind: 'json', status: 503, body: { errorCode: 'SERVICE_UNAVAILABLE', message: UPSTREAM_SECRET }, headers: { 'retry-after': '7' } });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      const response = await call(m, '/probe/CK1');
      expect(response.status).to.equal(502);
      expect(response.headers.get('retry-after')).to.equal('7');
    });

    it('maps a non-JSON error body to its status alone', async function () {
      upstream.behave = () => ({ kind: 'raw', status: 404, body: `<html>${UPSTREAM_SECRET}</html>`, headers: { 'content-type': 'text/html' } });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      const response = await call(m, '/probe/CK1');
      expect(response.status).to.equal(404);
      expect(response.body).to.not.have.property('upstreamCode');
      expect(response.text).to.not.include('issuer-internal');
    });

    const unusable: { description: string; body: string | Buffer }[] = [
      { description: 'a 2xx body that is not JSON', body: `{"cvv": "abc", ${UPSTREAM_SECRET}` },
      { description: 'an empty 2xx body', body: '' },
      { description: 'a 2xx JSON body without the documented field', body: JSON.stringify({ secret: UPSTREAM_SECRET }) },
      { description: 'a 2xx body over 1 MiB', body: Buffer.alloc(1024 * 1024 + 10, 0x20) },
    ];
    for (const testCase of unusable) {
      it(`answers 502 for ${testCase.description}`, async function () {
        upstream.behave = () => ({ kind: 'raw', body: testCase.body });
        const m = await mount({ upstream: 'issuer', path: '/cards/{id}/cvv', response: 'cvv' });
        const response = await call(m, '/probe/CK1');
        expect(response.status).to.equal(502);
        expect(response.body).to.include({ code: 'upstream_error', upstream: 'issuer' });
        expect(response.text).to.not.include('issuer-internal');
      });
    }

    it('answers 502 for an unknown issuer status code', async function () {
      upstream.behave = () => ({ kind: 'json', body: { cardKey: 'CK1', statusCode: 'Q7' } });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      expect((await call(m, '/probe/CK1')).status).to.equal(502);
    });

    it('keeps serving after failures (no leaked state between requests)', async function () {
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status', timeoutMs: 200 });
      upstream.behave = () => ({ kind: 'hang' });
      const hung = call(m, '/probe/CK1');
      upstream.behave = (seen) => (seen.url.includes('CK2') ? { kind: 'json', body: { cardKey: 'CK2', statusCode: '00' } } : { kind: 'hang' });
      const ok = await call(m, '/probe/CK2');
      expect(ok.status).to.equal(200);
      expect((await hung).status).to.equal(504);
    });
  });

  describe('answers, audit and latency', function () {
    it('adds the upstream call to res.locals.upstreamLatencyMs', async function () {
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/status', response: 'card-status' });
      const response = await call(m, '/probe/CK1');
      expect(response.headers.get('cache-control')).to.equal('no-store');
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
      expect(m.lastLatency()).to.be.a('number').and.to.be.above(0);
    });

    it('card-details: our stored card with the issuer\'s fresh status; an issuer PAN/CVV never reaches the partner', async function () {
      const cardKey = `CKDETAILS${Date.now().toString(16).toUpperCase()}`;
      await insertCard(services.db, {
        cardKey,
        partnerId,
        individualId,
        cardMask: '5355 70** **** 4242',
        type: 'virtual',
        status: 'ACTIVE',
        statusCode: '00',
        currency: 'EUR',
        productCode: 'P-STD',
        holderClientCode: '48213377',
        expDate: '12/2030',
        embossedName: 'SANDBOX-LEAK',
        createdAt: '2026-03-01T10:15:00.000Z',
      });
      upstream.behave = () => ({
        kind: 'json',
        body: { cardKey, cardMask: '5355 70** **** 4242', statusCode: 'T1', embossedName: 'SANDBOX-LEAK', expDate: '12/2030', cardNumber: '5355704242424242', cvv: '321', ownerId: 'forged', secretNote: UPSTREAM_SECRET },
      });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}', response: 'card-details' });
      const response = await call(m, `/probe/${cardKey}`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.include({ cardKey, status: 'TEMP_LOCKED', statusCode: 'T1', ownerId: individualId, ownerType: 'individual', holderClientCode: '48213377', nickname: null });
      expect(response.body).to.not.have.any.keys('cardNumber', 'cvv', 'secretNote');
      // The CVV as a JSON value ("321"): bare digits could occur by chance in ids and timestamps.
      expect(response.text).to.not.match(/\d{16}/).and.not.include('"321"').and.not.include('issuer-internal');
    });

    it('card-details: 404 when the card is not in our database', async function () {
      upstream.behave = () => ({ kind: 'json', body: { cardKey: 'CKNOWHERE', statusCode: '00' } });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}', response: 'card-details' });
      const response = await call(m, '/probe/CKNOWHERE');
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('not_found');
    });

    it('audit: writes the entry (no secret in it) before answering', async function () {
      upstream.behave = () => ({ kind: 'json', body: { cardNumber: CIPHERTEXT_PAN } });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/pan', query: ['expDate', 'securityKey'], response: 'card-number', audit: 'card.pan.read' }, '/probe/:id', 'get', [owner()]);
      const response = await call(m, '/probe/CKAUDIT1?expDate=12/2030&securityKey=abc', { headers: { 'x-request-id': 'audit-pan-1' } });
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ cardNumber: CIPHERTEXT_PAN });
      const rows = await services.db.query('SELECT * FROM audit_log WHERE request_id = $1', ['audit-pan-1']);
      expect(rows.rows).to.have.length(1);
      expect(rows.rows[0]).to.include({ partner_id: partnerId, individual_id: individualId, operation: 'card.pan.read', target_type: 'card', target_id: 'CKAUDIT1', outcome: 'success' });
      expect(JSON.stringify(rows.rows[0])).to.not.include(CIPHERTEXT_PAN.slice(0, 24)).and.not.include('abc');
    });

    it('audit: a failed audit write fails the answer (the secret is not revealed)', async function () {
      upstream.behave = () => ({ kind: 'json', body: { cvv: CIPHERTEXT_CVV } });
      // An owner whose partner does not exist: the audit insert violates its foreign key.
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/cvv', response: 'cvv', audit: 'card.cvv.read' }, '/probe/:id', 'get', [owner(() => newObjectId())]);
      const response = await call(m, '/probe/CKAUDIT2');
      expect(response.status).to.equal(500);
      expect(response.text).to.not.include(CIPHERTEXT_CVV.slice(0, 24));
    });

    it('audit: a failed read is audited as a failure, with the reason and no secret', async function () {
      upstream.behave = () => ({ kind: 'json', status: 422, body: { errorCode: 'EXP_DATE_MISMATCH', message: 'x' } });
      const m = await mount({ upstream: 'issuer', path: '/cards/{id}/cvv', response: 'cvv', audit: 'card.cvv.read' }, '/probe/:id', 'get', [owner()]);
      const response = await call(m, '/probe/CKAUDIT3', { headers: { 'x-request-id': 'audit-cvv-failed' } });
      expect(response.status).to.equal(422);
      const rows = await services.db.query('SELECT operation, outcome, details FROM audit_log WHERE request_id = $1', ['audit-cvv-failed']);
      expect(rows.rows).to.deep.equal([{ operation: 'card.cvv.read', outcome: 'failure', details: { reason: 'upstream_rejected' } }]);
    });
  });
});
