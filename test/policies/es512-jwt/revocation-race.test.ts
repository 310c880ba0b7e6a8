import { expect } from 'chai';
import { signPartnerToken } from '../../../scripts/token';
import { verifyPartnerToken } from '../../../policies/es512-jwt/es512-jwt';
import type { PartnerStore } from '../../../gateway/partners/partner-store';
import { makeKeyPair } from '../../support/partners';
import { openServices, type InProcessServices } from '../../support/in-process';

const params = { clockSkewSeconds: 30, maxLifetimeSeconds: 300 };

/**
 * The race of a verification with a revocation, made deterministic: the real partner store on the
 * run's PostgreSQL, with its `credentials` read followed (before the verifier gets the answer) by
 * the admin change. The verification read the old credentials, so it may succeed once, but its
 * result must not be cached: the same token is refused from the next request on.
 */
describe('es512-jwt policy: a revocation landing between the credentials read and the cache store (real PostgreSQL)', function () {
  let services: InProcessServices;

  before(async function () {
    services = await openServices();
  });
  after(async function () {
    await services?.close();
  });

  /** Runs `change` right after the next credentials read of the store, before the verifier sees the result. */
  function changeAfterNextRead(partners: PartnerStore, change: () => Promise<unknown>): () => void {
    const original = partners.credentials;
    partners.credentials = async function (this: PartnerStore, id: string) {
      partners.credentials = original;
      const read = await original.call(this, id);
      await change();
      return read;
    };
    return () => {
      partners.credentials = original;
    };
  }

  const cases = [
    { name: 'key revoked', change: (id: string, kid: string) => services.partners.revokeKey(id, kid), refusedWith: 'key_unknown' },
    { name: 'partner disabled', change: (id: string) => services.partners.setStatus(id, 'disabled'), refusedWith: 'partner_disabled' },
  ];
  for (const testCase of cases) {
    it(`${testCase.name} while a verification runs: the result is not cached, the next request is refused (${testCase.refusedWith})`, async function () {
      const keys = makeKeyPair();
      const issuer = `https://race-${testCase.refusedWith}.example`;
      const created = await services.partners.create({ name: `race ${testCase.name}`, issuer, publicKey: keys.publicPem });
      const token = await signPartnerToken({ partnerId: created._id, issuer, privateKey: keys.privateKey, ttlSeconds: 60 });
      const restore = changeAfterNextRead(services.partners, () => testCase.change(created._id, created.keys[0].kid));
      try {
        const first = await verifyPartnerToken(`Bearer ${token}`, services.partners, params, undefined, services.tokenCache);
        expect(first.partner._id, 'the verification that read before the change').to.equal(created._id);
      } finally {
        restore();
      }
      let refused: unknown;
      try {
        await verifyPartnerToken(`Bearer ${token}`, services.partners, params, undefined, services.tokenCache);
      } catch (err) {
        refused = err;
      }
      expect(refused, 'the token was served from the cache after the change').to.be.an('error');
      expect((refused as { code?: string }).code).to.equal(testCase.refusedWith);
    });
  }

  it('a verification that read after the change finished is cached as usual', async function () {
    const keys = makeKeyPair();
    const issuer = 'https://race-control.example';
    const created = await services.partners.create({ name: 'race control', issuer, publicKey: keys.publicPem });
    const token = await signPartnerToken({ partnerId: created._id, issuer, privateKey: keys.privateKey, ttlSeconds: 60 });
    await verifyPartnerToken(`Bearer ${token}`, services.partners, params, undefined, services.tokenCache);
    const hits = services.tokenCache.stats().hits;
    await verifyPartnerToken(`Bearer ${token}`, services.partners, params, undefined, services.tokenCache);
    expect(services.tokenCache.stats().hits).to.equal(hits + 1);
  });

  it('remembers an unknown partner id briefly: repeated tokens naming it read the database once', async function () {
    const unknownId = 'dddddddddddddddddddddd01';
    let reads = 0;
    const original = services.partners.credentials;
    services.partners.credentials = async function (this: PartnerStore, id: string) {
      if (id === unknownId) reads += 1;
      return original.call(this, id);
    };
    try {
      for (let i = 0; i < 5; i++) {
        const token = await signPartnerToken({ partnerId: unknownId, issuer: 'https://nobody.example', privateKey: makeKeyPair().privateKey, ttlSeconds: 60 });
        let code: string | undefined;
        await verifyPartnerToken(`Bearer ${token}`, services.partners, params, undefined, services.tokenCache).catch((err: { code?: string }) => (code = err.code));
        expect(code).to.equal('unknown_partner');
      }
    } finally {
      services.partners.credentials = original;
    }
    expect(reads).to.equal(1);
  });

  it('reads a partner\'s credentials once for its fresh tokens, and again after the partner changed: a token of a revoked key is refused', async function () {
    const keys = makeKeyPair();
    const issuer = 'https://fresh-tokens.example';
    const created = await services.partners.create({ name: 'fresh tokens', issuer, publicKey: keys.publicPem });
    const fresh = () => signPartnerToken({ partnerId: created._id, issuer, privateKey: keys.privateKey, ttlSeconds: 60 });
    let reads = 0;
    const original = services.partners.credentials;
    services.partners.credentials = async function (this: PartnerStore, id: string) {
      if (id === created._id) reads += 1;
      return original.call(this, id);
    };
    try {
      for (let i = 0; i < 3; i++) {
        const verified = await verifyPartnerToken(`Bearer ${await fresh()}`, services.partners, params, undefined, services.tokenCache);
        expect(verified.partner._id).to.equal(created._id);
      }
      expect(reads, 'three fresh tokens, one read').to.equal(1);
      await services.partners.revokeKey(created._id, created.keys[0].kid);
      let code: string | undefined;
      await verifyPartnerToken(`Bearer ${await fresh()}`, services.partners, params, undefined, services.tokenCache).catch((err: { code?: string }) => (code = err.code));
      expect(code, 'the kept credentials were dropped with the revocation').to.equal('key_unknown');
      expect(reads).to.equal(2);
    } finally {
      services.partners.credentials = original;
    }
  });
});
