import { expect } from 'chai';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { AccountStore } from '../../sandbox/accounts/routes';
import { CardStore, STATUS_HISTORY_LIMIT, recordStatusChange } from '../../sandbox/issuer/card-store';
import { AccountTransactions } from '../../sandbox/processing/account-transactions';
import { ProcessingState, RECORDED_KEPT, STATUS_UPDATES_KEPT } from '../../sandbox/processing/routes';
import { newestFirst, transactionsOf, type KnownCard } from '../../sandbox/processing/transactions';
import { RequestLog } from '../../sandbox/shared/request-log';
import { Ring } from '../../sandbox/shared/ring';
import { call } from './http-client';

const NEW_CARD = { type: 'virtual' as const, clientCode: '10000001', expDate: '12/2099', currency: 'EUR', productCode: 'P-STD' };

function accountBody(onboardingId: string): { partnerId: string; onboardingId: string; lastName: string; [field: string]: unknown } {
  return {
    partnerId: '65f0000000000000000000aa',
    onboardingId,
    firstName: 'Ada',
    middleName: 'King',
    lastName: 'Durable',
    country: 'GB',
    birthDate: '1990-12-10',
    email: 'ada@example.com',
    phone: '+447700900123',
    idType: 'PASSPORT',
    passportNumber: 'P7654321',
    issuingDate: '2020-01-01',
    validityDate: '2030-01-01',
    passportCountry: 'GB',
    birthCountry: 'GB',
    nationality: 'GB',
    city: 'London',
    zipCode: 'N1 9GU',
    buildingNumber: '3',
    address1: 'High Street',
  };
}

/** What `GET /transactions?accountId=` answered before the index: every card of the account, generated and sorted. */
function bruteForce(state: ProcessingState, accountId: string): unknown[] {
  return [...state.cards.values()]
    .filter((c) => c.accountId === accountId)
    .flatMap(transactionsOf)
    .sort(newestFirst);
}

describe('sandbox durability: indexed, bounded state (issue 14)', function () {
  describe('Ring', function () {
    it('keeps the newest items in order, drops the oldest in O(1), and clears', function () {
      const ring = new Ring<number>(3);
      expect([1, 2, 3].map((n) => ring.push(n))).to.deep.equal([undefined, undefined, undefined]);
      expect(ring.push(4)).to.equal(1);
      expect(ring.push(5)).to.equal(2);
      expect(ring.toArray()).to.deep.equal([3, 4, 5]);
      expect(ring.shift()).to.equal(3);
      ring.push(6);
      expect(ring.toArray()).to.deep.equal([4, 5, 6]);
      expect(ring.size).to.equal(3);
      ring.clear();
      expect(ring.toArray()).to.deep.equal([]);
      ring.push(7);
      expect(ring.toArray()).to.deep.equal([7]);
    });
  });

  describe('RequestLog', function () {
    const entry = (path: string, body: unknown, bodyBytes: number) => ({ method: 'POST', path, query: {}, body, requestId: null, headers: { host: 'x' }, at: '2026-01-01T00:00:00.000Z', bodyBytes });

    it('holds the newest `capacity` requests, oldest first', function () {
      const log = new RequestLog(3);
      for (let i = 1; i <= 5; i++) log.record(entry(`/r${i}`, { i }, 7));
      expect(log.list().map((e) => e.path)).to.deep.equal(['/r3', '/r4', '/r5']);
      expect(log.stats.entries).to.equal(3);
    });

    it('stores a body over 16 KiB as { truncated, bytes } and keeps the total under its byte cap', function () {
      const log = new RequestLog(100, 4096, 1024);
      log.record(entry('/big', { text: 'x'.repeat(2000) }, 2012));
      expect(log.list()[0].body).to.deep.equal({ truncated: true, bytes: 2012 });
      for (let i = 0; i < 10; i++) log.record(entry(`/mid${i}`, { text: 'y'.repeat(900) }, 912));
      expect(log.stats.bytes).to.be.at.most(4096);
      expect(log.list().map((e) => e.path).at(-1)).to.equal('/mid9');
      expect(log.list().length).to.be.below(11);
      log.clear();
      expect(log.stats).to.deep.equal({ entries: 0, bytes: 0 });
    });

    it('is a byte ring: always lists the newest requests intact and in order, within its byte cap, however the sizes wrap', function () {
      const log = new RequestLog(40, 20_000, 16 * 1024);
      let seed = 7;
      const nextSize = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 1500;
      for (let i = 1; i <= 1500; i++) {
        const text = 'x'.repeat(nextSize());
        log.record(entry(`/r${i}`, { text, i }, text.length + 20));
        const listed = log.list();
        expect(log.stats.bytes).to.be.at.most(20_000);
        expect(listed.length).to.be.within(1, 40);
        expect(listed.length).to.equal(log.stats.entries);
        // A suffix of what was recorded: /r(i-n+1) .. /ri, each body as recorded.
        listed.forEach((e, k) => {
          const n = i - listed.length + 1 + k;
          expect(e.path).to.equal(`/r${n}`);
          expect((e.body as { i: number }).i).to.equal(n);
        });
      }
      const filtered = log.list({ method: 'post', path: '/r150*' });
      expect(filtered.map((e) => e.path)).to.deep.equal(['/r1500']);
    });
  });

  describe('AccountStore', function () {
    it('finds accounts by onboarding id, evicts the oldest past its cap with its onboarding id, and clears', function () {
      const accounts = new AccountStore(2);
      const a = accounts.create(accountBody('ob-a'));
      const b = accounts.create(accountBody('ob-b'));
      expect(accounts.findByOnboarding('ob-a')).to.equal(a);
      const c = accounts.create(accountBody('ob-c'));
      expect(accounts.size).to.equal(2);
      expect(accounts.get(a.accountId), 'evicted').to.equal(undefined);
      expect(accounts.findByOnboarding('ob-a'), 'its onboarding id is forgotten').to.equal(undefined);
      expect(accounts.requestOf('ob-a')).to.equal(undefined);
      expect(accounts.findByOnboarding('ob-b')).to.equal(b);
      expect(accounts.findByOnboarding('ob-c')).to.equal(c);
      expect(accounts.list().map((x) => x.accountId)).to.deep.equal([b.accountId, c.accountId]);
      accounts.clear();
      expect(accounts.findByOnboarding('ob-b')).to.equal(undefined);
      expect(accounts.size).to.equal(0);
    });
  });

  describe('CardStore', function () {
    it('evicts the oldest card past its cap: 404 CARD_NOT_FOUND, out of the client-code index, PANs bounded', function () {
      const cards = new CardStore(undefined, 3);
      const made = [1, 2, 3, 4, 5].map((i) => cards.create({ ...NEW_CARD, clientCode: i % 2 ? '111' : '222' }));
      expect(cards.size).to.equal(3);
      expect(() => cards.get(made[0].cardKey)).to.throw().with.property('errorCode', 'CARD_NOT_FOUND');
      expect(() => cards.get(made[1].cardKey)).to.throw().with.property('errorCode', 'CARD_NOT_FOUND');
      expect(cards.listByClientCode('111').map((c) => c.cardKey)).to.deep.equal([made[2].cardKey, made[4].cardKey]);
      expect(cards.listByClientCode('222').map((c) => c.cardKey)).to.deep.equal([made[3].cardKey]);
      expect(cards.panCount, 'held PANs + at most maxCards retired ones').to.be.at.most(6);
      for (let i = 0; i < 20; i++) cards.create(NEW_CARD);
      expect(cards.panCount).to.be.at.most(6);
      expect(new Set(cards.list().map((c) => c.pan)).size).to.equal(3);
      cards.clear();
      expect(cards.size).to.equal(0);
      expect(cards.panCount).to.equal(0);
      expect(cards.listByClientCode('111')).to.deep.equal([]);
    });

    it('keeps the last STATUS_HISTORY_LIMIT status changes of a card', function () {
      const card = new CardStore(undefined, 10).create(NEW_CARD);
      for (let i = 0; i < STATUS_HISTORY_LIMIT + 5; i++) {
        recordStatusChange(card, { action: 'lock', from: '00', to: 'S1', reason: String(i), description: null, cardLocation: null, at: '' });
      }
      expect(card.statusHistory).to.have.length(STATUS_HISTORY_LIMIT);
      expect(card.statusHistory[0].reason).to.equal('5');
      expect(card.statusHistory.at(-1)!.reason).to.equal(String(STATUS_HISTORY_LIMIT + 4));
    });
  });

  describe('ProcessingState', function () {
    const register = (state: ProcessingState, cardKey: string, accountId: string, extra: Record<string, unknown> = {}) =>
      state.register({ cardKey, accountId, historyEnd: '2026-03-01T00:00:00.000Z', ...extra }, 'control');

    it('answers account transactions exactly as generating and sorting every card of the account did', function () {
      const state = new ProcessingState(1000);
      for (let i = 0; i < 30; i++) register(state, `CK${String(i).padStart(16, '0')}`, `acc-${i % 3}`);
      expect(state.transactionsOf({ accountId: 'acc-1' })).to.deep.equal(bruteForce(state, 'acc-1'));
      // A card added, moved to another account, re-registered unchanged and with a new history end: still in step.
      register(state, 'CKNEW0000000000001', 'acc-1');
      register(state, 'CK0000000000000001', 'acc-2');
      register(state, 'CK0000000000000004', 'acc-1');
      register(state, 'CK0000000000000007', 'acc-1', { historyEnd: '2026-02-01T00:00:00.000Z', currency: 'USD' });
      for (const account of ['acc-0', 'acc-1', 'acc-2']) expect(state.transactionsOf({ accountId: account }), account).to.deep.equal(bruteForce(state, account));
      expect(state.transactionsOf({ accountId: 'acc-2', cardId: 'CK0000000000000001' })).to.deep.equal(transactionsOf(state.cards.get('CK0000000000000001')!));
      expect(state.transactionsOf({ accountId: 'acc-1', cardId: 'CK0000000000000001' }), 'card of another account').to.deep.equal([]);
    });

    it('orders two cards\' transactions of the same instant by id, whether merged into a memoised history or sorted into a new one', function () {
      const end = '2026-03-01T00:00:00.000Z';
      const a = register(new ProcessingState(10), 'CKTIE0000000000001', 'acc-t');
      // Card B's history end is chosen so that one of its transactions falls on one of A's instants.
      const probe = transactionsOf({ ...a, cardKey: 'CKTIE0000000000002', historyEnd: end });
      const target = transactionsOf(a)[3].createdAt;
      const bEnd = new Date(Date.parse(target) + (Date.parse(end) - Date.parse(probe[5].createdAt))).toISOString();
      for (const memoisedFirst of [true, false]) {
        const state = new ProcessingState(10);
        register(state, 'CKTIE0000000000001', 'acc-t');
        if (memoisedFirst) state.transactionsOf({ accountId: 'acc-t' });
        register(state, 'CKTIE0000000000002', 'acc-t', { historyEnd: bEnd });
        const answered = state.transactionsOf({ accountId: 'acc-t' });
        const tied = answered.filter((t) => t.createdAt === target);
        expect(tied.map((t) => t.cardId).sort(), 'one transaction of each card at that instant').to.deep.equal(['CKTIE0000000000001', 'CKTIE0000000000002']);
        expect(tied[0].id < tied[1].id, 'ties by id').to.equal(true);
        expect(answered, `memoised first: ${memoisedFirst}`).to.deep.equal(bruteForce(state, 'acc-t'));
      }
    });

    it('answers any page of an account as the slice of its whole history, recorded transactions first', function () {
      const state = new ProcessingState(100);
      for (let i = 0; i < 12; i++) register(state, `CKPAGE${String(i).padStart(12, '0')}`, 'acc-p');
      for (let i = 0; i < 5; i++) state.record({ cardId: `CKPAGE${String(i % 2).padStart(12, '0')}`, amount: 10 + i, currency: 'EUR' });
      const whole = state.transactionsOf({ accountId: 'acc-p' });
      expect(whole.slice(0, 5).every((t) => t.merchant.name === 'Sandbox Merchant'), 'the recorded ones lead').to.equal(true);
      expect(whole.slice(5)).to.deep.equal(bruteForce(state, 'acc-p'));
      for (const [offset, limit] of [[0, 3], [3, 4], [4, 20], [17, 20], [whole.length - 2, 10], [whole.length, 5], [whole.length + 40, 5]]) {
        const page = state.transactionPage({ accountId: 'acc-p' }, offset, limit);
        expect(page.total).to.equal(whole.length);
        expect(page.items, `offset ${offset}, limit ${limit}`).to.deep.equal(whole.slice(offset, offset + limit));
      }
      const card = state.transactionPage({ cardId: 'CKPAGE000000000001' }, 2, 3);
      expect(card.items).to.deep.equal(state.transactionsOf({ cardId: 'CKPAGE000000000001' }).slice(2, 5));
    });

    it('evicts the oldest card past its cap together with its issuer facts and its transactions', function () {
      const state = new ProcessingState(4);
      const issued = (cardKey: string) => ({ cardKey, previousCardKey: null, cardMask: '5355 70** **** 0001', type: 'virtual' as const, holderClientCode: 'client-1', currency: 'EUR', createdAt: '2026-01-01T00:00:00.000Z' });
      for (let i = 0; i < 4; i++) state.registerIssued(issued(`CKISSUED00000000${i}0`));
      const before = state.transactionsOf({ accountId: 'client-1' }).length;
      expect(before).to.be.greaterThan(0);
      state.registerIssued(issued('CKISSUED0000000050'));
      expect(state.cards.size).to.equal(4);
      expect(state.issuerFactCount).to.equal(4);
      expect(state.cards.has('CKISSUED0000000000'), 'the oldest is unknown').to.equal(false);
      expect(state.transactionsOf({ cardId: 'CKISSUED0000000000' })).to.deep.equal([]);
      const after = state.transactionsOf({ accountId: 'client-1' });
      expect(after.some((t) => t.cardId === 'CKISSUED0000000000')).to.equal(false);
      expect(after).to.deep.equal(bruteForce(state, 'client-1'));
      state.clear();
      expect(state.transactionsOf({ accountId: 'client-1' })).to.deep.equal([]);
      expect(state.transactions.heldTransactions).to.equal(0);
      expect(state.transactions.accounts).to.equal(0);
    });

    it('keeps the newest RECORDED_KEPT recorded transactions of all cards together', function () {
      const state = new ProcessingState(20);
      // 12 cards: their 1,000 each would be 12,000.
      const cards = Array.from({ length: 12 }, (_, i) => `CKREC${String(i).padStart(13, '0')}`);
      for (const cardKey of cards) register(state, cardKey, 'acc-r');
      const recorded = (cardKey: string) => state.transactionsOf({ cardId: cardKey }).filter((t) => t.merchant.name === 'Sandbox Merchant');
      const first = state.record({ cardId: cards[0], amount: 1, currency: 'EUR' })!;
      for (let i = 1; i < RECORDED_KEPT + 5; i++) state.record({ cardId: cards[i % 12], amount: 1 + i, currency: 'EUR' });
      const kept = cards.flatMap(recorded);
      expect(kept).to.have.length(RECORDED_KEPT);
      expect(kept.some((t) => t.id === first.id), 'the oldest went first').to.equal(false);
      expect(Math.min(...kept.map((t) => t.amount)), 'the 5 oldest are gone').to.equal(6);
      expect(state.transactionsOf({ accountId: 'acc-r' }).filter((t) => t.merchant.name === 'Sandbox Merchant')).to.have.length(RECORDED_KEPT);
    });

    it('keeps the newest STATUS_UPDATES_KEPT status updates', function () {
      const state = new ProcessingState(10);
      for (let i = 0; i < STATUS_UPDATES_KEPT + 3; i++) state.statusUpdates.push({ cardKey: `k${i}`, statusCode: '00', reason: null, receivedAt: '' });
      const kept = state.statusUpdates.toArray();
      expect(kept).to.have.length(STATUS_UPDATES_KEPT);
      expect(kept[0].cardKey).to.equal('k3');
    });
  });

  describe('AccountTransactions', function () {
    it('drops the least recently read histories past its budget, and answers the same when rebuilt', function () {
      const index = new AccountTransactions(60);
      const card = (cardKey: string, accountId: string): KnownCard => ({ cardKey, accountId, previousCardKey: null, cardMask: null, type: null, ownerType: null, ownerId: null, partnerId: null, currency: 'EUR', occurredAt: null, registeredAt: '', source: 'control', historyEnd: '2026-03-01T00:00:00.000Z' });
      for (let i = 0; i < 6; i++) index.add(card(`CKBUDGET00000000${i}0`, `a${i % 3}`));
      const first = [...index.historyOf('a0')];
      index.historyOf('a1');
      index.historyOf('a2');
      expect(index.heldTransactions).to.be.at.most(60);
      expect(index.historyOf('a0')).to.deep.equal(first);
    });
  });

  describe('over HTTP: caps and reset', function () {
    let sandboxes: Sandboxes;
    before(async function () {
      sandboxes = await startSandboxes({ maxCards: 2, maxAccounts: 2 });
    });
    after(async function () {
      await sandboxes?.close();
    });

    it('an evicted card answers 404 CARD_NOT_FOUND at the issuer and is unknown to the processor; reset clears the index', async function () {
      const keys: string[] = [];
      for (let i = 0; i < 3; i++) {
        const created = await call<{ cardKey: string }>(`${sandboxes.issuer.url}/cards`, { method: 'POST', body: { ...NEW_CARD, clientCode: '55500001' } });
        expect(created.status).to.equal(201);
        keys.push(created.body.cardKey);
      }
      const evicted = await call<{ errorCode: string }>(`${sandboxes.issuer.url}/cards/${keys[0]}`);
      expect(evicted.status).to.equal(404);
      expect(evicted.body.errorCode).to.equal('CARD_NOT_FOUND');
      expect((await call(`${sandboxes.issuer.url}/cards/${keys[2]}`)).status).to.equal(200);
      const listed = await call<{ cardKey: string }[]>(`${sandboxes.issuer.url}/__sandbox/cards?clientCode=55500001`);
      expect(listed.body.map((c) => c.cardKey)).to.deep.equal(keys.slice(1));
      const page = await call<{ data: { cardId: string }[]; total: number }>(`${sandboxes.processing.url}/transactions?accountId=55500001&limit=100`);
      expect(new Set(page.body.data.map((t) => t.cardId))).to.deep.equal(new Set(keys.slice(1)));
      expect((await call<{ total: number }>(`${sandboxes.processing.url}/transactions?cardId=${keys[0]}`)).body.total).to.equal(0);

      await call(`${sandboxes.processing.url}/__sandbox/reset`, { method: 'POST' });
      expect((await call<{ total: number }>(`${sandboxes.processing.url}/transactions?accountId=55500001`)).body.total).to.equal(0);
      expect((await call<unknown[]>(`${sandboxes.processing.url}/__sandbox/cards`)).body).to.deep.equal([]);
    });

    it('an evicted account answers 404 ACCOUNT_NOT_FOUND and its onboarding id creates a new account; reset forgets every onboarding id', async function () {
      const ids: string[] = [];
      for (const ob of ['ob-h1', 'ob-h2', 'ob-h3']) {
        const created = await call<{ accountId: string }>(`${sandboxes.accounts.url}/accounts`, { method: 'POST', body: accountBody(ob) });
        expect(created.status).to.equal(201);
        ids.push(created.body.accountId);
      }
      expect((await call(`${sandboxes.accounts.url}/accounts/${ids[0]}`)).status).to.equal(404);
      expect((await call<{ data: unknown[] }>(`${sandboxes.accounts.url}/accounts?onboardingId=ob-h1`)).body.data).to.deep.equal([]);
      const again = await call<{ accountId: string }>(`${sandboxes.accounts.url}/accounts`, { method: 'POST', body: accountBody('ob-h1') });
      expect(again.status).to.equal(201);
      expect(again.body.accountId).to.not.equal(ids[0]);
      await call(`${sandboxes.accounts.url}/__sandbox/reset`, { method: 'POST' });
      expect((await call<{ data: unknown[] }>(`${sandboxes.accounts.url}/accounts?onboardingId=ob-h3`)).body.data).to.deep.equal([]);
    });
  });
});
