import { expect } from 'chai';
import type { RequestHandler } from 'express';
import ownershipPolicy from '../../../policies/ownership';
import { newObjectId } from '../../../gateway/ids';
import { OwnershipCache, type Owner } from '../../../gateway/ownership';
import { makeKeyPair } from '../../support/partners';
import { openServices, policyContext, serve, type InProcessServices } from '../../support/in-process';

describe('ownership: LRU read-through cache and its invalidation', function () {
  describe('OwnershipCache', function () {
    it('loads once per key, shares a load between concurrent misses, and reloads after invalidate', async function () {
      const cache = new OwnershipCache();
      let loads = 0;
      let owner: Owner = { partnerId: 'a' };
      // The first load is held until all three misses are in, so that they overlap for certain.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const loader = async () => {
        loads += 1;
        await held;
        return owner;
      };
      const misses = [cache.get('card', 'k1', loader), cache.get('card', 'k1', loader), cache.get('card', 'k1', loader)];
      release();
      const first = await Promise.all(misses);
      expect(first.map((o) => o?.partnerId)).to.deep.equal(['a', 'a', 'a']);
      expect(loads).to.equal(1);
      owner = { partnerId: 'b' };
      expect((await cache.get('card', 'k1', loader))?.partnerId, 'cached').to.equal('a');
      cache.invalidate('card', 'k1');
      expect((await cache.get('card', 'k1', loader))?.partnerId, 'reloaded after invalidation').to.equal('b');
      expect(loads).to.equal(2);
    });

    it('keeps kinds apart', async function () {
      const cache = new OwnershipCache();
      await cache.get('card', 'same', async () => ({ partnerId: 'card-owner' }));
      expect((await cache.get('individual', 'same', async () => ({ partnerId: 'individual-owner' })))?.partnerId).to.equal('individual-owner');
    });

    it('expires positive entries after ttl and negative ones after the shorter negative ttl', async function () {
      let clock = 1_000;
      const cache = new OwnershipCache({ ttlMs: 200, negativeTtlMs: 50, now: () => clock });
      let owner: Owner | undefined;
      let loads = 0;
      const loader = async () => {
        loads += 1;
        return owner;
      };
      expect(await cache.get('individual', 'x', loader)).to.equal(undefined);
      owner = { partnerId: 'p' };
      expect(await cache.get('individual', 'x', loader), 'negative entry still cached').to.equal(undefined);
      clock += 50;
      expect(await cache.get('individual', 'x', loader), 'negative entry exactly negativeTtlMs old').to.equal(undefined);
      clock += 1;
      expect((await cache.get('individual', 'x', loader))?.partnerId, 'negative entry expired').to.equal('p');
      owner = { partnerId: 'q' };
      clock += 200;
      expect((await cache.get('individual', 'x', loader))?.partnerId, 'positive entry exactly ttlMs old').to.equal('p');
      clock += 1;
      expect((await cache.get('individual', 'x', loader))?.partnerId, 'positive entry expired').to.equal('q');
      expect(loads).to.equal(3);
    });

    it('does not store a load that raced with an invalidation', async function () {
      const cache = new OwnershipCache();
      let release!: () => void;
      const slow = cache.get('card', 'r', () => new Promise<Owner>((resolve) => (release = () => resolve({ partnerId: 'stale' }))));
      cache.invalidate('card', 'r');
      release();
      await slow;
      expect((await cache.get('card', 'r', async () => ({ partnerId: 'fresh' })))?.partnerId).to.equal('fresh');
    });

    it('is bounded', async function () {
      const cache = new OwnershipCache({ max: 10 });
      for (let i = 0; i < 50; i++) await cache.get('card', `k${i}`, async () => ({ partnerId: 'p' }));
      expect(cache.size).to.equal(10);
    });
  });

  describe('ownership policy over real PostgreSQL', function () {
    let services: InProcessServices;
    let server: { url: string; close(): Promise<void> };
    let partnerA: string;
    let partnerB: string;
    let callerId: string;
    let handled = 0;

    async function insertIndividual(id: string, partnerId: string) {
      const userId = newObjectId();
      await services.db.query("INSERT INTO users (id, partner_id, email, first_name, last_name) VALUES ($1, $2, 'x@example.com', 'X', 'Y')", [userId, partnerId]);
      await services.db.query(
        `INSERT INTO individual_onboardings (id, partner_id, user_id, personal_info, address, application_status, dashboard_status, provisioning)
         VALUES ($1, $2, $3, '{}', '{}', 'APPROVED', 'ACTIVE', 'complete')`,
        [id, partnerId, userId]
      );
    }

    before(async function () {
      services = await openServices(undefined, { settings: { ownershipCacheTtlMs: 60_000 } });
      partnerA = (await services.partners.create({ name: 'own-a', issuer: 'https://own-a.example', publicKey: makeKeyPair().publicPem }))._id;
      partnerB = (await services.partners.create({ name: 'own-b', issuer: 'https://own-b.example', publicKey: makeKeyPair().publicPem }))._id;
      const authenticated: RequestHandler = (req, _res, next) => {
        // Stands in for es512-jwt (tested on its own): the caller is whoever the test says.
        req.partner = { _id: callerId, name: 'caller', issuer: 'x', status: 'active', processingEnabled: true, createdAt: '', updatedAt: '' };
        next();
      };
      const policy = ownershipPolicy.policy({ resource: 'individual', param: 'id' }, policyContext(services));
      server = await serve([authenticated, policy, (req, res) => {
        handled += 1;
        res.json(req.ownership);
      }], services.log, '/probe/:id');
    });

    after(async function () {
      await server?.close();
      await services?.close();
    });

    const get = async (id: string) => {
      const before = handled;
      const response = await fetch(`${server.url}/probe/${id}`);
      return { status: response.status, body: (await response.json()) as any, reached: handled > before };
    };

    it('answers 400 for a malformed id, 404 for an unknown one, 403 for another partner\'s, and passes the owner on', async function () {
      const id = newObjectId();
      await insertIndividual(id, partnerA);
      callerId = partnerA;
      const ok = await get(id);
      expect(ok.status).to.equal(200);
      expect(ok.body).to.deep.equal({ kind: 'individual', id, partnerId: partnerA, individualId: id });
      expect((await get('nope')).status).to.equal(400);
      expect((await get(newObjectId())).status).to.equal(404);
      callerId = partnerB;
      const forbidden = await get(id);
      expect(forbidden.status).to.equal(403);
      expect(forbidden.reached).to.equal(false);
    });

    it('serves a changed owner only after invalidation (cache proven by a direct database change)', async function () {
      const id = newObjectId();
      await insertIndividual(id, partnerA);
      callerId = partnerA;
      expect((await get(id)).status).to.equal(200);
      await services.db.query('UPDATE individual_onboardings SET partner_id = $2 WHERE id = $1', [id, partnerB]);
      expect((await get(id)).status, 'still the cached owner').to.equal(200);
      services.ownership.invalidate('individual', id);
      expect((await get(id)).status, 'the new owner is seen once invalidated').to.equal(403);
      callerId = partnerB;
      expect((await get(id)).status).to.equal(200);
    });

    it('does not see a pending (still provisioning) individual', async function () {
      const id = newObjectId();
      await insertIndividual(id, partnerA);
      await services.db.query("UPDATE individual_onboardings SET provisioning = 'pending' WHERE id = $1", [id]);
      callerId = partnerA;
      expect((await get(id)).status).to.equal(404);
    });
  });
});
