import crypto from 'node:crypto';
import { expect } from 'chai';
import Redis from 'ioredis';
import { createLogger } from '../../../gateway/logging/logger';
import { registry } from '../../../gateway/metrics';
import { RedisRateLimitStore } from '../../../policies/rate-limit/redis-store';
import type { RateLimitHit, RateLimitKey } from '../../../policies/rate-limit/store';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import { requireRedis, TEST_REDIS_URL } from '../../support/redis';
import { waitFor } from '../../support/wait';

const REDIS_URL = TEST_REDIS_URL;

/** The value of an unlabelled metric of the process's registry. */
async function metricValue(name: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Number(metric?.values[0]?.value ?? 0);
}

describe('rate-limit: Redis store (real Redis at 127.0.0.1:6379)', function () {
  before(async function () {
    await requireRedis();
  });
  const prefix = `pgw-test-${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}:`;
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const stores: RedisRateLimitStore[] = [];
  const proxies: TcpProxy[] = [];
  let admin: Redis;
  const store = (url = REDIS_URL) => {
    const s = new RedisRateLimitStore(url, prefix, log);
    stores.push(s);
    return s;
  };
  const key = (id: string, route = 'me'): RateLimitKey => ({ route, subject: 'partner', id });

  before(function () {
    admin = new Redis(REDIS_URL);
  });

  after(async function () {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await Promise.all(stores.map((s) => s.close()));
    await Promise.all(proxies.map((p) => p.close()));
    await admin.quit();
  });

  it('shares one count between two stores (two gateway instances), with the window as the key expiry', async function () {
    const a = store();
    const b = store();
    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      counts.push((await a.hit(key('acme'), 60_000)).count);
      counts.push((await b.hit(key('acme'), 60_000)).count);
    }
    expect(counts).to.deep.equal([1, 2, 3, 4, 5, 6]);
    const redisKey = `${prefix}rl:me:partner:acme`;
    expect(await admin.get(redisKey)).to.equal('6');
    const ttl = await admin.pttl(redisKey);
    expect(ttl).to.be.within(1, 60_000);
    const hit = (await a.hit(key('acme'), 60_000))!;
    expect(hit.resetMs).to.be.within(1, 60_000);
  });

  it('keeps partners, routes and subjects apart', async function () {
    const a = store();
    await a.hit(key('apart-1'), 60_000);
    expect((await a.hit(key('apart-2'), 60_000)).count).to.equal(1);
    expect((await a.hit(key('apart-1', 'list-cards'), 60_000)).count).to.equal(1);
    expect((await a.hit({ route: 'me', subject: 'client', id: 'apart-1' }, 60_000)).count).to.equal(1);
    expect((await a.hit(key('apart-1'), 60_000)).count).to.equal(2);
  });

  it('starts a new count when the window expires', async function () {
    const a = store();
    const redisKey = `${prefix}rl:me:partner:short`;
    await a.hit(key('short'), 150);
    expect((await a.hit(key('short'), 150)).count).to.equal(2);
    expect(await admin.pttl(redisKey), 'the window is the key\'s expiry').to.be.within(1, 150);
    // The window ends on Redis's clock: wait until Redis dropped the key (PTTL -2), not a fixed time.
    await waitFor('the window to expire in Redis', async () => (await admin.pttl(redisKey)) === -2, 5_000, 20);
    expect((await a.hit(key('short'), 150)).count).to.equal(1);
  });

  it('restores a lost expiry (a key without TTL gets the window again)', async function () {
    const a = store();
    await admin.set(`${prefix}rl:me:partner:no-ttl`, '7');
    const hit = (await a.hit(key('no-ttl'), 60_000))!;
    expect(hit.count).to.equal(8);
    expect(await admin.pttl(`${prefix}rl:me:partner:no-ttl`)).to.be.within(1, 60_000);
  });

  // Issue 11 item 9: with Redis down every request went through uncounted (60 of 60 on a limit of 5).
  it('counts in memory while Redis is unreachable: exact counts per process, one warning, the metric', async function () {
    const down = store('redis://127.0.0.1:1');
    lines.length = 0;
    const fallbackBefore = await metricValue('rate_limit_fallback_total');
    const counts = [];
    for (let i = 0; i < 8; i++) counts.push((await down.hit(key('down'), 60_000)).count);
    expect(counts).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await down.hit(key('down-other'), 60_000)).count, 'keys stay apart in memory').to.equal(1);
    expect(down.fallbackCount()).to.equal(9);
    expect(down.fallingBack()).to.equal(true);
    expect((await metricValue('rate_limit_fallback_total')) - fallbackBefore).to.equal(9);
    expect(await metricValue('rate_limit_fallback_active')).to.be.at.least(1);
    const warnings = lines.filter((l) => String(l.msg).startsWith('rate-limit store: Redis unreachable, counting in this process'));
    expect(warnings, 'one warning per outage, not one per request').to.have.length(1);
    expect(warnings[0]).to.include({ redis: '127.0.0.1:1', level: 'warn' });
  });

  it('falls back when a working Redis goes away, and counts in Redis again once it is back (TCP proxy cut and restored)', async function () {
    const target = new URL(REDIS_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    proxies.push(proxy);
    const viaProxy = store(`redis://127.0.0.1:${proxy.port}`);
    const redisKey = `${prefix}rl:me:partner:flaky`;
    // Connected first (on another key): a first hit that waited for the connection past the command
    // timeout on a loaded machine was counted in memory, and the counts below started one ahead.
    await waitFor('the store connected to Redis', async () => (await viaProxy.hit(key('flaky-connect'), 60_000)) && (await admin.exists(`${prefix}rl:me:partner:flaky-connect`)) === 1 && !viaProxy.fallingBack(), 10_000);
    lines.length = 0;
    const activeBefore = await metricValue('rate_limit_fallback_active');

    for (let i = 1; i <= 3; i++) expect((await viaProxy.hit(key('flaky'), 60_000)).count).to.equal(i);
    expect(await admin.get(redisKey)).to.equal('3');
    expect(viaProxy.fallingBack()).to.equal(false);

    await proxy.cut();
    // Counted in this process's memory from 1 (Redis keeps 3, untouched).
    const during = [];
    for (let i = 0; i < 6; i++) during.push((await viaProxy.hit(key('flaky'), 60_000)).count);
    expect(during).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect(await admin.get(redisKey)).to.equal('3');
    expect(viaProxy.fallingBack()).to.equal(true);
    expect((await metricValue('rate_limit_fallback_active')) - activeBefore).to.equal(1);

    await proxy.restore();
    // ioredis reconnects on its own schedule (at most 2 s between attempts): hit until a count reaches Redis.
    let last: RateLimitHit | undefined;
    await waitFor('counting to return to Redis', async () => {
      last = await viaProxy.hit(key('flaky'), 60_000);
      return !viaProxy.fallingBack();
    }, 15_000, 100);
    expect(viaProxy.fallingBack(), 'counting returned to Redis').to.equal(false);
    expect(last!.count).to.equal(4);
    expect(await admin.get(redisKey)).to.equal('4');
    expect((await metricValue('rate_limit_fallback_active')) - activeBefore).to.equal(0);

    const outageLines = lines.filter((l) => String(l.msg).startsWith('rate-limit store: Redis'));
    expect(outageLines.filter((l) => String(l.msg).startsWith('rate-limit store: Redis unreachable')), 'one warning for the outage').to.have.length(1);
    const back = outageLines.filter((l) => l.msg === 'rate-limit store: Redis is back, counting in Redis again');
    expect(back).to.have.length(1);
    expect(back[0].countedInMemory).to.be.at.least(6);
  });

  it('never logs the Redis password', async function () {
    const secret = `pw-${crypto.randomBytes(6).toString('hex')}`;
    const errorsBefore = lines.filter((l) => l.msg === 'rate-limit store: Redis connection error').length;
    const down = store(`redis://user:${secret}@127.0.0.1:1`);
    await down.hit(key('pw'), 60_000);
    // Both lines that name the Redis server: the fallback warning, and this store's first connection error.
    await waitFor('the connection error line', () => lines.filter((l) => l.msg === 'rate-limit store: Redis connection error').length > errorsBefore, 5_000, 10);
    expect(lines.filter((l) => String(l.msg).startsWith('rate-limit store: Redis') && l.redis === '127.0.0.1:1').length).to.be.at.least(2);
    expect(JSON.stringify(lines)).to.not.include(secret);
  });
});
