import { expect } from 'chai';
import { api, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';

/** One sample of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (enough of it for these assertions: no escaped quotes in our labels). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[name] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of every sample of `name` whose labels include `labels` (0 when none). */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

function has(samples: Sample[], name: string, labels: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

describe('e2e: metrics (GET /admin/metrics)', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let individualId: string;

  before(async function () {
    gateway = await startGatewayProcess();
    acme = await registerPartner(gateway, 'acme-metrics');
  });

  after(async function () {
    await gateway?.stop();
  });

  const scrape = (authorization?: string) =>
    fetch(`${gateway.adminUrl}/admin/metrics`, { headers: authorization === undefined ? {} : { authorization } });

  it('refuses a scrape without the admin token, or with another token (401 admin_unauthorized)', async function () {
    for (const authorization of [undefined, 'Bearer not-the-admin-token-but-long-enough-000000', `Basic ${gateway.adminToken}`]) {
      const response = await scrape(authorization);
      expect(response.status, String(authorization)).to.equal(401);
      expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(((await response.json()) as { code: string }).code).to.equal('admin_unauthorized');
    }
  });

  it('after partner traffic: requests by route and status, latency, upstream calls and errors, JWT refusals, caches, pool, reloads, process', async function () {
    const base = `${gateway.baseUrl}/api/partner`;
    // A 200, twice with the same token (the second is a verified-token cache hit).
    const token = await acme.token();
    for (let i = 0; i < 2; i++) {
      const me = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).to.equal(200);
    }
    // 401s with token codes.
    expect((await api(gateway, null, 'GET', '/me')).body.code).to.equal('token_missing');
    const expired = await acme.token({ now: Math.floor(Date.now() / 1000) - 3600 });
    const refused = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${expired}` } });
    expect(refused.status).to.equal(401);
    expect(((await refused.json()) as { code: string }).code).to.equal('token_expired');
    // A proxied call (issuer, upstream-proxy policy) and a call through the typed clients (accounts).
    expect((await api(gateway, acme, 'GET', '/pin-encryption-key')).status).to.equal(200);
    const created = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() });
    expect(created.status).to.equal(201);
    individualId = created.body._id;
    // Ownership: the first check reads PostgreSQL, the second is answered from the cache.
    for (let i = 0; i < 2; i++) expect((await api(gateway, acme, 'GET', `/individual/accounts/${individualId}`)).status).to.equal(200);
    // An upstream failure: the processing sandbox answers 503.
    const processing = sandboxUrls(gateway).processing;
    await sandboxControl(processing, 'POST', '/__sandbox/faults', { method: 'POST', path: '/fees', mode: 'status', status: 503 });
    try {
      const fee = await api(gateway, acme, 'POST', '/fees/card-issuing', { body: { CustomerType: 'Consumer Debit', ProductType: 'R001', clientId: created.body.clientID } });
      expect(fee.status).to.equal(502);
    } finally {
      await sandboxControl(processing, 'DELETE', '/__sandbox/faults');
    }

    const response = await scrape(`Bearer ${gateway.adminToken}`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    const samples = parseExposition(text);

    // Requests by route (the apiEndpoint name) and status; latency by route.
    expect(total(samples, 'http_requests_total', { component: 'gateway', route: 'me', status: '200' })).to.equal(2);
    expect(total(samples, 'http_requests_total', { component: 'gateway', route: 'me', status: '401' })).to.equal(2);
    expect(total(samples, 'http_requests_total', { component: 'gateway', route: 'get-pin-encryption-key', status: '200' })).to.equal(1);
    expect(total(samples, 'http_requests_total', { component: 'gateway', route: 'get-individual', status: '200' })).to.equal(2);
    expect(total(samples, 'http_requests_total', { component: 'gateway', route: 'check-card-issuing-fee', status: '502' })).to.equal(1);
    expect(total(samples, 'http_requests_total', { component: 'admin', route: 'POST /admin/partners', status: '201' })).to.equal(1);
    expect(total(samples, 'http_request_duration_seconds_count', { component: 'gateway', route: 'me' })).to.equal(4);
    expect(total(samples, 'http_request_duration_seconds_bucket', { component: 'gateway', route: 'me', le: '+Inf' })).to.equal(4);
    // Never the raw URL: no individual id, no query string, no /api/partner path in any label.
    expect(text).to.not.contain(individualId);
    expect(text).to.not.contain('/api/partner');

    // Upstream calls: latency by upstream (both paths), errors by upstream and kind.
    expect(total(samples, 'upstream_request_duration_seconds_count', { upstream: 'issuer' })).to.be.at.least(1);
    expect(total(samples, 'upstream_request_duration_seconds_count', { upstream: 'accounts' })).to.be.at.least(1);
    expect(total(samples, 'upstream_errors_total', { upstream: 'processing', kind: 'status_5xx' })).to.equal(1);
    expect(total(samples, 'upstream_errors_total', { upstream: 'issuer' })).to.equal(0);

    // JWT refusals by code, every code exposed.
    expect(total(samples, 'jwt_refusals_total', { code: 'token_missing' })).to.equal(1);
    expect(total(samples, 'jwt_refusals_total', { code: 'token_expired' })).to.equal(1);
    expect(has(samples, 'jwt_refusals_total', { code: 'signature_invalid' })).to.equal(true);
    expect(has(samples, 'jwt_refusals_total', { code: 'admin_unauthorized' })).to.equal(false);

    // Caches and pool, read at scrape.
    expect(total(samples, 'cache_hits_total', { cache: 'verified_token' })).to.be.at.least(1);
    expect(total(samples, 'cache_hits_total', { cache: 'ownership' })).to.be.at.least(1);
    expect(total(samples, 'cache_misses_total', { cache: 'ownership' })).to.be.at.least(1);
    expect(has(samples, 'cache_entries', { cache: 'ownership' })).to.equal(true);
    // DATABASE_POOL_MAX: the default 10, or the 1 connection test/support gives gateways on the run's embedded database.
    expect(total(samples, 'db_pool_max_connections')).to.equal(process.env.TEST_DB === 'embedded' ? 1 : 10);
    expect(total(samples, 'db_pool_total_connections')).to.be.at.least(1);
    expect(has(samples, 'db_pool_idle_connections')).to.equal(true);
    expect(has(samples, 'db_pool_waiting_clients')).to.equal(true);

    // Config reloads (none yet) and the default process metrics.
    expect(has(samples, 'config_reloads_total', { outcome: 'applied' })).to.equal(true);
    expect(has(samples, 'config_reloads_total', { outcome: 'rejected' })).to.equal(true);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(has(samples, name), name).to.equal(true);
    }
  });

  it('counts its own scrapes as admin requests (route "GET /admin/metrics")', async function () {
    await scrape(`Bearer ${gateway.adminToken}`);
    const samples = parseExposition(await (await scrape(`Bearer ${gateway.adminToken}`)).text());
    expect(total(samples, 'http_requests_total', { component: 'admin', route: 'GET /admin/metrics', status: '200' })).to.be.at.least(2);
  });
});
