import crypto from 'node:crypto';
import { expect } from 'chai';
import Redis from 'ioredis';
import { api } from '../support/api';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { requireRedis, TEST_REDIS_URL } from '../support/redis';

const REDIS_URL = TEST_REDIS_URL;

/**
 * Two gateway processes sharing the run's PostgreSQL and one Redis (REDIS_URL, a key prefix of this
 * run): their counts are one. Small limits through the YAML's RATE_LIMIT_*_PER_MINUTE substitution.
 */
describe('e2e: rate limits per partner and route, shared by two instances through Redis', function () {
  this.timeout(90_000);
  const prefix = `pgw-test-${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}:`;
  const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_READS_PER_MINUTE: '4', RATE_LIMIT_WRITES_PER_MINUTE: '2', RATE_LIMIT_PUBLIC_PER_MINUTE: '3' };
  let a: GatewayProcess;
  let b: GatewayProcess;
  let acme: TestPartner;
  let globex: TestPartner;
  let redis: Redis;

  before(async function () {
    await requireRedis();
    [a, b] = await Promise.all([startGatewayProcess({ env }), startGatewayProcess({ env })]);
    acme = await registerPartner(a, 'acme-rate');
    globex = await registerPartner(a, 'globex-rate');
    redis = new Redis(REDIS_URL);
  });

  after(async function () {
    await Promise.all([a?.stop(), b?.stop()]);
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('counts one partner on one route across both instances: the 5th GET is 429 rate_limited with RateLimit headers and Retry-After', async function () {
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (const gateway of [a, b, a, b]) {
      const response = await api(gateway, acme, 'GET', '/me');
      statuses.push(response.status);
      expect(response.headers.get('ratelimit-policy')).to.equal('"me";q=4;w=60');
      remaining.push(/;r=(\d+);/.exec(response.headers.get('ratelimit')!)![1]);
    }
    expect(statuses).to.deep.equal([200, 200, 200, 200]);
    expect(remaining).to.deep.equal(['3', '2', '1', '0']);

    const refused = await api(b, acme, 'GET', '/me');
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(refused.body).to.include({ code: 'rate_limited', status: 429, type: 'https://partner-gateway.dev/problems/rate_limited' });
    expect(refused.body.requestId).to.be.a('string');
    expect(refused.headers.get('ratelimit-policy')).to.equal('"me";q=4;w=60');
    const [, r, t] = /^"me";r=(\d+);t=(\d+)$/.exec(refused.headers.get('ratelimit')!)!;
    expect(r).to.equal('0');
    expect(Number(t)).to.be.within(1, 60);
    expect(refused.headers.get('retry-after')).to.equal(t);
    expect(refused.headers.get('cache-control')).to.equal('no-store');
    expect(refused.headers.get('x-content-type-options')).to.equal('nosniff');
    expect((await api(a, acme, 'GET', '/me')).status, 'the other instance refuses too').to.equal(429);

    expect(await redis.get(`${prefix}rl:me:partner:${acme.id}`)).to.equal('6');
  });

  it('keeps other partners and other routes of the same partner apart', async function () {
    expect((await api(a, globex, 'GET', '/me')).status, 'another partner').to.equal(200);
    const list = await api(b, acme, 'GET', '/individual/accounts');
    expect(list.status, 'another route').to.equal(200);
    expect(list.headers.get('ratelimit-policy')).to.equal('"list-individuals";q=4;w=60');
  });

  it('applies the write limit to POST routes, after authentication and before validation', async function () {
    const bad = { firstName: '' };
    expect((await api(a, globex, 'POST', '/individual/accounts', { body: bad })).status).to.equal(400);
    expect((await api(b, globex, 'POST', '/individual/accounts', { body: bad })).status).to.equal(400);
    const refused = await api(a, globex, 'POST', '/individual/accounts', { body: bad });
    expect(refused.status, 'counted even when invalid').to.equal(429);
    expect(refused.headers.get('ratelimit-policy')).to.equal('"create-individual";q=2;w=60');
    const anonymous = await api(a, null, 'POST', '/individual/accounts', { body: bad });
    expect(anonymous.status, 'no token: 401 before any count').to.equal(401);
  });

  it('counts the documentation routes per client IP (no token), across instances', async function () {
    const statuses: number[] = [];
    for (const gateway of [a, b, a, b]) statuses.push((await fetch(`${gateway.baseUrl}/api/partner/openapi.json`)).status);
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
    const refused = await fetch(`${a.baseUrl}/api/partner/openapi.json`);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('ratelimit-policy')).to.equal('"openapi-document";q=3;w=60');
    const docs = await fetch(`${a.baseUrl}/api/partner/docs`);
    expect(docs.status, 'another public route').to.equal(200);
    expect(docs.headers.get('ratelimit-policy')).to.equal('"api-docs";q=3;w=60');
  });

  it('never limits the health check: far more than the public limit from one address all answer 200', async function () {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const response = await fetch(`${(i % 2 === 0 ? a : b).baseUrl}/api/partner/health-check`);
      expect(response.headers.get('ratelimit-policy')).to.equal(null);
      statuses.push(response.status);
    }
    expect(statuses).to.deep.equal(Array.from({ length: 30 }, () => 200));
    expect((await fetch(`${b.baseUrl}/api/partner/openapi.json`)).status, 'the documentation keeps its limit').to.equal(429);
  });
});

/** The value of an unlabelled metric on a gateway's `/admin/metrics` (NaN when absent). */
async function scrapeMetric(gateway: GatewayProcess, name: string): Promise<number> {
  const text = await (await fetch(`${gateway.adminUrl}/admin/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

/**
 * Issue 11 item 9: with Redis unreachable, requests went through uncounted (60 of 60 on a limit of
 * 5). Now the process counts in its own memory until Redis is back. Redis sits behind a TCP proxy
 * that the test cuts and restores (the machine's Redis itself keeps running).
 */
describe('e2e: rate limits while Redis is unreachable (each process counts in memory, then Redis again)', function () {
  this.timeout(90_000);
  const prefix = `pgw-test-${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}:`;
  let proxy: TcpProxy;
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let redis: Redis;

  before(async function () {
    const target = new URL(REDIS_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    gateway = await startGatewayProcess({
      env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_READS_PER_MINUTE: '5', RATE_LIMIT_PUBLIC_PER_MINUTE: '100000' },
    });
    acme = await registerPartner(gateway, 'acme-rate-fallback');
    redis = new Redis(REDIS_URL);
  });

  after(async function () {
    await gateway?.stop();
    await proxy?.close();
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('lets at most the limit (5) through per process while Redis is away, then 429; logs it once and shows it in the metrics; counts in Redis again once it is back', async function () {
    const redisKey = `${prefix}rl:me:partner:${acme.id}`;
    expect((await api(gateway, acme, 'GET', '/me')).status).to.equal(200);
    expect(await redis.get(redisKey)).to.equal('1');
    expect(await scrapeMetric(gateway, 'rate_limit_fallback_active')).to.equal(0);

    await proxy.cut();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await api(gateway, acme, 'GET', '/me')).status);
    expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
    expect(await redis.get(redisKey), 'nothing reached Redis').to.equal('1');
    expect(await scrapeMetric(gateway, 'rate_limit_fallback_total')).to.be.at.least(12);
    expect(await scrapeMetric(gateway, 'rate_limit_fallback_active')).to.equal(1);
    const unreachable = gateway.output().split('\n').filter((l) => l.includes('rate-limit store: Redis unreachable, counting in this process'));
    expect(unreachable, 'one warning for the outage, not one per request').to.have.length(1);

    await proxy.restore();
    // ioredis reconnects on its own schedule (at most 2 s apart): poll a public route until a count reaches Redis again.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (await scrapeMetric(gateway, 'rate_limit_fallback_active')) !== 0) {
      await api(gateway, null, 'GET', '/openapi.json');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await scrapeMetric(gateway, 'rate_limit_fallback_active'), 'counting returned to Redis').to.equal(0);
    expect(gateway.output()).to.include('rate-limit store: Redis is back, counting in Redis again');
    const after = await api(gateway, acme, 'GET', '/me');
    expect(after.status, 'Redis had counted 1 of 5 in this window').to.equal(200);
    expect(await redis.get(redisKey)).to.equal('2');
  });
});
