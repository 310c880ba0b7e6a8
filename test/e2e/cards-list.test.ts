import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { Database } from '../../gateway/db/database';
import { createLogger } from '../../gateway/logging/logger';
import { seedCards } from '../../scripts/seed-cards';
import { api, cardBody, individualBody } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';
import { CARD_STATUSES } from '../../gateway/cards/card-status';

const SUMMARY_FIELDS = ['cardKey', 'cardMask', 'type', 'status', 'statusCode', 'currency', 'ownerType', 'ownerId', 'nickname', 'embossedName', 'expDate', 'createdAt'];

interface CardRow {
  card_key: string;
  card_mask: string;
  nickname: string | null;
  embossed_name: string | null;
  status: string;
  type: string;
}

describe('e2e: partner-wide card list GET /cards (spec 4.3)', function () {
  this.timeout(90_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let globex: TestPartner;
  let db: Client;
  let tenantId: string;
  let adaVirtual: any;
  const b2bKeys: string[] = [];

  const newCardKey = () => `CK${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
  const list = (partner: TestPartner | null, query: Record<string, string | number> = {}) =>
    api(gateway, partner, 'GET', `/cards?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()}`);
  /** Every card of a partner, newest first, straight from PostgreSQL: the reference of the checks. */
  const cardsOf = async (partnerId: string) =>
    (await db.query<CardRow>('SELECT card_key, card_mask, nickname, embossed_name, status, type FROM cards WHERE partner_id = $1 ORDER BY created_at DESC, card_key', [partnerId])).rows;
  const matching = (rows: CardRow[], search: string) =>
    rows.filter((r) => [r.card_mask, r.nickname, r.embossed_name].some((field) => field !== null && field.toLowerCase().includes(search.toLowerCase())));

  async function issue(partner: TestPartner, individual: any, type: 'virtual' | 'physical', overrides: Record<string, unknown> = {}) {
    const response = await api(gateway, partner, 'POST', `/individual/accounts/${individual._id}/cards/${type}`, { body: cardBody(individual.clientID, overrides) });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response.body;
  }

  async function insertB2bCard(card: { mask: string; type: string; status: string; statusCode: string; currency: string; nickname: string | null; embossedName: string | null; ageMinutes: number }) {
    const cardKey = newCardKey();
    await db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, embossed_name, nickname, created_at)
       VALUES ($1, $2, 'b2b', $3, $3, $4, $5, $6, $7, $8, 'P-BIZ', '12/2030', $9, $10, now() - make_interval(mins => $11))`,
      [cardKey, acme.id, tenantId, card.mask, card.type, card.status, card.statusCode, card.currency, card.embossedName, card.nickname, card.ageMinutes]
    );
    b2bKeys.push(cardKey);
    return cardKey;
  }

  before(async function () {
    gateway = await sharedGateway();
    acme = await registerPartner(gateway, 'acme-card-list');
    globex = await registerPartner(gateway, 'globex-card-list');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();

    const ada = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() })).body;
    const bob = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Bob', lastName: 'Smith' }) })).body;
    adaVirtual = await issue(acme, ada, 'virtual', { embossedName: 'ADA.LOVELACE' });
    await issue(acme, ada, 'physical');
    const bobVirtual = await issue(acme, bob, 'virtual', { embossedName: 'BOB.SMITH', currency: 'USD' });
    const bobPhysical = await issue(acme, bob, 'physical', { embossedName: 'BOB.SMITH' });
    await db.query('UPDATE cards SET nickname = $2 WHERE card_key = $1', [adaVirtual.cardKey, 'Groceries']);
    await db.query('UPDATE cards SET nickname = $2 WHERE card_key = $1', [bobPhysical.cardKey, 'Team TRAVEL budget']);
    await db.query("UPDATE cards SET status = 'LOCKED', status_code = 'L1' WHERE card_key = $1", [bobVirtual.cardKey]);

    const tenant = await adminCall(gateway, 'POST', `/admin/partners/${acme.id}/tenants`, { name: 'Acme Logistics' });
    expect(tenant.status, JSON.stringify(tenant.body)).to.equal(201);
    tenantId = tenant.body._id;
    await insertB2bCard({ mask: '4921 83** **** 0042', type: 'physical', status: 'ACTIVE', statusCode: '00', currency: 'EUR', nickname: '100%_Fuel\\Fleet', embossedName: 'ACME-LTD', ageMinutes: -1 });
    await insertB2bCard({ mask: '4921 83** **** 7777', type: 'virtual', status: 'FRAUD', statusCode: 'S5', currency: 'USD', nickname: 'Team Travel', embossedName: null, ageMinutes: 60 });
    await insertB2bCard({ mask: '4921 83** **** 1000', type: 'virtual', status: 'LOCKED', statusCode: 'L1', currency: 'GBP', nickname: null, embossedName: 'ACME-OPS', ageMinutes: 120 });

    // Another partner's cards, some of which every search below would match.
    const grace = (await api(gateway, globex, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Grace' }) })).body;
    const graceCard = await issue(globex, grace, 'virtual', { embossedName: 'ADA.LOVELACE' });
    await db.query('UPDATE cards SET nickname = $2 WHERE card_key = $1', [graceCard.cardKey, '100%_Team Travel']);
  });

  after(async function () {
    await db?.end();
  });

  it('refuses a call without a token (401)', async function () {
    const response = await list(null);
    expect(response.status).to.equal(401);
    expect(response.body.code).to.equal('token_missing');
  });

  it("lists every card of the partner, individual and B2B, newest first, and never another partner's", async function () {
    const response = await list(acme, { limit: 100 });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const expected = await cardsOf(acme.id);
    expect(expected).to.have.length(7);
    expect(response.body.success).to.equal(true);
    expect(response.body.data.map((c: any) => c.cardKey)).to.deep.equal(expected.map((c) => c.card_key));
    expect(response.body.pagination).to.deep.equal({ page: 1, limit: 100, total: 7, totalPages: 1, hasMore: false });
    expect(response.headers.get('x-total-capped')).to.equal(null);
    expect(response.body.data.filter((c: any) => c.ownerType === 'b2b').map((c: any) => c.cardKey)).to.have.members(b2bKeys);

    const other = await list(globex);
    expect(other.body.data.map((c: any) => c.cardKey)).to.deep.equal((await cardsOf(globex.id)).map((c) => c.card_key));
    const acmeKeys = new Set(expected.map((c) => c.card_key));
    expect(other.body.data.filter((c: any) => acmeKeys.has(c.cardKey))).to.deep.equal([]);
  });

  it('answers the card summary: the documented fields only, never a PAN or CVV', async function () {
    const response = await list(acme, { limit: 100 });
    for (const card of response.body.data) expect(Object.keys(card)).to.have.members(SUMMARY_FIELDS);
    expect(JSON.stringify(response.body)).to.not.match(/"(cardNumber|pan|cvv|productCode|holderClientCode|threeDsPhone)"/);
    const newest = response.body.data[0];
    expect(newest).to.deep.equal({
      cardKey: b2bKeys[0],
      cardMask: '4921 83** **** 0042',
      type: 'physical',
      status: 'ACTIVE',
      statusCode: '00',
      currency: 'EUR',
      ownerType: 'b2b',
      ownerId: tenantId,
      nickname: '100%_Fuel\\Fleet',
      embossedName: 'ACME-LTD',
      expDate: '12/2030',
      createdAt: newest.createdAt,
    });
    expect(Date.parse(newest.createdAt)).to.be.a('number').and.not.NaN;
    const ada = response.body.data.find((c: any) => c.cardKey === adaVirtual.cardKey);
    expect(ada).to.include({ cardMask: adaVirtual.cardMask, ownerType: 'individual', nickname: 'Groceries', embossedName: 'ADA.LOVELACE', status: 'ACTIVE', statusCode: '00' });
  });

  describe('filters', function () {
    const table: { query: Record<string, string>; keep: (r: CardRow) => boolean; count: number }[] = [
      { query: { status: 'ACTIVE' }, keep: (r) => r.status === 'ACTIVE', count: 2 },
      { query: { status: 'LOCKED' }, keep: (r) => r.status === 'LOCKED', count: 4 },
      { query: { status: 'FRAUD' }, keep: (r) => r.status === 'FRAUD', count: 1 },
      { query: { status: 'STOLEN' }, keep: (r) => r.status === 'STOLEN', count: 0 },
      { query: { type: 'virtual' }, keep: (r) => r.type === 'virtual', count: 4 },
      { query: { type: 'physical' }, keep: (r) => r.type === 'physical', count: 3 },
      { query: { status: 'LOCKED', type: 'physical' }, keep: (r) => r.status === 'LOCKED' && r.type === 'physical', count: 2 },
    ];
    for (const { query, keep, count } of table) {
      it(`${new URLSearchParams(query).toString()} → ${count} cards`, async function () {
        const response = await list(acme, query);
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        const expected = (await cardsOf(acme.id)).filter(keep).map((r) => r.card_key);
        expect(expected).to.have.length(count);
        expect(response.body.data.map((c: any) => c.cardKey)).to.deep.equal(expected);
        expect(response.body.pagination).to.deep.equal({ page: 1, limit: 20, total: count, totalPages: count === 0 ? 0 : 1, hasMore: false });
      });
    }
  });

  describe('search: case-insensitive substring of cardMask, nickname or embossedName, taken literally', function () {
    const table: { description: string; search: () => string; query?: Record<string, string>; count?: number; keys?: () => string[] }[] = [
      { description: 'a mask fragment', search: () => adaVirtual.cardMask.slice(-4) },
      { description: 'a B2B mask fragment', search: () => '0042', keys: () => [b2bKeys[0]] },
      { description: 'the mask prefix: every B2B card', search: () => '4921 83**', count: 3 },
      { description: 'a nickname word, any case', search: () => 'tEAm tRAVEL', count: 2 },
      { description: 'a nickname, lower case', search: () => 'groceries', keys: () => [adaVirtual.cardKey] },
      { description: 'an embossed name, lower case', search: () => 'lovelace', keys: () => [adaVirtual.cardKey] },
      { description: 'an embossed name, mixed case', search: () => 'Bob.sMITH', count: 2 },
      { description: 'a literal %', search: () => '00%', keys: () => [b2bKeys[0]] },
      { description: 'a literal _', search: () => '%_f', keys: () => [b2bKeys[0]] },
      { description: 'a literal backslash', search: () => 'l\\f', keys: () => [b2bKeys[0]] },
      { description: '% and _ together', search: () => '0%_f', keys: () => [b2bKeys[0]] },
      { description: '% is not a wildcard', search: () => '%fuel', count: 0 },
      { description: '_ is not a wildcard', search: () => '1_0', count: 0 },
      { description: 'a string that matches nothing', search: () => 'zzzz', count: 0 },
      { description: 'with a status', search: () => 'travel', query: { status: 'FRAUD' }, keys: () => [b2bKeys[1]] },
      { description: 'with a type', search: () => 'smith', query: { type: 'physical' }, count: 1 },
    ];
    for (const { description, search, query, count, keys } of table) {
      it(description, async function () {
        const text = search();
        const response = await list(acme, { search: text, limit: 100, ...query });
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        let expected = matching(await cardsOf(acme.id), text);
        if (query?.status) expected = expected.filter((r) => r.status === query.status);
        if (query?.type) expected = expected.filter((r) => r.type === query.type);
        const got = response.body.data.map((c: any) => c.cardKey);
        expect(got, 'as the reference, newest first').to.deep.equal(expected.map((r) => r.card_key));
        if (count !== undefined) expect(got).to.have.length(count);
        if (keys) expect(got).to.deep.equal(keys());
        expect(response.body.pagination.total).to.equal(got.length);
      });
    }
  });

  it('pages through the list with stable pages and the one Pagination object', async function () {
    const all = (await cardsOf(acme.id)).map((r) => r.card_key);
    const seen: string[] = [];
    for (let page = 1; page <= 4; page += 1) {
      const response = await list(acme, { page, limit: 2 });
      expect(response.body.pagination).to.deep.equal({ page, limit: 2, total: 7, totalPages: 4, hasMore: page < 4 });
      expect((await list(acme, { page, limit: 2 })).body.data, 'the same page twice').to.deep.equal(response.body.data);
      seen.push(...response.body.data.map((c: any) => c.cardKey));
    }
    expect(seen).to.deep.equal(all);
    const past = await list(acme, { page: 5, limit: 2 });
    expect(past.status).to.equal(200);
    expect(past.body).to.deep.equal({ success: true, data: [], pagination: { page: 5, limit: 2, total: 7, totalPages: 4, hasMore: false } });
    const searched = await list(acme, { search: '4921', page: 2, limit: 2 });
    expect(searched.body.data.map((c: any) => c.cardKey)).to.deep.equal([b2bKeys[2]]);
    expect(searched.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, totalPages: 2, hasMore: false });
  });

  describe('refuses a bad query (400 validation_failed naming the parameter)', function () {
    const table: { description: string; query: Record<string, string>; param: string }[] = [
      { description: 'a lower-case status', query: { status: 'active' }, param: 'status' },
      { description: 'an unknown status', query: { status: 'EXPIRED' }, param: 'status' },
      { description: 'an unknown type', query: { type: 'plastic' }, param: 'type' },
      { description: 'page 0', query: { page: '0' }, param: 'page' },
      { description: 'a negative page', query: { page: '-1' }, param: 'page' },
      { description: 'a fractional page', query: { page: '1.5' }, param: 'page' },
      { description: 'a page that is a word', query: { page: 'two' }, param: 'page' },
      { description: 'limit 0', query: { limit: '0' }, param: 'limit' },
      { description: 'limit 101', query: { limit: '101' }, param: 'limit' },
      { description: 'an empty search', query: { search: '' }, param: 'search' },
      { description: 'a two-character search (at least 3: shorter ones cannot use the trigram index)', query: { search: 'ab' }, param: 'search' },
      { description: 'a search holding the field separator U+001F (control characters are refused, so no search spans two fields)', query: { search: '0042\u001f100' }, param: 'search' },
      { description: 'a 65-character search', query: { search: 'x'.repeat(65) }, param: 'search' },
      { description: 'an unknown parameter', query: { owner: 'me' }, param: 'owner' },
    ];
    for (const { description, query, param } of table) {
      it(description, async function () {
        const response = await list(acme, query);
        expect(response.status, JSON.stringify(response.body)).to.equal(400);
        expect(response.body.code).to.equal('validation_failed');
        expect(response.body.invalidParams.map((p: any) => p.name)).to.include(param);
      });
    }

    it('accepts a 64-character search', async function () {
      const response = await list(acme, { search: 'x'.repeat(64) });
      expect(response.status).to.equal(200);
      expect(response.body.pagination.total).to.equal(0);
    });
  });

  describe('over 10,000 cards: an exact total, a capped search count and a result window', function () {
    let bulk: TestPartner;
    const countOf = async (where = 'true', params: unknown[] = []) =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM cards WHERE partner_id = $1 AND ${where}`, [bulk.id, ...params])).rows[0].n;

    before(async function () {
      bulk = await registerPartner(gateway, 'bulk-card-list');
      const seeder = new Database(runDatabaseUrl(), { max: 1, log: createLogger({ level: 'silent' }) });
      try {
        await seedCards(seeder, { partnerId: bulk.id, count: 10_050 });
      } finally {
        await seeder.close();
      }
    });

    it('counts every card exactly without a search, and pages through the first 10,000', async function () {
      const response = await list(bulk);
      expect(response.status).to.equal(200);
      expect(await countOf()).to.equal(10_050);
      expect(response.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 10_050, totalPages: 500, hasMore: true });
      expect(response.headers.get('x-total-capped')).to.equal(null);
      expect(response.body.data).to.have.length(20);
    });

    it('counts a search up to 10,000 and says the total is capped', async function () {
      // Every card's mask holds `** ****`.
      const response = await list(bulk, { search: '** ****' });
      expect(response.status).to.equal(200);
      expect(response.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 10_000, totalPages: 500, hasMore: true });
      expect(response.headers.get('x-total-capped')).to.equal('true');
      expect((await list(bulk, { search: '** ****', page: 3 })).body.pagination.hasMore, 'past a capped total').to.equal(true);
    });

    it('serves the last page of the window, clamped to it, with nothing more to fetch', async function () {
      for (const query of [{}, { search: '** ****' }] as Record<string, string>[]) {
        const last = await list(bulk, { ...query, page: 500 });
        expect(last.status).to.equal(200);
        expect(last.body.data).to.have.length(20);
        expect(last.body.pagination.hasMore, 'the window ends here').to.equal(false);
        const clamped = await list(bulk, { ...query, page: 334, limit: 30 });
        expect(clamped.body.data).to.have.length(10);
        expect(clamped.body.pagination).to.include({ page: 334, limit: 30, totalPages: 334, hasMore: false });
        const before = await list(bulk, { ...query, page: 333, limit: 30 });
        expect(before.body.pagination.hasMore).to.equal(true);
      }
    });

    it('refuses a page past the window while more cards match (400 naming page)', async function () {
      for (const query of [{}, { search: '** ****' }] as Record<string, string>[]) {
        const response = await list(bulk, { ...query, page: 501 });
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('validation_failed');
        expect(response.body.invalidParams.map((p: any) => p.name)).to.deep.equal(['page']);
      }
    });

    it('answers each status and type, alone and together, with the total of a count(*) of the cards', async function () {
      for (const status of [undefined, ...CARD_STATUSES]) {
        for (const type of [undefined, 'virtual', 'physical']) {
          const query = { ...(status ? { status } : {}), ...(type ? { type } : {}) };
          const response = await list(bulk, query);
          expect(response.status, JSON.stringify(query)).to.equal(200);
          const exact = await countOf('($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR type = $3)', [status ?? null, type ?? null]);
          expect(response.body.pagination, JSON.stringify(query)).to.include({ total: exact, totalPages: Math.ceil(Math.min(exact, 10_000) / 20), hasMore: exact > 20 });
          expect(response.headers.get('x-total-capped'), JSON.stringify(query)).to.equal(null);
        }
      }
    });

    it('counts a narrowed list exactly, without the cap header', async function () {
      const response = await list(bulk, { status: 'FRAUD' });
      const exact = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM cards WHERE partner_id = $1 AND status = 'FRAUD'", [bulk.id])).rows[0].n;
      expect(response.body.pagination.total).to.equal(exact);
      expect(response.headers.get('x-total-capped')).to.equal(null);
      const searched = await list(bulk, { search: 'lovelace', status: 'ACTIVE', page: 2, limit: 5 });
      const reference = matching(await cardsOf(bulk.id), 'lovelace').filter((r) => r.status === 'ACTIVE');
      expect(searched.body.pagination.total).to.equal(reference.length);
      expect(searched.body.data.map((c: any) => c.cardKey)).to.deep.equal(reference.slice(5, 10).map((r) => r.card_key));
    });

    it("keeps the other partners' lists as they were", async function () {
      expect((await list(acme)).body.pagination.total).to.equal(7);
    });
  });
});
