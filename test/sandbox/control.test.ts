import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startSandboxes, type RecordedRequest, type Sandboxes } from '../../sandbox';
import { call, type ErrorBody } from './http-client';

const ACCOUNT = {
  partnerId: 'p-1',
  onboardingId: '65f000000000000000000001',
  firstName: 'Ada',
  middleName: 'Marie',
  lastName: 'Lovelace',
  country: 'GB',
  birthDate: '1990-12-10',
  email: 'ada@example.com',
  phone: '+447700900123',
  idType: 'PASSPORT',
  passportNumber: 'X1234567',
};

describe('sandbox control endpoints and fault injection', () => {
  let sandboxes: Sandboxes;
  let issuer: string;

  before(async () => {
    sandboxes = await startSandboxes({ hangMs: 150 });
    issuer = sandboxes.issuer.url;
  });
  after(() => sandboxes.close());
  beforeEach(async () => {
    await Promise.all([sandboxes.issuer, sandboxes.processing, sandboxes.accounts].map((s) => call(`${s.url}/__sandbox/reset`, { method: 'POST' })));
  });

  it('starts all three on free ports of 127.0.0.1 and reports each name', async () => {
    const urls = [sandboxes.issuer.url, sandboxes.processing.url, sandboxes.accounts.url];
    expect(new Set(urls).size).to.equal(3);
    for (const [name, url] of [['issuer', issuer], ['processing', sandboxes.processing.url], ['accounts', sandboxes.accounts.url]]) {
      expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { status, body } = await call(`${url}/__sandbox/health`);
      expect(status).to.equal(200);
      expect(body).to.deep.equal({ sandbox: name, status: 'ok' });
    }
  });

  it('echoes x-request-id and records every request with method, path, query, body and request id', async () => {
    const created = await call(`${issuer}/cards`, {
      method: 'POST',
      headers: { 'x-request-id': 'req-123' },
      body: { type: 'virtual', clientCode: '10000001', expDate: '12/2031', currency: 'EUR', productCode: 'P-STD' },
    });
    expect(created.status).to.equal(201);
    expect(created.headers.get('x-request-id')).to.equal('req-123');
    const plain = await call(`${issuer}/cards/CK0000000000000000?x=1`);
    expect(plain.headers.get('x-request-id')).to.equal(null);

    const { body: recorded } = await call<RecordedRequest[]>(`${issuer}/__sandbox/requests`);
    expect(recorded).to.have.length(2);
    expect(recorded[0]).to.include({ method: 'POST', path: '/cards', requestId: 'req-123' });
    expect(recorded[0].body).to.deep.include({ type: 'virtual', clientCode: '10000001' });
    expect(recorded[0].at).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(recorded[1]).to.deep.include({ method: 'GET', path: '/cards/CK0000000000000000', query: { x: '1' }, body: null, requestId: null });

    const filtered = await call<RecordedRequest[]>(`${issuer}/__sandbox/requests?method=post&path=/cards*`);
    expect(filtered.body.map((r) => r.path)).to.deep.equal(['/cards']);

    expect((await call(`${issuer}/__sandbox/requests`, { method: 'DELETE' })).status).to.equal(204);
    expect((await call<RecordedRequest[]>(`${issuer}/__sandbox/requests`)).body).to.deep.equal([]);
  });

  it('records a body that is not JSON as raw text and answers 400 INVALID_JSON', async () => {
    const { status, body } = await call<ErrorBody>(`${issuer}/cards`, { method: 'POST', body: '{"type": oops' });
    expect(status).to.equal(400);
    expect(body.errorCode).to.equal('INVALID_JSON');
    const { body: recorded } = await call<RecordedRequest[]>(`${issuer}/__sandbox/requests`);
    expect(recorded[0].body).to.equal('{"type": oops');
  });

  it('answers unknown routes 404 ROUTE_NOT_FOUND in the upstream error shape', async () => {
    const { status, body } = await call<ErrorBody>(`${issuer}/nowhere`);
    expect(status).to.equal(404);
    expect(body).to.include({ errorCode: 'ROUTE_NOT_FOUND' });
    expect(body.message).to.be.a('string');
  });

  describe('faults', () => {
    it("mode 'status' answers SANDBOX_FAULT with the status, `times` times, then the real answer", async () => {
      const fault = await call(`${issuer}/__sandbox/faults`, {
        method: 'POST',
        body: { method: 'get', path: '/pin-encryption-key', mode: 'status', status: 503, times: 2 },
      });
      expect(fault.status).to.equal(201);
      expect(fault.body).to.include({ method: 'GET', path: '/pin-encryption-key', mode: 'status', status: 503, remaining: 2 });
      for (let i = 0; i < 2; i += 1) {
        const { status, body } = await call<ErrorBody>(`${issuer}/pin-encryption-key`);
        expect(status).to.equal(503);
        expect(body.errorCode).to.equal('SANDBOX_FAULT');
      }
      expect((await call(`${issuer}/pin-encryption-key`)).status).to.equal(200);
    });

    it('matches a method and an exact path or a prefix ending in *', async () => {
      await call(`${issuer}/__sandbox/faults`, { method: 'POST', body: { method: 'POST', path: '/cards/*', mode: 'status', status: 502, times: 0 } });
      expect((await call(`${issuer}/cards/CK0000000000000000/status`, { method: 'POST', body: {} })).status).to.equal(502);
      expect((await call(`${issuer}/cards/CK0000000000000000/replace`, { method: 'POST', body: {} })).status).to.equal(502);
      // Other method, and the bare /cards path, are not matched.
      expect((await call(`${issuer}/cards/CK0000000000000000`)).status).to.equal(404);
      expect((await call(`${issuer}/cards`, { method: 'POST', body: {} })).status).to.equal(400);
      // times: 0 lasts until cleared.
      expect((await call(`${issuer}/cards/CK0000000000000000/status`, { method: 'POST', body: {} })).status).to.equal(502);
      const listed = await call<unknown[]>(`${issuer}/__sandbox/faults`);
      expect(listed.body).to.have.length(1);
      expect((await call(`${issuer}/__sandbox/faults`, { method: 'DELETE' })).status).to.equal(204);
      expect((await call(`${issuer}/cards/CK0000000000000000/status`, { method: 'POST', body: {} })).status).to.equal(404);
    });

    it("mode 'timeout' never answers before the client gives up", async () => {
      await call(`${issuer}/__sandbox/faults`, { method: 'POST', body: { path: '/pin-encryption-key', mode: 'timeout' } });
      const started = Date.now();
      let error: unknown;
      try {
        await call(`${issuer}/pin-encryption-key`, { signal: AbortSignal.timeout(80) });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(Error);
      expect((error as Error).name).to.equal('TimeoutError');
      expect(Date.now() - started).to.be.lessThan(140);
    });

    it("mode 'timeout' answers 504 SANDBOX_TIMEOUT after hangMs when the client waits", async () => {
      await call(`${issuer}/__sandbox/faults`, { method: 'POST', body: { path: '/pin-encryption-key', mode: 'timeout' } });
      const started = Date.now();
      const { status, body } = await call<ErrorBody>(`${issuer}/pin-encryption-key`);
      expect(Date.now() - started).to.be.at.least(140);
      expect(status).to.equal(504);
      expect(body.errorCode).to.equal('SANDBOX_TIMEOUT');
    });

    it("mode 'reset' sends headers and part of the body, then drops the connection", async () => {
      await call(`${issuer}/__sandbox/faults`, { method: 'POST', body: { path: '/pin-encryption-key', mode: 'reset' } });
      const response = await fetch(`${issuer}/pin-encryption-key`);
      expect(response.status).to.equal(200);
      let error: unknown;
      try {
        await response.text();
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(Error);
      expect((await call(`${issuer}/pin-encryption-key`)).status).to.equal(200);
    });

    it("mode 'malformed' answers 200 application/json with a body that is not JSON", async () => {
      await call(`${issuer}/__sandbox/faults`, { method: 'POST', body: { path: '/pin-encryption-key', mode: 'malformed' } });
      const response = await fetch(`${issuer}/pin-encryption-key`);
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
      const text = await response.text();
      expect(() => JSON.parse(text)).to.throw(SyntaxError);
    });

    it('still records faulted requests', async () => {
      await call(`${issuer}/__sandbox/faults`, { method: 'POST', body: { path: '/pin-encryption-key', mode: 'status', status: 500 } });
      await call(`${issuer}/pin-encryption-key`, { headers: { 'x-request-id': 'faulted-1' } });
      const { body } = await call<RecordedRequest[]>(`${issuer}/__sandbox/requests`);
      expect(body.map((r) => r.requestId)).to.deep.equal(['faulted-1']);
    });

    const badFaults: Array<{ description: string; fault: unknown }> = [
      { description: 'no path', fault: { mode: 'status', status: 500 } },
      { description: 'a relative path', fault: { path: 'cards', mode: 'reset' } },
      { description: 'an unknown mode', fault: { path: '/cards', mode: 'explode' } },
      { description: "mode 'status' without status", fault: { path: '/cards', mode: 'status' } },
      { description: 'a 2xx status', fault: { path: '/cards', mode: 'status', status: 200 } },
      { description: 'negative times', fault: { path: '/cards', mode: 'reset', times: -1 } },
    ];
    for (const { description, fault } of badFaults) {
      it(`refuses a fault with ${description}: 400 VALIDATION_ERROR`, async () => {
        const { status, body } = await call<ErrorBody>(`${issuer}/__sandbox/faults`, { method: 'POST', body: fault });
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal('VALIDATION_ERROR');
      });
    }

    it('applies to every sandbox, not only the issuer', async () => {
      for (const sandbox of [sandboxes.processing, sandboxes.accounts]) {
        await call(`${sandbox.url}/__sandbox/faults`, { method: 'POST', body: { path: '/*', mode: 'status', status: 429 } });
        expect((await call(`${sandbox.url}/anything`)).status).to.equal(429);
      }
    });
  });

  it('POST /__sandbox/reset forgets domain state, faults and recorded requests', async () => {
    const { body: created } = await call<{ accountId: string }>(`${sandboxes.accounts.url}/accounts`, { method: 'POST', body: ACCOUNT });
    await call(`${sandboxes.accounts.url}/__sandbox/faults`, { method: 'POST', body: { path: '/nothing', mode: 'reset' } });
    const reset = await call(`${sandboxes.accounts.url}/__sandbox/reset`, { method: 'POST' });
    expect(reset.status).to.equal(200);
    expect((await call<unknown[]>(`${sandboxes.accounts.url}/__sandbox/faults`)).body).to.deep.equal([]);
    expect((await call(`${sandboxes.accounts.url}/accounts/${created.accountId}`)).status).to.equal(404);
    const { body: recorded } = await call<RecordedRequest[]>(`${sandboxes.accounts.url}/__sandbox/requests`);
    expect(recorded.map((r) => r.path)).to.deep.equal([`/accounts/${created.accountId}`]);
  });
});

describe('sandbox lifecycle', () => {
  it('close() returns promptly even with a request hanging, and is idempotent', async () => {
    const sandboxes = await startSandboxes();
    await call(`${sandboxes.issuer.url}/__sandbox/faults`, { method: 'POST', body: { path: '/*', mode: 'timeout' } });
    const hanging = fetch(`${sandboxes.issuer.url}/cards/x`).then(
      () => 'answered',
      () => 'failed',
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    const started = Date.now();
    await sandboxes.close();
    await sandboxes.close();
    expect(Date.now() - started).to.be.lessThan(500);
    expect(await hanging).to.equal('failed');
    expect(sandboxes.issuer.server.listening).to.equal(false);
  });

  it('rejects when a port is taken and leaves nothing listening', async () => {
    const first = await startSandboxes();
    const port = Number(new URL(first.issuer.url).port);
    let error: unknown;
    try {
      await startSandboxes({ ports: { accounts: port } });
    } catch (err) {
      error = err;
    }
    await first.close();
    expect((error as NodeJS.ErrnoException).code).to.equal('EADDRINUSE');
  });

  it('main.js prints the three URLs as one JSON line and exits 0 on SIGTERM', async () => {
    const script = path.resolve(__dirname, '../../sandbox/main.js');
    const child = spawn(process.execPath, [script], { env: { ...process.env, ISSUER_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
      child.once('exit', (code) => reject(new Error(`runner exited early with ${code}`)));
    });
    const urls = JSON.parse(line) as Record<string, string>;
    expect(Object.keys(urls).sort()).to.deep.equal(['accounts', 'issuer', 'processing']);
    expect((await call(`${urls.processing}/__sandbox/health`)).status).to.equal(200);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });
});
