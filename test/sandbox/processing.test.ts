import { expect } from 'chai';
import { startSandboxes, type RecordedRequest, type Sandboxes } from '../../sandbox';
import { call, type ErrorBody } from './http-client';

interface Transaction {
  id: string;
  cardId: string;
  accountId: string | null;
  amount: number;
  currency: string;
  type: string;
  merchant: { name: string; mcc: string; city: string; country: string };
  status: string;
  createdAt: string;
  updatedAt: string;
  history: Array<{ kind: string; amount: number; at: string }>;
}
interface TransactionPage {
  data: Transaction[];
  total: number;
  page: number;
  limit: number;
}

function cardCreated(cardKey: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event: 'card_created',
    cardKey,
    cardMask: '5355 70** **** 1234',
    type: 'physical',
    ownerType: 'individual',
    ownerId: '65f0000000000000000000c1',
    partnerId: '65f0000000000000000000aa',
    occurredAt: new Date().toISOString(),
    ...overrides,
  };
}

const DAY_MS = 24 * 3600 * 1000;

/** A page with each date (createdAt, updatedAt, the history's) replaced by its offset (ms) before the card's historyEnd. */
function withOffsets(page: TransactionPage, historyEnd: number): Array<Record<string, unknown>> {
  const offset = (at: string) => historyEnd - Date.parse(at);
  return page.data.map(({ createdAt, updatedAt, history, ...rest }) => ({
    ...rest,
    offsetMs: offset(createdAt),
    updatedOffsetMs: offset(updatedAt),
    history: history.map(({ at, ...step }) => ({ ...step, offsetMs: offset(at) })),
  }));
}

describe('processing sandbox (card processing system)', () => {
  let sandboxes: Sandboxes;
  let processing: string;

  async function historyEndOf(cardKey: string): Promise<number> {
    const known = (await call<Array<{ cardKey: string; historyEnd: string }>>(`${processing}/__sandbox/cards`)).body;
    const card = known.find((c) => c.cardKey === cardKey);
    expect(card, `${cardKey} is known`).not.to.equal(undefined);
    return Date.parse(card?.historyEnd ?? '');
  }

  before(async () => {
    sandboxes = await startSandboxes();
    processing = sandboxes.processing.url;
  });
  after(() => sandboxes.close());
  beforeEach(() => call(`${processing}/__sandbox/reset`, { method: 'POST' }));

  describe('webhooks and transactions', () => {
    it('POST /webhooks/card-created: 202, recorded, and the card becomes known', async () => {
      const event = cardCreated('CKAAAA000000000001', { previousCardKey: 'CKAAAA000000000000' });
      const { status, body } = await call(`${processing}/webhooks/card-created`, { method: 'POST', body: event, headers: { 'x-request-id': 'wh-1' } });
      expect(status).to.equal(202);
      expect(body).to.deep.equal({ received: true });
      const recorded = (await call<RecordedRequest[]>(`${processing}/__sandbox/requests?path=/webhooks/card-created`)).body;
      expect(recorded).to.have.length(1);
      expect(recorded[0].body).to.deep.equal(event);
      expect(recorded[0].requestId).to.equal('wh-1');
      const known = (await call<Array<{ cardKey: string; previousCardKey: string; accountId: string }>>(`${processing}/__sandbox/cards`)).body;
      expect(known).to.have.length(1);
      expect(known[0]).to.include({ cardKey: 'CKAAAA000000000001', previousCardKey: 'CKAAAA000000000000', accountId: event.ownerId, source: 'webhook' });
    });

    it('refuses a webhook with a wrong event or missing fields: 400 VALIDATION_ERROR', async () => {
      for (const event of [cardCreated('CK1', { event: 'card_deleted' }), cardCreated('CK1', { ownerType: 'person' }), cardCreated('CK1', { cardMask: undefined }), cardCreated('CK1', { occurredAt: 'yesterday' })]) {
        const { status, body } = await call<ErrorBody>(`${processing}/webhooks/card-created`, { method: 'POST', body: event });
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal('VALIDATION_ERROR');
      }
    });

    it('a card it never heard of has no transactions', async () => {
      const { status, body } = await call<TransactionPage>(`${processing}/transactions?cardId=CKUNKNOWN000000000`);
      expect(status).to.equal(200);
      expect(body).to.deep.include({ data: [], total: 0 });
    });

    it('a known card has a realistic, deterministic history (same after a reset and re-registration)', async () => {
      await call(`${processing}/webhooks/card-created`, { method: 'POST', body: cardCreated('CKBBBB000000000001', { accountId: 'acc-1', currency: 'GBP' }) });
      const first = (await call<TransactionPage>(`${processing}/transactions?cardId=CKBBBB000000000001&limit=100`)).body;
      expect(first.total).to.be.within(6, 24);
      expect(first.data).to.have.length(first.total);
      for (const t of first.data) {
        expect(t.id).to.match(/^[0-9a-f]{24}$/);
        expect(t).to.include({ cardId: 'CKBBBB000000000001', accountId: 'acc-1', currency: 'GBP' });
        expect(t.amount).to.be.a('number').and.above(0);
        expect(['PURCHASE', 'WITHDRAWAL', 'REFUND']).to.include(t.type);
        expect(['SETTLED', 'PENDING', 'DECLINED']).to.include(t.status);
        expect(t.merchant.mcc).to.match(/^\d{4}$/);
        expect(t.merchant.country).to.match(/^[A-Z]{2}$/);
        if (t.type === 'WITHDRAWAL') expect(t.merchant.mcc).to.equal('6011');
      }
      const dates = first.data.map((t) => t.createdAt);
      expect(dates).to.deep.equal([...dates].sort().reverse());
      const firstEnd = await historyEndOf('CKBBBB000000000001');

      await call(`${processing}/__sandbox/reset`, { method: 'POST' });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await call(`${processing}/webhooks/card-created`, { method: 'POST', body: cardCreated('CKBBBB000000000001', { accountId: 'acc-1', currency: 'GBP' }) });
      const again = (await call<TransactionPage>(`${processing}/transactions?cardId=CKBBBB000000000001&limit=100`)).body;
      const againEnd = await historyEndOf('CKBBBB000000000001');
      // Dates are the registration instant minus offsets fixed by the card key: the same offsets,
      // and everything else identical.
      expect(withOffsets(again, againEnd)).to.deep.equal(withOffsets(first, firstEnd));

      await call(`${processing}/webhooks/card-created`, { method: 'POST', body: cardCreated('CKBBBB000000000002', { accountId: 'acc-1' }) });
      const other = (await call<TransactionPage>(`${processing}/transactions?cardId=CKBBBB000000000002&limit=100`)).body;
      expect(other.data.map((t) => t.id)).not.to.deep.equal(first.data.map((t) => t.id));
    });

    it('dates a history within the 90 days before the card became known; a redelivery does not move it', async () => {
      const before = Date.now();
      await call(`${processing}/webhooks/card-created`, { method: 'POST', body: cardCreated('CKBBBB000000000003') });
      const after = Date.now();
      const end = await historyEndOf('CKBBBB000000000003');
      expect(end).to.be.within(before, after);
      const page = (await call<TransactionPage>(`${processing}/transactions?cardId=CKBBBB000000000003&limit=100`)).body;
      for (const t of page.data) {
        const age = end - Date.parse(t.createdAt);
        expect(age).to.be.within(0, 90 * DAY_MS);
        if (t.status !== 'DECLINED') expect(t.status).to.equal(age < 2 * DAY_MS ? 'PENDING' : 'SETTLED');
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
      await call(`${processing}/webhooks/card-created`, { method: 'POST', body: cardCreated('CKBBBB000000000003') });
      expect(await historyEndOf('CKBBBB000000000003')).to.equal(end);
      expect((await call<TransactionPage>(`${processing}/transactions?cardId=CKBBBB000000000003&limit=100`)).body).to.deep.equal(page);
    });

    it('POST /__sandbox/cards with historyEnd pins the dates: same card key and historyEnd, same history', async () => {
      const historyEnd = '2025-01-01T00:00:00.000Z';
      const register = () => call(`${processing}/__sandbox/cards`, { method: 'POST', body: { cardKey: 'CKBBBB000000000004', accountId: 'acc-4', historyEnd } });
      expect((await register()).body).to.include({ historyEnd, source: 'control' });
      const first = (await call<TransactionPage>(`${processing}/transactions?cardId=CKBBBB000000000004&limit=100`)).body;
      expect(first.data[0].createdAt <= historyEnd).to.equal(true);
      expect(first.data[first.total - 1].createdAt >= '2024-10-03T00:00:00.000Z').to.equal(true);
      await call(`${processing}/__sandbox/reset`, { method: 'POST' });
      await register();
      expect((await call<TransactionPage>(`${processing}/transactions?cardId=CKBBBB000000000004&limit=100`)).body).to.deep.equal(first);
      const bad = await call<ErrorBody>(`${processing}/__sandbox/cards`, { method: 'POST', body: { cardKey: 'CK1', historyEnd: 'soon' } });
      expect(bad.status).to.equal(400);
      expect(bad.body.errorCode).to.equal('VALIDATION_ERROR');
    });

    it('filters by accountId across cards and paginates with page/limit', async () => {
      await call(`${processing}/webhooks/card-created`, { method: 'POST', body: cardCreated('CKCCCC000000000001', { ownerId: 'ind-1' }) });
      await call(`${processing}/webhooks/card-created`, { method: 'POST', body: cardCreated('CKCCCC000000000002', { ownerId: 'ind-1' }) });
      await call(`${processing}/__sandbox/cards`, { method: 'POST', body: { cardKey: 'CKCCCC000000000003', accountId: 'ind-2' } });
      const all = (await call<TransactionPage>(`${processing}/transactions?accountId=ind-1&limit=100`)).body;
      const one = (await call<TransactionPage>(`${processing}/transactions?cardId=CKCCCC000000000001&limit=100`)).body;
      const two = (await call<TransactionPage>(`${processing}/transactions?cardId=CKCCCC000000000002&limit=100`)).body;
      expect(all.total).to.equal(one.total + two.total);
      expect(new Set(all.data.map((t) => t.cardId))).to.deep.equal(new Set(['CKCCCC000000000001', 'CKCCCC000000000002']));

      const page1 = (await call<TransactionPage>(`${processing}/transactions?accountId=ind-1&page=1&limit=5`)).body;
      const page2 = (await call<TransactionPage>(`${processing}/transactions?accountId=ind-1&page=2&limit=5`)).body;
      expect(page1).to.include({ total: all.total, page: 1, limit: 5 });
      expect([...page1.data, ...page2.data]).to.deep.equal(all.data.slice(0, 10));
      const both = (await call<TransactionPage>(`${processing}/transactions?accountId=ind-2&cardId=CKCCCC000000000001`)).body;
      expect(both.total).to.equal(0);
      expect((await call<TransactionPage>(`${processing}/transactions?accountId=ind-2`)).body.total).to.be.above(0);
    });

    const badQueries = ['', '?page=0&cardId=CK1', '?limit=101&cardId=CK1', '?limit=abc&cardId=CK1'];
    for (const query of badQueries) {
      it(`GET /transactions${query || ' without accountId or cardId'}: 400 VALIDATION_ERROR`, async () => {
        const { status, body } = await call<ErrorBody>(`${processing}/transactions${query}`);
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal('VALIDATION_ERROR');
      });
    }
  });

  describe('fees', () => {
    const fees: Array<{ OperationType: string; CustomerType: string; ProductType: string; fee: number }> = [
      { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R001', fee: 0 },
      { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Business Prepaid', ProductType: 'R005', fee: 65 },
      { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Prepaid', ProductType: 'R006', fee: 10.9 },
      { OperationType: 'CARD_DELIVERY_FEE', CustomerType: 'Business Debit', ProductType: 'R003', fee: 9 },
      { OperationType: 'CARD_DELIVERY_FEE', CustomerType: 'Consumer Debit', ProductType: 'R004', fee: 0 },
    ];
    for (const expected of fees) {
      it(`${expected.OperationType} for ${expected.CustomerType}/${expected.ProductType} is ${expected.fee} EUR`, async () => {
        const { fee, ...request } = expected;
        const { status, body } = await call(`${processing}/fees`, { method: 'POST', body: { ...request, clientId: '10000001' } });
        expect(status).to.equal(200);
        expect(body).to.deep.equal({ ...request, fee, currency: 'EUR' });
      });
    }

    const invalid: Array<{ description: string; body: Record<string, unknown> }> = [
      { description: 'an unknown OperationType', body: { OperationType: 'CARD_FEE', CustomerType: 'Consumer Debit', ProductType: 'R001', cardKey: 'CK1' } },
      { description: 'an unknown CustomerType', body: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer', ProductType: 'R001', cardKey: 'CK1' } },
      { description: 'ProductType R007', body: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R007', cardKey: 'CK1' } },
      { description: 'none of cardKey, clientId, iban', body: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R001' } },
    ];
    for (const { description, body: request } of invalid) {
      it(`refuses ${description}: 400 VALIDATION_ERROR`, async () => {
        const { status, body } = await call<ErrorBody>(`${processing}/fees`, { method: 'POST', body: request });
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal('VALIDATION_ERROR');
      });
    }
  });

  describe('delivery methods', () => {
    it('lists the country carriers (postal and courier), upper-casing the country', async () => {
      const { status, body } = await call<{ success: boolean; country: string; deliveryMethods: Array<Record<string, unknown>> }>(`${processing}/delivery-methods?country=de`);
      expect(status).to.equal(200);
      expect(body.success).to.equal(true);
      expect(body.country).to.equal('DE');
      expect(body.deliveryMethods.map((m) => m.type)).to.deep.equal(['postal', 'courier']);
      expect(body.deliveryMethods[0]).to.include({ carrier: 'Deutsche Post', currency: 'EUR' });
      for (const m of body.deliveryMethods) expect(m).to.have.all.keys('id', 'type', 'carrier', 'name', 'estimatedDays', 'fee', 'currency');
    });

    it('falls back to generic international post, and ships nowhere for embargoed countries', async () => {
      const generic = await call<{ deliveryMethods: Array<Record<string, unknown>> }>(`${processing}/delivery-methods?country=PT`);
      expect(generic.body.deliveryMethods).to.deep.equal([
        { id: 'intl-post-standard', type: 'postal', carrier: 'International Post', name: 'Standard international mail', estimatedDays: 10, fee: 4.5, currency: 'EUR' },
      ]);
      const none = await call<{ success: boolean; deliveryMethods: unknown[] }>(`${processing}/delivery-methods?country=KP`);
      expect(none.body).to.deep.include({ success: true, deliveryMethods: [] });
    });

    it('refuses a missing or malformed country: 400 VALIDATION_ERROR', async () => {
      for (const query of ['', '?country=DEU', '?country=1A']) {
        const { status, body } = await call<ErrorBody>(`${processing}/delivery-methods${query}`);
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal('VALIDATION_ERROR');
      }
    });
  });

  describe('status updates', () => {
    it('POST /cards/status-update: 200 { accepted: true }, kept and recorded', async () => {
      const { status, body } = await call(`${processing}/cards/status-update`, { method: 'POST', body: { cardKey: 'CKDDDD000000000001', statusCode: 'L1', reason: 'reissue' } });
      expect(status).to.equal(200);
      expect(body).to.deep.equal({ accepted: true });
      const kept = (await call<Array<Record<string, unknown>>>(`${processing}/__sandbox/status-updates`)).body;
      expect(kept).to.have.length(1);
      expect(kept[0]).to.include({ cardKey: 'CKDDDD000000000001', statusCode: 'L1', reason: 'reissue' });
    });

    it('refuses an unknown status code: 400 VALIDATION_ERROR', async () => {
      const { status, body } = await call<ErrorBody>(`${processing}/cards/status-update`, { method: 'POST', body: { cardKey: 'CK1', statusCode: 'X9' } });
      expect(status).to.equal(400);
      expect(body.errorCode).to.equal('VALIDATION_ERROR');
    });
  });
});
