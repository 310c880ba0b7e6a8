import { expect } from 'chai';
import type { Request, Response } from 'express';
import { OwnershipCache } from '../../../gateway/ownership';
import { cachedPartnerToken, es512Jwt, type Es512JwtServices } from '../../../policies/es512-jwt/es512-jwt';
import { ownership, type OwnershipServices } from '../../../policies/ownership/ownership';
import { VerifiedTokenCache, type VerifiedToken } from '../../../policies/es512-jwt/verified-token-cache';

// Issue 22 item 5: a cache hit is answered in the same turn, without a promise hop; a miss still
// takes the asynchronous way, and the caches count each lookup once.

const nowSeconds = Math.floor(Date.now() / 1000);
const verified: VerifiedToken = {
  partner: { _id: 'p1', name: 'p', issuer: 'https://p.example', status: 'active', processingEnabled: true, createdAt: '', updatedAt: '' },
  kid: 'k1',
  claims: { iss: 'https://p.example', sub: 'p1', iat: nowSeconds - 10, exp: nowSeconds + 60 },
};

function request(fields: Record<string, unknown>): Request {
  return { headers: {}, params: {}, socket: { remoteAddress: '127.0.0.1' }, requestId: 'r', ...fields } as unknown as Request;
}

describe('unit: cache hits without promise hops', function () {
  it('es512-jwt accepts a cached token before the policy returns, and counts one hit', function () {
    const tokenCache = new VerifiedTokenCache();
    tokenCache.set('aaa.bbb.ccc', verified);
    const policy = es512Jwt({ clockSkewSeconds: 30, maxLifetimeSeconds: 300 }, { services: { tokenCache, partners: {}, settings: { trustProxy: false } } as unknown as Es512JwtServices, gatewayConfig: {} });
    const req = request({ headers: { authorization: 'Bearer aaa.bbb.ccc' } });
    let nextArgs: unknown[] | undefined;
    policy(req, {} as Response, (...args: unknown[]) => (nextArgs = args));
    expect(nextArgs).to.deep.equal([]);
    expect(req.partner?._id).to.equal('p1');
    expect(req.auth).to.deep.equal({ kid: 'k1', claims: verified.claims });
    expect(tokenCache.stats()).to.include({ hits: 1, misses: 0 });
  });

  it('es512-jwt: a token the cache does not hold goes the asynchronous way and counts one miss', async function () {
    const tokenCache = new VerifiedTokenCache();
    const policy = es512Jwt({ clockSkewSeconds: 30, maxLifetimeSeconds: 300 }, { services: { tokenCache, partners: {}, settings: { trustProxy: false } } as unknown as Es512JwtServices, gatewayConfig: {} });
    let nextArgs: unknown[] | undefined;
    const done = new Promise<void>((resolve) => {
      // A malformed compact JWS is refused before any partner lookup: no store needed.
      policy(request({ headers: { authorization: 'Bearer not-a-jws' } }), {} as Response, (...args: unknown[]) => {
        nextArgs = args;
        resolve();
      });
    });
    expect(nextArgs).to.equal(undefined);
    await done;
    expect((nextArgs![0] as { code?: string }).code).to.equal('token_malformed');
    expect(tokenCache.stats()).to.include({ hits: 0, misses: 1 });
  });

  it('cachedPartnerToken answers nothing for a missing or non-Bearer header', function () {
    const tokenCache = new VerifiedTokenCache();
    tokenCache.set('aaa.bbb.ccc', verified);
    expect(cachedPartnerToken(undefined, tokenCache, nowSeconds)).to.equal(undefined);
    expect(cachedPartnerToken('Basic aaa.bbb.ccc', tokenCache, nowSeconds)).to.equal(undefined);
    expect(cachedPartnerToken('Bearer aaa.bbb.ccc', tokenCache, nowSeconds)?.kid).to.equal('k1');
  });

  describe('ownership', function () {
    const cardKey = 'CK0000000000000001';
    const services = (cache: OwnershipCache, loads: string[]) =>
      ({ ownership: cache, db: { query: async () => (loads.push('load'), { rowCount: 1, rows: [{ partner_id: 'p1', individual_id: 'i1', tenant_id: null }] }) } }) as unknown as OwnershipServices;

    it('a cached owner decides before the policy returns (the partner\'s own card, and another partner\'s)', async function () {
      const cache = new OwnershipCache();
      const loads: string[] = [];
      const policy = ownership({ resource: 'card', param: 'id' }, { services: services(cache, loads), gatewayConfig: {} });
      // The first check reads the database (a miss)…
      await new Promise<void>((resolve) => policy(request({ params: { id: cardKey }, partner: { _id: 'p1' } }), {} as Response, () => resolve()));
      expect(loads).to.have.length(1);
      // …the next ones are hits, decided in the same turn.
      const own = request({ params: { id: cardKey }, partner: { _id: 'p1' } });
      let ownNext: unknown[] | undefined;
      policy(own, {} as Response, (...args: unknown[]) => (ownNext = args));
      expect(ownNext).to.deep.equal([]);
      expect(own.ownership).to.deep.include({ kind: 'card', id: cardKey, partnerId: 'p1' });
      let otherNext: unknown[] | undefined;
      policy(request({ params: { id: cardKey }, partner: { _id: 'p2' } }), {} as Response, (...args: unknown[]) => (otherNext = args));
      expect((otherNext![0] as { code?: string }).code).to.equal('forbidden');
      expect(loads).to.have.length(1);
      expect(cache.stats()).to.include({ hits: 2, misses: 1 });
    });

    it('cached(): undefined when nothing is held, null for a resource known not to exist', async function () {
      const cache = new OwnershipCache();
      expect(cache.cached('card', cardKey)).to.equal(undefined);
      await cache.get('card', cardKey, async () => undefined);
      expect(cache.cached('card', cardKey)).to.equal(null);
      expect(cache.stats()).to.include({ hits: 1, misses: 1 });
    });
  });
});
