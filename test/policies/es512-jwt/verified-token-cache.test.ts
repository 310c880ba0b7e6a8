import { expect } from 'chai';
import type { PartnerCredentials } from '../../../gateway/partners/partner-store';
import { CREDENTIALS_TTL_MS, FEED_DOWN_TRUST_MS, UNKNOWN_PARTNER_TTL_MS, VerifiedTokenCache, type VerifiedToken } from '../../../policies/es512-jwt/verified-token-cache';

const credentialsOf = (partnerId: string): PartnerCredentials => ({ partner: verified(partnerId, 0).partner, keys: [], revokedKids: new Set() });

const verified = (partnerId: string, exp: number): VerifiedToken => ({
  partner: { _id: partnerId, name: 'p', issuer: 'https://p.example', status: 'active', processingEnabled: true, createdAt: '', updatedAt: '' },
  kid: 'k1',
  claims: { iss: 'https://p.example', sub: partnerId, iat: exp - 60, exp },
});

describe('unit: auth/verified-token-cache', function () {
  const now = 1_800_000_000_000;
  const exp = now / 1000 + 60;

  it('answers the same token until its exp, never after', function () {
    const cache = new VerifiedTokenCache();
    cache.set('tok.en.1', verified('a', exp), now);
    expect(cache.get('tok.en.1', now + 59_000)?.partner._id).to.equal('a');
    expect(cache.get('tok.en.1', exp * 1000)).to.equal(undefined);
    expect(cache.get('tok.en.1', exp * 1000 + 1)).to.equal(undefined);
  });

  it('treats a token differing in one byte as another token', function () {
    const cache = new VerifiedTokenCache();
    cache.set('header.payload.signatureA', verified('a', exp), now);
    expect(cache.get('header.payload.signatureB', now)).to.equal(undefined);
    expect(cache.get('header.payload.signatureA ', now)).to.equal(undefined);
  });

  it('does not store a token already past its exp', function () {
    const cache = new VerifiedTokenCache();
    cache.set('old', verified('a', now / 1000 - 1), now);
    expect(cache.stats().size).to.equal(0);
  });

  it('forgets every token of a partner when it changes, and only that partner\'s', function () {
    const cache = new VerifiedTokenCache();
    cache.set('a1', verified('a', exp), now);
    cache.set('a2', verified('a', exp), now);
    cache.set('b1', verified('b', exp), now);
    cache.evictPartner('a');
    expect(cache.get('a1', now)).to.equal(undefined);
    expect(cache.get('a2', now)).to.equal(undefined);
    expect(cache.get('b1', now)?.partner._id).to.equal('b');
    cache.set('a1', verified('a', exp), now);
    expect(cache.get('a1', now)?.partner._id, 'a token verified after the change is cached again').to.equal('a');
  });

  it('is bounded and counts hits and misses', function () {
    const cache = new VerifiedTokenCache({ max: 5 });
    for (let i = 0; i < 20; i++) cache.set(`t${i}`, verified('a', exp), now);
    expect(cache.stats().size).to.equal(5);
    cache.get('t19', now);
    cache.get('t0', now);
    expect(cache.stats()).to.include({ hits: 1, misses: 1 });
  });

  it('does not store a verification whose partner changed after its snapshot (taken before the credentials read)', function () {
    const cache = new VerifiedTokenCache();
    const since = cache.snapshot('a');
    cache.evictPartner('a'); // a revocation lands while the verification runs
    cache.set('a1', verified('a', exp), now, since);
    expect(cache.get('a1', now)).to.equal(undefined);
    expect(cache.stats().size).to.equal(0);
    cache.set('a1', verified('a', exp), now, cache.snapshot('a'));
    expect(cache.get('a1', now)?.partner._id).to.equal('a');
  });

  it('does not store a verification begun before a clear (missed notifications)', function () {
    const cache = new VerifiedTokenCache();
    const since = cache.snapshot('a');
    cache.clear();
    cache.set('a1', verified('a', exp), now, since);
    expect(cache.stats().size).to.equal(0);
  });

  it('while the change feed is down, trusts an entry for FEED_DOWN_TRUST_MS after its credentials were read, then verifies again', function () {
    let clock = 5_000;
    const cache = new VerifiedTokenCache({ clock: () => clock });
    cache.set('old', verified('a', exp), now, cache.snapshot('a'));
    clock += 10_000;
    cache.set('fresh', verified('a', exp), now, cache.snapshot('a'));
    expect(cache.get('old', now)?.partner._id, 'feed up: trusted until exp').to.equal('a');
    cache.feedDown();
    expect(cache.get('old', now), 'read 10 s ago, feed down').to.equal(undefined);
    expect(cache.get('fresh', now)?.partner._id, 'read just now').to.equal('a');
    clock += FEED_DOWN_TRUST_MS;
    expect(cache.get('fresh', now)?.partner._id, 'read exactly FEED_DOWN_TRUST_MS ago').to.equal('a');
    clock += 1;
    expect(cache.get('fresh', now)).to.equal(undefined);
    cache.feedUp();
    expect(cache.get('old', now)?.partner._id, 'feed up again').to.equal('a');
  });

  it('remembers unknown partner ids until a change of that id, and not while the feed is down', function () {
    const cache = new VerifiedTokenCache();
    cache.setUnknown(cache.snapshot('x'));
    expect(cache.isUnknown('x')).to.equal(true);
    expect(cache.isUnknown('y')).to.equal(false);
    cache.evictPartner('x'); // created meanwhile, here or elsewhere
    expect(cache.isUnknown('x')).to.equal(false);
    const since = cache.snapshot('x');
    cache.evictPartner('x');
    cache.setUnknown(since);
    expect(cache.isUnknown('x'), 'created while the look-up ran').to.equal(false);
    cache.setUnknown(cache.snapshot('x'));
    cache.feedDown();
    expect(cache.isUnknown('x')).to.equal(false);
  });

  it('forgets an unknown partner id unknownPartnerTtlMs after the look-up, and a token at its exp, on the cache\'s clock', function () {
    let clock = now;
    const cache = new VerifiedTokenCache({ clock: () => clock, unknownPartnerTtlMs: 2_000 });
    cache.setUnknown(cache.snapshot('x'));
    cache.set('a1', verified('a', exp));
    clock += 2_000;
    expect(cache.isUnknown('x'), 'exactly unknownPartnerTtlMs later').to.equal(true);
    clock += 1;
    expect(cache.isUnknown('x')).to.equal(false);
    expect(cache.get('a1')?.partner._id, 'before its exp').to.equal('a');
    clock = exp * 1000;
    expect(cache.get('a1'), 'at its exp').to.equal(undefined);
  });

  it('remembers unknown partner ids briefly (seconds, not minutes)', function () {
    expect(UNKNOWN_PARTNER_TTL_MS).to.be.within(1000, 60_000);
  });

  it('keeps a partner\'s credentials until the partner changes or the cache is cleared', function () {
    const cache = new VerifiedTokenCache();
    const a = credentialsOf('a');
    cache.setCredentials(cache.snapshot('a'), a);
    cache.setCredentials(cache.snapshot('b'), credentialsOf('b'));
    expect(cache.credentials('a')?.credentials).to.equal(a);
    cache.evictPartner('a'); // a key revoked or added, the partner disabled
    expect(cache.credentials('a'), 'after a change of the partner').to.equal(undefined);
    expect(cache.credentials('b')?.credentials.partner._id, 'another partner keeps its own').to.equal('b');
    cache.clear();
    expect(cache.credentials('b'), 'after a clear').to.equal(undefined);
  });

  it('does not keep credentials whose partner changed, or the cache was cleared, after the snapshot taken before their read', function () {
    const cache = new VerifiedTokenCache();
    const since = cache.snapshot('a');
    cache.evictPartner('a'); // a revocation lands while the credentials are read
    cache.setCredentials(since, credentialsOf('a'));
    expect(cache.credentials('a')).to.equal(undefined);
    const beforeClear = cache.snapshot('a');
    cache.clear();
    cache.setCredentials(beforeClear, credentialsOf('a'));
    expect(cache.credentials('a')).to.equal(undefined);
  });

  it('keeps credentials CREDENTIALS_TTL_MS at most, FEED_DOWN_TRUST_MS while the feed is down, and hands back the snapshot of their read', function () {
    let clock = 5_000;
    const cache = new VerifiedTokenCache({ clock: () => clock });
    cache.setCredentials(cache.snapshot('a'), credentialsOf('a'));
    expect(cache.credentials('a')?.since.at, 'a token verified with them is as old as their read').to.equal(5_000);
    clock += FEED_DOWN_TRUST_MS + 1;
    expect(cache.credentials('a')?.credentials.partner._id, 'feed up').to.equal('a');
    cache.feedDown();
    expect(cache.credentials('a'), 'feed down, read longer than FEED_DOWN_TRUST_MS ago').to.equal(undefined);
    cache.feedUp();
    clock = 5_000 + CREDENTIALS_TTL_MS;
    expect(cache.credentials('a')?.credentials.partner._id, 'read exactly CREDENTIALS_TTL_MS ago').to.equal('a');
    clock += 1;
    expect(cache.credentials('a')).to.equal(undefined);
  });

  it('keeps credentials briefly (seconds, not minutes)', function () {
    expect(CREDENTIALS_TTL_MS).to.be.within(1000, 60_000);
  });
});
