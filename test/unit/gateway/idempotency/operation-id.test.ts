import { expect } from 'chai';
import { KeyClaimStore, PARTNER_KEYS } from '../../../../gateway/idempotency/key-claims';
import { STALE_AFTER_SECONDS } from '../../../../policies/idempotency/claim-keeper';
import { isObjectId } from '../../../../gateway/ids';
import { makeKeyPair } from '../../../support/partners';
import { openServices, type InProcessServices } from '../../../support/in-process';

/**
 * Issue 12, item 1: the upstream operation id of an Idempotency-Key (migration 008) is written when
 * the key is first claimed and kept by every later claim of the same request: after a 5xx release
 * and after the takeover of an abandoned claim. Another request with a released key starts afresh.
 */
describe('key-claim store (partners\' keys): one upstream operation id per key', function () {
  let services: InProcessServices;
  let store: KeyClaimStore;
  const terms = { ttlHours: 24, leaseSeconds: STALE_AFTER_SECONDS };
  let partnerId: string;

  before(async function () {
    services = await openServices();
    store = new KeyClaimStore(services.db, PARTNER_KEYS);
    partnerId = (await services.partners.create({ name: 'opid', issuer: 'https://opid.example', publicKey: makeKeyPair().publicPem }))._id;
  });
  after(async function () {
    await services?.close();
  });

  async function claimed(key: string, hash = 'h1') {
    const claim = await store.claim({ partnerId, key, route: 'POST /x', requestHash: hash }, terms);
    if (claim.outcome !== 'claimed') throw new Error(`expected a claim, got ${claim.outcome}`);
    return claim.claim;
  }

  it('a retry after a 5xx (released key) carries the operation id of the first attempt', async function () {
    const first = await claimed('released-1');
    expect(isObjectId(first.operationId)).to.equal(true);
    expect(first.resumed).to.equal(false);
    await store.release(first);
    const retry = await claimed('released-1');
    expect(retry.operationId).to.equal(first.operationId);
    expect(retry.resumed).to.equal(true);
    expect(retry.claimId).to.not.equal(first.claimId);
  });

  it('the takeover of an abandoned claim (heartbeat stopped) carries the same operation id; the old holder can no longer complete it', async function () {
    const first = await claimed('abandoned-1');
    await services.db.query("UPDATE idempotency_keys SET heartbeat_at = now() - interval '1 minute' WHERE partner_id = $1 AND key = $2", [partnerId, 'abandoned-1']);
    const taken = await claimed('abandoned-1');
    expect(taken.operationId).to.equal(first.operationId);
    expect(taken.resumed).to.equal(true);
    expect(await store.complete(first, { status: 201, body: Buffer.from('{}'), headers: {} })).to.equal(false);
    expect(await store.complete(taken, { status: 201, body: Buffer.from('{}'), headers: {} })).to.equal(true);
  });

  it('a claim whose heartbeat is fresh is not taken over: 409 in progress', async function () {
    await claimed('fresh-1');
    expect((await store.claim({ partnerId, key: 'fresh-1', route: 'POST /x', requestHash: 'h1' }, terms)).outcome).to.equal('in_progress');
  });

  it('another request with a released key starts afresh: a new operation id', async function () {
    const first = await claimed('released-2', 'h1');
    await store.release(first);
    const other = await claimed('released-2', 'h2');
    expect(other.operationId).to.not.equal(first.operationId);
    expect(other.resumed).to.equal(false);
  });

  it('the retention pass deletes expired keys only', async function () {
    await claimed('expired-1');
    await claimed('live-1');
    await services.db.query("UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE partner_id = $1 AND key = 'expired-1'", [partnerId]);
    expect(await store.deleteExpired(1)).to.be.at.least(1);
    const left = await services.db.query<{ key: string }>("SELECT key FROM idempotency_keys WHERE partner_id = $1 AND key IN ('expired-1', 'live-1')", [partnerId]);
    expect(left.rows.map((r) => r.key)).to.deep.equal(['live-1']);
  });

  it('another request with a completed key is still a mismatch', async function () {
    const first = await claimed('completed-1', 'h1');
    await store.complete(first, { status: 201, body: Buffer.from('{}'), headers: {} });
    expect((await store.claim({ partnerId, key: 'completed-1', route: 'POST /x', requestHash: 'h2' }, terms)).outcome).to.equal('mismatch');
  });
});
