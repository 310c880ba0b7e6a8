import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createProcessingSandbox, Notifier } from '../../sandbox';
import { ProcessingState } from '../../sandbox/processing/routes';
import { RecordedTransactions } from '../../sandbox/processing/recorded';
import { DECLINE_REASONS, newestFirst, transactionsOf, type KnownCard } from '../../sandbox/processing/transactions';
import { seededRandom } from '../../sandbox/shared/seeded-random';
import { call, type Answer, type ErrorBody } from './http-client';
import { Receiver, type Received } from './notification-receiver';

/** The processor's transaction (docs/upstreams.md, 6.2). */
interface Transaction {
  id: string;
  cardId: string;
  accountId: string | null;
  amount: number;
  currency: string;
  type: string;
  status: string;
  merchant: { name: string; mcc: string; city: string; country: string };
  createdAt: string;
  updatedAt: string;
  version: number;
  settledAmount: number | null;
  declineReason: string | null;
  relatedTransactionId: string | null;
  authorizationId: string | null;
  history: Array<{ kind: string; amount: number; at: string }>;
}
interface Changes {
  data: Transaction[];
  nextCursor: string;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The card processing sandbox's transaction lifecycle (issue 20; docs/upstreams.md 6.2, 6.7 to 6.9
 * and section 9), over real HTTP: a processing sandbox of its own, notifying a stand-in for the
 * gateway's listener. A `deliver` step answers only once its notification was answered, so what
 * the receiver holds right after an answer is all that step sent.
 */
describe('processing sandbox: a transaction\'s lifecycle (authorization, clearing, reversal, expiry, refund; change feed; notifications)', function () {
  let server: http.Server;
  let url: string;
  let receiver: Receiver;
  const notifier = new Notifier('processing', { log: () => undefined });
  const secret = crypto.randomBytes(32).toString('base64url');

  const post = <T = Transaction>(path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer<T>> =>
    call<T>(`${url}${path}`, { method: 'POST', body, headers });
  const authorize = async (body: Record<string, unknown>): Promise<Transaction> => {
    const answer = await post('/__sandbox/authorizations', { cardId: 'CK-LC-1', ...body });
    expect(answer.status, answer.text).to.equal(201);
    return answer.body;
  };
  const stepOf = async (id: string, step: string, body?: unknown, status = 200): Promise<Transaction> => {
    const answer = await post(`/__sandbox/transactions/${id}/${step}`, body);
    expect(answer.status, answer.text).to.equal(status);
    return answer.body;
  };
  const refused = async (path: string, body: unknown, status: number, errorCode: string): Promise<ErrorBody> => {
    const answer = await post<ErrorBody>(path, body);
    expect(answer.status, `${path} ${answer.text}`).to.equal(status);
    expect(answer.body.errorCode).to.equal(errorCode);
    return answer.body;
  };
  const read = async (id: string): Promise<Transaction> => (await call<Transaction>(`${url}/transactions/${id}`)).body;
  const changes = async (query = ''): Promise<Changes> => {
    const answer = await call<Changes>(`${url}/transactions/changes${query}`);
    expect(answer.status, answer.text).to.equal(200);
    return answer.body;
  };
  const notificationsOf = (id: string): Received[] => receiver.received.filter((r) => (r.body.transaction as Transaction).id === id);

  before(async () => {
    receiver = new Receiver(secret);
    const receiverUrl = await receiver.up();
    server = http.createServer(createProcessingSandbox({ notifier }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    notifier.setTarget({ url: receiverUrl, secret });
  });
  after(async () => {
    notifier.clear();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await receiver?.close();
  });
  beforeEach(async () => {
    await post('/__sandbox/reset');
    receiver.received.length = 0;
    await post('/__sandbox/cards', { cardKey: 'CK-LC-1', accountId: 'acc-lc', currency: 'GBP' });
    await post('/__sandbox/cards', { cardKey: 'CK-LC-2', accountId: 'acc-lc' });
  });

  describe('authorization', () => {
    it('201 a PENDING transaction (version 1, history [authorization]), notified as transaction.created, readable by id and listed first', async () => {
      const t = await authorize({ amount: 100 });
      expect(t).to.deep.include({
        cardId: 'CK-LC-1', accountId: 'acc-lc', amount: 100, currency: 'GBP', type: 'PURCHASE', status: 'PENDING', version: 1,
        settledAmount: null, declineReason: null, relatedTransactionId: null, updatedAt: t.createdAt,
        merchant: { name: 'Sandbox Merchant', mcc: '5999', city: 'Online', country: 'DE' },
        history: [{ kind: 'authorization', amount: 100, at: t.createdAt }],
      });
      expect(t.id).to.match(/^[0-9a-f]{24}$/);
      expect(t.authorizationId).to.match(/^auth_[0-9a-f]{24}$/);
      const [sent] = notificationsOf(t.id);
      expect(sent, 'delivered before the answer').to.not.equal(undefined);
      expect(sent).to.deep.include({ path: '/upstream-notifications/processing', signed: true, id: sent.body.id });
      expect(sent.body).to.deep.equal({ id: sent.body.id, type: 'transaction.created', occurredAt: t.createdAt, transaction: t });
      expect(sent.body.id).to.match(/^ntf_[0-9a-f]{24}$/);
      expect(await read(t.id)).to.deep.equal(t);
      const listed = (await call<{ data: Transaction[] }>(`${url}/transactions?cardId=CK-LC-1&limit=1`)).body.data;
      expect(listed).to.deep.equal([t]);
    });

    it('takes a WITHDRAWAL, a merchant, a currency and an authorizationId of its own', async () => {
      const t = await authorize({ amount: 50, type: 'WITHDRAWAL', currency: 'EUR', authorizationId: 'A-1', merchant: { city: 'Berlin' } });
      expect(t).to.deep.include({ type: 'WITHDRAWAL', currency: 'EUR', authorizationId: 'A-1', merchant: { name: 'Sandbox ATM', mcc: '6011', city: 'Berlin', country: 'DE' } });
    });

    it('the same authorizationId on the same card is the processor\'s retry: the same transaction, nothing recorded or notified; on another card 409', async () => {
      const first = await authorize({ amount: 20, authorizationId: 'auth-retry-1', notify: 'drop' });
      await stepOf(first.id, 'reversal', { amount: 5, notify: 'drop' });
      const feed = await changes();
      const total = async () => (await call<{ total: number }>(`${url}/transactions?cardId=CK-LC-1`)).body.total;
      const before = await total();
      const again = await post('/__sandbox/authorizations', { cardId: 'CK-LC-1', amount: 20, authorizationId: 'auth-retry-1' });
      expect(again.status).to.equal(201);
      expect(again.body, 'as it is now').to.deep.equal(await read(first.id));
      expect(again.body).to.include({ id: first.id, version: 2, amount: 15 });
      expect(receiver.received, 'no notification').to.deep.equal([]);
      expect(await changes(), 'no change').to.deep.equal(feed);
      expect(await total(), 'nothing recorded').to.equal(before);
      const other = await refused('/__sandbox/authorizations', { cardId: 'CK-LC-2', amount: 20, authorizationId: 'auth-retry-1' }, 409, 'AUTHORIZATION_ID_REUSED');
      expect(other.message).to.include('auth-retry-1');
    });

    it('an unknown card: 404 CARD_NOT_FOUND; a bad field: 400 VALIDATION_ERROR naming it', async () => {
      await refused('/__sandbox/authorizations', { cardId: 'CK-NOBODY', amount: 1 }, 404, 'CARD_NOT_FOUND');
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ amount: -1 }, '/amount'],
        [{ amount: 0.001 }, '/amount'],
        [{ amount: '12' }, '/amount'],
        [{ amount: 1, currency: 'eur' }, '/currency'],
        [{ amount: 1, type: 'REFUND' }, '/type'],
        [{ amount: 1, notify: 'later' }, '/notify'],
        [{ amount: 1, authorizationId: '' }, '/authorizationId'],
        [{ amount: 1, merchant: { mcc: 5411 } }, '/merchant/mcc'],
        [{ amount: 1, amout: 2 }, '/amout'],
      ];
      for (const [body, path] of bad) {
        const error = await refused('/__sandbox/authorizations', { cardId: 'CK-LC-1', ...body }, 400, 'VALIDATION_ERROR');
        expect(error.details?.[0].path, JSON.stringify(body)).to.equal(path);
      }
      await refused('/__sandbox/authorizations', { amount: 1 }, 400, 'VALIDATION_ERROR');
    });
  });

  describe('clearing, reversal, expiry', () => {
    it('clearing: SETTLED, settledAmount the cleared amount (may be less), amount kept; notified as transaction.updated with change clearing', async () => {
      const t = await authorize({ amount: 100 });
      await refused(`/__sandbox/transactions/${t.id}/clearing`, { amount: 100.01 }, 409, 'AMOUNT_EXCEEDS_AUTHORIZED');
      const cleared = await stepOf(t.id, 'clearing', { amount: 80 });
      expect(cleared).to.deep.include({ status: 'SETTLED', amount: 100, settledAmount: 80, version: 2, updatedAt: cleared.history[1].at });
      expect(cleared.history).to.deep.equal([t.history[0], { kind: 'clearing', amount: 80, at: cleared.updatedAt }]);
      const sent = notificationsOf(t.id);
      expect(sent.map((r) => r.body.type)).to.deep.equal(['transaction.created', 'transaction.updated']);
      expect(sent[1].body).to.deep.equal({ id: sent[1].body.id, type: 'transaction.updated', occurredAt: cleared.updatedAt, change: 'clearing', transaction: cleared });
      await refused(`/__sandbox/transactions/${t.id}/clearing`, {}, 409, 'TRANSACTION_NOT_PENDING');
      await refused(`/__sandbox/transactions/${t.id}/reversal`, {}, 409, 'TRANSACTION_NOT_PENDING');
      await refused(`/__sandbox/transactions/${t.id}/expiry`, undefined, 409, 'TRANSACTION_NOT_PENDING');
      const whole = await stepOf((await authorize({ amount: 12.34 })).id, 'clearing');
      expect(whole).to.include({ status: 'SETTLED', amount: 12.34, settledAmount: 12.34 });
    });

    it('reversal: lowers the amount (still PENDING), all that is left by default (REVERSED at 0); never more than what is left', async () => {
      const t = await authorize({ amount: 100 });
      const part = await stepOf(t.id, 'reversal', { amount: 30.5 });
      expect(part).to.deep.include({ status: 'PENDING', amount: 69.5, version: 2, settledAmount: null });
      await refused(`/__sandbox/transactions/${t.id}/reversal`, { amount: 69.51 }, 409, 'AMOUNT_EXCEEDS_REMAINING');
      await refused(`/__sandbox/transactions/${t.id}/clearing`, { amount: 70 }, 409, 'AMOUNT_EXCEEDS_AUTHORIZED');
      const rest = await stepOf(t.id, 'reversal');
      expect(rest).to.deep.include({ status: 'REVERSED', amount: 0, version: 3 });
      expect(rest.history.map((h) => [h.kind, h.amount])).to.deep.equal([['authorization', 100], ['reversal', 30.5], ['reversal', 69.5]]);
      expect(notificationsOf(t.id).map((r) => r.body.change)).to.deep.equal([undefined, 'reversal', 'reversal']);
      await refused(`/__sandbox/transactions/${t.id}/reversal`, {}, 409, 'TRANSACTION_NOT_PENDING');
    });

    it('expiry: EXPIRED, the amount kept, the history entry for what was left', async () => {
      const t = await authorize({ amount: 40 });
      await stepOf(t.id, 'reversal', { amount: 15 });
      const expired = await stepOf(t.id, 'expiry');
      expect(expired).to.deep.include({ status: 'EXPIRED', amount: 25, version: 3, settledAmount: null });
      expect(expired.history[2]).to.deep.equal({ kind: 'expiry', amount: 25, at: expired.updatedAt });
      await refused(`/__sandbox/transactions/${t.id}/expiry`, {}, 409, 'TRANSACTION_NOT_PENDING');
      await refused(`/__sandbox/transactions/${t.id}/expiry`, { amount: 1 }, 400, 'VALIDATION_ERROR');
    });
  });

  describe('refund', () => {
    it('201 a new SETTLED REFUND of a settled purchase, up to the settled amount less earlier refunds; the purchase does not change', async () => {
      const t = await authorize({ amount: 100, merchant: { name: 'Shop' } });
      await refused(`/__sandbox/transactions/${t.id}/refund`, {}, 409, 'REFUND_NOT_ALLOWED');
      const cleared = await stepOf(t.id, 'clearing', { amount: 80 });
      const first = await stepOf(t.id, 'refund', { amount: 30 }, 201);
      expect(first).to.deep.include({
        cardId: 'CK-LC-1', accountId: 'acc-lc', currency: 'GBP', merchant: t.merchant, type: 'REFUND', status: 'SETTLED', amount: 30, settledAmount: 30,
        relatedTransactionId: t.id, authorizationId: null, version: 1, history: [{ kind: 'refund', amount: 30, at: first.createdAt }],
      });
      expect(first.id).to.not.equal(t.id);
      expect(notificationsOf(first.id).map((r) => r.body)).to.deep.equal([{ id: notificationsOf(first.id)[0].body.id, type: 'transaction.created', occurredAt: first.createdAt, transaction: first }]);
      await refused(`/__sandbox/transactions/${t.id}/refund`, { amount: 50.01 }, 409, 'REFUND_EXCEEDS_SETTLED');
      const rest = await stepOf(t.id, 'refund', undefined, 201);
      expect(rest).to.include({ amount: 50, settledAmount: 50, relatedTransactionId: t.id });
      await refused(`/__sandbox/transactions/${t.id}/refund`, {}, 409, 'REFUND_EXCEEDS_SETTLED');
      await refused(`/__sandbox/transactions/${rest.id}/refund`, {}, 409, 'REFUND_NOT_ALLOWED');
      expect(await read(t.id), 'the purchase is as cleared').to.deep.equal(cleared);
      const withdrawal = await authorize({ amount: 20, type: 'WITHDRAWAL' });
      await stepOf(withdrawal.id, 'clearing');
      await refused(`/__sandbox/transactions/${withdrawal.id}/refund`, {}, 409, 'REFUND_NOT_ALLOWED');
    });
  });

  it('an unknown or generated transaction id: 404 TRANSACTION_NOT_FOUND on every route', async () => {
    const generated = (await call<{ data: Transaction[] }>(`${url}/transactions?cardId=CK-LC-1`)).body.data[0];
    for (const id of ['0123456789abcdef01234567', generated.id]) {
      const answer = await call<ErrorBody>(`${url}/transactions/${id}`);
      expect(answer.status).to.equal(404);
      expect(answer.body.errorCode).to.equal('TRANSACTION_NOT_FOUND');
    }
    await refused(`/__sandbox/transactions/${generated.id}/clearing`, undefined, 404, 'TRANSACTION_NOT_FOUND');
    for (const step of ['clearing', 'reversal', 'expiry', 'refund', 'notifications/release', 'notifications/resend']) {
      await refused(`/__sandbox/transactions/0123456789abcdef01234567/${step}`, undefined, 404, 'TRANSACTION_NOT_FOUND');
    }
  });

  it('POST /__sandbox/transactions (the shortcut): an authorization, a force-post clearing (history [clearing]) or a decline', async () => {
    const shortcut = async (body: Record<string, unknown>) => {
      const answer = await post('/__sandbox/transactions', { cardId: 'CK-LC-1', amount: 9.99, currency: 'EUR', ...body });
      expect(answer.status, answer.text).to.equal(201);
      return answer.body;
    };
    const auth = await shortcut({});
    expect(auth).to.deep.include({ status: 'PENDING', version: 1, settledAmount: null, history: [{ kind: 'authorization', amount: 9.99, at: auth.createdAt }] });
    expect(auth.authorizationId).to.match(/^auth_[0-9a-f]{24}$/);
    const posted = await shortcut({ type: 'clearing' });
    expect(posted).to.deep.include({ status: 'SETTLED', amount: 9.99, settledAmount: 9.99, authorizationId: null, version: 1, history: [{ kind: 'clearing', amount: 9.99, at: posted.createdAt }] });
    const declined = await shortcut({ type: 'decline' });
    expect(declined).to.deep.include({ status: 'DECLINED', declineReason: 'do_not_honor', history: [{ kind: 'decline', amount: 9.99, at: declined.createdAt }] });
    expect(await shortcut({ type: 'decline', declineReason: 'insufficient_funds' })).to.include({ declineReason: 'insufficient_funds' });
    expect(receiver.received.map((r) => r.body.type)).to.deep.equal(Array(4).fill('transaction.created'));
    const dropped = await shortcut({ notify: 'drop' });
    expect(notificationsOf(dropped.id)).to.deep.equal([]);
    await refused('/__sandbox/transactions', { cardId: 'CK-LC-1', amount: 1, currency: 'EUR', notify: 'never' }, 400, 'VALIDATION_ERROR');
  });

  it('an Idempotency-Key replays a step\'s answer without a second step or notification', async () => {
    const t = await authorize({ amount: 10 });
    const headers = { 'idempotency-key': `op-${t.id}` };
    const first = await post(`/__sandbox/transactions/${t.id}/reversal`, { amount: 1 }, headers);
    const again = await post(`/__sandbox/transactions/${t.id}/reversal`, { amount: 1 }, headers);
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect((await read(t.id)).version).to.equal(2);
    expect(notificationsOf(t.id)).to.have.length(2);
  });

  describe('GET /transactions/changes', () => {
    it('each changed transaction once, in the order of its latest change, in its current state; nextCursor pages and holds its place', async () => {
      const a = await authorize({ amount: 1 });
      const b = await authorize({ amount: 2 });
      const c = await authorize({ amount: 3 });
      await stepOf(a.id, 'reversal', { amount: 0.5 });
      await stepOf(a.id, 'clearing');
      const all = await changes();
      expect(all.data).to.deep.equal([await read(b.id), await read(c.id), await read(a.id)]);
      expect(all.data[2]).to.include({ status: 'SETTLED', version: 3 });

      const page1 = await changes('?limit=2');
      expect(page1.data.map((t) => t.id)).to.deep.equal([b.id, c.id]);
      const page2 = await changes(`?limit=2&after=${page1.nextCursor}`);
      expect(page2.data.map((t) => t.id)).to.deep.equal([a.id]);
      const empty = await changes(`?after=${page2.nextCursor}`);
      expect(empty).to.deep.equal({ data: [], nextCursor: page2.nextCursor });
      expect(all.nextCursor, 'the end of the feed is one position').to.equal(page2.nextCursor);

      await stepOf(b.id, 'expiry');
      const d = await authorize({ amount: 4 });
      const next = await changes(`?after=${empty.nextCursor}`);
      expect(next.data.map((t) => [t.id, t.version])).to.deep.equal([[b.id, 2], [d.id, 1]]);
    });

    it('a cursor of another boot or from before a reset restarts from the oldest change kept; a bad cursor or limit is 400', async () => {
      const a = await authorize({ amount: 1 });
      const { nextCursor } = await changes();
      expect(nextCursor).to.match(/^[0-9a-f]{16}\.[0-9]+$/);
      const otherBoot = `${nextCursor.startsWith('0') ? '1' : '0'}${nextCursor.slice(1)}`;
      expect((await changes(`?after=${otherBoot}`)).data.map((t) => t.id)).to.deep.equal([a.id]);
      await post('/__sandbox/reset');
      await post('/__sandbox/cards', { cardKey: 'CK-LC-1', accountId: 'acc-lc' });
      const b = await authorize({ amount: 2 });
      const afterReset = await changes(`?after=${nextCursor}`);
      expect(afterReset.data.map((t) => t.id)).to.deep.equal([b.id]);
      expect(afterReset.nextCursor.split('.')[0]).to.not.equal(nextCursor.split('.')[0]);
      for (const query of ['?after=abc', '?after=1.2', `?after=${nextCursor}x`, '?limit=0', '?limit=501', '?limit=ten']) {
        const answer = await call<ErrorBody>(`${url}/transactions/changes${query}`);
        expect(answer.status, query).to.equal(400);
        expect(answer.body.errorCode).to.equal('VALIDATION_ERROR');
      }
      expect((await changes('?limit=500')).data).to.have.length(1);
    });
  });

  describe('notify: drop, hold and release, resend', () => {
    it('drop: a lost notification, the change still in the feed; resend sends the latest delivered one again, same id and body', async () => {
      const t = await authorize({ amount: 10, notify: 'drop' });
      expect(receiver.received).to.deep.equal([]);
      expect((await changes()).data.map((x) => x.id)).to.deep.equal([t.id]);
      await refused(`/__sandbox/transactions/${t.id}/notifications/resend`, undefined, 409, 'NOTHING_TO_RESEND');
      await stepOf(t.id, 'reversal', { amount: 4 });
      await stepOf(t.id, 'clearing', { notify: 'drop' });
      const [delivered] = notificationsOf(t.id);
      expect(delivered.body).to.deep.include({ type: 'transaction.updated', change: 'reversal' });
      const resent = await post<{ sent: number }>(`/__sandbox/transactions/${t.id}/notifications/resend`);
      expect(resent.status, resent.text).to.equal(200);
      expect(resent.body).to.deep.equal({ sent: 1 });
      const [, again] = notificationsOf(t.id);
      expect(again).to.deep.include({ id: delivered.id, raw: delivered.raw, signed: true });
      expect((again.body.transaction as Transaction).version, 'the snapshot of its step, not the state now').to.equal(2);
    });

    it('hold: nothing sent until released; newest-first sends them out of order, each with the snapshot of its own step', async () => {
      const t = await authorize({ amount: 100, notify: 'hold' });
      await stepOf(t.id, 'reversal', { amount: 10, notify: 'hold' });
      const settled = await stepOf(t.id, 'clearing', { notify: 'hold' });
      expect(receiver.received).to.deep.equal([]);
      await refused(`/__sandbox/transactions/${t.id}/notifications/release`, { order: 'sideways' }, 400, 'VALIDATION_ERROR');
      const released = await post<{ sent: number }>(`/__sandbox/transactions/${t.id}/notifications/release`, { order: 'newest-first' });
      expect(released.status, released.text).to.equal(200);
      expect(released.body).to.deep.equal({ sent: 3 });
      const got = notificationsOf(t.id).map((r) => r.body);
      expect(got.map((b) => [b.type, b.change, (b.transaction as Transaction).version, (b.transaction as Transaction).status, (b.transaction as Transaction).amount])).to.deep.equal([
        ['transaction.updated', 'clearing', 3, 'SETTLED', 90],
        ['transaction.updated', 'reversal', 2, 'PENDING', 90],
        ['transaction.created', undefined, 1, 'PENDING', 100],
      ]);
      expect(got[0].transaction).to.deep.equal(settled);
      expect(got[2].transaction).to.deep.equal(t);
      expect(new Set(got.map((b) => b.id)).size).to.equal(3);
      expect((await post<{ sent: number }>(`/__sandbox/transactions/${t.id}/notifications/release`)).body).to.deep.equal({ sent: 0 });
      // The resend is of the highest version sent, whatever the order of release.
      await post(`/__sandbox/transactions/${t.id}/notifications/resend`);
      expect(notificationsOf(t.id)[3]).to.deep.include({ id: got[0].id });
    });

    it('oldest-first is the default order of a release', async () => {
      const t = await authorize({ amount: 5, notify: 'hold' });
      await stepOf(t.id, 'expiry', { notify: 'hold' });
      expect((await post<{ sent: number }>(`/__sandbox/transactions/${t.id}/notifications/release`)).body).to.deep.equal({ sent: 2 });
      expect(notificationsOf(t.id).map((r) => (r.body.transaction as Transaction).version)).to.deep.equal([1, 2]);
    });
  });

  describe('generated history items', () => {
    const historyEnd = '2025-01-01T00:00:00.000Z';
    const cardOf = (cardKey: string): KnownCard => ({
      cardKey, previousCardKey: null, cardMask: null, type: null, ownerType: null, ownerId: null, partnerId: null,
      accountId: 'acc-gen', currency: 'EUR', occurredAt: null, registeredAt: historyEnd, source: 'control', historyEnd,
    });

    it('carry the lifecycle fields, derived from what was generated alone (the decline reason from a PRNG seeded with the id)', () => {
      // 30 card keys hold every generated status of every type (a PENDING REFUND first at the 29th).
      const all = Array.from({ length: 30 }, (_, i) => transactionsOf(cardOf(`CKGEN${String(i).padStart(13, '0')}`))).flat();
      const lifecycle = (t: Transaction) => {
        const { updatedAt, version, settledAmount, declineReason, relatedTransactionId, authorizationId, history } = t;
        return { id: t.id, updatedAt, version, settledAmount, declineReason, relatedTransactionId, authorizationId, history };
      };
      const expected = (t: Transaction) => {
        const step = (kind: string, at = t.createdAt) => ({ kind, amount: t.amount, at });
        const cleared = new Date(Date.parse(t.createdAt) + DAY_MS).toISOString();
        const [history, settledAmount, declineReason] =
          t.status === 'PENDING' ? [[step('authorization')], null, null] // a pending refund too
          : t.status === 'DECLINED' ? [[step('decline')], null, seededRandom(`decline:${t.id}`).pick(DECLINE_REASONS)]
          : t.type === 'REFUND' ? [[step('refund')], t.amount, null]
          : [[step('authorization'), step('clearing', cleared)], t.amount, null];
        return { id: t.id, updatedAt: history[history.length - 1].at, version: history.length, settledAmount, declineReason, relatedTransactionId: null, authorizationId: null, history };
      };
      expect(all.map(lifecycle)).to.deep.equal(all.map(expected));
      expect([...new Set(all.map((t) => `${t.status} ${t.type}`))].sort()).to.deep.equal([
        'DECLINED PURCHASE', 'DECLINED WITHDRAWAL', 'PENDING PURCHASE', 'PENDING REFUND', 'PENDING WITHDRAWAL', 'SETTLED PURCHASE', 'SETTLED REFUND', 'SETTLED WITHDRAWAL',
      ]);
      expect(new Set(all.map((t) => t.declineReason)).size, 'several reasons drawn').to.be.above(2);
    });

    it('are served with them by card and by account (the memoised columns), the same after a reset and re-registration', async () => {
      const cards = ['CKGEN0000000000001', 'CKGEN0000000000002'];
      const served = async () => {
        for (const cardKey of cards) await post('/__sandbox/cards', { cardKey, accountId: 'acc-gen', currency: 'EUR', historyEnd });
        const byCard = [];
        for (const cardKey of cards) byCard.push((await call<{ data: Transaction[] }>(`${url}/transactions?cardId=${cardKey}&limit=100`)).body.data);
        const byAccount = (await call<{ data: Transaction[] }>(`${url}/transactions?accountId=acc-gen&limit=100`)).body.data;
        return { byCard, byAccount };
      };
      const first = await served();
      const expected = cards.map((cardKey) => transactionsOf(cardOf(cardKey)));
      expect(first.byCard).to.deep.equal(expected);
      expect(first.byAccount).to.deep.equal(expected.flat().sort(newestFirst));
      await post('/__sandbox/reset');
      expect(await served()).to.deep.equal(first);
    });
  });

  describe('bounded state', () => {
    it('an evicted transaction is gone from reads, the authorizationId index and the change feed', () => {
      const recorded = new RecordedTransactions(2, 3);
      const card = (cardKey: string) => ({ cardKey, accountId: 'acc' }) as never;
      const merchant = { name: 'M', mcc: '5999', city: 'C', country: 'DE' };
      const auth = (cardKey: string, authorizationId: string) => recorded.authorize({ card: card(cardKey), amount: 1, currency: 'EUR', type: 'PURCHASE', merchant, authorizationId }).transaction;
      const a1 = auth('CK-A', 'a1');
      const a2 = auth('CK-A', 'a2');
      const a3 = auth('CK-A', 'a3');
      expect(recorded.get(a1.id), 'the card keeps 2').to.equal(undefined);
      const b1 = auth('CK-B', 'b1');
      const b2 = auth('CK-B', 'b2');
      expect(recorded.size, '3 in all').to.equal(3);
      expect(recorded.get(a2.id)).to.equal(undefined);
      expect(recorded.changes(undefined, 100).data.map((t) => t.id)).to.deep.equal([a3.id, b1.id, b2.id]);
      // The authorizationId of an evicted one is free: another card may use it.
      expect(auth('CK-B', 'a1').id).to.not.equal(a1.id);
      recorded.forgetCard('CK-B');
      expect(recorded.changes(undefined, 100).data.map((t) => t.id)).to.deep.equal([]);
      expect(recorded.size).to.equal(0);
      expect(() => recorded.resend(b1.id)).to.throw('No recorded transaction');
    });

    it('a card evicted from the processing state takes its recorded transactions with it', () => {
      const state = new ProcessingState(2);
      for (const cardKey of ['CK-E1', 'CK-E2']) state.register({ cardKey, accountId: 'acc-e' }, 'control');
      const t = state.record({ cardId: 'CK-E1', amount: 5, currency: 'EUR' })!;
      expect(state.recorded.get(t.id)).to.deep.equal(t);
      state.register({ cardKey: 'CK-E3', accountId: 'acc-e' }, 'control');
      expect(state.recorded.get(t.id)).to.equal(undefined);
      expect(state.recorded.changes(undefined, 10).data).to.deep.equal([]);
    });
  });
});

/**
 * The processor's authorization request (docs/upstreams.md 6.10): the sandbox asks the gateway (here
 * a stand-in for its listener) before it records an authorization, and applies the answer, or its
 * stand-in when none comes before AUTHORIZATION_DEADLINE_MS (300 ms here).
 */
describe('processing sandbox: the authorization request to the gateway', function () {
  let server: http.Server;
  let url: string;
  let receiver: Receiver;
  const notifier = new Notifier('processing', { log: () => undefined });
  const secret = crypto.randomBytes(32).toString('base64url');
  const authorize = async (body: Record<string, unknown> = {}): Promise<Transaction> => {
    const answer = await call<Transaction>(`${url}/__sandbox/authorizations`, { method: 'POST', body: { cardId: 'CK-AR-1', amount: 40, ...body } });
    expect(answer.status, answer.text).to.equal(201);
    return answer.body;
  };

  before(async () => {
    receiver = new Receiver(secret);
    const receiverUrl = await receiver.up();
    const before = process.env.AUTHORIZATION_DEADLINE_MS;
    process.env.AUTHORIZATION_DEADLINE_MS = '300';
    try {
      server = http.createServer(createProcessingSandbox({ notifier }));
    } finally {
      if (before === undefined) delete process.env.AUTHORIZATION_DEADLINE_MS;
      else process.env.AUTHORIZATION_DEADLINE_MS = before;
    }
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    notifier.setTarget({ url: receiverUrl, secret });
    await call(`${url}/__sandbox/cards`, { method: 'POST', body: { cardKey: 'CK-AR-1', accountId: 'acc-ar', currency: 'EUR' } });
  });
  after(async () => {
    notifier.clear();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.asked.length = 0;
    receiver.decision = { approved: true };
  });

  it('asks, signed, with the authorization id, the transaction id it then records, the card, amount, currency, type, merchant and time; an approval is PENDING', async () => {
    const t = await authorize({ merchant: { name: 'Kiosk', mcc: '5994', city: 'Vienna', country: 'AT' }, authorizationId: 'auth_ar_1' });
    expect(receiver.asked).to.have.length(1);
    const [asked] = receiver.asked;
    expect(asked.signed).to.equal(true);
    expect(asked.path).to.equal('/upstream-notifications/processing/authorizations');
    expect(asked.id).to.equal('auth_ar_1');
    expect(asked.body).to.deep.include({ id: 'auth_ar_1', type: 'authorization.request' });
    expect(asked.body.authorization).to.deep.include({
      id: 'auth_ar_1', transactionId: t.id, cardId: 'CK-AR-1', amount: 40, currency: 'EUR', type: 'PURCHASE',
      merchant: { name: 'Kiosk', mcc: '5994', city: 'Vienna', country: 'AT' },
    });
    expect(t).to.deep.include({ status: 'PENDING', authorizationId: 'auth_ar_1' });
    // The processor's retry of the same authorization asks nothing more: the same transaction.
    expect((await authorize({ authorizationId: 'auth_ar_1' })).id).to.equal(t.id);
    expect(receiver.asked).to.have.length(1);
  });

  it('a decline is recorded DECLINED with the gateway\'s reason', async () => {
    receiver.decision = { approved: false, declineReason: 'mcc_blocked' };
    const t = await authorize();
    expect(t).to.deep.include({ status: 'DECLINED', declineReason: 'mcc_blocked' });
    expect(t.history.map((s) => s.kind)).to.deep.equal(['decline']);
  });

  it('no answer before the deadline, or one not of the contract\'s shape, applies the stand-in: DECLINED stand_in', async () => {
    receiver.decision = 'hang';
    const started = Date.now();
    const t = await authorize();
    expect(t).to.deep.include({ status: 'DECLINED', declineReason: 'stand_in' });
    expect(Date.now() - started, 'the stand-in applied once the 300 ms deadline passed').to.be.within(250, 5000);
    receiver.decision = { approved: 'yes' };
    expect(await authorize()).to.deep.include({ status: 'DECLINED', declineReason: 'stand_in' });
  });
});
