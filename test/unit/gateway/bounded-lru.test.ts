import { expect } from 'chai';
import { LRUCache } from 'lru-cache';
import { boundedLru } from '../../../gateway/bounded-lru';

describe('unit: gateway/bounded-lru', function () {
  it('holds at most max entries, dropping the least recently used', function () {
    const cache = boundedLru<string, number>(3);
    for (const key of ['a', 'b', 'c']) cache.set(key, key.charCodeAt(0));
    expect(cache.get('a')).to.equal(97); // a is now the most recently used
    cache.set('d', 100);
    expect(cache.size).to.equal(3);
    expect([...cache.keys()].sort()).to.deep.equal(['a', 'c', 'd']);
    // Setting a key it holds replaces the value and drops nothing.
    cache.set('c', 0);
    expect(cache.size).to.equal(3);
    expect(cache.get('c')).to.equal(0);
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i);
    expect(cache.size).to.equal(3);
    expect([...cache.keys()].sort()).to.deep.equal(['k997', 'k998', 'k999']);
  });

  it("keeps the same entries, in the same order, as lru-cache's preallocating max option", function () {
    // A seeded run of sets, gets, peeks and deletes on both: after each step, the same keys from most
    // to least recently used.
    let seed = 42;
    const random = (n: number) => {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const max = 16;
    const ours = boundedLru<string, number>(max);
    const theirs = new LRUCache<string, number>({ max });
    let fullSteps = 0;
    for (let step = 0; step < 5_000; step++) {
      const key = `k${random(32)}`;
      const op = random(20);
      if (op < 10) {
        ours.set(key, step);
        theirs.set(key, step);
      } else if (op < 16) expect(ours.get(key), `get ${key} at ${step}`).to.equal(theirs.get(key));
      else if (op < 19) expect(ours.peek(key)).to.equal(theirs.peek(key));
      else expect(ours.delete(key)).to.equal(theirs.delete(key));
      expect([...ours.keys()], `step ${step}`).to.deep.equal([...theirs.keys()]);
      if (ours.size === max) fullSteps += 1;
    }
    // Most steps ran on a full cache: evictions were compared, not only inserts.
    expect(fullSteps).to.be.greaterThan(2_500);
  });

  it('measures TTLs on the clock it is given, seeing a clock moved forward at once', function () {
    let clock = 1_000;
    const cache = boundedLru<string, number>(10, { ttl: 100, now: () => clock });
    cache.set('a', 1);
    cache.set('b', 2, { ttl: 500 });
    clock += 100;
    expect(cache.get('a'), 'exactly ttl old').to.equal(1);
    clock += 1;
    expect(cache.get('a'), 'past its ttl').to.equal(undefined);
    expect(cache.get('b'), 'its own longer ttl').to.equal(2);
    clock += 400;
    expect(cache.get('b')).to.equal(undefined);
  });
});
