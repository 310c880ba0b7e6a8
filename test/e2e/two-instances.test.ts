import { expect } from 'chai';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { sharedGateway, startGatewayProcess, type Gateway, type GatewayProcess } from '../support/gateway-process';
import { adminCall, registerPartner } from '../support/partners';

/** A short ownership cache (docs/ownership.md) so that the cross-instance window is quick to observe. */
const OWNERSHIP_CACHE_TTL_MS = 1000;

describe('e2e: two gateway instances on one PostgreSQL', function () {
  this.timeout(60_000);
  let a: GatewayProcess;
  let b: GatewayProcess;
  let sandboxes: Sandboxes;

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip(); // LISTEN/NOTIFY needs real PostgreSQL; the embedded database serves one instance
    // Both instances talk to the same upstreams, as in production.
    sandboxes = await startSandboxes();
    const env = {
      OWNERSHIP_CACHE_TTL_MS: String(OWNERSHIP_CACHE_TTL_MS),
      ISSUER_URL: sandboxes.issuer.url,
      PROCESSING_URL: sandboxes.processing.url,
      ACCOUNTS_URL: sandboxes.accounts.url,
    };
    [a, b] = await Promise.all([startGatewayProcess({ env }), startGatewayProcess({ env })]);
  });
  after(async function () {
    await Promise.all([a?.stop(), b?.stop()]);
    await sandboxes?.close();
  });

  const me = async (gateway: GatewayProcess, token: string) =>
    (await fetch(`${gateway.baseUrl}/api/partner/me`, { headers: { authorization: `Bearer ${token}` } })).status;

  async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      if (await check()) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('condition not met in time');
  }

  it('refuses a cached token on every instance once its key is revoked or its partner disabled on one', async function () {
    const partner = await registerPartner(a, 'two-instances');
    const token = await partner.token({ ttlSeconds: 300 });
    expect(await me(a, token)).to.equal(200);
    expect(await me(b, token), 'verified and cached on B').to.equal(200);

    await adminCall(a, 'PATCH', `/admin/partners/${partner.id}`, { status: 'disabled' });
    expect(await me(a, token), 'refused at once on A').to.equal(401);
    const waited = await eventually(async () => (await me(b, token)) === 401);
    expect(waited).to.be.below(5000);

    await adminCall(a, 'PATCH', `/admin/partners/${partner.id}`, { status: 'active' });
    await eventually(async () => (await me(b, token)) === 200);
    await adminCall(b, 'DELETE', `/admin/partners/${partner.id}/keys/${encodeURIComponent(partner.kid)}`);
    expect(await me(b, token)).to.equal(401);
    await eventually(async () => (await me(a, token)) === 401);
  });
  it('replace through A: the new cardKey works through B at once, the old one is refused by both within OWNERSHIP_CACHE_TTL_MS', async function () {
    const partner = await registerPartner(a, 'two-instances-cards');
    const ada = (await api(a, partner, 'POST', '/individual/accounts', { body: individualBody() })).body;
    const issued = await api(a, partner, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) });
    expect(issued.status).to.equal(201);
    const old = issued.body;
    // B reads the card: its ownership cache now holds the old key as the partner's.
    expect((await api(b, partner, 'GET', `/cards/${old.cardKey}/status`)).status).to.equal(200);

    const replaced = await api(a, partner, 'POST', `/cards/${old.cardKey}/replace`, { body: { expDate: old.expDate, reason: 'two instances' } });
    expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
    const replacedAt = Date.now();
    const fresh = replaced.body;
    expect(fresh.cardKey).to.not.equal(old.cardKey);

    // The new key through B, at once: status, activation (a new physical card is I1), nickname.
    expect((await api(b, partner, 'GET', `/cards/${fresh.cardKey}/status`)).body).to.deep.equal({ cardKey: fresh.cardKey, status: 'LOCKED', statusCode: 'I1' });
    const activated = await api(b, partner, 'POST', `/cards/${fresh.cardKey}/activate`, { body: { expDate: fresh.expDate } });
    expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
    expect(activated.body.status).to.equal('ACTIVE');
    expect((await api(b, partner, 'PATCH', `/cards/${fresh.cardKey}/nickname`, { body: { nickname: 'via B' } })).body.nickname).to.equal('via B');

    // The old key: refused by A at once (it invalidated its cache) ...
    const onA = await api(a, partner, 'GET', `/cards/${old.cardKey}/status`);
    expect(onA.status).to.equal(404);
    expect(onA.body).to.include({ code: 'not_found' }).and.not.have.property('upstream');

    // ... and by B once its cached owner expires. Until then B may still accept the key as the
    // partner's, but never with a 2xx: the issuer (replace retires the old key) or our record refuses it.
    const issuer = sandboxUrls(b).issuer;
    expect(issuer).to.equal(sandboxUrls(a).issuer);
    const deadline = replacedAt + OWNERSHIP_CACHE_TTL_MS + 5000;
    let refusedByOwnership: any;
    while (!refusedByOwnership && Date.now() < deadline) {
      const read = await api(b, partner, 'GET', `/cards/${old.cardKey}/status`);
      const write = await api(b, partner, 'PATCH', `/cards/${old.cardKey}/nickname`, { body: { nickname: 'stale' } });
      for (const response of [read, write]) expect(response.status, JSON.stringify(response.body)).to.equal(404);
      if (read.body.upstream === undefined) refusedByOwnership = read;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(refusedByOwnership, `B still looked the old key up at the issuer ${OWNERSHIP_CACHE_TTL_MS + 5000} ms after the replace`).to.not.equal(undefined);

    // From then on the old key never reaches the issuer through either instance.
    await sandboxControl(issuer, 'DELETE', '/__sandbox/requests');
    for (const gateway of [a, b]) {
      for (const [method, path, body] of [
        ['GET', `/cards/${old.cardKey}`, undefined],
        ['POST', `/cards/${old.cardKey}/lock`, { expDate: old.expDate }],
        ['PATCH', `/cards/${old.cardKey}/nickname`, { nickname: 'stale' }],
      ] as const) {
        const response = await api(gateway, partner, method, path, { body });
        expect(response.status, `${method} ${path}`).to.equal(404);
        expect(response.body.code).to.equal('not_found');
      }
    }
    const reached = await sandboxControl(issuer, 'GET', `/__sandbox/requests?path=/cards/${old.cardKey}*`);
    expect(reached, 'the issuer was not asked about the old key').to.deep.equal([]);
    expect((await api(b, partner, 'GET', `/cards/${fresh.cardKey}`)).body).to.include({ cardKey: fresh.cardKey, nickname: 'via B', status: 'ACTIVE' });
  });
});

/**
 * Ownership after replace or re-issue, with the default 30 s ownership cache: the change is
 * announced on the PostgreSQL change feed in the transaction of the change, so the other instance
 * forgets the old and new keys at once instead of serving its cached owner until the TTL.
 */
describe('e2e: two gateway instances, ownership changes seen through the change feed', function () {
  this.timeout(60_000);
  /** The run's shared gateway (default ownership cache, the run's database). */
  let a: Gateway;
  /** A second instance on the same database and the same upstreams: A's sandboxes. */
  let b: GatewayProcess;
  /** Far below the default 30 s TTL that served the old owner before the feed carried ownership changes. */
  const FEED_DEADLINE_MS = 2000;

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip();
    a = await sharedGateway();
    const upstreams = sandboxUrls(a);
    b = await startGatewayProcess({ env: { ISSUER_URL: upstreams.issuer, PROCESSING_URL: upstreams.processing, ACCOUNTS_URL: upstreams.accounts } });
  });
  after(async function () {
    await b?.stop();
  });

  /** Reads `path` on B until our own ownership check refuses it (404 without `upstream`); every answer meanwhile is a 404. */
  async function refusedByOwnershipOnB(partner: any, path: string): Promise<void> {
    const deadline = Date.now() + FEED_DEADLINE_MS;
    for (;;) {
      const read = await api(b, partner, 'GET', path);
      expect(read.status, JSON.stringify(read.body)).to.equal(404);
      if (read.body.upstream === undefined) return;
      if (Date.now() > deadline) throw new Error(`B still looked ${path} up at the issuer ${FEED_DEADLINE_MS} ms after the change (cached owner)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  for (const operation of ['replace', 'reissue'] as const) {
    it(`${operation} through A: B serves the new cardKey and refuses the old one itself at once, not after its cache TTL`, async function () {
      const partner = await registerPartner(a, `two-instances-feed-${operation}`);
      const ada = (await api(a, partner, 'POST', '/individual/accounts', { body: individualBody() })).body;
      const issued = await api(a, partner, 'POST', `/individual/accounts/${ada._id}/cards/${operation === 'replace' ? 'physical' : 'virtual'}`, { body: cardBody(ada.clientID) });
      expect(issued.status).to.equal(201);
      const old = issued.body;
      // B caches the old key's owner (30 s by default).
      expect((await api(b, partner, 'GET', `/cards/${old.cardKey}/status`)).status).to.equal(200);

      const changed = await api(a, partner, 'POST', `/cards/${old.cardKey}/${operation}`, { body: { expDate: old.expDate, reason: 'feed' } });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(operation === 'replace' ? 200 : 201);
      const fresh = changed.body;
      expect((await api(b, partner, 'GET', `/cards/${fresh.cardKey}/status`)).status, 'the new key through B').to.equal(200);
      if (operation === 'replace') {
        await refusedByOwnershipOnB(partner, `/cards/${old.cardKey}/status`);
      } else {
        // A re-issued card stays ours, CLOSED: B reads it from our record as S4 and refuses a lock itself.
        const lock = await api(b, partner, 'POST', `/cards/${old.cardKey}/lock`, { body: { expDate: old.expDate } });
        expect(lock.status, JSON.stringify(lock.body)).to.equal(409);
        expect(lock.body).to.include({ code: 'invalid_transition', statusCode: 'S4' });
      }
    });
  }
});
