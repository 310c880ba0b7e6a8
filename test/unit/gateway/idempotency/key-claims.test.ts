import crypto from 'node:crypto';
import { expect } from 'chai';
import { KeyClaimStore, OPERATOR_KEYS, jsonAnswer, requestHash, type KeyClaim } from '../../../../gateway/idempotency/key-claims';
import { isObjectId } from '../../../../gateway/ids';
import { openServices, type InProcessServices } from '../../../support/in-process';

/**
 * The key-claim store (gateway/idempotency/key-claims.ts) over the operators' keys (the admin API's,
 * migrations 012 and 019), on the run's PostgreSQL: one operation id per key, kept by every retry;
 * the recorded answer replayed; a key of another request refused; a running claim excluded until
 * its lease runs out. The partners' keys go through the same store (operation-id.test.ts).
 */
describe('key-claim store (operators\' keys): one operation id per key, one recorded answer', function () {
  let services: InProcessServices;
  let keys: KeyClaimStore;
  const route = 'POST /admin/cards/CK1/status';
  const hash = requestHash(route, undefined, { status: 'LOCKED', reason: 'r' });
  const newKey = () => `test-${crypto.randomUUID()}`;
  const claim = (key: string, lease = 60, requestHashOf = hash) => keys.claim({ key, route, requestHash: requestHashOf }, { leaseSeconds: lease, ttlHours: 24 });
  async function claimed(key: string, lease = 60): Promise<KeyClaim> {
    const outcome = await claim(key, lease);
    if (outcome.outcome !== 'claimed') throw new Error(`expected a claim, got ${outcome.outcome}`);
    return outcome.claim;
  }

  before(async function () {
    services = await openServices();
    keys = new KeyClaimStore(services.db, OPERATOR_KEYS);
  });
  after(async function () {
    await services?.close();
  });

  it('hashes the same request the same whatever its key order, and another body otherwise', function () {
    expect(requestHash(route, undefined, { reason: 'r', status: 'LOCKED' })).to.equal(hash);
    expect(requestHash(route, undefined, { status: 'CLOSED', reason: 'r' })).to.not.equal(hash);
    expect(requestHash('POST /admin/cards/CK2/status', undefined, { status: 'LOCKED', reason: 'r' })).to.not.equal(hash);
  });

  it('claims a new key with a new operation id; while it runs, the same key is in progress and another request a mismatch', async function () {
    const key = newKey();
    const first = await claimed(key);
    expect(isObjectId(first.operationId)).to.equal(true);
    expect(first.resumed).to.equal(false);
    expect((await claim(key)).outcome).to.equal('in_progress');
    expect((await claim(key, 60, requestHash(route, undefined, { status: 'CLOSED', reason: 'r' }))).outcome).to.equal('mismatch');
  });

  it('a released key is taken over by the same request with its operation id; a completed one replays its answer', async function () {
    const key = newKey();
    const first = await claimed(key);
    await keys.release(first);
    const retry = await claimed(key);
    expect(retry.operationId).to.equal(first.operationId);
    expect(retry.resumed).to.equal(true);
    // The first claim is no longer the key's: it can neither complete nor release it.
    expect(await services.db.transaction((tx) => keys.complete(first, jsonAnswer(200, { no: 1 }), tx))).to.equal(false);
    await keys.release(first);
    expect((await claim(key)).outcome).to.equal('in_progress');

    const answer = { cardKey: 'CK1', status: 'LOCKED', statusCode: 'L1' };
    expect(await services.db.transaction((tx) => keys.complete(retry, jsonAnswer(200, answer), tx))).to.equal(true);
    const recorded = { status: 200, body: Buffer.from(JSON.stringify(answer)), headers: { 'content-type': 'application/json; charset=utf-8' } };
    expect(await claim(key)).to.deep.equal({ outcome: 'replay', response: recorded });
    expect(await keys.completedAnswer({ key, route, requestHash: hash })).to.deep.equal(recorded);
    // Parsed too, for the code before migration 019 (a rolling deployment), which replays from it.
    const stored = await services.db.query<{ response_body: unknown }>('SELECT response_body FROM admin_idempotency_keys WHERE key = $1', [key]);
    expect(stored.rows[0]!.response_body).to.deep.equal(answer);
    // A completed key is never released by a late holder.
    await keys.release(retry);
    expect((await claim(key)).outcome).to.equal('replay');
  });

  it('a claim whose lease ran out (its process died) is taken over with its operation id, and only the new holder completes it', async function () {
    const key = newKey();
    const dead = await claimed(key);
    await services.db.query("UPDATE admin_idempotency_keys SET claimed_at = now() - interval '31 seconds' WHERE key = $1", [key]);
    expect((await claim(key)).outcome, 'within a 60 s lease').to.equal('in_progress');
    const taken = await claimed(key, 30);
    expect(taken.operationId).to.equal(dead.operationId);
    expect(await services.db.transaction((tx) => keys.complete(dead, jsonAnswer(200, {}), tx))).to.equal(false);
    expect(await services.db.transaction((tx) => keys.complete(taken, jsonAnswer(200, { ok: true }), tx))).to.equal(true);
  });

  it('a running request keeps renewing its lease, so its key is never taken over; once it stops, a lapsed lease is', async function () {
    const key = newKey();
    const running = await claimed(key, 30);
    const age = () => services.db.query("UPDATE admin_idempotency_keys SET claimed_at = now() - interval '31 seconds' WHERE key = $1", [key]);
    const leaseAge = async () => Number((await services.db.query<{ s: string }>('SELECT extract(epoch FROM now() - claimed_at) AS s FROM admin_idempotency_keys WHERE key = $1', [key])).rows[0]!.s);
    const errors: unknown[] = [];
    const stop = keys.keep(running, 50, (err) => errors.push(err));
    try {
      await age();
      // Wait for a renewal (the condition, not a fixed time): the lease is young again.
      const deadline = Date.now() + 5_000;
      while ((await leaseAge()) > 30) {
        if (Date.now() > deadline) throw new Error('the lease was not renewed');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await claim(key, 30)).outcome, 'a slow holder keeps its key').to.equal('in_progress');
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

  it('frees a released key of another request for it, with a new operation id, as a partner\'s (one store, one rule)', async function () {
    const key = newKey();
    const first = await claimed(key);
    await keys.release(first);
    const other = await claim(key, 60, requestHash(route, undefined, { status: 'CLOSED', reason: 'r' }));
    expect(other.outcome).to.equal('claimed');
    if (other.outcome !== 'claimed') return;
    expect(other.claim.operationId).to.not.equal(first.operationId);
    expect(other.claim.resumed).to.equal(false);
  });

  it('the retention pass deletes expired keys only', async function () {
    const [expired, live] = [newKey(), newKey()];
    await claimed(expired);
    await claimed(live);
    await services.db.query("UPDATE admin_idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1", [expired]);
    expect(await keys.deleteExpired(1)).to.be.at.least(1);
    const left = await services.db.query<{ key: string }>('SELECT key FROM admin_idempotency_keys WHERE key = ANY($1)', [[expired, live]]);
    expect(left.rows.map((r) => r.key)).to.deep.equal([live]);
  });

  it('records which process holds a claim (claimed_by), in the operators\' table too', async function () {
    const key = newKey();
    await claimed(key);
    const row = await services.db.query<{ claimed_by: string }>('SELECT claimed_by FROM admin_idempotency_keys WHERE key = $1', [key]);
    expect(row.rows[0]!.claimed_by).to.include(`:${process.pid}:`);
  });
});
