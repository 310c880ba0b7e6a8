import crypto from 'node:crypto';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import rateLimitPolicy from '../../../policies/rate-limit';
import { registry } from '../../../gateway/metrics';
import type { Partner } from '../../../gateway/partners/partner-store';
import { openServices, policyContext, serve, type InProcessServices } from '../../support/in-process';

/** Stands in for es512-jwt (`x-test-partner`) and for the runtime's apiEndpoint name (`x-test-route`). */
const asPartnerOnRoute: RequestHandler = (req, _res, next) => {
  const partnerId = req.headers['x-test-partner'];
  if (typeof partnerId === 'string') req.partner = { _id: partnerId, name: 'p', issuer: 'https://p.example', status: 'active', processingEnabled: false, createdAt: '', updatedAt: '' } satisfies Partner;
  req.apiEndpointName = String(req.headers['x-test-route'] ?? 'probe');
  next();
};

/** The value of an unlabelled metric of the process's registry. */
async function metricValue(name: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Number(metric?.values[0]?.value ?? 0);
}

describe('rate-limit policy: per partner and route, 429 with RateLimit headers (in-process)', function () {
  let services: InProcessServices;
  const run = crypto.randomBytes(4).toString('hex');
  const servers: { url: string; close(): Promise<void> }[] = [];
  let handlerExecuted = 0;
  const handler: RequestHandler = (_req, res) => {
    handlerExecuted += 1;
    res.json({ ok: true });
  };

  async function start(params: Record<string, unknown>, withServices: InProcessServices = services): Promise<string> {
    const server = await serve([asPartnerOnRoute, rateLimitPolicy.policy(params as never, policyContext(withServices)), handler], withServices.log);
    servers.push(server);
    return server.url;
  }

  async function call(url: string, headers: Record<string, string>) {
    const response = await fetch(`${url}/probe`, { headers });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  }

  before(async function () {
    services = await openServices();
  });

  after(async function () {
    for (const server of servers) await server.close();
    await services?.close();
  });

  it('lets `limit` requests through with RateLimit-Policy and RateLimit, then answers 429 rate_limited without reaching the handler', async function () {
    const url = await start({ limit: 3, windowSeconds: 60 });
    const route = `cvv-${run}`;
    const as = { 'x-test-partner': `acme-${run}`, 'x-test-route': route };
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await call(url, as);
      expect(response.status).to.equal(200);
      expect(response.headers.get('ratelimit-policy')).to.equal(`"${route}";q=3;w=60`);
      remaining.push(response.headers.get('ratelimit')!);
    }
    expect(remaining.map((h) => /;r=(\d+);t=(\d+)$/.exec(h)![1])).to.deep.equal(['2', '1', '0']);
    const before = handlerExecuted;
    const refused = await call(url, as);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(refused.body).to.include({ code: 'rate_limited', status: 429, title: 'Too many requests' });
    expect(refused.body.detail).to.match(/^This route allows 3 requests per 60 s; retry in \d+ s$/);
    expect(refused.headers.get('ratelimit-policy')).to.equal(`"${route}";q=3;w=60`);
    const [, r, t] = /;r=(\d+);t=(\d+)$/.exec(refused.headers.get('ratelimit')!)!;
    expect(r).to.equal('0');
    expect(Number(t)).to.be.within(1, 60);
    expect(refused.headers.get('retry-after')).to.equal(t);
    expect(handlerExecuted, 'handler not reached').to.equal(before);
  });

  it('counts each partner and each route apart', async function () {
    const url = await start({ limit: 1, windowSeconds: 60 });
    const first = { 'x-test-partner': `a-${run}`, 'x-test-route': `me-${run}` };
    expect((await call(url, first)).status).to.equal(200);
    expect((await call(url, first)).status).to.equal(429);
    expect((await call(url, { ...first, 'x-test-partner': `b-${run}` })).status, 'another partner').to.equal(200);
    expect((await call(url, { ...first, 'x-test-route': `list-cards-${run}` })).status, 'another route').to.equal(200);
  });

  it('counts per client IP when no partner is authenticated (public routes)', async function () {
    const url = await start({ limit: 2, windowSeconds: 60 });
    const publicRoute = { 'x-test-route': `health-check-${run}` };
    expect((await call(url, publicRoute)).status).to.equal(200);
    expect((await call(url, { ...publicRoute, 'x-forwarded-for': '203.0.113.9' })).status, 'X-Forwarded-For is not trusted').to.equal(200);
    const refused = await call(url, { ...publicRoute, 'x-forwarded-for': '198.51.100.7' });
    expect(refused.status).to.equal(429);
    expect((await call(url, { ...publicRoute, 'x-test-partner': `a-${run}` })).status, 'a partner is counted apart from its IP').to.equal(200);
  });

  it('defaults to 600 requests per 60 s', async function () {
    const url = await start({});
    const response = await call(url, { 'x-test-partner': `d-${run}`, 'x-test-route': `defaults-${run}` });
    expect(response.headers.get('ratelimit-policy')).to.equal(`"defaults-${run}";q=600;w=60`);
  });

  // Issue 11 item 9: "fail open" let 60 of 60 requests through on a limit of 5.
  it('with Redis (REDIS_URL) unreachable, still lets at most `limit` through per process, then 429; counted in the fallback metric', async function () {
    const redisDown = await openServices(undefined, { settings: { redisUrl: 'redis://127.0.0.1:1', redisKeyPrefix: `pgw-test-${run}:` } });
    try {
      expect(redisDown.rateLimits.kind).to.equal('redis');
      const url = await start({ limit: 5, windowSeconds: 60 }, redisDown);
      const as = { 'x-test-partner': `r-${run}`, 'x-test-route': `redis-down-${run}` };
      const fallbackBefore = await metricValue('rate_limit_fallback_total');
      const before = handlerExecuted;
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const response = await call(url, as);
        statuses.push(response.status);
        if (response.status === 200) expect(response.headers.get('ratelimit')).to.equal(`"redis-down-${run}";r=${5 - i - 1};t=60`);
        else expect(response.body.code).to.equal('rate_limited');
      }
      expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
      expect(handlerExecuted - before, 'the handler ran only for the 5 within the limit').to.equal(5);
      expect((await metricValue('rate_limit_fallback_total')) - fallbackBefore).to.equal(12);
      expect(await metricValue('rate_limit_fallback_active')).to.be.at.least(1);
    } finally {
      await redisDown.close();
    }
  });
});
