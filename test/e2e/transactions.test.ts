import { expect } from 'chai';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { waitFor } from '../support/wait';
import { TestReceiver } from '../support/webhook-receiver';
import { RESPONSE_SCHEMAS } from '../../gateway/schemas/responses';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

/**
 * Transactions as one object each (docs/transactions.md), through the run's shared gateway, its
 * processing sandbox over real HTTP, real PostgreSQL and a real webhook receiver: the lifecycle and
 * its events, the partner-wide search with every filter and its cursor, the bad inputs, and a lost
 * notification taken over by the reconciler (the shared gateway reads the change feed every second).
 */
describe('e2e: transactions', function () {
  this.timeout(90_000);
  let gateway: Gateway;
  let partner: TestPartner;
  let other: TestPartner;
  let receiver: TestReceiver;
  let processing: string;
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv, ['date-time']);
  const validTransaction = ajv.compile(RESPONSE_SCHEMAS.Transaction);
  const validList = ajv.compile(RESPONSE_SCHEMAS.TransactionList);

  const newCard = async (as = partner) => {
    const individual = await api(gateway, as, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status, JSON.stringify(individual.body)).to.equal(201);
    const card = await api(gateway, as, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return { individualId: individual.body._id as string, clientId: individual.body.clientID as string, cardKey: card.body.cardKey as string };
  };
  const authorize = async (cardKey: string, body: Record<string, unknown> = {}, as = partner) => {
    const r = await api(gateway, as, 'POST', `/simulate/cards/${cardKey}/authorizations`, { body: { amount: 50, ...body } });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    return r.body;
  };
  const step = async (id: string, kind: string, body?: Record<string, unknown>, expected = kind === 'refund' ? 201 : 200) => {
    const r = await api(gateway, partner, 'POST', `/simulate/transactions/${id}/${kind}`, { body: body ?? {} });
    expect(r.status, JSON.stringify(r.body)).to.equal(expected);
    return r.body;
  };
  const detail = async (id: string, as = partner) => api(gateway, as, 'GET', `/transactions/${id}`);
  const eventsFor = (id: string) => receiver.received.filter((d) => d.event.data?.transaction?._id === id).map((d) => d.event);

  before(async () => {
    gateway = await sharedGateway();
    partner = await registerPartner(gateway);
    other = await registerPartner(gateway);
    processing = sandboxUrls(gateway).processing;
    receiver = await new TestReceiver().up();
    const endpoint = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url: receiver.url, events: ['transaction.created', 'transaction.updated'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
    recordSecret('webhookSecret', endpoint.body.secret);
  });
  after(async () => {
    await receiver?.close();
  });

  describe('one transaction, one lifecycle', function () {
    it('an authorization becomes PENDING, then SETTLED by a partial clearing; a refund points to it; each step is in its history and arrives as an event, in order', async () => {
      const { cardKey, individualId } = await newCard();
      const authorized = await authorize(cardKey, { amount: 80, merchant: { name: 'Book Shop', mcc: '5942', city: 'Berlin', country: 'DE' } });
      expect(validTransaction(authorized), JSON.stringify(validTransaction.errors)).to.equal(true);
      expect(authorized).to.deep.include({ cardKey, individualId, amount: 80, status: 'PENDING', type: 'PURCHASE', settledAmount: null, declineReason: null, relatedTransactionId: null });
      expect(authorized.history.map((s: any) => [s.kind, s.amount])).to.deep.equal([['authorization', 80]]);
      expect((await detail(authorized._id)).body, 'the simulation answers what GET /transactions/{id} shows').to.deep.equal(authorized);

      const cleared = await step(authorized._id, 'clearing', { amount: 72.49 });
      expect(cleared).to.deep.include({ _id: authorized._id, status: 'SETTLED', amount: 80, settledAmount: 72.49 });
      expect(cleared.history.map((s: any) => [s.kind, s.amount])).to.deep.equal([['authorization', 80], ['clearing', 72.49]]);
      expect((await detail(authorized._id)).body).to.deep.equal(cleared);

      const refund = await step(authorized._id, 'refund', { amount: 20 });
      expect(refund).to.deep.include({ type: 'REFUND', status: 'SETTLED', amount: 20, relatedTransactionId: authorized._id, cardKey, individualId });
      expect(refund._id).to.not.equal(authorized._id);
      expect(refund.history.map((s: any) => s.kind)).to.deep.equal(['refund']);

      await receiver.waitFor(() => eventsFor(authorized._id).length >= 2 && eventsFor(refund._id).length >= 1, 20_000, 'the purchase and refund events');
      const purchaseEvents = eventsFor(authorized._id);
      expect(purchaseEvents.map((e) => [e.type, e.data.change ?? null, e.data.previousStatus ?? null, e.data.transaction.status])).to.deep.equal([
        ['transaction.created', null, null, 'PENDING'],
        ['transaction.updated', 'clearing', 'PENDING', 'SETTLED'],
      ]);
      expect(eventsFor(refund._id).map((e) => e.type)).to.deep.equal(['transaction.created']);
      const listed = await api(gateway, partner, 'GET', `/events?type=transaction.updated`);
      expect(listed.body.data.map((e: any) => e.data.transaction._id)).to.include(authorized._id);
    });

    it('another is partly reversed (amount lowered, still PENDING), then expires; a decline carries its reason', async () => {
      const { cardKey } = await newCard();
      const authorized = await authorize(cardKey, { amount: 100, type: 'WITHDRAWAL', merchant: { mcc: '6011' } });
      const reversed = await step(authorized._id, 'reversal', { amount: 30 });
      expect(reversed).to.deep.include({ status: 'PENDING', amount: 70, type: 'WITHDRAWAL' });
      const expired = await step(authorized._id, 'expiry');
      expect(expired).to.deep.include({ status: 'EXPIRED', amount: 70, settledAmount: null });
      expect(expired.history.map((s: any) => [s.kind, s.amount])).to.deep.equal([['authorization', 100], ['reversal', 30], ['expiry', 70]]);
      expect((await detail(authorized._id)).body).to.deep.equal(expired);

      const declined = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/transactions`, { body: { amount: 900, currency: 'EUR', type: 'decline', declineReason: 'insufficient_funds' } });
      expect(declined.status, JSON.stringify(declined.body)).to.equal(201);
      expect(declined.body).to.deep.include({ status: 'DECLINED', declineReason: 'insufficient_funds' });
      expect(declined.body.history.map((s: any) => s.kind)).to.deep.equal(['decline']);

      await receiver.waitFor(() => eventsFor(authorized._id).length >= 3, 20_000, 'three events of the withdrawal');
      expect(eventsFor(authorized._id).map((e) => [e.type, e.data.change ?? null, e.data.previousStatus ?? null])).to.deep.equal([
        ['transaction.created', null, null],
        ['transaction.updated', 'reversal', 'PENDING'],
        ['transaction.updated', 'expiry', 'PENDING'],
      ]);
    });

    it('a full reversal is REVERSED with amount 0; the same authorizationId again is the processor\'s retry: the same transaction, no second one', async () => {
      const { cardKey } = await newCard();
      const authorizationId = `auth_${Date.now().toString(16)}`;
      const first = await authorize(cardKey, { amount: 12, authorizationId });
      const again = await authorize(cardKey, { amount: 12, authorizationId });
      expect(again._id).to.equal(first._id);
      const list = await api(gateway, partner, 'GET', `/transactions?cardKey=${cardKey}`);
      expect(list.body.data.map((t: any) => t._id)).to.deep.equal([first._id]);
      const reversed = await step(first._id, 'reversal');
      expect(reversed).to.deep.include({ status: 'REVERSED', amount: 0 });
    });

    it('a step the lifecycle forbids is 409 with its code, and changes nothing', async () => {
      const { cardKey } = await newCard();
      const t = await authorize(cardKey, { amount: 40 });
      const tooMuch = await api(gateway, partner, 'POST', `/simulate/transactions/${t._id}/reversal`, { body: { amount: 41 } });
      expect(tooMuch.status).to.equal(409);
      expect(tooMuch.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(tooMuch.body.code).to.equal('amount_exceeds_remaining');
      const notSettled = await api(gateway, partner, 'POST', `/simulate/transactions/${t._id}/refund`, { body: {} });
      expect(notSettled.status).to.equal(409);
      expect(notSettled.body.code).to.equal('refund_not_allowed');
      await step(t._id, 'expiry');
      for (const kind of ['clearing', 'reversal', 'expiry']) {
        const refused = await api(gateway, partner, 'POST', `/simulate/transactions/${t._id}/${kind}`, { body: {} });
        expect(refused.status, kind).to.equal(409);
        expect(refused.body.code, kind).to.equal('transaction_not_pending');
      }
      const declined = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/transactions`, { body: { amount: 5, currency: 'EUR', type: 'decline' } });
      const clearDeclined = await api(gateway, partner, 'POST', `/simulate/transactions/${declined.body._id}/clearing`, { body: {} });
      expect(clearDeclined.status).to.equal(409);
      expect(clearDeclined.body.code).to.equal('transaction_not_pending');
      const after = await detail(t._id);
      expect(after.body.status).to.equal('EXPIRED');
      expect(after.body.history).to.have.length(2);
    });
  });

  describe('GET /transactions', function () {
    let cards: { individualId: string; cardKey: string }[];
    let all: any[];

    before(async function () {
      this.timeout(120_000);
      cards = [await newCard(), await newCard()];
      for (const [i, card] of cards.entries()) {
        const a = await authorize(card.cardKey, { amount: 10 + i });
        await step(a._id, 'clearing');
        const b = await authorize(card.cardKey, { amount: 20 + i, type: 'WITHDRAWAL' });
        await step(b._id, 'expiry');
        await authorize(card.cardKey, { amount: 30 + i });
        await api(gateway, partner, 'POST', `/simulate/cards/${card.cardKey}/transactions`, { body: { amount: 40 + i, currency: 'EUR', type: 'decline', declineReason: 'suspected_fraud' } });
        await step(a._id, 'refund', { amount: 1 });
      }
      all = await pageAll('');
    });

    async function pageAll(query: string, limit = 3): Promise<any[]> {
      const out: any[] = [];
      let cursor: string | null = null;
      do {
        const sep = query ? '&' : '';
        const r = await api(gateway, partner, 'GET', `/transactions?${query}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        expect(validList(r.body), JSON.stringify(validList.errors)).to.equal(true);
        out.push(...r.body.data);
        cursor = r.body.nextCursor;
      } while (cursor);
      return out;
    }

    it('lists the partner\'s transactions newest first, each once', async () => {
      const ownCards = new Set(cards.map((c) => c.cardKey));
      const mine = all.filter((t) => ownCards.has(t.cardKey));
      expect(mine).to.have.length(10);
      const ids = all.map((t) => t._id);
      expect(new Set(ids).size).to.equal(ids.length);
      const order = all.map((t) => `${t.createdAt}|${t._id}`);
      expect(order).to.deep.equal([...order].sort().reverse());
    });

    it('every filter, alone and combined, returns exactly the matching transactions', async () => {
      const times = all.map((t) => t.createdAt).sort();
      const from = times[2];
      const to = times[times.length - 3];
      const filters: Record<string, (t: any) => boolean> = {
        [`cardKey=${cards[0].cardKey}`]: (t) => t.cardKey === cards[0].cardKey,
        [`individualId=${cards[1].individualId}`]: (t) => t.individualId === cards[1].individualId,
        'status=SETTLED': (t) => t.status === 'SETTLED',
        'status=EXPIRED': (t) => t.status === 'EXPIRED',
        'status=DECLINED': (t) => t.status === 'DECLINED',
        'type=REFUND': (t) => t.type === 'REFUND',
        'type=WITHDRAWAL': (t) => t.type === 'WITHDRAWAL',
        [`from=${from}`]: (t) => t.createdAt >= from,
        [`to=${to}`]: (t) => t.createdAt < to,
        [`from=${from}&to=${to}`]: (t) => t.createdAt >= from && t.createdAt < to,
        [`status=PENDING&from=${from}&to=${to}`]: (t) => t.status === 'PENDING' && t.createdAt >= from && t.createdAt < to,
        [`cardKey=${cards[1].cardKey}&status=SETTLED&type=PURCHASE`]: (t) => t.cardKey === cards[1].cardKey && t.status === 'SETTLED' && t.type === 'PURCHASE',
        [`individualId=${cards[0].individualId}&type=REFUND`]: (t) => t.individualId === cards[0].individualId && t.type === 'REFUND',
        [`cardKey=${cards[0].cardKey}&individualId=${cards[1].individualId}`]: () => false,
      };
      for (const [query, matches] of Object.entries(filters)) {
        const expected = all.filter(matches).map((t) => t._id);
        const got = (await pageAll(query.replace(/\+/g, '%2B'), 2)).map((t) => t._id);
        expect(got, query).to.deep.equal(expected);
      }
      expect(all.filter((t) => t.status === 'SETTLED').length).to.be.greaterThan(0);
    });

    it('paging with the cursor while new transactions arrive neither skips nor repeats one', async () => {
      const cardKey = cards[0].cardKey;
      const before = (await pageAll(`cardKey=${cardKey}`, 50)).map((t) => t._id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let added = 0;
      do {
        const r = await api(gateway, partner, 'GET', `/transactions?cardKey=${cardKey}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...r.body.data.map((t: any) => t._id));
        cursor = r.body.nextCursor;
        if (added < 2) {
          await authorize(cardKey, { amount: 1 });
          added++;
        }
      } while (cursor);
      expect(seen).to.deep.equal(before);
    });

    it('partner B never sees A\'s transactions', async () => {
      const mine = all.find((t) => t.cardKey === cards[0].cardKey);
      expect((await api(gateway, other, 'GET', '/transactions')).body).to.deep.equal({ data: [], nextCursor: null });
      expect((await api(gateway, other, 'GET', `/transactions?cardKey=${cards[0].cardKey}`)).body.data).to.deep.equal([]);
      const foreign = await detail(mine._id, other);
      expect(foreign.status).to.equal(403);
      expect(foreign.body.code).to.equal('forbidden');
      const step = await api(gateway, other, 'POST', `/simulate/transactions/${mine._id}/expiry`, { body: {} });
      expect(step.status).to.equal(403);
    });

    it('bad input is a 400 problem naming the parameter, and an unknown id is 404', async () => {
      const first = await api(gateway, partner, 'GET', '/transactions?limit=1');
      const cursor = first.body.nextCursor as string;
      const [payload, mac] = cursor.split('.');
      const tampered = `${Buffer.from(JSON.stringify(['2099-01-01T00:00:00.000000Z', 'x']), 'utf8').toString('base64url')}.${mac}`;
      const cases: [string, string][] = [
        ['from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'from'],
        ['from=yesterday', 'from'],
        ['to=2026-11-01', 'to'],
        ['from=2024-06-01T00:00:00%2B05&to=2024-01-01T00:00:00Z', 'from'],
        ['to=2024-06-30T23:59:60Z', 'to'],
        ['status=LOST', 'status'],
        ['type=CASH', 'type'],
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        [`cursor=${tampered}`, 'cursor'],
        [`cursor=${payload}.${'A'.repeat(22)}`, 'cursor'],
        [`cursor=${cursor}&status=SETTLED`, 'cursor'],
        ['cursor=not-a-cursor', 'cursor'],
        ['sort=asc', 'sort'],
      ];
      for (const [query, name] of cases) {
        const r = await api(gateway, partner, 'GET', `/transactions?${query}`);
        expect(r.status, query).to.equal(400);
        expect(r.headers.get('content-type'), query).to.match(/^application\/problem\+json/);
        expect(JSON.stringify(r.body.invalidParams), query).to.contain(name);
      }
      const foreignCursor = await api(gateway, other, 'GET', `/transactions?cursor=${cursor}`);
      expect(foreignCursor.status, 'another partner\'s cursor').to.equal(400);
      expect((await detail('abcdef0123456789abcdef01')).status).to.equal(404);
      expect((await detail('bad%20id')).status).to.equal(400);
    });
  });

  describe('a card replaced meanwhile', function () {
    it('a later step of the old card\'s transaction (the processor still names the old key) still reaches it, with its event', async () => {
      const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
      const card = (await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/physical`, { body: cardBody(individual.body.clientID) })).body;
      const inactive = await authorize(card.cardKey, { amount: 15 });
      expect(card.status).to.not.equal('ACTIVE');
      expect(inactive, 'a physical card is issued not active: the gateway declines').to.deep.include({ status: 'DECLINED', authorization: { decidedBy: 'card_state', rule: `card.status.${card.status}` } });
      expect(inactive.declineReason).to.be.oneOf(['card_locked', 'card_inactive']);
      const activated = await api(gateway, partner, 'POST', `/cards/${card.cardKey}/activate`, { body: { expDate: card.expDate } });
      expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
      const t = await authorize(card.cardKey, { amount: 15 });
      expect(t.authorization).to.deep.equal({ decidedBy: 'approved' });
      const replaced = await api(gateway, partner, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate } });
      expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
      const cleared = await sandboxControl(processing, 'POST', `/__sandbox/transactions/${t._id}/clearing`, {});
      expect(cleared.status, JSON.stringify(cleared)).to.equal("SETTLED");
      const after = await detail(t._id);
      expect(after.body).to.deep.include({ status: 'SETTLED', cardKey: card.cardKey, settledAmount: 15 });
      await receiver.waitFor(() => eventsFor(t._id).length >= 2, 20_000, 'the clearing event after the replace');
    });
  });

  describe('notifications the gateway never got', function () {
    it('a lost notification is taken over by the reconciler from the change feed, with its events', async () => {
      const { cardKey } = await newCard();
      const authorized = await sandboxControl(processing, 'POST', '/__sandbox/authorizations', { cardId: cardKey, amount: 33, notify: 'drop' });
      expect(authorized.status, JSON.stringify(authorized)).to.equal('PENDING');
      // Probed through the search, which no cache answers (the detail's ownership step remembers an
      // unknown id for 5 s); the shared gateway's reconciler reads the change feed every second.
      const seen = await waitFor('the reconciler to take the lost authorization over', async () => {
        const r = await api(gateway, partner, 'GET', `/transactions?cardKey=${cardKey}`);
        return r.body.data.find((t: any) => t._id === authorized.id);
      }, 10_000, 100);
      expect(seen).to.deep.include({ status: 'PENDING', amount: 33 });
      const cleared = await sandboxControl(processing, 'POST', `/__sandbox/transactions/${authorized.id}/clearing`, { amount: 30, notify: 'drop' });
      expect(cleared.status, JSON.stringify(cleared)).to.equal("SETTLED");
      const settled = await waitFor('the reconciler to take the lost clearing over', async () => {
        const r = await detail(authorized.id);
        return r.body.status === 'SETTLED' ? r.body : undefined;
      }, 10_000, 100);
      expect(settled).to.deep.include({ settledAmount: 30 });
      await receiver.waitFor(() => eventsFor(authorized.id).length >= 2, 20_000, 'the taken-over events');
      expect(eventsFor(authorized.id).map((e) => e.type)).to.deep.equal(['transaction.created', 'transaction.updated']);
    });
  });
});
