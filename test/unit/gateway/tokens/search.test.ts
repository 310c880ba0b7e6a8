import crypto from 'node:crypto';
import { expect } from 'chai';
import { Database, type Queryable } from '../../../../gateway/db/database';
import { migrate } from '../../../../gateway/db/migrate';
import { encodeSignedCursor, signedCursorKey } from '../../../../gateway/db/signed-cursor';
import { newTokenId } from '../../../../gateway/ids';
import { createLogger } from '../../../../gateway/logging/logger';
import type { TokenStatus, WalletProvider } from '../../../../gateway/shapes/token';
import { decodeTokenCursor, encodeTokenCursor, searchTokens, type TokenFilters, type TokenPosition } from '../../../../gateway/tokens/search';
import { encodeTransactionCursor } from '../../../../gateway/transactions/list-cursor';
import { runDatabaseUrl } from '../../../support/test-database';

/** One token as the test wrote it: what the search must find. */
interface Made {
  id: string;
  cardKey: string;
  status: TokenStatus;
  walletProvider: WalletProvider;
  createdAt: string;
}

const STATUSES: TokenStatus[] = ['active', 'suspended', 'deactivated', 'pending_verification', 'declined', 'requested'];
const WALLETS: WalletProvider[] = ['apple_pay', 'google_pay', 'samsung_pay', 'merchant'];

/**
 * `GET /tokens`' search (gateway/tokens/search.ts) on real PostgreSQL: every filter shape paged to
 * its end at several page sizes against a reference written in TypeScript, the order (newest first,
 * ties by id), pages that tokens made meanwhile never shift, the partner's scope, the cursor's
 * binding to the partner, the filters and the list, and the index each shape walks.
 */
describe('unit: tokens/search, the partner-wide token search (GET /tokens)', function () {
  this.timeout(30_000);
  const log = createLogger({ level: 'silent' });
  let db: Database;
  let key: Buffer;
  const partnerA = crypto.randomBytes(12).toString('hex');
  const partnerB = crypto.randomBytes(12).toString('hex');
  const cards = [`CKA${crypto.randomBytes(6).toString('hex').toUpperCase()}`, `CKA${crypto.randomBytes(6).toString('hex').toUpperCase()}`];
  const cardOfB = `CKB${crypto.randomBytes(6).toString('hex').toUpperCase()}`;
  const made: Made[] = [];

  /** Writes a token row as migration 028 holds it. */
  async function insertToken(q: Queryable, partnerId: string, t: Omit<Made, 'id'>): Promise<Made> {
    const id = newTokenId();
    await q.query(
      `INSERT INTO tokens (id, partner_id, card_key, processor_ref, wallet_provider, token_requestor_id, last4, token_exp_date, device, status, suspended_by, history, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, '50110030273', '4821', '11/2029', '{"type":"phone"}', $6, $7, $8, $9, $9)`,
      [id, partnerId, t.cardKey, `tref_${crypto.randomBytes(12).toString('hex')}`, t.walletProvider, t.status, t.status === 'suspended' ? 'partner' : null, JSON.stringify([{ status: t.status, at: t.createdAt, by: 'network' }]), t.createdAt]
    );
    return { id, ...t };
  }

  /** The reference answer: the partner's tokens, filtered and ordered in TypeScript. */
  function reference(filters: TokenFilters): string[] {
    return made
      .filter((t) => (filters.cardKey === undefined || t.cardKey === filters.cardKey) && (filters.status === undefined || t.status === filters.status) && (filters.walletProvider === undefined || t.walletProvider === filters.walletProvider))
      .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
      .map((t) => t.id);
  }

  /** Pages through a search to its end, as a partner does: each nextCursor passed back with the same filters. */
  async function pageThrough(partnerId: string, filters: TokenFilters, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let after: TokenPosition | undefined;
    for (let pages = 1; ; pages++) {
      const page = await searchTokens(db, partnerId, filters, { limit, after });
      expect(page.data.length, 'a page is never longer than its limit').to.be.at.most(limit);
      ids.push(...page.data.map((t) => t._id));
      if (!page.last) return { ids, pages };
      const cursor = encodeTokenCursor(key, partnerId, filters, page.last);
      after = decodeTokenCursor(key, partnerId, filters, cursor);
      expect(after, 'the cursor given verifies for the same search').to.deep.equal(page.last);
      if (pages > 200) throw new Error('paging does not end');
    }
  }

  before(async function () {
    db = new Database(runDatabaseUrl(), { max: 2, log });
    await migrate(db, log);
    await db.query("INSERT INTO partners (id, name, issuer) VALUES ($1, 'tokens-a', 'https://tokens-a.example'), ($2, 'tokens-b', 'https://tokens-b.example')", [partnerA, partnerB]);
    key = await signedCursorKey(db);
    // 30 tokens of A over two cards, every status and wallet, two by two in the same second: at the
    // same instant (ties by id), or 123 µs apart (a position rounded to milliseconds would lose it).
    const base = Date.parse('2026-12-01T10:00:00.000Z');
    for (let i = 0; i < 30; i++) {
      const createdAt = new Date(base + Math.floor(i / 2) * 1000).toISOString().replace('Z', i % 5 === 0 ? '123Z' : '000Z');
      made.push(await insertToken(db, partnerA, { cardKey: cards[i % 2], status: STATUSES[i % STATUSES.length], walletProvider: WALLETS[(i * 7) % WALLETS.length], createdAt }));
    }
    // B's tokens, newer than all of A's: A must never see them, on A's cards' keys neither.
    for (let i = 0; i < 4; i++) await insertToken(db, partnerB, { cardKey: i === 0 ? cards[0] : cardOfB, status: 'active', walletProvider: 'apple_pay', createdAt: new Date(base + 86_400_000 + i).toISOString() });
  });
  after(async function () {
    await db?.close();
  });

  const SHAPES: TokenFilters[] = [
    {},
    { cardKey: cards[0] },
    { status: 'active' },
    { walletProvider: 'google_pay' },
    { status: 'suspended', walletProvider: 'merchant' },
    { cardKey: cards[1], status: 'suspended' },
    { cardKey: cards[0], status: 'active', walletProvider: 'apple_pay' },
    { status: 'requested', walletProvider: 'samsung_pay' },
  ];

  for (const filters of SHAPES) {
    it(`pages ${JSON.stringify(filters)} to its end, newest first with ties by id, at limits 1, 4 and 100`, async function () {
      const expected = reference(filters);
      for (const limit of [1, 4, 100]) {
        const { ids, pages } = await pageThrough(partnerA, filters, limit);
        expect(ids, `limit ${limit}`).to.deep.equal(expected);
        expect(pages, `limit ${limit}`).to.equal(Math.max(1, Math.ceil(expected.length / limit)));
      }
    });
  }

  it('has filters that actually filter: each shape above finds a part of the tokens, and the combined ones fewer', function () {
    const sizes = SHAPES.map((f) => reference(f).length);
    expect(sizes[0]).to.equal(30);
    for (const size of sizes.slice(1, 6)) expect(size).to.be.within(1, 29);
    expect(reference({ status: 'suspended', walletProvider: 'merchant' }).length).to.be.lessThan(reference({ status: 'suspended' }).length);
  });

  it('answers only the partner\'s tokens: B sees its own, and none of A\'s on a cardKey of A\'s', async function () {
    expect((await pageThrough(partnerB, {}, 100)).ids).to.have.length(4);
    const bOnA = await searchTokens(db, partnerB, { cardKey: cards[1] }, { limit: 100 });
    expect(bOnA.data).to.deep.equal([]);
    const aOnB = await searchTokens(db, partnerA, { cardKey: cardOfB }, { limit: 100 });
    expect(aOnB.data).to.deep.equal([]);
    const aAll = await searchTokens(db, partnerA, {}, { limit: 100 });
    expect(aAll.data.every((t) => made.some((m) => m.id === t._id))).to.equal(true);
  });

  it('answers each token as partners read it (the Token of docs/tokens.md), never the processor\'s reference', async function () {
    const page = await searchTokens(db, partnerA, { status: 'suspended' }, { limit: 1 });
    const token = page.data[0];
    expect(token).to.have.all.keys('_id', 'cardKey', 'walletProvider', 'tokenRequestorId', 'last4', 'tokenExpDate', 'device', 'status', 'suspendedBy', 'createdAt', 'updatedAt', 'history');
    expect(token.suspendedBy).to.equal('partner');
    expect(JSON.stringify(page)).to.not.include('tref_');
  });

  it('keeps a page where it was while tokens are made meanwhile (newer ones never shift the pages after the first)', async function () {
    const filters: TokenFilters = { cardKey: cards[0] };
    const before = reference(filters);
    const first = await searchTokens(db, partnerA, filters, { limit: 3 });
    expect(first.data.map((t) => t._id)).to.deep.equal(before.slice(0, 3));
    const cursor = encodeTokenCursor(key, partnerA, filters, first.last!);
    // Made now, newer than every one: it belongs on a first page read from now on, not on the next.
    const newer = await insertToken(db, partnerA, { cardKey: cards[0], status: 'active', walletProvider: 'apple_pay', createdAt: new Date().toISOString() });
    try {
      const rest: string[] = [];
      let after = decodeTokenCursor(key, partnerA, filters, cursor);
      while (after) {
        const page = await searchTokens(db, partnerA, filters, { limit: 3, after });
        rest.push(...page.data.map((t) => t._id));
        after = page.last;
      }
      expect(rest).to.deep.equal(before.slice(3));
      expect((await searchTokens(db, partnerA, filters, { limit: 1 })).data[0]._id).to.equal(newer.id);
    } finally {
      await db.query('DELETE FROM tokens WHERE id = $1', [newer.id]);
    }
  });

  it('refuses a cursor that was changed, or used by another partner, with other filters or for the transactions', async function () {
    const filters: TokenFilters = { status: 'active' };
    const position = (await searchTokens(db, partnerA, filters, { limit: 1 })).last!;
    const cursor = encodeTokenCursor(key, partnerA, filters, position);
    expect(decodeTokenCursor(key, partnerA, filters, cursor)).to.deep.equal(position);
    // Another position under the same MAC, and another MAC.
    const [payload, mac] = cursor.split('.');
    const otherPayload = Buffer.from(JSON.stringify([position.createdAt, made[0].id]), 'utf8').toString('base64url');
    expect(decodeTokenCursor(key, partnerA, filters, `${otherPayload}.${mac}`)).to.equal(undefined);
    const flipped = mac.slice(0, -1) + (mac.endsWith('A') ? 'B' : 'A');
    expect(decodeTokenCursor(key, partnerA, filters, `${payload}.${flipped}`)).to.equal(undefined);
    expect(decodeTokenCursor(key, partnerA, filters, payload)).to.equal(undefined);
    // Another partner, other filters (one more, one less, another value), another key.
    expect(decodeTokenCursor(key, partnerB, filters, cursor)).to.equal(undefined);
    expect(decodeTokenCursor(key, partnerA, { ...filters, walletProvider: 'apple_pay' }, cursor)).to.equal(undefined);
    expect(decodeTokenCursor(key, partnerA, {}, cursor)).to.equal(undefined);
    expect(decodeTokenCursor(key, partnerA, { status: 'suspended' }, cursor)).to.equal(undefined);
    expect(decodeTokenCursor(crypto.randomBytes(32), partnerA, filters, cursor)).to.equal(undefined);
    // The transactions' cursor of the same partner and position, and a token cursor as a transactions' scope: neither verifies for the other list.
    expect(decodeTokenCursor(key, partnerA, {}, encodeTransactionCursor(key, partnerA, {}, position))).to.equal(undefined);
    expect(decodeTokenCursor(key, partnerA, {}, encodeSignedCursor(key, [partnerA, null, null, null, null, null, null], position))).to.equal(undefined);
  });

  it('walks one index in the list\'s order for each filter shape, with no sort (migration 028\'s indexes)', async function () {
    const expectedIndex: [TokenFilters, string][] = [
      [{}, 'tokens_partner_idx'],
      [{ cardKey: cards[0] }, 'tokens_card_idx'],
      [{ status: 'active' }, 'tokens_status_idx'],
      [{ walletProvider: 'google_pay' }, 'tokens_wallet_idx'],
      [{ status: 'active', walletProvider: 'google_pay' }, 'tokens_status_wallet_idx'],
    ];
    for (const [filters, index] of expectedIndex) {
      const plan = await db.transaction(async (tx) => {
        // A handful of rows would be read by a sequential scan and sorted; the question is which order the indexes give.
        await tx.query('SET LOCAL enable_seqscan = off');
        await tx.query('SET LOCAL enable_bitmapscan = off');
        let statement: { text: string; values: unknown[] } | undefined;
        const recording: Queryable = {
          query: (async (text: string, values?: unknown[]) => {
            statement = { text, values: values ?? [] };
            return tx.query(text, values);
          }) as Queryable['query'],
        };
        await searchTokens(recording, partnerA, filters, { limit: 5, after: { createdAt: '2026-12-01T10:00:10.000000Z', id: 'tok_ffffffffffffffffffffffff' } });
        const explained = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${statement!.text}`, statement!.values);
        return JSON.stringify(explained.rows[0]['QUERY PLAN']);
      });
      expect(plan, JSON.stringify(filters)).to.not.include('"Node Type":"Sort"');
      expect(plan, JSON.stringify(filters)).to.include(`"Index Name":"${index}"`);
    }
  });
});
