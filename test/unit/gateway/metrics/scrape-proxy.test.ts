import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startScrapeProxy, type ScrapeProxy } from '../../../../gateway/metrics/scrape-proxy';

describe('unit: metrics/scrape-proxy (Kubernetes sidecar)', function () {
  let admin: http.Server;
  let adminPort: number;
  let proxy: ScrapeProxy;
  const received: { method?: string; url?: string; authorization?: string; cookie?: string }[] = [];

  before(async function () {
    admin = http.createServer((req, res) => {
      received.push({ method: req.method, url: req.url, authorization: req.headers.authorization, cookie: req.headers.cookie });
      if (req.headers.authorization !== 'Bearer the-admin-token') {
        res.writeHead(401, { 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer realm="admin"' }).end('{"code":"admin_unauthorized"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'set-cookie': 'x=y' }).end('up 1\n');
    });
    await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));
    adminPort = (admin.address() as AddressInfo).port;
    proxy = await startScrapeProxy({ port: 0, host: '127.0.0.1', adminPort, adminHost: '127.0.0.1' });
  });

  beforeEach(function () {
    received.length = 0;
  });

  after(async function () {
    await proxy.close();
    admin.closeAllConnections();
    await new Promise<void>((resolve) => admin.close(() => resolve()));
  });

  const call = (path: string, init: RequestInit = {}) => fetch(`http://127.0.0.1:${proxy.port}${path}`, init);

  it('forwards GET /admin/metrics with the caller\'s token, and only the answer\'s safe headers', async function () {
    const response = await call('/admin/metrics', { headers: { authorization: 'Bearer the-admin-token', cookie: 'session=1' } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers.get('set-cookie')).to.equal(null);
    expect(await response.text()).to.equal('up 1\n');
    expect(received).to.deep.equal([{ method: 'GET', url: '/admin/metrics', authorization: 'Bearer the-admin-token', cookie: undefined }]);
  });

  it('passes the admin API\'s 401 on: the token is still required', async function () {
    const response = await call('/admin/metrics');
    expect(response.status).to.equal(401);
    expect(response.headers.get('www-authenticate')).to.equal('Bearer realm="admin"');
    expect(received).to.have.length(1);
  });

  const refused: { description: string; path: string; method?: string }[] = [
    { description: 'another admin route', path: '/admin/partners' },
    { description: 'a path that normalises to another route', path: '/admin/metrics/../partners' },
    { description: 'the metrics path with a query', path: '/admin/metrics?x=1' },
    { description: 'a POST', path: '/admin/metrics', method: 'POST' },
    { description: 'a DELETE of a key', path: '/admin/partners/0123456789abcdef01234567/keys/k1', method: 'DELETE' },
  ];
  for (const row of refused) {
    it(`answers 404 to ${row.description}, without calling the admin API`, async function () {
      const response = await call(row.path, { method: row.method ?? 'GET', headers: { authorization: 'Bearer the-admin-token' } });
      expect(response.status).to.equal(404);
      expect(received).to.have.length(0);
    });
  }

  it('answers 502 when the admin API is down', async function () {
    const idle = http.createServer();
    await new Promise<void>((resolve) => idle.listen(0, '127.0.0.1', resolve));
    const deadPort = (idle.address() as AddressInfo).port;
    await new Promise<void>((resolve) => idle.close(() => resolve()));
    const orphan = await startScrapeProxy({ port: 0, host: '127.0.0.1', adminPort: deadPort, adminHost: '127.0.0.1' });
    try {
      const response = await fetch(`http://127.0.0.1:${orphan.port}/admin/metrics`);
      expect(response.status).to.equal(502);
    } finally {
      await orphan.close();
    }
  });
});
