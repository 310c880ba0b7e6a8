import crypto from 'node:crypto';
import { expect } from 'chai';
import { adminRequestHash, claimAdminKey, completeAdminKey, completedAdminResponse, keepAdminKey, releaseAdminKey, type AdminKeyClaim } from '../../../../gateway/idempotency/admin-keys';
import { isObjectId } from '../../../../gateway/ids';
import { openServices, type InProcessServices } from '../../../support/in-process';

/**
 * The admin API's idempotency keys (gateway/idempotency/admin-keys.ts, migration 012), on the run's
 * PostgreSQL: one operation id per key, kept by every retry; the recorded answer replayed; a key of
 * another request refused; a running claim excluded until its lease runs out.
 */
describe('admin idempotency keys: one operation id per key, one recorded answer', function () {
  let services: InProcessServices;
  const route = 'POST /admin/cards/CK1/status';
  const hash = adminRequestHash(route, { status: 'LOCKED', reason: 'r' });
  const newKey = () => `test-${crypto.randomUUID()}`;
  async function claimed(key: string, lease = 60): Promise<AdminKeyClaim> {
    const outcome = await claimAdminKey(services.db, key, route, hash, lease);
    if (outcome.outcome !== 'claimed') throw new Error(`expected a claim, got ${outcome.outcome}`);
    return outcome.claim;
  }

  before(async function () {
    services = await openServices();
  });
  after(async function () {
    await services?.close();
  });

  it('hashes the same request the same whatever its key order, and another body otherwise', function () {
    expect(adminRequestHash(route, { reason: 'r', status: 'LOCKED' })).to.equal(hash);
    expect(adminRequestHash(route, { status: 'CLOSED', reason: 'r' })).to.not.equal(hash);
    expect(adminRequestHash('POST /admin/cards/CK2/status', { status: 'LOCKED', reason: 'r' })).to.not.equal(hash);
  });

  it('claims a new key with a new operation id; while it runs, the same key is in progress and another request a mismatch', async function () {
    const key = newKey();
    const first = await claimed(key);
    expect(isObjectId(first.operationId)).to.equal(true);
    expect(first.resumed).to.equal(false);
    expect((await claimAdminKey(services.db, key, route, hash, 60)).outcome).to.equal('in_progress');
    expect((await claimAdminKey(services.db, key, route, adminRequestHash(route, { status: 'CLOSED', reason: 'r' }), 60)).outcome).to.equal('mismatch');
  });

  it('a released key is taken over by the same request with its operation id; a completed one replays its answer', async function () {
    const key = newKey();
    const first = await claimed(key);
    await releaseAdminKey(services.db, first);
    const retry = await claimed(key);
    expect(retry.operationId).to.equal(first.operationId);
    expect(retry.resumed).to.equal(true);
    // The first claim is no longer the key's: it can neither complete nor release it.
    expect(await services.db.transaction((tx) => completeAdminKey(tx, first, { status: 200, body: { no: 1 } }))).to.equal(false);
    await releaseAdminKey(services.db, first);
    expect((await claimAdminKey(services.db, key, route, hash, 60)).outcome).to.equal('in_progress');

    const answer = { cardKey: 'CK1', status: 'LOCKED', statusCode: 'L1' };
    expect(await services.db.transaction((tx) => completeAdminKey(tx, retry, { status: 200, body: answer }))).to.equal(true);
    expect(await claimAdminKey(services.db, key, route, hash, 60)).to.deep.equal({ outcome: 'replay', response: { status: 200, body: answer } });
    expect(await completedAdminResponse(services.db, key)).to.deep.equal({ status: 200, body: answer });
    // A completed key is never released by a late holder.
    await releaseAdminKey(services.db, retry);
    expect((await claimAdminKey(services.db, key, route, hash, 60)).outcome).to.equal('replay');
  });

  it('a claim whose lease ran out (its process died) is taken over with its operation id, and only the new holder completes it', async function () {
    const key = newKey();
    const dead = await claimed(key);
    await services.db.query("UPDATE admin_idempotency_keys SET claimed_at = now() - interval '31 seconds' WHERE key = $1", [key]);
    expect((await claimAdminKey(services.db, key, route, hash, 60)).outcome, 'within a 60 s lease').to.equal('in_progress');
    const taken = await claimed(key, 30);
    expect(taken.operationId).to.equal(dead.operationId);
    expect(await services.db.transaction((tx) => completeAdminKey(tx, dead, { status: 200, body: {} }))).to.equal(false);
    expect(await services.db.transaction((tx) => completeAdminKey(tx, taken, { status: 200, body: { ok: true } }))).to.equal(true);
  });

  it('a running request keeps renewing its lease, so its key is never taken over; once it stops, a lapsed lease is', async function () {
    const key = newKey();
    const running = await claimed(key, 30);
    const age = () => services.db.query("UPDATE admin_idempotency_keys SET claimed_at = now() - interval '31 seconds' WHERE key = $1", [key]);
    const leaseAge = async () => Number((await services.db.query<{ s: string }>('SELECT extract(epoch FROM now() - claimed_at) AS s FROM admin_idempotency_keys WHERE key = $1', [key])).rows[0]!.s);
    const errors: unknown[] = [];
    const stop = keepAdminKey(services.db, running, 50, (err) => errors.push(err));
    try {
      await age();
      // Wait for a renewal (the condition, not a fixed time): the lease is young again.
      const deadline = Date.now() + 5_000;
      while ((await leaseAge()) > 30) {
        if (Date.now() > deadline) throw new Error('the lease was not renewed');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await claimAdminKey(services.db, key, route, hash, 30)).outcome, 'a slow holder keeps its key').to.equal('in_progress');
    } finally {
      await stop();
    }
    expect(errors).to.deep.equal([]);
    await age();
    const taken = await claimed(key, 30);
    expect(taken.operationId, 'a lapsed lease is taken over with the same operation id').to.equal(running.operationId);
  });

  it('forgets an expired key: the same key is then a new operation', async function () {
    const key = newKey();
    const old = await claimed(key);
    await services.db.query("UPDATE admin_idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1", [key]);
    const fresh = await claimed(key);
    expect(fresh.operationId).to.not.equal(old.operationId);
    expect(fresh.resumed).to.equal(false);
  });
});
