import { expect } from 'chai';
import fc from 'fast-check';
import { requestHash } from '../../../gateway/idempotency/key-claims';
import { requestFingerprint } from '../../../sandbox/shared/idempotency';

/**
 * The hash an `Idempotency-Key` is stored with. Stored keys live 24 hours across deployments, so a
 * change of how the hash is computed must leave every stored hash the same: the fixed vectors
 * below were computed by the hand-written canonical JSON the gateway used before
 * safe-stable-stringify took its place.
 */
describe('policies: idempotency request hash', () => {
  const body = { z: 1, a: [{ y: 'é', b: null }, 2.5, -0, 1e21, true], m: { '\u2028k': 'x"y' } };

  it('hashes a request as before (stored keys stay valid across the change of implementation)', () => {
    expect(requestHash('POST /api/partner/individual/accounts/:id/cards/virtual', { id: '665f1c2a9b1e8a0012345678' }, body)).to.equal(
      '4ee974792ed999365320e9004bc3259c06b8ab1db2c0dc204d5af549791b109a'
    );
    expect(requestFingerprint('POST', '/accounts', body)).to.equal('46570bcc2cfac15021b5c74c39ed7fda8df012f07559add909015bcecafc42ea');
  });

  it('ignores the order of object keys, at any depth, and tells apart bodies that differ', () => {
    const shuffled = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(shuffled);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, shuffled(v)]));
      return value;
    };
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(requestHash('POST /x', {}, shuffled(a))).to.equal(requestHash('POST /x', {}, a));
        if (JSON.stringify(a) !== JSON.stringify(b) && JSON.stringify(shuffled(a)) !== JSON.stringify(b)) {
          // Different JSON values hash differently unless they are the same value with keys reordered.
          const sameValue = requestHash('POST /x', {}, a) === requestHash('POST /x', {}, b);
          if (sameValue) expect(JSON.parse(JSON.stringify(a))).to.deep.equal(JSON.parse(JSON.stringify(b)));
        }
      }),
      { numRuns: 300 }
    );
  });
});
