import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { Pool, type Client } from 'undici';
import { GatewayError } from '../../../../gateway/errors';
import { createUpstreamClients, type CallContext } from '../../../../gateway/upstreams';
import { MAX_ANSWER_BYTES, UNNAMED_PARSER_FAILURE, UpstreamHttpClient, upstreamPath } from '../../../../gateway/upstreams/http-client';
import { CONNECT_TIMEOUT_MS, CountingClient, createUpstreamPool, MAX_SOCKETS_PER_ORIGIN, OriginGate } from '../../../../gateway/upstreams/agents';
import { readSettings } from '../../../../gateway/settings';
import { schema as operationSchema } from '../../../../policies/operation/schema';
import { schema as proxySchema } from '../../../../policies/proxy/schema';
import { captureLogger, MOCK_URLS, useMockAgent } from './helpers';

const ISSUER = MOCK_URLS.issuer;

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** Resolves one event-loop turn later (after the I/O callbacks of this one). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Resolves once `condition` holds, checked every few ms. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A port nothing listens on (bound, then released). */
async function unusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A real loopback server for what a mock agent cannot show (sockets, keep-alive, a late body). */
async function startServer(handler: http.RequestListener): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  const sockets = new Set<Socket>();
  let connections = 0;
  server.on('connection', (socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A raw loopback upstream (node:net) for answers node:http's server would never write: `answer`
 * gets each request's socket and its number on that socket (1 = the first), and writes what it wants.
 */
async function startRawServer(answer: (socket: Socket, nthOnSocket: number) => void): Promise<{ url: string; connections: () => number; requests: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let requests = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let text = '';
    let n = 0;
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      for (let end = text.indexOf('\r\n\r\n'); end !== -1; end = text.indexOf('\r\n\r\n')) {
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
        text = text.slice(end + 4 + length);
        requests += 1;
        n += 1;
        answer(socket, n);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const OK_ANSWER = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}';

/** The issuer and the processing system on one loopback origin (answering an empty list), the account proxy on another. */
async function sharedOriginClients() {
  const server = await startServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"data":[],"total":0,"page":1,"limit":20}');
  });
  const clients = createUpstreamClients(
    { issuer: `${server.url}/issuer`, processing: `${server.url}/processing`, accounts: 'http://127.0.0.1:9' },
    { timeoutMs: 1000, log: captureLogger().log },
  );
  return { server, clients };
}

describe('unit: upstreams/http-client', () => {
  const mock = useMockAgent();
  /** The mock upstream of `origin` (the issuer by default). */
  const upstream = (origin: string = ISSUER) => mock.agent.get(origin);
  /** A client on the mock agent (the issuer's by default). */
  const mocked = (timeoutMs: number, baseUrl: string = ISSUER, name: 'issuer' | 'processing' | 'accounts' = 'issuer') =>
    new UpstreamHttpClient(name, baseUrl, { timeoutMs, log: captureLogger().log, pool: mock.pool() });
  let client: UpstreamHttpClient;
  let lines: Array<Record<string, unknown>>;

  beforeEach(() => {
    const captured = captureLogger();
    lines = captured.lines;
    client = new UpstreamHttpClient('issuer', ISSUER, { timeoutMs: 1000, log: captured.log, pool: mock.pool() });
  });
  afterEach(() => client.close());

  describe('requests', () => {
    it('sends x-request-id and accept, and answers the parsed JSON of a 2xx', async () => {
      upstream()
        .intercept({ method: 'GET', path: '/cards/CK1', headers: (h) => h['x-request-id'] === 'req-1' && h.accept === 'application/json' && !('content-type' in h) })
        .reply(200, { cardKey: 'CK1' });
      expect(await client.request({ requestId: 'req-1' }, { method: 'GET', path: '/cards/CK1' })).to.deep.equal({ cardKey: 'CK1' });
    });

    it('sends a JSON body with content-type and content-length', async () => {
      const body = { embossedName: 'ADA LOVELACE', n: 1, nested: { ok: true } };
      const length = String(Buffer.byteLength(JSON.stringify(body)));
      upstream()
        .intercept({
          method: 'PATCH',
          path: '/cards/CK1/emboss-name',
          body: (sent) => String(sent) === JSON.stringify(body),
          headers: { 'content-type': 'application/json', 'content-length': length },
        })
        .reply(200, { ok: true });
      expect(await client.request({ requestId: 'r' }, { method: 'PATCH', path: '/cards/CK1/emboss-name', body })).to.deep.equal({ ok: true });
    });

    it('answers undefined for 204', async () => {
      upstream().intercept({ method: 'DELETE', path: '/x' }).reply(204, '');
      expect(await client.request({ requestId: 'r' }, { method: 'DELETE', path: '/x' })).to.equal(undefined);
    });

    it('keeps the base URL path as a prefix', async () => {
      const prefixed = mocked(1000, `${ISSUER}/api/v1/`);
      upstream().intercept({ method: 'GET', path: '/api/v1/cards/CK1' }).reply(200, {});
      await prefixed.request({ requestId: 'r' }, { method: 'GET', path: '/cards/CK1' });
      prefixed.close();
    });

    it('encodes path segments, dot segments included', () => {
      expect(upstreamPath`/cards/${'CK 1/../x?y#z'}/limits/${'daily%Purchase'}`).to.equal('/cards/CK%201%2F..%2Fx%3Fy%23z/limits/daily%25Purchase');
      expect(upstreamPath`/cards/${'..'}/status`).to.equal('/cards/%2E%2E/status');
      expect(upstreamPath`/cards/${'.'}`).to.equal('/cards/%2E');
      expect(() => upstreamPath`/cards/${''}`).to.throw(TypeError);
    });

    it('builds the query with URLSearchParams: + / = survive, undefined values are left out', async () => {
      const securityKey = 'MIIB+Ij/AN==';
      let sent: string | undefined;
      // The mock agent matches a query re-encoded and sorted; the exact target is read from what was sent.
      upstream()
        .intercept({ method: 'GET', path: (uri) => uri.startsWith('/cards/CK1/cvv?') })
        .reply((options) => {
          sent = options.path;
          return { statusCode: 200, data: { cvv: 'x' } };
        });
      await client.request({ requestId: 'r' }, { method: 'GET', path: '/cards/CK1/cvv', query: { expDate: '12/2031', securityKey, cardId: undefined, page: 2 } });
      expect(sent).to.equal('/cards/CK1/cvv?expDate=12%2F2031&securityKey=MIIB%2BIj%2FAN%3D%3D&page=2');
    });
  });

  describe('timing and logging', () => {
    it('adds each call duration to ctx.timing.upstreamLatencyMs, failed calls included', async () => {
      upstream().intercept({ method: 'GET', path: '/a' }).reply(200, {}).delay(30);
      upstream().intercept({ method: 'GET', path: '/b' }).reply(404, { errorCode: 'CARD_NOT_FOUND' }).delay(30);
      const ctx: CallContext = { requestId: 'r', timing: {} };
      await client.request(ctx, { method: 'GET', path: '/a' });
      const first = ctx.timing?.upstreamLatencyMs ?? 0;
      expect(first).to.be.at.least(25);
      await rejection(client.request(ctx, { method: 'GET', path: '/b' }));
      expect(ctx.timing?.upstreamLatencyMs).to.be.at.least(first + 25);
    });

    it('works without a timing sink', async () => {
      upstream().intercept({ method: 'GET', path: '/a' }).reply(200, {});
      await client.request({ requestId: 'r' }, { method: 'GET', path: '/a' });
    });

    it('logs one debug line per call: upstream, method, path without the query, status, ms; never bodies or queries', async () => {
      upstream().intercept({ method: 'GET', path: (uri) => uri.startsWith('/cards/CK1/cvv?') }).reply(200, { cvv: 'CIPHERTEXT-SECRET' });
      upstream().intercept({ method: 'POST', path: '/cards/CK1/authorize' }).reply(422, { errorCode: 'EXP_DATE_MISMATCH', message: 'PIN-BLOCK-SECRET rejected' });
      await client.request({ requestId: 'req-7' }, { method: 'GET', path: '/cards/CK1/cvv', query: { expDate: '12/2031', securityKey: 'KEY-SECRET' } });
      await rejection(client.request({ requestId: 'req-7' }, { method: 'POST', path: '/cards/CK1/authorize', body: { pin: 'PIN-BLOCK-SECRET' } }));
      expect(lines).to.have.length(2);
      expect(lines[0]).to.include({ level: 'debug', msg: 'upstream call', upstream: 'issuer', method: 'GET', path: '/cards/CK1/cvv', status: 200, requestId: 'req-7' });
      expect(lines[0].ms).to.be.a('number');
      expect(lines[1]).to.include({ method: 'POST', path: '/cards/CK1/authorize', status: 422 });
      const text = JSON.stringify(lines);
      for (const secret of ['SECRET', 'securityKey', 'expDate', '12/2031']) expect(text).not.to.include(secret);
    });

    it('logs a failed call without status, naming the failure kind', async () => {
      const port = await unusedPort();
      const captured = captureLogger();
      const refused = new UpstreamHttpClient('accounts', `http://127.0.0.1:${port}`, { timeoutMs: 1000, log: captured.log });
      await rejection(refused.request({ requestId: 'r' }, { method: 'POST', path: '/accounts', body: {} }));
      refused.close();
      expect(captured.lines).to.have.length(1);
      expect(captured.lines[0]).to.include({ upstream: 'accounts', method: 'POST', path: '/accounts', status: null, failure: 'connection' });
    });
  });

  describe('failures', () => {
    it('times out after timeoutMs (response headers late): 504 upstream_timeout', async () => {
      const fast = mocked(60);
      upstream().intercept({ method: 'GET', path: '/slow' }).reply(200, {}).delay(400);
      const ctx: CallContext = { requestId: 'r', timing: {} };
      const started = Date.now();
      const error = await rejection(fast.request(ctx, { method: 'GET', path: '/slow' }));
      expect(Date.now() - started).to.be.below(350);
      expect(error).to.include({ status: 504, code: 'upstream_timeout' });
      expect(error.extensions).to.deep.equal({ upstream: 'issuer' });
      expect(ctx.timing?.upstreamLatencyMs).to.be.at.least(50);
      fast.close();
    });

    it('a call may set its own timeout (a route\'s timeoutMs), shorter or longer than the client\'s', async () => {
      upstream().intercept({ method: 'GET', path: '/slow' }).reply(200, { ok: true }).delay(300);
      const error = await rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/slow', timeoutMs: 60 }));
      expect(error).to.include({ status: 504, code: 'upstream_timeout' });
      const fast = mocked(60);
      upstream().intercept({ method: 'GET', path: '/slow' }).reply(200, { ok: true }).delay(150);
      expect(await fast.request({ requestId: 'r' }, { method: 'GET', path: '/slow', timeoutMs: 2000 })).to.deep.equal({ ok: true });
      fast.close();
    });

    it('an aborted signal (the partner left) ends the call as a connection failure', async () => {
      upstream().intercept({ method: 'GET', path: '/slow' }).reply(200, {}).delay(2000);
      const partnerGone = new AbortController();
      const pending = rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/slow', signal: partnerGone.signal }));
      partnerGone.abort();
      expect(await pending).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform could not be reached (ABORTED)' });
    });

    it('any CallSignal (the proxy\'s PartnerGone) aborts like an AbortSignal, and keeps no listener once a call settled', async () => {
      const listeners = new Set<() => void>();
      const signal = {
        aborted: false,
        addEventListener: (_type: 'abort', listener: () => void) => void listeners.add(listener),
        removeEventListener: (_type: 'abort', listener: () => void) => void listeners.delete(listener),
      };
      upstream().intercept({ method: 'GET', path: '/fast' }).reply(200, { ok: true });
      expect(await client.request({ requestId: 'r' }, { method: 'GET', path: '/fast', signal })).to.deep.equal({ ok: true });
      expect(listeners.size).to.equal(0);
      upstream().intercept({ method: 'GET', path: '/slow' }).reply(200, {}).delay(2000);
      const pending = rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/slow', signal }));
      expect(listeners.size).to.equal(1);
      signal.aborted = true;
      for (const listener of [...listeners]) listener();
      expect(await pending).to.include({ status: 502, code: 'upstream_error' });
      expect(listeners.size).to.equal(0);
    });

    it('the timeout covers the body too (whole call)', async () => {
      // Headers at once, the body 400 ms later: a real server, as the mock agent answers in one piece.
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
        res.flushHeaders();
        setTimeout(() => res.end('{"data":[]}'), 400).unref();
      });
      const fast = new UpstreamHttpClient('processing', server.url, { timeoutMs: 60, log: captureLogger().log });
      const started = Date.now();
      const error = await rejection(fast.request({ requestId: 'r' }, { method: 'GET', path: '/transactions', query: { cardId: 'CK1' } }));
      expect(Date.now() - started).to.be.below(350);
      expect(error).to.include({ status: 504, code: 'upstream_timeout' });
      fast.close();
      await server.close();
    });

    it('connection refused: 502 upstream_error naming ECONNREFUSED', async () => {
      const port = await unusedPort();
      const refused = new UpstreamHttpClient('accounts', `http://127.0.0.1:${port}`, { timeoutMs: 1000, log: captureLogger().log });
      const error = await rejection(refused.request({ requestId: 'r' }, { method: 'GET', path: '/accounts/1' }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The account-creation service could not be reached (ECONNREFUSED)' });
      expect(error.extensions).to.deep.equal({ upstream: 'accounts' });
      refused.close();
    });

    it('an invalid header value is a programming error, not an upstream failure: the call rejects with it, nothing is sent', async () => {
      let received = 0;
      const server = await startServer((_req, res) => {
        received += 1;
        res.end('{}');
      });
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 1000, log: captureLogger().log });
      let error: unknown;
      await real.request({ requestId: 'bad\nid' }, { method: 'GET', path: '/cards/CK1' }).catch((err: unknown) => {
        error = err;
      });
      expect(error).to.be.instanceOf(Error).and.not.to.be.instanceOf(GatewayError);
      expect((error as { code?: string }).code).to.equal('UND_ERR_INVALID_ARG');
      expect(received).to.equal(0);
      real.close();
      await server.close();
    });

    it('a connection reset: 502 upstream_error', async () => {
      upstream().intercept({ method: 'POST', path: '/cards' }).replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
      const error = await rejection(client.request({ requestId: 'r' }, { method: 'POST', path: '/cards', body: {} }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform could not be reached (ECONNRESET)' });
    });

    for (const [description, body] of [
      ['a 2xx body that is not JSON', '{"cardKey": "CK1", <<oops>>'],
      ['an empty 200 body', ''],
    ] as const) {
      it(`${description}: 502 upstream_error (malformed), without quoting the body`, async () => {
        upstream().intercept({ method: 'GET', path: '/cards/CK1' }).reply(200, body, { headers: { 'content-type': 'application/json' } });
        const error = await rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/cards/CK1' }));
        expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform answered with a malformed body' });
        expect(error.cause).to.equal(undefined);
      });
    }

    it('a card number anywhere in an answer is refused, unless the caller picks and checks its fields itself (a transform)', async () => {
      const answer = { cardKey: 'CK1', statusCode: '00', note: 'card 5355 7099 9999 9994' };
      upstream().intercept({ method: 'GET', path: '/cards/CK1/status' }).reply(200, answer).times(2);
      const refused = await rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/cards/CK1/status' }));
      expect(refused).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform answered card data where none is allowed' });
      expect(await client.request({ requestId: 'r' }, { method: 'GET', path: '/cards/CK1/status', fieldsCheckedByCaller: true })).to.deep.equal(answer);
    });

    it('one size cap (1 MiB) for every caller: an answer just under it is read, one just over it is 502 upstream_error', async () => {
      expect(MAX_ANSWER_BYTES).to.equal(1024 * 1024);
      const padding = (extra: number) => JSON.stringify({ data: 'x'.repeat(MAX_ANSWER_BYTES - '{"data":""}'.length + extra) });
      upstream().intercept({ method: 'GET', path: '/fits' }).reply(200, padding(0));
      expect(((await client.request<{ data: string }>({ requestId: 'r' }, { method: 'GET', path: '/fits' })).data)).to.have.length.above(1000);
      upstream().intercept({ method: 'GET', path: '/huge' }).reply(200, padding(1));
      const error = await rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/huge', fieldsCheckedByCaller: true }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform answered with a malformed body' });
    });

    const statuses: Array<{ status: number; errorCode?: string; expected: number; code: string }> = [
      { status: 400, errorCode: 'VALIDATION_ERROR', expected: 422, code: 'upstream_rejected' },
      { status: 422, errorCode: 'EXP_DATE_MISMATCH', expected: 422, code: 'upstream_rejected' },
      { status: 413, errorCode: 'PAYLOAD_TOO_LARGE', expected: 422, code: 'upstream_rejected' },
      { status: 404, errorCode: 'CARD_NOT_FOUND', expected: 404, code: 'not_found' },
      { status: 409, errorCode: 'CARD_CLOSED', expected: 409, code: 'conflict' },
      { status: 401, expected: 502, code: 'upstream_error' },
      { status: 403, expected: 502, code: 'upstream_error' },
      { status: 500, errorCode: 'INTERNAL_ERROR', expected: 502, code: 'upstream_error' },
      { status: 503, errorCode: 'SERVICE_UNAVAILABLE', expected: 502, code: 'upstream_error' },
    ];
    for (const s of statuses) {
      it(`status ${s.status} ${s.errorCode ?? ''}→ ${s.expected} ${s.code}, without the upstream's message`, async () => {
        upstream()
          .intercept({ method: 'POST', path: '/cards/CK1/status' })
          .reply(s.status, { errorCode: s.errorCode, message: 'card 5355701234567890 cvv 123 SECRET-TEXT', details: [{ path: '/expDate', message: 'SECRET-TEXT' }] });
        const error = await rejection(client.request({ requestId: 'r' }, { method: 'POST', path: '/cards/CK1/status', body: { action: 'lock' } }));
        expect(error).to.include({ status: s.expected, code: s.code });
        expect(error.extensions).to.deep.equal(s.errorCode ? { upstream: 'issuer', upstreamCode: s.errorCode } : { upstream: 'issuer' });
        if (s.errorCode) expect(error.message).to.include(`(${s.errorCode})`);
        expect(JSON.stringify({ ...error, message: error.message })).not.to.match(/SECRET|5355701234567890|cvv/);
      });
    }

    it('a 503 passes on the upstream Retry-After as the 502 Retry-After', async () => {
      upstream().intercept({ method: 'GET', path: '/a' }).reply(503, { errorCode: 'SERVICE_UNAVAILABLE', message: 'down' }, { headers: { 'Retry-After': '7' } });
      const error = await rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/a' }));
      expect(error.headers).to.deep.equal({ 'Retry-After': '7' });
    });

    it('an error body that is not JSON still maps by status, without upstreamCode', async () => {
      upstream().intercept({ method: 'GET', path: '/a' }).reply(502, '<html>Bad gateway SECRET</html>', { headers: { 'content-type': 'text/html' } });
      const error = await rejection(client.request({ requestId: 'r' }, { method: 'GET', path: '/a' }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform failed (HTTP 502)' });
      expect(error.extensions).to.deep.equal({ upstream: 'issuer' });
    });
  });

  describe('close', () => {
    it('close() destroys the pools; later calls fail as upstream_error without connecting', async () => {
      const clients = createUpstreamClients(MOCK_URLS, { timeoutMs: 1000, log: captureLogger().log, dispatcher: mock.agent });
      let sent = 0;
      upstream()
        .intercept({ method: 'GET', path: '/cards/CK1' })
        .reply(() => {
          sent += 1;
          return { statusCode: 200, data: { cardKey: 'CK1' } };
        })
        .persist();
      await clients.issuer.getCard({ requestId: 'r' }, 'CK1');
      clients.close();
      const error = await rejection(clients.issuer.getCard({ requestId: 'r' }, 'CK1'));
      expect(error).to.be.instanceOf(GatewayError).with.property('code', 'upstream_error');
      expect(error.message).to.equal('The card issuer platform could not be reached (CLIENT_CLOSED)');
      expect(sent, 'nothing sent after close').to.equal(1);
    });
  });

  describe('pools and connections', () => {
    it('one keep-alive pool per client, bounded to 64 connections unless told otherwise', () => {
      const own = new UpstreamHttpClient('issuer', ISSUER, { timeoutMs: 1000, log: captureLogger().log });
      expect(own.pool.connections).to.equal(MAX_SOCKETS_PER_ORIGIN).and.to.equal(64);
      expect(own.pool.dispatcher).to.be.instanceOf(Pool);
      own.close();
      const bounded = new UpstreamHttpClient('issuer', ISSUER, { timeoutMs: 1000, log: captureLogger().log, maxSockets: 3 });
      expect(bounded.pool.connections).to.equal(3);
      bounded.close();
    });

    it('createUpstreamClients: one pool per origin, shared by the upstreams it serves; close() destroys it', async () => {
      const { server, clients } = await sharedOriginClients();
      expect(clients.http.issuer.pool).to.equal(clients.http.processing.pool);
      expect(clients.http.accounts.pool).to.not.equal(clients.http.issuer.pool);
      expect(clients.http.issuer.pool.connections).to.equal(MAX_SOCKETS_PER_ORIGIN);
      await clients.http.issuer.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
      await nextTurn();
      await clients.processing.listTransactions({ requestId: 'b' }, { cardId: 'CK1', page: 1, limit: 20 });
      expect(server.connections(), 'both upstreams rode one socket').to.equal(1);
      clients.close();
      expect(await rejection(clients.processing.listTransactions({ requestId: 'c' }, { cardId: 'CK1', page: 1, limit: 20 }))).to.include({ status: 502, code: 'upstream_error' });
      await server.close();
    });

    it('reuses kept-alive connections for sequential calls: one when a call starts a turn after the last answer, at most two back to back', async () => {
      const server = await startServer((_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      });
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 1000, log: captureLogger().log });
      for (let i = 0; i < 3; i += 1) {
        await real.request({ requestId: `r${i}` }, { method: 'GET', path: '/cards/CK1' });
        await nextTurn();
      }
      expect(server.connections()).to.equal(1);
      // undici reuses a connection one event-loop turn after its answer: a call made at once takes another.
      for (let i = 0; i < 6; i += 1) await real.request({ requestId: `s${i}` }, { method: 'GET', path: '/cards/CK1' });
      expect(server.connections()).to.equal(2);
      real.close();
      await server.close();
    });

    it('never opens more than maxSockets connections at once', async () => {
      let active = 0;
      let peak = 0;
      const server = await startServer((_req, res) => {
        active += 1;
        peak = Math.max(peak, active);
        setTimeout(() => {
          active -= 1;
          res.setHeader('content-type', 'application/json');
          res.end('{}');
        }, 20);
      });
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log, maxSockets: 2 });
      await Promise.all(Array.from({ length: 8 }, (_, i) => real.request({ requestId: `r${i}` }, { method: 'GET', path: '/x' })));
      expect(peak).to.equal(2);
      expect(server.connections()).to.equal(2);
      real.close();
      await server.close();
    });

    it('retries a GET once when a reused keep-alive socket was closed by the upstream; never a POST', async () => {
      const perSocket = new WeakMap<Socket, number>();
      let received = 0;
      const server = await startServer((req, res) => {
        received += 1;
        const n = (perSocket.get(req.socket) ?? 0) + 1;
        perSocket.set(req.socket, n);
        // Every second request on a socket finds it closed, like an idle timeout racing a reuse.
        if (n >= 2) {
          req.socket.destroy();
          return;
        }
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      });
      const { log, lines } = captureLogger();
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log });
      await real.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
      // One turn later the answered socket is free again: b goes out on it (reused) and finds it closed.
      await nextTurn();
      expect(await real.request({ requestId: 'b' }, { method: 'GET', path: '/x' })).to.deep.equal({ ok: true });
      expect(lines[1], 'b sent twice').to.include({ requestId: 'b', status: 200, attempts: 2 });
      expect(received).to.equal(3);
      await nextTurn();
      // c goes out on b's second connection, reused too: the upstream closes it, and a POST is not sent again.
      const error = await rejection(real.request({ requestId: 'c' }, { method: 'POST', path: '/x', body: {} }));
      expect(error).to.include({ status: 502, code: 'upstream_error' });
      expect(received, 'the POST sent once').to.equal(4);
      expect(lines[2]).to.not.have.property('attempts');
      expect(server.connections()).to.equal(2);
      real.close();
      await server.close();
    });

    it('writes the request head: host and connection, then accept, x-request-id, idempotency-key and the body headers', async () => {
      const heads: string[] = [];
      const raw = net.createServer((socket) => {
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('latin1');
          if (!text.includes('\r\n\r\n')) return;
          heads.push(text);
          text = '';
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        });
      });
      await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
      const port = (raw.address() as AddressInfo).port;
      const real = new UpstreamHttpClient('issuer', `http://127.0.0.1:${port}/base`, { timeoutMs: 2000, log: captureLogger().log });
      await real.request({ requestId: 'rid-1' }, { method: 'GET', path: '/cards/X/status', query: { a: '1' } });
      await real.request({ requestId: 'rid-2' }, { method: 'POST', path: '/cards', body: { x: 1 }, idempotencyKey: 'op-1' });
      await real.request({ requestId: '' }, { method: 'DELETE', path: '/cards/Y' });
      real.close();
      await new Promise((resolve) => raw.close(resolve));
      const host = `127.0.0.1:${port}`;
      // undici writes host and connection first; a body-less DELETE goes without content-length (no chunked encoding either).
      expect(heads).to.deep.equal([
        `GET /base/cards/X/status?a=1 HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\naccept: application/json\r\nx-request-id: rid-1\r\n\r\n`,
        `POST /base/cards HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\naccept: application/json\r\nx-request-id: rid-2\r\nidempotency-key: op-1\r\ncontent-type: application/json\r\ncontent-length: 7\r\n\r\n{"x":1}`,
        `DELETE /base/cards/Y HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\naccept: application/json\r\n\r\n`,
      ]);
    });

    it('a connection dropped mid-body: 502 upstream_error naming ECONNRESET, and a GET is not sent again once its answer began', async () => {
      let received = 0;
      const server = await startServer((req, res) => {
        received += 1;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
        res.write('{"cardKey":"CK1",', () => req.socket.destroy());
      });
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log });
      const error = await rejection(real.request({ requestId: 'r' }, { method: 'GET', path: '/cards/CK1' }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform could not be reached (ECONNRESET)' });
      expect(received).to.equal(1);
      real.close();
      await server.close();
    });

    it('a chunked answer with Connection: close cut short: 502 naming ECONNRESET as node:http did, the GET not sent again', async () => {
      const server = await startRawServer((socket) => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"a":', () => socket.end());
      });
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log });
      const error = await rejection(real.request({ requestId: 'r' }, { method: 'GET', path: '/x' }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform could not be reached (ECONNRESET)' });
      expect(server.requests()).to.equal(1);
      real.close();
      await server.close();
    });

    it('a GET whose fresh connection is closed or reset before any answer byte is not sent again (only a reused one is)', async () => {
      for (const close of ['FIN', 'RST'] as const) {
        const server = await startRawServer((socket) => (close === 'FIN' ? socket.end() : socket.resetAndDestroy()));
        const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log });
        const error = await rejection(real.request({ requestId: 'a' }, { method: 'GET', path: '/x' }));
        expect(error, close).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform could not be reached (ECONNRESET)' });
        expect(server.requests(), `${close}: sent once`).to.equal(1);
        expect(server.connections(), close).to.equal(1);
        real.close();
        await server.close();
      }
    });

    it('a GET on a reused keep-alive connection the upstream closed or reset before answering is sent once more, on a new connection', async () => {
      for (const close of ['FIN', 'RST'] as const) {
        // The second request on each connection finds it closed, like an idle timeout racing a reuse.
        const server = await startRawServer((socket, n) => {
          if (n === 1) socket.write(OK_ANSWER);
          else if (close === 'FIN') socket.end();
          else socket.resetAndDestroy();
        });
        const { log, lines } = captureLogger();
        const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log });
        await real.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
        await nextTurn();
        expect(await real.request({ requestId: 'b' }, { method: 'GET', path: '/x' }), close).to.deep.equal({ ok: true });
        expect(server.requests(), `${close}: first, then the GET twice`).to.equal(3);
        expect(server.connections(), close).to.equal(2);
        expect(lines[1], close).to.include({ status: 200, attempts: 2 });
        real.close();
        await server.close();
      }
    });
  });

  describe('retry rule: informational answers, close()', () => {
    it('a 103 Early Hints is not the answer: a reused connection closed after it still sends the GET once more', async () => {
      const server = await startRawServer((socket, n) => {
        if (n === 1) socket.write(OK_ANSWER);
        else socket.write('HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n', () => socket.end());
      });
      const { log, lines } = captureLogger();
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log });
      await real.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
      await nextTurn();
      expect(await real.request({ requestId: 'b' }, { method: 'GET', path: '/x' })).to.deep.equal({ ok: true });
      expect(server.requests(), 'first, then the GET twice').to.equal(3);
      expect(lines[1]).to.include({ status: 200, attempts: 2 });
      real.close();
      await server.close();
    });

    it('a client closed while its GET is in flight does not send it again (its pool shared with a sibling)', async () => {
      let held: Socket | undefined;
      const server = await startRawServer((socket, n) => {
        if (n === 1) socket.write(OK_ANSWER);
        else held = socket;
      });
      const pool = createUpstreamPool(server.url);
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log, pool });
      await real.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
      await nextTurn();
      const pending = rejection(real.request({ requestId: 'b' }, { method: 'GET', path: '/x' }));
      await until(() => held !== undefined);
      real.close();
      held!.end();
      expect((await pending).message).to.equal('The card issuer platform could not be reached (ECONNRESET)');
      expect(server.requests(), 'the GET not sent again after close()').to.equal(2);
      pool.destroy();
      await server.close();
    });
  });

  describe('malformed answers (real loopback upstreams): never sent again, the 502 names the parser failure', () => {
    const cases: Array<{ what: string; answer: string; code: string }> = [
      { what: 'an invalid status line', answer: 'HTTP/1.1 2x0 OK\r\n\r\n', code: 'HPE_INVALID_STATUS' },
      { what: 'a bad header line', answer: 'HTTP/1.1 200 OK\r\nbad header\r\ncontent-length: 2\r\n\r\n{}', code: 'HPE_INVALID_HEADER_TOKEN' },
      { what: 'not HTTP at all', answer: 'garbage\r\n\r\n', code: 'HPE_INVALID_CONSTANT' },
      { what: 'a bad chunk size', answer: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', code: 'HPE_INVALID_CHUNK_SIZE' },
      { what: 'a header block over 16 KiB', answer: `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(20_000)}\r\ncontent-length: 2\r\n\r\n{}`, code: 'HPE_HEADER_OVERFLOW' },
      // undici drops llhttp's reason once a content-length header was read (a content-length mismatch).
      { what: 'a bad header line after content-length', answer: 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nbad header\r\n\r\n{}', code: UNNAMED_PARSER_FAILURE },
      { what: 'two content-length headers', answer: 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}', code: UNNAMED_PARSER_FAILURE },
      // undici refuses an unsolicited 100 Continue (docs/decisions.md); node:http read the answer after it.
      { what: 'an unsolicited 100 Continue', answer: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}', code: UNNAMED_PARSER_FAILURE },
    ];
    for (const c of cases) {
      it(`${c.what}, on a reused connection: 502 naming ${c.code}, the GET sent once`, async () => {
        // The first request on each connection is answered well, so that the malformed answer comes on a reused one.
        const server = await startRawServer((socket, n) => socket.write(n === 1 ? OK_ANSWER : c.answer));
        const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log });
        await real.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
        await nextTurn();
        const error = await rejection(real.request({ requestId: 'b' }, { method: 'GET', path: '/x' }));
        expect(error).to.include({ status: 502, code: 'upstream_error', message: `The card issuer platform could not be reached (${c.code})` });
        expect(server.requests(), 'the GET was not sent again').to.equal(2);
        expect(server.connections()).to.equal(1);
        real.close();
        await server.close();
      });
    }

    it('names the parser failure of each malformed answer as node:http\'s client names it for the same bytes', async () => {
      const chunked = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n';
      const answers = [
        'HTTP/1.1 2x0 OK\r\n\r\n', 'HTTP/1.1 1000 OK\r\n\r\n', 'HTTP/1.1 200\n\r\n', 'HTTP/1.x 200 OK\r\n\r\n', 'HTTP/x.1 200 OK\r\n\r\n',
        'HTTP/11 200 OK\r\n\r\n', 'HTTP/1.1200 OK\r\n\r\n', 'HTTX/1.1 200 OK\r\n\r\n', 'HTTP/1.1 200 OK\r\n x: a\r\n\r\n',
        'HTTP/1.1 200 OK\nx: a\n\n', 'HTTP/1.1 200 OK\rX\n\r\n', 'HTTP/1.1 200 OK\r\nx: a\r\n\rX', 'HTTP/1.1 200 OK\r\nbad header\r\n\r\n',
        'HTTP/1.1 200 OK\r\nx: a\x01b\r\n\r\n', 'HTTP/1.1 200 OK\r\nx: a\nb\r\n\r\n', 'HTTP/1.1 200 OK\r\nx: a\rb\r\n\r\n',
        'HTTP/1.1 200 OK\r\ncontent-length: abc\r\n\r\n', 'HTTP/1.1 200 OK\r\ncontent-length:\r\n\r\n',
        'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 2\r\n\r\n{}',
        `${chunked}zz\r\n`, `${chunked}ffffffffffffffffffff\r\n`, `${chunked}2\rX`, `${chunked}2\r\n{}XX`, `${chunked}2\n{}\r\n0\r\n\r\n`,
        `${chunked}2\r\n{}\n0\r\n\r\n`, `${chunked}2;\x01\r\n`, `${chunked}2;a=\x01\r\n`, `${chunked}2;a="\x01"\r\n`, `${chunked}2;a="b"x\r\n`,
        `${chunked}2;a="\\\x01"\r\n`, `${chunked}2;a\n`, `${chunked}2;a=b\n`, `${chunked}2\r\n{}\r\n0\r\nx y\r\n\r\n`,
        // A folded header line, an empty chunk extension, a space before a read header's colon.
        'HTTP/1.1 200 OK\r\nx: a\r\n b\r\n\r\n', `${chunked}2;\r\n`, 'HTTP/1.1 200 OK\r\ncontent-length : 2\r\n\r\n{}',
      ];
      for (const answer of answers) {
        const server = await startRawServer((socket) => socket.write(answer, () => setTimeout(() => socket.end(), 20)));
        const port = Number(new URL(server.url).port);
        const named = await new Promise<string>((resolve) => {
          const request = http.get({ host: '127.0.0.1', port, agent: false }, (response) => {
            response.on('error', (err: NodeJS.ErrnoException) => resolve(String(err.code)));
            response.resume();
            response.on('end', () => resolve('answered'));
          });
          request.on('error', (err: NodeJS.ErrnoException) => resolve(String(err.code)));
        });
        expect(named, JSON.stringify(answer)).to.match(/^HPE_/);
        const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log });
        const error = await rejection(real.request({ requestId: 'r' }, { method: 'GET', path: '/x' }));
        expect(error.message, JSON.stringify(answer)).to.equal(`The card issuer platform could not be reached (${named})`);
        real.close();
        await server.close();
      }
    });

    it('an unsolicited 100 Continue before a POST\'s 201: 502, the POST sent once (a known difference from node:http)', async () => {
      const server = await startRawServer((socket) => {
        socket.write('HTTP/1.1 100 Continue\r\n\r\n');
        setImmediate(() => socket.write('HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}'));
      });
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log });
      const error = await rejection(real.request({ requestId: 'r' }, { method: 'POST', path: '/cards', body: { a: 1 }, idempotencyKey: 'op-1' }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: `The card issuer platform could not be reached (${UNNAMED_PARSER_FAILURE})` });
      expect(server.requests()).to.equal(1);
      real.close();
      await server.close();
    });

    it('a TLS protocol failure is EPROTO, as node:http named it', async () => {
      // A plain TCP server behind an https URL: its bytes are no TLS record.
      const sockets = new Set<Socket>();
      const server = net.createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.end('garbage-not-tls\r\n\r\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const real = new UpstreamHttpClient('issuer', `https://127.0.0.1:${(server.address() as AddressInfo).port}`, { timeoutMs: 2000, log: captureLogger().log });
      const error = await rejection(real.request({ requestId: 'r' }, { method: 'GET', path: '/x' }));
      expect(error).to.include({ status: 502, code: 'upstream_error', message: 'The card issuer platform could not be reached (EPROTO)' });
      real.close();
      // The server's half-closed socket outlives the client's (node:http's client left it so too).
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });
  });

  describe('queued calls, connect timeout, close', () => {
    it('calls that time out while queued for a connection are never sent and leave the keep-alive connection open', async () => {
      const server = await startRawServer((socket) => setTimeout(() => socket.write(OK_ANSWER), 150));
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log, maxSockets: 1 });
      const first = real.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
      const queued = await Promise.all([1, 2, 3].map((i) => rejection(real.request({ requestId: `q${i}` }, { method: 'POST', path: '/x', body: {}, timeoutMs: 50 }))));
      for (const error of queued) expect(error).to.include({ status: 504, code: 'upstream_timeout' });
      expect(real.pool.gate.waiting, 'the ended calls left the queue at once').to.equal(0);
      expect(await first).to.deep.equal({ ok: true });
      await nextTurn();
      expect(await real.request({ requestId: 'b' }, { method: 'GET', path: '/x' })).to.deep.equal({ ok: true });
      expect(server.requests(), 'the queued POSTs were never sent').to.equal(2);
      expect(server.connections(), 'one connection throughout').to.equal(1);
      real.close();
      await server.close();
    });

    it('a call the partner abandons while it waits for a slot leaves the queue and is never sent', async () => {
      const server = await startRawServer((socket) => setTimeout(() => socket.write(OK_ANSWER), 50));
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log, maxSockets: 1 });
      const first = real.request({ requestId: 'a' }, { method: 'GET', path: '/x' });
      const partner = new AbortController();
      const abandoned = rejection(real.request({ requestId: 'q' }, { method: 'POST', path: '/x', body: {}, signal: partner.signal }));
      expect(real.pool.gate.waiting).to.equal(1);
      partner.abort();
      expect((await abandoned).message).to.equal('The card issuer platform could not be reached (ABORTED)');
      expect(real.pool.gate.waiting).to.equal(0);
      expect(await first).to.deep.equal({ ok: true });
      await until(() => real.pool.gate.outstanding === 0);
      expect(server.requests(), 'the abandoned POST was never sent').to.equal(1);
      real.close();
      await server.close();
    });

    it('calls above the limit wait their turn in order and all complete', async () => {
      const order: string[] = [];
      const held: http.ServerResponse[] = [];
      // Answers in pairs: both connections are busy at once before either answers.
      const server = await startServer((req, res) => {
        order.push(String(req.headers['x-request-id']));
        held.push(res);
        if (held.length < 2) return;
        for (const response of held.splice(0)) {
          response.setHeader('content-type', 'application/json');
          response.end('{"ok":true}');
        }
      });
      const real = new UpstreamHttpClient('issuer', server.url, { timeoutMs: 2000, log: captureLogger().log, maxSockets: 2 });
      const calls = Array.from({ length: 8 }, (_, i) => real.request({ requestId: `r${i}` }, { method: 'GET', path: '/x' }));
      expect(real.pool.gate.outstanding).to.equal(2);
      expect(real.pool.gate.waiting).to.equal(6);
      for (const answer of await Promise.all(calls)) expect(answer).to.deep.equal({ ok: true });
      expect(order.slice(0, 2).sort()).to.deep.equal(['r0', 'r1']);
      expect(order.slice(2)).to.deep.equal(['r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
      expect(server.connections()).to.equal(2);
      expect(real.pool.gate.waiting).to.equal(0);
      real.close();
      await server.close();
    });

    it('an upstream that never accepts: at most `connections` connection attempts at once, and calls that ended are neither kept nor sent later', async () => {
      const server = await startRawServer((socket) => socket.write(OK_ANSWER));
      const port = Number(new URL(server.url).port);
      let blackHoled = true;
      let attempts = 0;
      let connecting = 0;
      let peak = 0;
      let peakQueued = 0;
      const LIMIT = 2;
      const CONNECT_TIMEOUT = 60;
      // undici's pool with a connector standing for a black-holed address (its SYNs never answered,
      // undici's connect timeout ending each attempt), then for the upstream back on line.
      const dispatcher = new Pool(server.url, {
        connections: LIMIT,
        pipelining: 1,
        headersTimeout: 0,
        bodyTimeout: 0,
        factory: (origin, options) => new CountingClient(origin, options as Client.Options),
        connect: ((_options: unknown, callback: (err: Error | null, socket: Socket | null) => void) => {
          attempts += 1;
          peakQueued = Math.max(peakQueued, dispatcher.stats.queued);
          if (!blackHoled) {
            const socket = net.connect(port, '127.0.0.1');
            socket.once('connect', () => callback(null, socket));
            socket.once('error', (err) => callback(err, null));
            return;
          }
          connecting += 1;
          peak = Math.max(peak, connecting);
          setTimeout(() => {
            connecting -= 1;
            peakQueued = Math.max(peakQueued, dispatcher.stats.queued);
            callback(Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), null);
          }, CONNECT_TIMEOUT);
        }) as unknown as Pool.Options['connect'],
      });
      const gate = new OriginGate(dispatcher, LIMIT);
      const real = new UpstreamHttpClient('issuer', server.url, {
        timeoutMs: 20,
        log: captureLogger().log,
        pool: { dispatcher, connections: LIMIT, gate, destroy: () => void dispatcher.destroy().catch(() => undefined) },
      });
      // A call every 5 ms over about five connect-timeout periods, each ended by its own 20 ms timer.
      const calls: Array<Promise<GatewayError>> = [];
      for (let i = 0; i < 60; i += 1) {
        calls.push(rejection(real.request({ requestId: `r${i}` }, { method: 'GET', path: '/x' })));
        peakQueued = Math.max(peakQueued, dispatcher.stats.queued);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      for (const error of await Promise.all(calls)) expect(error).to.include({ status: 504, code: 'upstream_timeout' });
      expect(gate.waiting, 'ended calls left the queue').to.equal(0);
      await until(() => gate.outstanding === 0 && connecting === 0);
      expect(peak, 'connection attempts at once').to.equal(LIMIT);
      // undici's own queue holds a request only for the moment between a slot's release and a connection's 'drain'.
      expect(peakQueued, 'requests waiting in undici\'s queue').to.be.at.most(LIMIT);
      expect(dispatcher.stats.queued).to.equal(0);
      const attemptsWhenIdle = attempts;
      blackHoled = false;
      expect(await real.request({ requestId: 'back' }, { method: 'GET', path: '/x', timeoutMs: 5000 })).to.deep.equal({ ok: true });
      await nextTurn();
      expect(attempts, 'one connection for the new call, none for the ended ones').to.equal(attemptsWhenIdle + 1);
      expect(server.requests(), 'only the new call was sent').to.equal(1);
      real.close();
      await dispatcher.destroy();
      await server.close();
    });

    it('undici\'s connect timeout is the longest budget a call can have, so the call\'s own timer always ends it first', () => {
      const longest = Math.max(
        readSettings({ UPSTREAM_TIMEOUT_MS: '120000' }).upstreamTimeoutMs,
        (operationSchema.properties as Record<string, { maximum: number }>).timeoutMs!.maximum,
        (proxySchema.properties as Record<string, { maximum: number }>).timeoutMs!.maximum,
      );
      expect(() => readSettings({ UPSTREAM_TIMEOUT_MS: String(longest + 1) })).to.throw(/UPSTREAM_TIMEOUT_MS/);
      expect(CONNECT_TIMEOUT_MS).to.be.at.least(longest);
      const pool = createUpstreamPool('http://127.0.0.1:9');
      expect(pool.connectTimeoutMs).to.equal(CONNECT_TIMEOUT_MS);
      pool.destroy();
    });

    it('close() of one client leaves a sibling sharing its pool working; the closed one fails without connecting', async () => {
      const { server, clients } = await sharedOriginClients();
      clients.http.issuer.close();
      const error = await rejection(clients.http.issuer.request({ requestId: 'a' }, { method: 'GET', path: '/x' }));
      expect(error.message).to.equal('The card issuer platform could not be reached (CLIENT_CLOSED)');
      expect(server.connections(), 'nothing sent by the closed client').to.equal(0);
      expect(await clients.processing.listTransactions({ requestId: 'b' }, { cardId: 'CK1', page: 1, limit: 20 })).to.include({ total: 0 });
      clients.close();
      await server.close();
    });
  });
});
