import { expect } from 'chai';
import { enqueue, MAX_ATTEMPTS, retryDelayMs } from '../../../../gateway/outbox/outbox';
import { startSandboxes, type Sandboxes } from '../../../../sandbox';
import { makeKeyPair } from '../../../support/partners';
import { openServices, type InProcessServices } from '../../../support/in-process';

describe('outbox: delivery to the processing system, retries and give-up', function () {
  let sandboxes: Sandboxes;
  let services: InProcessServices;
  let partnerId: string;

  const fault = (body: unknown) =>
    fetch(`${sandboxes.processing.url}/__sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const received = async () => (await (await fetch(`${sandboxes.processing.url}/__sandbox/requests?path=/cards/status-update`)).json()) as { body: { cardKey: string } }[];
  const state = async (id: string) =>
    (await services.db.query('SELECT attempts, delivered_at, failed_at, last_error, next_attempt_at FROM outbox_events WHERE id = $1', [id])).rows[0];
  const message = (cardKey: string) => ({ kind: 'processing.status_update' as const, payload: { cardKey, statusCode: 'L1' as const } });

  before(async function () {
    sandboxes = await startSandboxes();
    services = await openServices({ issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url });
    partnerId = (await services.partners.create({ name: 'outbox', issuer: 'https://outbox.example', publicKey: makeKeyPair().publicPem }))._id;
  });
  after(async function () {
    await services?.close();
    await sandboxes?.close();
  });

  it('backs off exponentially from 5 s, capped at 30 minutes', function () {
    expect([1, 2, 3, 4].map(retryDelayMs)).to.deep.equal([5000, 10000, 20000, 40000]);
    expect(retryDelayMs(30)).to.equal(30 * 60_000);
  });

  it('delivers once, in order, and marks the messages delivered', async function () {
    const ids = await services.db.transaction(async (tx) => [
      await enqueue(tx, message('CKORDER000000001'), { partnerId, requestId: 'r1' }),
      await enqueue(tx, message('CKORDER000000002'), { partnerId, requestId: 'r1' }),
    ]);
    expect(await services.outbox.deliver(ids)).to.deep.equal({ delivered: 2, failed: 0 });
    const keys = (await received()).map((r) => r.body.cardKey).filter((k) => k.startsWith('CKORDER'));
    expect(keys).to.deep.equal(['CKORDER000000001', 'CKORDER000000002']);
    expect(await services.outbox.deliver(ids), 'never twice').to.deep.equal({ delivered: 0, failed: 0 });
    expect((await state(ids[0])).delivered_at).to.be.instanceOf(Date);
  });

  it('reschedules a failed delivery with backoff, and delivers it when due', async function () {
    const id = await services.db.transaction((tx) => enqueue(tx, message('CKRETRY000000001'), { partnerId, requestId: 'r2' }));
    await fault({ path: '/cards/status-update', mode: 'status', status: 503, times: 1 });
    expect(await services.outbox.deliver([id])).to.deep.equal({ delivered: 0, failed: 1 });
    const failed = await state(id);
    expect(failed.attempts).to.equal(1);
    expect(failed.delivered_at).to.equal(null);
    expect(failed.last_error).to.match(/processing/i);
    expect(failed.next_attempt_at.getTime()).to.be.greaterThan(Date.now() + 3000);
    await services.outbox.deliver();
    expect((await state(id)).delivered_at, 'not due yet: a general pass leaves it').to.equal(null);
    await services.db.query('UPDATE outbox_events SET next_attempt_at = now() WHERE id = $1', [id]);
    const pass = await services.outbox.deliver();
    expect(pass.delivered, 'due now: a general pass delivers it').to.be.at.least(1);
    expect((await state(id)).delivered_at).to.be.instanceOf(Date);
  });

  it(`gives a message up after ${MAX_ATTEMPTS} attempts`, async function () {
    const id = await services.db.transaction((tx) => enqueue(tx, message('CKGIVEUP00000001'), { partnerId, requestId: 'r3' }));
    await services.db.query('UPDATE outbox_events SET attempts = $2 WHERE id = $1', [id, MAX_ATTEMPTS - 1]);
    await fault({ path: '/cards/status-update', mode: 'status', status: 500, times: 1 });
    await services.outbox.deliver([id]);
    const given = await state(id);
    expect(given.failed_at).to.be.instanceOf(Date);
    expect(given.delivered_at).to.equal(null);
    await services.db.query('UPDATE outbox_events SET next_attempt_at = now() WHERE id = $1', [id]);
    expect(await services.outbox.deliver([id]), 'never retried once given up').to.deep.equal({ delivered: 0, failed: 0 });
  });
});
