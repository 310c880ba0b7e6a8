import http from 'node:http';
import { expect } from 'chai';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { adminCall, registerPartner } from '../support/partners';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { runDatabaseUrl } from '../support/test-database';
import { waitFor } from '../support/wait';

/** FEED_DOWN_TRUST_MS (policies/es512-jwt/verified-token-cache.ts): how long a cached verification is trusted while the change feed is down. */
const FEED_DOWN_TRUST_MS = 1000;

/** A GET of the partner API on a new connection (so that requests spread over the cluster's workers). */
function getOnNewConnection(gateway: GatewayProcess, path: string, token: string): Promise<{ status: number; code?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${gateway.baseUrl}/api/partner${path}`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, code: body.startsWith('{') ? JSON.parse(body).code : undefined }));
    });
    req.on('error', reject);
  });
}

/** GET /api/partner/me (reads the partner's tenants from PostgreSQL after authentication). */
const meOnNewConnection = (gateway: GatewayProcess, token: string) => getOnNewConnection(gateway, '/me', token);
/** GET /api/partner/pin-encryption-key: after authentication, only the issuer is asked (no database read). */
const pinKeyOnNewConnection = (gateway: GatewayProcess, token: string) => getOnNewConnection(gateway, '/pin-encryption-key', token);

function viaProxy(proxy: TcpProxy): string {
  const url = new URL(runDatabaseUrl());
  url.port = String(proxy.port);
  return url.toString();
}

/**
 * Revocation against the verified-token cache (docs/authentication.md, "Revocation and the token
 * cache"): within a cluster, once the admin call returned no worker accepts the old credential,
 * even when PostgreSQL notifications are held back; across instances, a database outage does not
 * let another instance serve a revoked key from its cache beyond FEED_DOWN_TRUST_MS.
 */
/** Polls every 25 ms: the revocation races are short. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> => waitFor(what, probe, ms, 25);

describe('e2e: revocation reaches every worker and every instance (real PostgreSQL)', function () {
  this.timeout(120_000);
  let sandboxes: Sandboxes;
  let proxyA: TcpProxy;
  let proxyB: TcpProxy;
  let a: GatewayProcess;
  let b: GatewayProcess;

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip(); // LISTEN/NOTIFY and WORKERS need real PostgreSQL
    sandboxes = await startSandboxes();
    const target = new URL(runDatabaseUrl());
    proxyA = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    proxyB = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const upstreams = { ISSUER_URL: sandboxes.issuer.url, PROCESSING_URL: sandboxes.processing.url, ACCOUNTS_URL: sandboxes.accounts.url };
    [a, b] = await Promise.all([
      startGatewayProcess({ env: { ...upstreams, WORKERS: '2', DATABASE_URL: viaProxy(proxyA) }, timeoutMs: 45_000 }),
      startGatewayProcess({ env: { ...upstreams, DATABASE_URL: viaProxy(proxyB) } }),
    ]);
  });
  after(async function () {
    proxyA?.resumeListeners();
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([proxyA?.close(), proxyB?.close()]);
    await sandboxes?.close();
  });

  for (const change of ['revoke', 'disable'] as const) {
    it(`WORKERS=2: once ${change === 'revoke' ? 'DELETE /admin/partners/{id}/keys/{kid}' : 'PATCH /admin/partners/{id} {status: disabled}'} returned, no worker accepts a token it cached (notifications held back)`, async function () {
      const partner = await registerPartner(a, `cluster-${change}`);
      const token = await partner.token({ ttlSeconds: 300 });
      // Both workers verify and cache the token (new connections are spread over the workers).
      for (let i = 0; i < 10; i++) expect((await meOnNewConnection(a, token)).status).to.equal(200);

      // PostgreSQL's notifications no longer reach the workers: only the admin call itself can tell them.
      proxyA.stallListeners();
      try {
        const response =
          change === 'revoke'
            ? await adminCall(a, 'DELETE', `/admin/partners/${partner.id}/keys/${encodeURIComponent(partner.kid)}`)
            : await adminCall(a, 'PATCH', `/admin/partners/${partner.id}`, { status: 'disabled' });
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        const after: number[] = [];
        for (let i = 0; i < 20; i++) after.push((await meOnNewConnection(a, token)).status);
        expect(after, 'answers after the admin call returned').to.deep.equal(Array(20).fill(401));
      } finally {
        proxyA.resumeListeners();
      }
    });
  }

  it('another instance whose PostgreSQL link is down trusts its cache for at most FEED_DOWN_TRUST_MS, then refuses the revoked key; its feed is back within about a second of PostgreSQL', async function () {
    const partner = await registerPartner(a, 'outage-revoke');
    const token = await partner.token({ ttlSeconds: 300 });
    expect((await pinKeyOnNewConnection(b, token)).status, 'B verified and cached the token').to.equal(200);

    const retries = () => b.logLines().filter((l) => l.msg === 'partner change feed not connected; retrying').length;
    const retriesBefore = retries();
    const cutAt = Date.now();
    await proxyB.cut();
    const revoked = await adminCall(a, 'DELETE', `/admin/partners/${partner.id}/keys/${encodeURIComponent(partner.kid)}`);
    expect(revoked.status).to.equal(200);

    // During the outage B must stop serving the cached token (on a route that needs no database read
    // after authentication): it verifies against the database instead, and answers 503.
    const seen: { at: number; status: number; code?: string }[] = [];
    await until('B to stop serving the cached token', async () => {
      const at = Date.now();
      const answer = await pinKeyOnNewConnection(b, token);
      seen.push({ at, ...answer });
      return answer.status !== 200 ? answer : undefined;
    });
    // The outage lasts until B tried to reconnect five times (backoff grows on a gateway that backs off long).
    await until('five reconnection attempts of B', async () => {
      const at = Date.now();
      seen.push({ at, ...(await pinKeyOnNewConnection(b, token)) });
      await new Promise((resolve) => setTimeout(resolve, 100));
      return retries() - retriesBefore >= 5 ? true : undefined;
    }, 60_000);
    // One second of slack for the gateway to notice the cut connection.
    const late = seen.filter((s) => s.at >= cutAt + FEED_DOWN_TRUST_MS + 1000 && s.status === 200);
    expect(late, 'B accepted the revoked key from its cache while PostgreSQL was away').to.deep.equal([]);
    expect(seen.filter((s) => s.status !== 200).every((s) => s.status === 503 && s.code === 'database_unavailable')).to.equal(true);

    const listening = () => b.logLines().filter((l) => l.msg === 'partner change feed listening').length;
    const listeningBefore = listening();
    await proxyB.restore();
    await until('B\'s change feed to listen again', async () => (listening() > listeningBefore ? true : undefined), 3000);
    expect(await pinKeyOnNewConnection(b, token)).to.deep.equal({ status: 401, code: 'key_unknown' });
  });
});
