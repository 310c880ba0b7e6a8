import crypto from 'node:crypto';
import { expect } from 'chai';
import Redis from 'ioredis';
import { createLogger } from '../../../gateway/logging/logger';
import { RedisRateLimitStore, type RateLimitKey } from '../../../gateway/rate-limit';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rate-limit: Redis store (real Redis at 127.0.0.1:6379)', function () {
  const prefix = `pgw-test-${Date.now().toString(36)}-${crypto.randomBytes(3).toString('hex')}:`;
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const stores: RedisRateLimitStore[] = [];
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
    await admin.quit();
  });

  it('shares one count between two stores (two gateway instances), with the window as the key expiry', async function () {
    const a = store();
    const b = store();
    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      counts.push((await a.hit(key('acme'), 60_000))!.count);
      counts.push((await b.hit(key('acme'), 60_000))!.count);
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
    expect((await a.hit(key('apart-2'), 60_000))!.count).to.equal(1);
    expect((await a.hit(key('apart-1', 'list-cards'), 60_000))!.count).to.equal(1);
    expect((await a.hit({ route: 'me', subject: 'client', id: 'apart-1' }, 60_000))!.count).to.equal(1);
    expect((await a.hit(key('apart-1'), 60_000))!.count).to.equal(2);
  });

  it('starts a new count when the window expires', async function () {
    const a = store();
    await a.hit(key('short'), 150);
    expect((await a.hit(key('short'), 150))!.count).to.equal(2);
    await sleep(300);
    expect((await a.hit(key('short'), 150))!.count).to.equal(1);
  });

  it('restores a lost expiry (a key without TTL gets the window again)', async function () {
    const a = store();
    await admin.set(`${prefix}rl:me:partner:no-ttl`, '7');
    const hit = (await a.hit(key('no-ttl'), 60_000))!;
    expect(hit.count).to.equal(8);
    expect(await admin.pttl(`${prefix}rl:me:partner:no-ttl`)).to.be.within(1, 60_000);
  });

  it('fails open when Redis is unreachable: null (let through), counted, one throttled warning', async function () {
    const down = store('redis://127.0.0.1:1');
    lines.length = 0;
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await down.hit(key('down'), 60_000));
    expect(results).to.deep.equal([null, null, null, null, null]);
    expect(down.failOpenCount()).to.equal(5);
    const warnings = lines.filter((l) => l.msg === 'rate-limit store unreachable: requests go through uncounted (fail open)');
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include({ redis: '127.0.0.1:1', level: 'warn' });
  });

  it('never logs the Redis password', async function () {
    const secret = `pw-${crypto.randomBytes(6).toString('hex')}`;
    const down = store(`redis://user:${secret}@127.0.0.1:1`);
    await down.hit(key('pw'), 60_000);
    await sleep(50);
    expect(JSON.stringify(lines)).to.not.include(secret);
  });
});
