import { expect } from 'chai';
import { startSandboxes, type KnownCard, type Sandboxes, type Transaction } from '../../sandbox';
import { call } from './http-client';

interface TransactionPage {
  data: Transaction[];
  total: number;
  page: number;
  limit: number;
}
interface IssuedCard {
  cardKey: string;
  cardMask: string;
  type: string;
  holderClientCode: string;
  currency: string;
  createdAt: string;
}

const EXP = '12/2031';
const DAY_MS = 24 * 3600 * 1000;

describe('issuer → processing link (startSandboxes)', () => {
  let sandboxes: Sandboxes;
  let issuer: string;
  let processing: string;

  async function issue(overrides: Record<string, unknown> = {}): Promise<IssuedCard> {
    const { status, body } = await call<IssuedCard>(`${issuer}/cards`, {
      method: 'POST',
      body: { type: 'virtual', clientCode: '48213377', expDate: EXP, currency: 'GBP', productCode: 'P-STD', ...overrides },
    });
    expect(status, JSON.stringify(body)).to.equal(201);
    return body;
  }
  const knownCards = async (): Promise<KnownCard[]> => (await call<KnownCard[]>(`${processing}/__sandbox/cards`)).body;
  const knownCard = async (cardKey: string): Promise<KnownCard | undefined> => (await knownCards()).find((c) => c.cardKey === cardKey);
  const transactions = async (query: string): Promise<TransactionPage> => (await call<TransactionPage>(`${processing}/transactions?${query}`)).body;

  before(async () => {
    sandboxes = await startSandboxes();
    issuer = sandboxes.issuer.url;
    processing = sandboxes.processing.url;
  });
  after(() => sandboxes.close());
  beforeEach(() => Promise.all([issuer, processing].map((url) => call(`${url}/__sandbox/reset`, { method: 'POST' }))));

  it('a card issued by POST /cards has its history at once, under accountId = holderClientCode, in its currency', async () => {
    const before = Date.now();
    const card = await issue();
    const after = Date.now();
    const page = await transactions(`accountId=48213377&cardId=${card.cardKey}&limit=100`);
    expect(page.total).to.be.within(6, 24);
    for (const t of page.data) expect(t).to.include({ cardId: card.cardKey, accountId: '48213377', currency: 'GBP' });

    const known = await knownCard(card.cardKey);
    expect(known).to.include({ source: 'issuer', accountId: '48213377', currency: 'GBP', cardMask: card.cardMask, type: 'virtual', previousCardKey: null, occurredAt: card.createdAt });
    const end = Date.parse(known?.historyEnd ?? '');
    expect(end).to.be.within(before, after);
    // Dates: the registration instant minus offsets fixed by the card key.
    for (const t of page.data) expect(end - Date.parse(t.createdAt)).to.be.within(0, 90 * DAY_MS);
    // The issuer link is processing-side knowledge only: the issuer answered as before.
    expect(card).not.to.have.any.keys('accountId', 'historyEnd');
  });

  it('the new cards of replace and re-issue are known too, with previousCardKey', async () => {
    const physical = await issue({ type: 'physical', currency: 'PLN' });
    const replaced = await call<{ cardKey: string }>(`${issuer}/cards/${physical.cardKey}/replace`, { method: 'POST', body: { expDate: EXP } });
    expect(replaced.status).to.equal(201);
    expect(await knownCard(replaced.body.cardKey)).to.include({ source: 'issuer', previousCardKey: physical.cardKey, accountId: '48213377', currency: 'PLN', type: 'physical' });

    const virtual = await issue();
    const reissued = await call<{ cardKey: string }>(`${issuer}/cards/${virtual.cardKey}/reissue`, { method: 'POST', body: { expDate: EXP } });
    expect(reissued.status).to.equal(201);
    expect(await knownCard(reissued.body.cardKey)).to.include({ source: 'issuer', previousCardKey: virtual.cardKey, accountId: '48213377' });

    const all = await transactions('accountId=48213377&limit=100');
    expect(new Set(all.data.map((t) => t.cardId))).to.deep.equal(new Set([physical.cardKey, replaced.body.cardKey, virtual.cardKey, reissued.body.cardKey]));
  });

  it('a refused issuance (validation, fault) registers nothing', async () => {
    expect((await call(`${issuer}/cards`, { method: 'POST', body: { type: 'virtual' } })).status).to.equal(400);
    await call(`${issuer}/__sandbox/faults`, { method: 'POST', body: { method: 'POST', path: '/cards', mode: 'status', status: 503 } });
    expect((await call(`${issuer}/cards`, { method: 'POST', body: { type: 'virtual', clientCode: '1', expDate: EXP, currency: 'EUR', productCode: 'P' } })).status).to.equal(503);
    expect(await knownCards()).to.deep.equal([]);
  });

  it('a later card_created webhook keeps the linked accountId, currency and history unless it names them', async () => {
    const card = await issue();
    const linked = await transactions(`cardId=${card.cardKey}&limit=100`);
    const webhook = {
      event: 'card_created',
      cardKey: card.cardKey,
      cardMask: card.cardMask,
      type: 'virtual',
      ownerType: 'individual',
      ownerId: '65f0000000000000000000c1',
      partnerId: '65f0000000000000000000aa',
      occurredAt: new Date().toISOString(),
    };
    expect((await call(`${processing}/webhooks/card-created`, { method: 'POST', body: webhook })).status).to.equal(202);
    expect(await knownCard(card.cardKey)).to.include({ source: 'webhook', accountId: '48213377', currency: 'GBP', ownerId: webhook.ownerId });
    expect(await transactions(`cardId=${card.cardKey}&limit=100`)).to.deep.equal(linked);

    await call(`${processing}/webhooks/card-created`, { method: 'POST', body: { ...webhook, accountId: 'acc-9', currency: 'EUR' } });
    expect(await knownCard(card.cardKey)).to.include({ accountId: 'acc-9', currency: 'EUR' });
    expect((await transactions('accountId=48213377')).total).to.equal(0);
  });

  it('a processing reset forgets linked cards; an issuer reset does not touch the processing system', async () => {
    const card = await issue();
    await call(`${issuer}/__sandbox/reset`, { method: 'POST' });
    expect(await knownCard(card.cardKey)).not.to.equal(undefined);
    await call(`${processing}/__sandbox/reset`, { method: 'POST' });
    expect(await knownCards()).to.deep.equal([]);
  });

  it('linkCards: false keeps them apart (a card is known only after a webhook)', async () => {
    const unlinked = await startSandboxes({ linkCards: false });
    try {
      const { body } = await call<IssuedCard>(`${unlinked.issuer.url}/cards`, {
        method: 'POST',
        body: { type: 'virtual', clientCode: '48213377', expDate: EXP, currency: 'EUR', productCode: 'P-STD' },
      });
      const page = await call<TransactionPage>(`${unlinked.processing.url}/transactions?cardId=${body.cardKey}`);
      expect(page.body).to.deep.include({ data: [], total: 0 });
    } finally {
      await unlinked.close();
    }
  });
});
