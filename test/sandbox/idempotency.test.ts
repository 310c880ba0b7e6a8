import crypto from 'node:crypto';
import { expect } from 'chai';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { IdempotencyBook } from '../../sandbox/shared/idempotency';
import { call, type ErrorBody } from './http-client';

const EXP = '12/2031';

interface Card {
  cardKey: string;
  holderClientCode: string;
  statusCode: string;
}

/**
 * Issue 12: the issuer sandbox deduplicates its POSTs on the `Idempotency-Key` header, as real
 * issuers do with their client tokens (docs/upstreams.md 5.1): the same key and request answer
 * the first result without running again; the same key with another request is 409.
 */
describe('issuer sandbox: Idempotency-Key deduplication', () => {
  let sandboxes: Sandboxes;
  let issuer: string;
  const clientCode = String(10_000_000 + Math.floor(Math.random() * 89_999_999));
  const cardRequest = { type: 'virtual', clientCode, expDate: EXP, currency: 'EUR', productCode: 'P-STD', embossedName: 'ADA' };

  before(async () => {
    sandboxes = await startSandboxes();
    issuer = sandboxes.issuer.url;
  });
  after(async () => {
    await sandboxes.close();
  });

  async function cardsOf(code: string): Promise<Card[]> {
    return (await call<Card[]>(`${issuer}/__sandbox/cards?clientCode=${code}`)).body;
  }

  it('POST /cards twice with the same key and body: the same 201 card, one card at the issuer', async () => {
    const key = crypto.randomUUID();
    const first = await call<Card>(`${issuer}/cards`, { method: 'POST', body: cardRequest, headers: { 'idempotency-key': key } });
    expect(first.status).to.equal(201);
    const again = await call<Card>(`${issuer}/cards`, {
      method: 'POST',
      body: Object.fromEntries(Object.entries(cardRequest).reverse()),
      headers: { 'idempotency-key': key },
    });
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect((await cardsOf(clientCode)).map((c) => c.cardKey)).to.deep.equal([first.body.cardKey]);
  });

  it('the same key with another body: 409 IDEMPOTENCY_KEY_REUSED, nothing created', async () => {
    const code = '20000002';
    const key = crypto.randomUUID();
    expect((await call(`${issuer}/cards`, { method: 'POST', body: { ...cardRequest, clientCode: code }, headers: { 'idempotency-key': key } })).status).to.equal(201);
    const other = await call<ErrorBody>(`${issuer}/cards`, {
      method: 'POST',
      body: { ...cardRequest, clientCode: code, embossedName: 'OTHER' },
      headers: { 'idempotency-key': key },
    });
    expect(other.status).to.equal(409);
    expect(other.body.errorCode).to.equal('IDEMPOTENCY_KEY_REUSED');
    expect(await cardsOf(code)).to.have.length(1);
  });

  it('without the header every POST /cards creates a card (unchanged)', async () => {
    const code = '20000003';
    for (let i = 0; i < 2; i += 1) expect((await call(`${issuer}/cards`, { method: 'POST', body: { ...cardRequest, clientCode: code } })).status).to.equal(201);
    expect(await cardsOf(code)).to.have.length(2);
  });

  it('a status change repeated with its key is applied once: the repeat answers the first result, not INVALID_STATUS_TRANSITION', async () => {
    const card = (await call<Card>(`${issuer}/cards`, { method: 'POST', body: { ...cardRequest, clientCode: '20000004' } })).body;
    const key = crypto.randomUUID();
    const lock = { action: 'lock', expDate: EXP };
    const first = await call(`${issuer}/cards/${card.cardKey}/status`, { method: 'POST', body: lock, headers: { 'idempotency-key': key } });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const again = await call(`${issuer}/cards/${card.cardKey}/status`, { method: 'POST', body: lock, headers: { 'idempotency-key': key } });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    const state = await call<{ statusHistory: unknown[] }>(`${issuer}/__sandbox/cards/${card.cardKey}`);
    expect(state.body.statusHistory, 'applied once').to.have.length(1);
  });

  it('a 4xx first answer is the answer of its repeats too', async () => {
    const key = crypto.randomUUID();
    const bad = { ...cardRequest, expDate: '01/2001' };
    const first = await call<ErrorBody>(`${issuer}/cards`, { method: 'POST', body: bad, headers: { 'idempotency-key': key } });
    expect(first.status).to.be.within(400, 499);
    const again = await call<ErrorBody>(`${issuer}/cards`, { method: 'POST', body: bad, headers: { 'idempotency-key': key } });
    expect(again.status).to.equal(first.status);
    expect(again.body).to.deep.equal(first.body);
  });

  it('a malformed key is refused with 400 VALIDATION_ERROR', async () => {
    const { status, body } = await call<ErrorBody>(`${issuer}/cards`, { method: 'POST', body: cardRequest, headers: { 'idempotency-key': 'x'.repeat(256) } });
    expect(status).to.equal(400);
    expect(body.errorCode).to.equal('VALIDATION_ERROR');
  });

  it('memory is bounded: keys past the cap, or older than the TTL, are forgotten oldest first', () => {
    const book = new IdempotencyBook(1000, 3);
    const now = Date.now();
    for (const key of ['a', 'b', 'c', 'd']) book.add(key, { fingerprint: key, at: now });
    expect(book.size).to.equal(3);
    expect(book.get('a')).to.equal(undefined);
    expect(book.get('d')?.fingerprint).to.equal('d');
    expect(book.get('b', now + 5000), 'past its TTL').to.equal(undefined);
  });
});
