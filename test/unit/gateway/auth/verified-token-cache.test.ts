import { expect } from 'chai';
import { VerifiedTokenCache, type VerifiedToken } from '../../../../gateway/auth/verified-token-cache';

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
});
