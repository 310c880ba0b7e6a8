import { expect } from 'chai';
import { MemoryRateLimitStore } from '../../../policies/rate-limit/memory-store';
import type { RateLimitKey } from '../../../policies/rate-limit/store';

describe('rate-limit: in-memory store', function () {
  let clock = 0;
  const now = () => clock;
  const partner = (id: string, route = 'me'): RateLimitKey => ({ route, subject: 'partner', id });

  beforeEach(function () {
    clock = 1_000;
  });

  it('counts per key within a window that starts at the first request', async function () {
    const store = new MemoryRateLimitStore({ now });
    expect(await store.hit(partner('a'), 60_000)).to.deep.equal({ count: 1, resetMs: 60_000 });
    clock += 20_000;
    expect(await store.hit(partner('a'), 60_000)).to.deep.equal({ count: 2, resetMs: 40_000 });
    expect(await store.hit(partner('b'), 60_000), 'another partner').to.deep.equal({ count: 1, resetMs: 60_000 });
    expect(await store.hit(partner('a', 'list-cards'), 60_000), 'another route').to.deep.equal({ count: 1, resetMs: 60_000 });
    expect(await store.hit({ route: 'me', subject: 'client', id: 'a' }, 60_000), 'a client IP equal to a partner id').to.deep.equal({ count: 1, resetMs: 60_000 });
  });

  it('answers whole milliseconds with a fractional clock (a window of 60 s never reads as 61 s)', async function () {
    // (996886.8362387595 + 60000) - 996886.8362387595 is 60000.00000000012 in floating point.
    clock = 996886.8362387595;
    const store = new MemoryRateLimitStore({ now });
    expect(await store.hit(partner('a'), 60_000)).to.deep.equal({ count: 1, resetMs: 60_000 });
  });

  it('starts a new window once the old one is over', async function () {
    const store = new MemoryRateLimitStore({ now });
    for (let i = 0; i < 3; i++) await store.hit(partner('a'), 1_000);
    clock += 999;
    expect((await store.hit(partner('a'), 1_000)).count).to.equal(4);
    clock += 1;
    expect(await store.hit(partner('a'), 1_000)).to.deep.equal({ count: 1, resetMs: 1_000 });
  });

  it('is bounded, and a flood of client IPs cannot evict partner counts', async function () {
    const store = new MemoryRateLimitStore({ now, maxPartnerKeys: 10, maxClientKeys: 10 });
    for (let i = 0; i < 5; i++) await store.hit(partner('a'), 60_000);
    for (let i = 0; i < 1_000; i++) await store.hit({ route: 'health-check', subject: 'client', id: `10.0.${i >> 8}.${i & 255}` }, 60_000);
    expect(store.size()).to.equal(11);
    expect((await store.hit(partner('a'), 60_000)).count, 'partner count kept').to.equal(6);
  });
});
