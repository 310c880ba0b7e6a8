import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import {
  derToP1363,
  isRetryable,
  OPERATION_METHODS,
  OPERATIONS,
  Paginated,
  parseRetryAfter,
  PartnerGateway,
  PartnerGatewayConnectionError,
  PartnerGatewayError,
  PartnerTokens,
  retryDelayMs,
  SDK_VERSION,
  type LogRecord,
  type PartnerGatewayErrorCode,
} from '../../sdk/src';

/** What the fake gateway saw of one request. */
interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | 'network';

/** A fetch that answers the scripted replies in order (the last one repeats) and records each request. */
function scriptedFetch(replies: Reply[]): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const fake = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    seen.push({ method: init?.method ?? 'GET', url: String(input), headers: { ...(init?.headers as Record<string, string>) }, body: init?.body as string | undefined });
    const reply = replies[Math.min(seen.length - 1, replies.length - 1)]!;
    if (reply === 'network') throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' }) });
    const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    return new Response(reply.status === 204 ? null : text, { status: reply.status, headers: reply.headers });
  };
  return { fetch: fake as typeof fetch, seen };
}

const keys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
const PARTNER = { partnerId: '65f1a2b3c4d5e6f708192a00', issuer: 'https://acme.example', privateKey: keys.privateKey };

function problem(status: number, code: string, extra: Record<string, unknown> = {}) {
  return { type: `https://partner-gateway.dev/problems/${code}`, title: code, status, detail: `detail of ${code}`, code, requestId: `req-${code}`, ...extra };
}

/** A client on the scripted fetch, whose waits are recorded instead of slept. */
function clientOn(replies: Reply[], options: { maxRetries?: number; logger?: (r: LogRecord) => void } = {}) {
  const { fetch, seen } = scriptedFetch(replies);
  const waits: number[] = [];
  const client = new PartnerGateway({
    ...PARTNER,
    baseUrl: 'http://gateway.test/api/partner/',
    fetch,
    retry: { maxRetries: options.maxRetries ?? 2 },
    logger: options.logger,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { client, seen, waits };
}

const LOCK_BODY = { expDate: '12/2030', reason: 'test' };
const STATUS_RESULT = { cardKey: 'CK1', status: 'LOCKED', statusCode: 'L1' };

describe('sdk: tokens', function () {
  it('signs ES512 tokens with iss, sub, iat, exp (60 s) and the kid, which the public key verifies', async function () {
    const tokens = new PartnerTokens({ ...PARTNER, kid: 'key-1' });
    const token = await tokens.token();
    expect(decodeProtectedHeader(token)).to.deep.equal({ alg: 'ES512', typ: 'JWT', kid: 'key-1' });
    const { payload } = await jwtVerify(token, await importSPKI(keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'ES512'), { issuer: PARTNER.issuer, subject: PARTNER.partnerId });
    expect(payload.exp! - payload.iat!).to.equal(60);
    expect(decodeProtectedHeader(await new PartnerTokens(PARTNER).token())).to.not.have.property('kid');
  });

  it('reuses a token until 15 s before its exp, then signs a new one; concurrent callers share one signature', async function () {
    let now = 1_700_000_000_000;
    const tokens = new PartnerTokens({ ...PARTNER, now: () => now });
    const [a, b, c] = await Promise.all([tokens.token(), tokens.token(), tokens.token()]);
    expect(new Set([a, b, c]).size).to.equal(1);
    expect(tokens.signed).to.equal(1);
    now += 44_999;
    expect(await tokens.token()).to.equal(a);
    now += 1;
    const renewed = await tokens.token();
    expect(renewed).to.not.equal(a);
    expect(tokens.signed).to.equal(2);
    expect(decodeJwt(renewed).iat).to.equal(Math.floor(now / 1000));
    tokens.invalidate();
    expect(await tokens.token()).to.not.equal(renewed);
  });

  it('takes a PEM (PKCS#8 or SEC1) and refuses a key of another curve or type, without showing it', async function () {
    for (const type of ['pkcs8', 'sec1'] as const) {
      const pem = keys.privateKey.export({ type, format: 'pem' }).toString();
      expect(decodeJwt(await new PartnerTokens({ ...PARTNER, privateKey: pem }).token()).sub).to.equal(PARTNER.partnerId);
    }
    const p256 = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(() => new PartnerTokens({ ...PARTNER, privateKey: p256 })).to.throw(TypeError, /P-521/);
    const pem = p256.export({ type: 'pkcs8', format: 'pem' }).toString();
    try {
      new PartnerTokens({ ...PARTNER, privateKey: pem });
      expect.fail('accepted a P-256 key');
    } catch (err) {
      expect((err as Error).message).to.not.include(pem.split('\n')[1]);
    }
    expect(() => new PartnerTokens({ ...PARTNER, privateKey: 'not a key' })).to.throw(TypeError, /not a readable PEM/);
    expect(() => new PartnerTokens({ ...PARTNER, lifetimeSeconds: 301 })).to.throw(RangeError);
  });

  it('signs through a key store (DER or IEEE P1363 signatures), the private key never handed to the SDK', async function () {
    const publicKey = await importSPKI(keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'ES512');
    for (const format of ['der', 'ieee-p1363'] as const) {
      const tokens = new PartnerTokens({
        ...PARTNER,
        privateKey: { signatureFormat: format, sign: async (input) => crypto.sign('sha512', input, { key: keys.privateKey, dsaEncoding: format }) },
      });
      const { payload } = await jwtVerify(await tokens.token(), publicKey);
      expect(payload.sub).to.equal(PARTNER.partnerId);
    }
    // derToP1363 left-pads short integers.
    const der = Buffer.from('300602011102020102', 'hex').subarray(0, 8);
    expect(derToP1363(Buffer.from([0x30, 0x06, 0x02, 0x01, 0x11, 0x02, 0x01, 0x22]), 4).toString('hex')).to.equal('0000001100000022');
    expect(() => derToP1363(der.subarray(1), 4)).to.throw(/not a DER/);
  });

  it('a client reuses its token across calls; a token refused for its time is signed anew and the call sent once more, once', async function () {
    const { client, seen } = clientOn([{ status: 200, body: { partner: {} } }, { status: 200, body: { partner: {} } }, { status: 401, body: problem(401, 'token_expired') }, { status: 200, body: { partner: {} } }], { maxRetries: 0 });
    await client.me();
    await client.me();
    // The third call is refused for its token's time: sent again at once with a new token, it succeeds.
    await client.me();
    await client.me();
    const auth = seen.map((s) => s.headers.authorization);
    expect(seen).to.have.length(5);
    expect(auth[0]).to.equal(auth[1]).and.to.equal(auth[2]);
    expect(auth[3]).to.not.equal(auth[2]);
    expect(auth[4]).to.equal(auth[3]);
    expect(client.signer.signed).to.equal(2);
    // client.tokens is the network tokens' namespace, not the signer; its deprecated token() is the signer's token.
    expect(client.tokens).to.not.equal(client.signer);
    expect(client.signer).to.not.have.property('list');
    expect(await client.tokens.token()).to.equal(await client.signer.token());

    // Refused again with the new token: thrown, not sent a third time.
    const twice = clientOn([{ status: 401, body: problem(401, 'token_not_yet_valid') }], { maxRetries: 2 });
    const error = await twice.client.me().catch((err: unknown) => err);
    expect(error).to.be.instanceOf(PartnerGatewayError).and.to.include({ status: 401, code: 'token_not_yet_valid' });
    expect(twice.seen).to.have.length(2);
    // Another 401 (a revoked key) is not sent again.
    const revoked = clientOn([{ status: 401, body: problem(401, 'key_revoked') }], { maxRetries: 2 });
    await revoked.client.me().catch(() => undefined);
    expect(revoked.seen).to.have.length(1);
  });
});

describe('sdk: retries and idempotency keys', function () {
  it('retry rules, as a table: which outcomes are retried for a read, a keyed write and an unkeyed write', function () {
    const cases: [string, boolean, Parameters<typeof isRetryable>[2], boolean][] = [
      ['GET', false, 'network', true],
      ['GET', false, { status: 502 }, true],
      ['GET', false, { status: 503 }, true],
      ['GET', false, { status: 504 }, true],
      ['GET', false, { status: 429, code: 'rate_limited' }, false],
      ['GET', false, { status: 500 }, false],
      ['GET', false, { status: 404, code: 'not_found' }, false],
      ['POST', true, 'network', true],
      ['POST', true, { status: 409, code: 'idempotency_in_progress' }, true],
      ['POST', true, { status: 409, code: 'idempotency_key_reused' }, false],
      ['POST', true, { status: 409, code: 'invalid_transition' }, false],
      ['POST', true, { status: 429, code: 'rate_limited' }, true],
      ['POST', true, { status: 502 }, true],
      ['POST', true, { status: 503 }, true],
      ['POST', true, { status: 504 }, true],
      ['POST', true, { status: 500 }, false],
      ['POST', true, { status: 400, code: 'validation_failed' }, false],
      ['POST', true, { status: 422, code: 'upstream_rejected' }, false],
      ['PATCH', false, 'network', false],
      ['PATCH', false, { status: 502 }, false],
      ['PATCH', false, { status: 504 }, false],
      ['PUT', false, { status: 429, code: 'rate_limited' }, true],
      ['DELETE', false, { status: 503 }, false],
    ];
    for (const [method, keyed, outcome, expected] of cases) expect(isRetryable(method, keyed, outcome), `${method} keyed=${keyed} ${JSON.stringify(outcome)}`).to.equal(expected);
  });

  it('backoff doubles with jitter up to its cap; Retry-After is honoured, and one over the cap is not waited for', function () {
    expect(retryDelayMs(1, undefined, {}, () => 0)).to.equal(250);
    expect(retryDelayMs(1, undefined, {}, () => 1)).to.equal(500);
    expect(retryDelayMs(3, undefined, {}, () => 1)).to.equal(2000);
    expect(retryDelayMs(10, undefined, {}, () => 1)).to.equal(8000);
    expect(retryDelayMs(1, 7, {}, () => 1)).to.equal(7000);
    expect(retryDelayMs(1, 0, {})).to.equal(0);
    expect(retryDelayMs(1, 61, {})).to.equal(undefined);
    expect(retryDelayMs(1, 120, { maxRetryAfterSeconds: 120 })).to.equal(120_000);
    expect(parseRetryAfter('3')).to.equal(3);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).to.equal(10);
    expect(parseRetryAfter('soon')).to.equal(undefined);
    expect(parseRetryAfter(null)).to.equal(undefined);
  });

  it('a write the gateway takes a key on gets one, the same on every retry (network, 409 in progress, 429, 503), and waits Retry-After', async function () {
    const { client, seen, waits } = clientOn(
      ['network', { status: 409, body: problem(409, 'idempotency_in_progress'), headers: { 'retry-after': '1' } }, { status: 429, body: problem(429, 'rate_limited'), headers: { 'retry-after': '2' } }, { status: 503, body: problem(503, 'database_unavailable') }, { status: 200, body: STATUS_RESULT }],
      { maxRetries: 4 }
    );
    expect(await client.cards.lock('CK1', LOCK_BODY)).to.deep.equal(STATUS_RESULT);
    expect(seen).to.have.length(5);
    const keys = seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).to.match(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size, 'one key for every attempt').to.equal(1);
    expect(seen.every((s) => s.method === 'POST' && s.url === 'http://gateway.test/api/partner/cards/CK1/lock' && s.body === JSON.stringify(LOCK_BODY))).to.equal(true);
    expect(waits[1]).to.equal(1000);
    expect(waits[2]).to.equal(2000);
    expect(waits[0]).to.be.within(250, 500);
    expect(waits[3]).to.be.within(2000, 4000);
    // The next call gets a key of its own; a caller's key is used as given.
    await client.cards.lock('CK1', LOCK_BODY);
    expect(seen[5]!.headers['idempotency-key']).to.not.equal(keys[0]);
    await client.cards.lock('CK1', LOCK_BODY, { idempotencyKey: 'my-own-key-1' });
    expect(seen[6]!.headers['idempotency-key']).to.equal('my-own-key-1');
  });

  it('retries are limited: after maxRetries the last error is thrown, typed', async function () {
    const { client, seen, waits } = clientOn([{ status: 503, body: problem(503, 'database_unavailable'), headers: { 'retry-after': '1' } }]);
    const err = await client.cards.lock('CK1', LOCK_BODY).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(PartnerGatewayError);
    expect((err as PartnerGatewayError).code).to.equal('database_unavailable');
    expect((err as PartnerGatewayError).retryAfter).to.equal(1);
    expect(seen).to.have.length(3);
    expect(waits).to.deep.equal([1000, 1000]);
    const network = clientOn(['network'], { maxRetries: 1 });
    const failed = await network.client.cards.get('CK1').catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(PartnerGatewayConnectionError);
    expect((failed as Error).message).to.include('ECONNRESET').and.to.include('2 attempt(s)');
    expect(network.seen).to.have.length(2);
  });

  it('a read never sends a key and retries only network errors and 502/503/504, not 429', async function () {
    const read = clientOn(['network', { status: 502, body: problem(502, 'upstream_error') }, { status: 504, body: problem(504, 'upstream_timeout') }, { status: 200, body: { cardKey: 'CK1' } }], { maxRetries: 3 });
    expect(await read.client.cards.get('CK1')).to.deep.equal({ cardKey: 'CK1' });
    expect(read.seen).to.have.length(4);
    expect(read.seen.every((s) => s.method === 'GET' && s.headers['idempotency-key'] === undefined && s.body === undefined)).to.equal(true);
    const limited = clientOn([{ status: 429, body: problem(429, 'rate_limited'), headers: { 'retry-after': '1' } }]);
    expect(((await limited.client.cards.get('CK1').catch((e: unknown) => e)) as PartnerGatewayError).code).to.equal('rate_limited');
    expect(limited.seen).to.have.length(1);
    expect(await read.client.call('get-card', { path: { id: 'CK1' } }, { idempotencyKey: 'x' }).catch((e: Error) => e.message)).to.equal('get-card takes no Idempotency-Key');
  });

  it('a write without an Idempotency-Key is retried on 429 only: after a 5xx or a network error it may have acted', async function () {
    const limited = clientOn([{ status: 429, body: problem(429, 'rate_limited'), headers: { 'retry-after': '0' } }, { status: 200, body: { cardKey: 'CK1' } }]);
    await limited.client.cards.setNickname('CK1', { nickname: 'Travel' });
    expect(limited.seen).to.have.length(2);
    expect(limited.seen[0]!.headers['idempotency-key']).to.equal(undefined);
    for (const reply of ['network', { status: 502, body: problem(502, 'upstream_error') }] as Reply[]) {
      const once = clientOn([reply, { status: 200, body: {} }]);
      await once.client.cards.setNickname('CK1', { nickname: 'Travel' }).catch(() => undefined);
      expect(once.seen, JSON.stringify(reply)).to.have.length(1);
    }
  });

  it('a call aborted while it waits for its retry is not sent again', async function () {
    const controller = new AbortController();
    const { fetch, seen } = scriptedFetch([{ status: 503, body: problem(503, 'database_unavailable'), headers: { 'retry-after': '1' } }, { status: 200, body: STATUS_RESULT }]);
    const client = new PartnerGateway({ ...PARTNER, baseUrl: 'http://gateway.test/api/partner', fetch, sleep: async () => controller.abort() });
    const err = await client.cards.lock('CK1', LOCK_BODY, { signal: controller.signal }).catch((e: unknown) => e);
    expect((err as Error).name).to.equal('AbortError');
    expect(seen).to.have.length(1);
  });

  it('logs one record per attempt, with nothing secret: no token, key, body or card data', async function () {
    const records: LogRecord[] = [];
    const { client, seen } = clientOn([{ status: 503, body: problem(503, 'database_unavailable'), headers: { 'retry-after': '0' } }, { status: 200, body: STATUS_RESULT, headers: { 'x-request-id': 'r-1' } }], { logger: (r) => records.push(r) });
    await client.cards.lock('CK1', { expDate: '12/2030', reason: 'secret-reason' });
    expect(records).to.deep.equal([
      { operationId: 'lock-card', method: 'POST', attempt: 1, status: 503, code: 'database_unavailable', requestId: 'req-database_unavailable', retryInMs: 0 },
      { operationId: 'lock-card', method: 'POST', attempt: 2, status: 200, requestId: 'r-1' },
    ]);
    const logged = JSON.stringify(records);
    for (const secret of [seen[0]!.headers.authorization!.slice(7), seen[0]!.headers['idempotency-key']!, 'secret-reason']) expect(logged).to.not.include(secret);
  });
});

describe('sdk: errors', function () {
  it('a problem becomes a PartnerGatewayError with status, code, detail, invalidParams, requestId and retryAfter', async function () {
    const invalidParams = [{ name: 'expDate', reason: 'must match MM/YYYY' }];
    const { client } = clientOn([{ status: 400, body: problem(400, 'validation_failed', { invalidParams }), headers: { 'content-type': 'application/problem+json' } }]);
    const err = (await client.cards.lock('CK1', LOCK_BODY).catch((e: unknown) => e)) as PartnerGatewayError;
    expect(err).to.be.instanceOf(PartnerGatewayError).and.instanceOf(Error);
    expect(err).to.include({ name: 'PartnerGatewayError', status: 400, code: 'validation_failed', detail: 'detail of validation_failed', requestId: 'req-validation_failed', retryAfter: undefined });
    expect(err.invalidParams).to.deep.equal(invalidParams);
    expect(err.message).to.equal('HTTP 400 validation_failed: detail of validation_failed (requestId req-validation_failed)');
    expect(err.problem?.code).to.equal('validation_failed');
    // The code's type is the union of the documented codes: an undocumented one does not compile.
    const documented: PartnerGatewayErrorCode[] = ['idempotency_in_progress', 'rate_limited', 'invalid_transition', 'unexpected_response'];
    // @ts-expect-error not a code the gateway documents
    const undocumented: PartnerGatewayErrorCode = 'teapot';
    expect(documented).to.not.include(undocumented);
  });

  it('an answer that is not a problem (a proxy page) is unexpected_response, its body not repeated, the request id from the header', async function () {
    const { client } = clientOn([{ status: 500, body: '<html>secret upstream page</html>', headers: { 'x-request-id': 'lb-1', 'retry-after': '5' } }]);
    const err = (await client.me().catch((e: unknown) => e)) as PartnerGatewayError;
    expect(err).to.include({ status: 500, code: 'unexpected_response', requestId: 'lb-1', retryAfter: 5 });
    expect(err.message).to.not.include('secret upstream page');
    const ok = clientOn([{ status: 200, body: '<html>a captive portal</html>' }]);
    const notJson = (await ok.client.me().catch((e: unknown) => e)) as PartnerGatewayError;
    expect(notJson).to.be.instanceOf(PartnerGatewayError);
    expect(notJson).to.include({ status: 200, code: 'unexpected_response' });
    expect(notJson.message).to.not.include('captive portal');
  });
});

describe('sdk: pagination', function () {
  const card = (n: number) => ({ cardKey: `CK${n}` });
  function pages(kind: 'page' | 'page-count' | 'cursor' | 'after', answers: unknown[], query: Record<string, unknown> = {}) {
    const asked: Record<string, unknown>[] = [];
    const list = new Paginated<{ cardKey: string }>(kind, query, async (q) => {
      asked.push(q);
      return answers[asked.length - 1] as never;
    });
    return { list, asked };
  }

  it('page lists: walks pages until totalPages, from the page asked for', async function () {
    const { list, asked } = pages('page', [
      { data: [card(1), card(2)], pagination: { page: 2, limit: 2, total: 6, totalPages: 3 } },
      { data: [card(3), card(4)], pagination: { page: 3, limit: 2, total: 6, totalPages: 3 } },
    ], { limit: 2, page: 2, status: 'ACTIVE' });
    expect((await list.toArray()).map((c) => c.cardKey)).to.deep.equal(['CK1', 'CK2', 'CK3', 'CK4']);
    expect(asked).to.deep.equal([{ limit: 2, page: 2, status: 'ACTIVE' }, { limit: 2, page: 3, status: 'ACTIVE' }]);
  });

  it('page lists: hasMore decides where the gateway says it, also past a capped total', async function () {
    // A capped total (a lower bound): totalPages says 1, hasMore says a second page holds items.
    const capped = pages('page', [
      { data: [card(1), card(2)], pagination: { page: 1, limit: 2, total: 2, totalPages: 1, hasMore: true } },
      { data: [card(3)], pagination: { page: 2, limit: 2, total: 2, totalPages: 1, hasMore: false } },
    ], { limit: 2 });
    expect((await capped.list.toArray()).map((c) => c.cardKey)).to.deep.equal(['CK1', 'CK2', 'CK3']);
    expect(capped.asked).to.have.length(2);
  });

  it('page lists: an empty page or totalPages 0 ends the walk', async function () {
    const empty = pages('page', [{ data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } }]);
    expect(await empty.list.toArray()).to.deep.equal([]);
    expect(empty.asked).to.have.length(1);
    // A page past the end (the total shrank meanwhile) answers an empty data: the walk stops there.
    const shrunk = pages('page', [{ data: [card(1)], pagination: { page: 1, limit: 1, total: 3, totalPages: 3 } }, { data: [], pagination: { page: 2, limit: 1, total: 1, totalPages: 1 } }], { limit: 1 });
    expect(await shrunk.list.toArray()).to.have.length(1);
    expect(shrunk.asked).to.have.length(2);
  });

  it('the individual list ({count, data}): stops when count is reached or a page is short', async function () {
    const full = pages('page-count', [{ count: 4, data: [card(1), card(2)] }, { count: 4, data: [card(3), card(4)] }], { limit: 2 });
    expect(await full.list.toArray()).to.have.length(4);
    expect(full.asked.map((q) => q.page)).to.deep.equal([undefined, 2]);
    const short = pages('page-count', [{ count: 100, data: [card(1)] }], { limit: 2 });
    expect(await short.list.toArray()).to.have.length(1);
    expect(short.asked).to.have.length(1);
  });

  it('cursor lists: sends nextCursor back (as cursor or after) until it is null; a repeated cursor stops the walk', async function () {
    const cursor = pages('cursor', [{ data: [card(1)], nextCursor: 'c1.aaaaaaaaaaaaaaaaaaaaaa' }, { data: [card(2)], nextCursor: null }], { limit: 1 });
    expect((await cursor.list.toArray()).map((c) => c.cardKey)).to.deep.equal(['CK1', 'CK2']);
    expect(cursor.asked).to.deep.equal([{ limit: 1 }, { limit: 1, cursor: 'c1.aaaaaaaaaaaaaaaaaaaaaa' }]);
    const after = pages('after', [{ data: [card(1)], nextCursor: 'e1' }, { data: [card(2)], nextCursor: 'e1' }, { data: [card(3)], nextCursor: null }]);
    expect(await after.list.toArray()).to.have.length(2);
    expect(after.asked).to.deep.equal([{}, { after: 'e1' }]);
    const emptyWithCursor = pages('after', [{ data: [], nextCursor: 'e9' }]);
    expect(await emptyWithCursor.list.toArray()).to.deep.equal([]);
    expect(emptyWithCursor.asked).to.have.length(1);
  });

  it('client lists: for await walks the gateway\'s pages with the query given, one GET per page', async function () {
    const { client, seen } = clientOn([
      { status: 200, body: { success: true, data: [card(1), card(2)], pagination: { page: 1, limit: 2, total: 3, totalPages: 2 } } },
      { status: 200, body: { success: true, data: [card(3)], pagination: { page: 2, limit: 2, total: 3, totalPages: 2 } } },
    ]);
    const keys: string[] = [];
    for await (const item of client.cards.list({ status: 'ACTIVE', limit: 2 })) keys.push(item.cardKey);
    expect(keys).to.deep.equal(['CK1', 'CK2', 'CK3']);
    expect(seen.map((s) => s.url)).to.deep.equal(['http://gateway.test/api/partner/cards?status=ACTIVE&limit=2', 'http://gateway.test/api/partner/cards?status=ACTIVE&limit=2&page=2']);
  });

  it('client lists take request options: the signal goes to every page\'s call, and aborting it ends a for-await walk', async function () {
    const page = (n: number, totalPages: number) => ({ success: true, data: [card(2 * n - 1), card(2 * n)], pagination: { page: n, limit: 2, total: 2 * totalPages, totalPages } });
    // The gateway of this test: page 1 answers; page 2 aborts the caller's signal while it is in
    // flight, then answers like a gateway would unless its own signal says the caller gave up.
    const controller = new AbortController();
    const signals: (AbortSignal | undefined)[] = [];
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      signals.push(init?.signal ?? undefined);
      if (signals.length === 2) controller.abort();
      if (init?.signal?.aborted) throw init.signal.reason;
      return new Response(JSON.stringify(page(signals.length, 3)), { status: 200 });
    }) as typeof globalThis.fetch;
    const client = new PartnerGateway({ ...PARTNER, baseUrl: 'http://gateway.test/api/partner', fetch });
    const walked: string[] = [];
    const inFlight = await (async () => {
      for await (const item of client.cards.list({ limit: 2 }, { signal: controller.signal })) walked.push(item.cardKey);
    })().catch((e: unknown) => e);
    expect((inFlight as Error).name, 'aborted while page 2 was in flight').to.equal('AbortError');
    expect(walked).to.deep.equal(['CK1', 'CK2']);
    expect(signals).to.have.length(2);

    // Aborted by the caller between two pages: the walk ends before the next request.
    const between = new AbortController();
    const { client: paging, seen } = clientOn([{ status: 200, body: page(1, 3) }, { status: 200, body: page(2, 3) }, { status: 200, body: page(3, 3) }]);
    const keys: string[] = [];
    const err = await (async () => {
      for await (const item of paging.cards.list({ limit: 2 }, { signal: between.signal })) {
        keys.push(item.cardKey);
        if (item.cardKey === 'CK2') between.abort();
      }
    })().catch((e: unknown) => e);
    expect((err as Error).name).to.equal('AbortError');
    expect(keys).to.deep.equal(['CK1', 'CK2']);
    expect(seen, 'no request after the abort').to.have.length(1);
    // Every list method takes them (its last parameter), cursor lists as page lists.
    const events = clientOn([{ status: 200, body: { data: [{ id: 'evt_1' }], nextCursor: null } }]);
    const aborted = AbortSignal.abort();
    const eventsErr = await events.client.events.list({}, { signal: aborted }).toArray().catch((e: unknown) => e);
    expect((eventsErr as Error).name).to.equal('AbortError');
    expect(events.seen).to.have.length(0);
  });

  it('client lists take retry options, applied to the call of each page', async function () {
    const first = { status: 200, body: { success: true, data: [card(1)], pagination: { page: 1, limit: 1, total: 2, totalPages: 2 } } };
    const unavailable = { status: 503, body: problem(503, 'database_unavailable') };
    const { client, seen, waits } = clientOn([first, unavailable, { status: 200, body: { success: true, data: [card(2)], pagination: { page: 2, limit: 1, total: 2, totalPages: 2 } } }], { maxRetries: 2 });
    const err = (await client.cards.list({ limit: 1 }, { retry: { maxRetries: 0 } }).toArray().catch((e: unknown) => e)) as PartnerGatewayError;
    expect(err).to.be.instanceOf(PartnerGatewayError);
    expect(err.status).to.equal(503);
    expect(seen, 'page 2 sent once: the walk\'s maxRetries 0, not the client\'s 2').to.have.length(2);
    expect(waits).to.deep.equal([]);
  });
});

describe('sdk: operations', function () {
  it('sends its version in User-Agent, the version of sdk/package.json', async function () {
    const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'sdk', 'package.json'), 'utf8')) as { version: string };
    expect(SDK_VERSION).to.equal(manifest.version);
    const { client, seen } = clientOn([{ status: 200, body: { partner: {} } }]);
    await client.me();
    expect(seen[0]!.headers['user-agent']).to.equal(`partner-gateway-sdk/${manifest.version} node/${process.versions.node}`);
  });

  it('every operation of the generated table has a client method, and each method calls its own operation', async function () {
    const { client, seen } = clientOn([{ status: 200, body: { data: [], nextCursor: null, pagination: { page: 1, limit: 20, total: 0, totalPages: 0 }, count: 0 } }]);
    const methods = Object.entries(OPERATION_METHODS);
    expect(methods.map(([id]) => id).sort()).to.deep.equal(Object.keys(OPERATIONS).sort());
    for (const [operationId, name] of methods) {
      const operation = OPERATIONS[operationId as keyof typeof OPERATIONS];
      const parts = name.split('.');
      const owner = parts.slice(0, -1).reduce<any>((node, part) => node?.[part], client);
      const method = owner?.[parts[parts.length - 1]!]?.bind(owner);
      expect(method, name).to.be.a('function');
      if (/reveal|encryptPin/.test(name)) continue;
      const args = (operation.path.match(/\{[^}]+\}/g) ?? []).map((_, i) => `ARG${i}`);
      const result = method(...args, {}, {});
      if (typeof result?.pages === 'function') await result.firstPage();
      else await result;
      const last = seen[seen.length - 1]!;
      expect(last.method, name).to.equal(operation.method);
      expect(new URL(last.url).pathname.replace(/ARG\d/g, '{}'), name).to.equal(`/api/partner${operation.path.replace(/\{[^}]+\}/g, '{}')}`);
      expect(last.headers['idempotency-key'] !== undefined, `${name} sends a key`).to.equal(operation.idempotencyKey);
      expect(last.headers.authorization !== undefined, `${name} sends a token`).to.equal(operation.token);
    }
  });

  it('an operation that takes a body always gets one, {} when none is given (the gateway answers none 400 body_required); the others none', async function () {
    const { client, seen } = clientOn([{ status: 200, body: {} }]);
    const withBody = Object.entries(OPERATIONS).filter(([, operation]) => (operation as { body?: boolean }).body === true);
    expect(withBody.map(([id]) => id)).to.include.members(['set-spend-controls', 'reset-card-pin-tries', 'resend-event', 'rotate-webhook-secret', 'lock-card']);
    for (const [operationId, operation] of Object.entries(OPERATIONS)) {
      const path = Object.fromEntries((operation.path.match(/\{([^}]+)\}/g) ?? []).map((param) => [param.slice(1, -1), 'ARG']));
      await client.call(operationId as keyof typeof OPERATIONS, { path });
      const last = seen[seen.length - 1]!;
      const takesBody = (operation as { body?: boolean }).body === true;
      expect([last.body, last.headers['content-type']], operationId).to.deep.equal(takesBody ? ['{}', 'application/json'] : [undefined, undefined]);
      expect(takesBody, `${operationId}: only writes take a body`).to.equal(['POST', 'PUT', 'PATCH'].includes(operation.method));
    }
  });

  it('spend controls are never cleared by a missing body: without one the call rejects with a TypeError and sends nothing; {} clears', async function () {
    const { client, seen } = clientOn([{ status: 200, body: {} }]);
    for (const missing of [undefined, null]) {
      await expectRejection(client.cards.setSpendControls('CK1', missing as never), /pass \{\} to clear them/);
      await expectRejection(client.spendControls.set(missing as never), /pass \{\} to clear them/);
    }
    expect(seen).to.deep.equal([]);
    await client.spendControls.set({});
    expect(seen.map((s) => [s.method, new URL(s.url).pathname, s.body])).to.deep.equal([['PUT', '/api/partner/spend-controls', '{}']]);
  });
});

async function expectRejection(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err
  );
  expect(error).to.be.instanceOf(TypeError);
  expect((error as Error).message).to.match(message);
}
