import crypto from 'node:crypto';
import { expect } from 'chai';
import {
  cardCountedPageQuery,
  cardCountQuery,
  cardListWhere,
  cardNewestMatchCountQuery,
  cardNewestWalkCountQuery,
  cardPageQuery,
  cardTermCountQuery,
  cardTermDistinctCountQuery,
  cardTermPageQuery,
  searchLinksReady,
  escapeLike,
  RESULT_WINDOW,
  searchCards,
  searchPattern,
  SORT_ALL_UP_TO,
  toCardSummary,
  usesTrigramIndex,
  WALK_BUDGET,
  WALK_MAX,
  windowOf,
  type CardListFilter,
  type SearchTuning,
} from '../../../../gateway/cards/card-search';
import { cardCounterQuery } from '../../../../gateway/cards/card-counts';
import { backfillSearchLinks, LOCK_RETRIES, pruneSearchTerms, startSearchLinks } from '../../../../gateway/cards/search-links';
import { migrate } from '../../../../gateway/db/migrate';
import { createLogger } from '../../../../gateway/logging/logger';
import { Database, type Queryable } from '../../../../gateway/db/database';
import { seedCards } from '../../../../scripts/seed-cards';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { createOwnDatabase, type RunDatabase } from '../../../support/test-database';

const P = 'aaaaaaaaaaaaaaaaaaaaaaaa';

/**
 * The reference answer: the partner's cards, newest first, filtered straightforwardly in TypeScript
 * (status, type, a case-insensitive substring of the mask, nickname or embossed name).
 */
async function referenceKeys(db: Queryable, partnerId: string, filter: Pick<CardListFilter, 'status' | 'type' | 'search'>): Promise<string[]> {
  const search = filter.search?.toLowerCase();
  const rows = await db.query<{ card_key: string; card_mask: string; nickname: string | null; embossed_name: string | null; status: string; type: string }>(
    'SELECT card_key, card_mask, nickname, embossed_name, status, type FROM cards WHERE partner_id = $1 ORDER BY created_at DESC, card_key',
    [partnerId]
  );
  return rows.rows
    .filter(
      (c) =>
        (filter.status === undefined || c.status === filter.status) &&
        (filter.type === undefined || c.type === filter.type) &&
        (search === undefined || [c.card_mask, c.nickname, c.embossed_name].some((f) => f !== null && f.toLowerCase().includes(search)))
    )
    .map((c) => c.card_key);
}

describe('unit: cards/card-search escapeLike and searchPattern', function () {
  const table: [string, string][] = [
    ['plain', 'plain'],
    ['50%', '50\\%'],
    ['a_b', 'a\\_b'],
    ['back\\slash', 'back\\\\slash'],
    ['%_\\', '\\%\\_\\\\'],
    ['\\%', '\\\\\\%'],
    ['5355 70** ****', '5355 70** ****'],
  ];
  for (const [text, escaped] of table) {
    it(`${JSON.stringify(text)} → ${JSON.stringify(escaped)}`, function () {
      expect(escapeLike(text)).to.equal(escaped);
      expect(searchPattern(text)).to.equal(`%${escaped}%`);
    });
  }
});

describe('unit: cards/card-search usesTrigramIndex', function () {
  const table: [string, boolean][] = [
    ['1234', true],
    ['ada', true],
    ['Marketing 52', true],
    ['x.ab1', true],
    ['ab', false],
    ['a', false],
    ['00', false],
    ['70** ****', false],
    ['a.b.c', false],
    ['%_\\', false],
    ['éèà', false],
  ];
  for (const [search, indexed] of table) {
    it(`${JSON.stringify(search)} → ${indexed ? 'trigram index' : 'scan'}`, function () {
      expect(usesTrigramIndex(search)).to.equal(indexed);
    });
  }
});

describe('unit: cards/card-search cardListWhere', function () {
  const table: { description: string; filter: CardListFilter; form?: 'like' | 'strpos'; text: string; values: unknown[] }[] = [
    { description: 'the partner only', filter: { partnerId: P }, text: 'partner_id = $1', values: [P] },
    { description: 'status', filter: { partnerId: P, status: 'ACTIVE' }, text: 'partner_id = $1 AND status = $2', values: [P, 'ACTIVE'] },
    { description: 'type', filter: { partnerId: P, type: 'physical' }, text: 'partner_id = $1 AND type = $2', values: [P, 'physical'] },
    {
      description: 'status, type and an indexed search, escaped',
      filter: { partnerId: P, status: 'LOCKED', type: 'virtual', search: 'Trav%_el' },
      text: 'partner_id = $1 AND status = $2 AND type = $3 AND search_text LIKE lower($4)',
      values: [P, 'LOCKED', 'virtual', '%Trav\\%\\_el%'],
    },
    {
      description: 'a short search: strpos, not escaped',
      filter: { partnerId: P, search: '5%' },
      text: 'partner_id = $1 AND strpos(search_text, lower($2)) > 0',
      values: [P, '5%'],
    },
    {
      description: 'an indexed search written for a walk',
      filter: { partnerId: P, search: 'travel' },
      form: 'strpos',
      text: 'partner_id = $1 AND strpos(search_text, lower($2)) > 0',
      values: [P, 'travel'],
    },
    {
      description: 'a search containing the field separator: each field checked on its own too',
      filter: { partnerId: P, search: '1234\u001fteam' },
      text:
        'partner_id = $1 AND search_text LIKE lower($2) AND ' +
        '(lower(card_mask) LIKE lower($2) OR lower(nickname) LIKE lower($2) OR lower(embossed_name) LIKE lower($2))',
      values: [P, '%1234\u001fteam%'],
    },
  ];
  for (const { description, filter, form, text, values } of table) {
    it(description, function () {
      expect(cardListWhere(filter, form)).to.deep.equal({ text, values });
    });
  }
});

describe('unit: cards/card-search page and count queries', function () {
  it('walks the newest cards with the page as LIMIT and OFFSET', function () {
    const q = cardPageQuery({ partnerId: P, status: 'ACTIVE' }, 40, 20);
    expect(q.text).to.match(/FROM cards WHERE partner_id = \$1 AND status = \$2 ORDER BY created_at DESC, card_key LIMIT \$3 OFFSET \$4$/);
    expect(q.values).to.deep.equal([P, 'ACTIVE', 20, 40]);
  });

  it('reads a page without a search and its exact count from card_counts in one statement, the counter on the page\'s first parameters', function () {
    for (const filter of [{ partnerId: P }, { partnerId: P, status: 'ACTIVE' as const }, { partnerId: P, type: 'physical' as const }, { partnerId: P, status: 'LOST' as const, type: 'virtual' as const }]) {
      const q = cardCountedPageQuery(filter, 40, 21);
      const counter = cardCounterQuery(filter);
      expect(q.text).to.equal(
        `SELECT card_key, card_mask, type, status, status_code, currency, owner_type, owner_id, nickname, embossed_name, exp_date, created_at, (${counter.text}) AS total ` +
          `FROM cards WHERE ${cardListWhere(filter).text} ORDER BY created_at DESC, card_key LIMIT $${counter.values.length + 1} OFFSET $${counter.values.length + 2}`
      );
      expect(q.values).to.deep.equal([...counter.values, 21, 40]);
    }
  });

  it('bounds a walk of a search to the budget of newest cards, testing the search outside', function () {
    const q = cardPageQuery({ partnerId: P, search: 'travel' }, 40, 20, 'walk', 500);
    expect(q.text).to.match(/FROM cards WHERE partner_id = \$1 ORDER BY created_at DESC, card_key LIMIT \$5\) AS newest WHERE strpos\(search_text, lower\(\$2\)\) > 0 ORDER BY/);
    expect(q.values).to.deep.equal([P, 'travel', 20, 40, 500]);
  });

  it('reads every match through a materialized LIKE, then sorts (before the search links are backfilled)', function () {
    const q = cardPageQuery({ partnerId: P, search: 'travel' }, 0, 20, 'sort-all');
    expect(q.text).to.match(/^WITH matching AS MATERIALIZED \(SELECT .* FROM cards WHERE partner_id = \$1 AND search_text LIKE lower\(\$2\)\) SELECT \* FROM matching ORDER BY created_at DESC, card_key LIMIT \$3 OFFSET \$4$/);
    expect(q.values).to.deep.equal([P, '%travel%', 20, 0]);
  });

  it('reads every match of a search from the search terms, sorts the keys, then reads the page by key', function () {
    const q = cardTermPageQuery({ partnerId: P, status: 'ACTIVE', search: 'Trav%el' }, 40, 20);
    expect(q.text).to.equal(
      'WITH matching AS MATERIALIZED (SELECT DISTINCT l.card_key, l.created_at FROM card_search_terms t CROSS JOIN LATERAL ' +
        '(SELECT l.card_key, l.created_at FROM card_search_links l WHERE l.partner_id = $1 AND l.term = t.term AND l.field = t.field AND l.status = $3 OFFSET 0) AS l ' +
        'WHERE t.partner_id = $1 AND t.term LIKE lower($2)), page AS MATERIALIZED (SELECT card_key FROM matching ORDER BY created_at DESC, card_key LIMIT $4 OFFSET $5) ' +
        'SELECT card_key, card_mask, type, status, status_code, currency, owner_type, owner_id, nickname, embossed_name, exp_date, created_at ' +
        'FROM cards WHERE partner_id = $1 AND card_key IN (SELECT card_key FROM page) ORDER BY created_at DESC, card_key'
    );
    expect(q.values).to.deep.equal([P, '%Trav\\%el%', 'ACTIVE', 20, 40]);
  });

  it('counts a search per field from the search terms, at most the cap plus one each', function () {
    const q = cardTermCountQuery({ partnerId: P, type: 'virtual', search: 'ada' });
    for (const field of [1, 2, 3]) {
      expect(q.text).to.include(
        `(SELECT count(*) FROM (SELECT 1 FROM card_search_terms t CROSS JOIN LATERAL (SELECT 1 FROM card_search_links l WHERE l.partner_id = $1 AND l.term = t.term AND l.field = t.field AND l.type = $3 OFFSET 0) AS l WHERE t.partner_id = $1 AND t.term LIKE lower($2) AND t.field = ${field} LIMIT $4) AS matching)`
      );
      // Many values: one range of the links, from the first matching value to the last.
      expect(q.text).to.include(`WHERE l.field = ${field} AND l.term LIKE lower($2) AND l.type = $3 LIMIT $4) AS matching)`);
    }
    expect(q.text).to.include('l.term >= r.lo AND l.term <= r.hi LIMIT 25000');
    expect(q.values).to.deep.equal([P, '%ada%', 'virtual', RESULT_WINDOW + 1]);
  });

  it('finds the values of a search without a trigram with strpos, unescaped', function () {
    const q = cardTermCountQuery({ partnerId: P, search: 'z.%' });
    expect(q.text).to.match(/^WITH terms AS MATERIALIZED \(SELECT t.term, t.field FROM card_search_terms t WHERE t.partner_id = \$1 AND strpos\(t.term, lower\(\$2\)\) > 0\) SELECT /);
    expect(q.text).to.include('FROM terms t WHERE t.field = 1');
    expect(q.values).to.deep.equal([P, 'z.%', RESULT_WINDOW + 1]);
  });

  it('counts the matches among the newest cards of a status and type, and how many it looked at', function () {
    const q = cardNewestWalkCountQuery({ partnerId: P, status: 'LOST', type: 'physical', search: '** ****' }, 500);
    expect(q.text).to.equal(
      'SELECT (count(*) FILTER (WHERE strpos(search_text, lower($4)) > 0))::int AS n, count(*)::int AS seen FROM (SELECT search_text, card_mask, nickname, embossed_name ' +
        'FROM cards WHERE partner_id = $1 AND status = $2 AND type = $3 ORDER BY created_at DESC, card_key LIMIT $5) AS newest'
    );
    expect(q.values).to.deep.equal([P, 'LOST', 'physical', '** ****', 500]);
  });

  it('counts the distinct cards of a search over three times the cap plus one links', function () {
    const q = cardTermDistinctCountQuery({ partnerId: P, search: '12' }, 100);
    expect(q.text).to.match(/^SELECT CASE WHEN sum\(links\) = \$3 OR count\(\*\) > \$4 THEN \$4 ELSE count\(\*\) END::int AS n FROM \(SELECT card_key, count\(\*\) AS links FROM \(SELECT l.card_key FROM .* LIMIT \$3\) AS matching GROUP BY card_key\) AS cards$/);
    expect(q.values).to.deep.equal([P, '12', 303, 101]);
  });

  it('selects the summary columns only (no PAN, CVV or other column)', function () {
    const q = cardPageQuery({ partnerId: P }, 0, 20);
    expect(q.text).to.match(/^SELECT card_key, card_mask, type, status, status_code, currency, owner_type, owner_id, nickname, embossed_name, exp_date, created_at FROM/);
  });

  it('counts the matches among the newest cards (the density of a search)', function () {
    const q = cardNewestMatchCountQuery({ partnerId: P, status: 'ACTIVE', search: 'travel' }, 20_000);
    expect(q.text).to.equal(
      'SELECT count(*)::int AS n FROM (SELECT search_text, card_mask, nickname, embossed_name FROM cards WHERE partner_id = $1 AND status = $2 ' +
        'ORDER BY created_at DESC, card_key LIMIT $4) AS newest WHERE strpos(search_text, lower($3)) > 0'
    );
    expect(q.values).to.deep.equal([P, 'ACTIVE', 'travel', 20_000]);
  });

  it('counts at most the cap plus one', function () {
    const q = cardCountQuery({ partnerId: P, type: 'virtual' });
    expect(q.text).to.equal('SELECT count(*)::int AS n FROM (SELECT 1 FROM cards WHERE partner_id = $1 AND type = $2 LIMIT $3) AS matching');
    expect(q.values).to.deep.equal([P, 'virtual', RESULT_WINDOW + 1]);
  });
});

describe('unit: cards/card-search windowOf', function () {
  const table: [number, number, { offset: number; rows: number }][] = [
    [1, 20, { offset: 0, rows: 20 }],
    [3, 7, { offset: 14, rows: 7 }],
    [500, 20, { offset: 9980, rows: 20 }],
    [334, 30, { offset: 9990, rows: 10 }],
    [501, 20, { offset: 10000, rows: 0 }],
    [1_000_000, 100, { offset: 99_999_900, rows: 0 }],
  ];
  for (const [page, limit, expected] of table) {
    it(`page ${page}, limit ${limit} → ${JSON.stringify(expected)}`, function () {
      expect(windowOf({ page, limit })).to.deep.equal(expected);
    });
  }
});

describe('unit: cards/card-search toCardSummary', function () {
  it('keeps the summary fields only', function () {
    const row = {
      card_key: 'CK1',
      card_mask: '5355 70** **** 1234',
      type: 'virtual' as const,
      status: 'ACTIVE' as const,
      status_code: '00',
      currency: 'EUR',
      owner_type: 'b2b' as const,
      owner_id: 'b'.repeat(24),
      nickname: null,
      embossed_name: 'ACME-LTD',
      exp_date: '12/2030',
      created_at: new Date('2026-01-02T03:04:05.678Z'),
      pan: '5355701234561234',
      cvv: '123',
      product_code: 'P-BIZ',
    };
    expect(toCardSummary(row)).to.deep.equal({
      cardKey: 'CK1',
      cardMask: '5355 70** **** 1234',
      type: 'virtual',
      status: 'ACTIVE',
      statusCode: '00',
      currency: 'EUR',
      ownerType: 'b2b',
      ownerId: 'b'.repeat(24),
      nickname: null,
      embossedName: 'ACME-LTD',
      expDate: '12/2030',
      createdAt: '2026-01-02T03:04:05.678Z',
    });
  });
});

describe('unit: cards/card-search on PostgreSQL (20,000 seeded cards)', function () {
  this.timeout(60_000);
  let services: InProcessServices;
  const partnerId = crypto.randomBytes(12).toString('hex');
  interface ReferenceRow {
    card_key: string;
    card_mask: string;
    nickname: string | null;
    embossed_name: string | null;
    status: string;
    type: string;
  }
  // Every card of the partner, newest first as PostgreSQL orders them: the reference of the checks.
  let reference: ReferenceRow[];

  interface PlanNode {
    'Node Type': string;
    'Relation Name'?: string;
    'Index Name'?: string;
    Plans?: PlanNode[];
  }
  const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];
  async function planOf(query: { text: string; values: unknown[] }): Promise<PlanNode[]> {
    const rows = await services.db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${query.text}`, query.values);
    return nodesOf(rows.rows[0]['QUERY PLAN'][0].Plan);
  }

  function expected(filter: CardListFilter) {
    const search = filter.search?.toLowerCase();
    return reference.filter(
      (c) =>
        (filter.status === undefined || c.status === filter.status) &&
        (filter.type === undefined || c.type === filter.type) &&
        (search === undefined || [c.card_mask, c.nickname, c.embossed_name].some((field) => field !== null && field.toLowerCase().includes(search)))
    );
  }

  before(async function () {
    services = await openServices();
    await seedCards(services.db, { partnerId, count: 20_000 });
    reference = (
      await services.db.query<ReferenceRow>(
        'SELECT card_key, card_mask, nickname, embossed_name, status, type FROM cards WHERE partner_id = $1 ORDER BY created_at DESC, card_key',
        [partnerId]
      )
    ).rows;
  });
  after(async function () {
    await services?.close();
  });

  const plans: { description: string; query: () => { text: string; values: unknown[] }; index: string }[] = [
    { description: 'status=ACTIVE page', query: () => cardPageQuery({ partnerId, status: 'ACTIVE' }, 0, 20), index: 'cards_partner_status_created_idx' },
    { description: 'type=physical page', query: () => cardPageQuery({ partnerId, type: 'physical' }, 0, 20), index: 'cards_partner_type_created_idx' },
    { description: 'status=FRAUD&type=physical page', query: () => cardPageQuery({ partnerId, status: 'FRAUD', type: 'physical' }, 0, 20), index: 'cards_partner_status_created_idx' },
    { description: 'page with its count', query: () => cardCountedPageQuery({ partnerId }, 0, 21), index: 'cards_partner_created_idx' },
    { description: 'type=physical page with its count', query: () => cardCountedPageQuery({ partnerId, type: 'physical' }, 0, 21), index: 'cards_partner_type_created_idx' },
    { description: 'search=travel&status=ACTIVE page, every match sorted', query: () => cardTermPageQuery({ partnerId, status: 'ACTIVE', search: 'travel' }, 0, 20), index: 'card_search_links_term_idx' },
    { description: 'search=1234 page, every match sorted', query: () => cardTermPageQuery({ partnerId, search: '1234' }, 0, 20), index: 'cards_pkey' },
    { description: 'search=travel&status=ACTIVE count', query: () => cardTermCountQuery({ partnerId, status: 'ACTIVE', search: 'travel' }), index: 'card_search_terms_nickname_trgm_idx' },
    { description: 'search=travel&status=ACTIVE count, per value', query: () => cardTermCountQuery({ partnerId, status: 'ACTIVE', search: 'travel' }), index: 'card_search_links_term_idx' },
    { description: 'search=z.z count (no trigram)', query: () => cardTermCountQuery({ partnerId, search: 'z.z' }), index: 'card_search_links_term_idx' },
    { description: 'search=12 distinct count', query: () => cardTermDistinctCountQuery({ partnerId, search: '12' }), index: 'card_search_links_term_idx' },
  ];
  for (const { description, query, index } of plans) {
    it(`plans the ${description} on ${index}, never a Seq Scan on cards or their search links`, async function () {
      const nodes = await planOf(query());
      expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan' && ['cards', 'card_search_links'].includes(n['Relation Name'] ?? '')), JSON.stringify(nodes)).to.deep.equal([]);
      expect(nodes.map((n) => n['Index Name'])).to.include(index);
    });
  }

  const filters: CardListFilter[] = [
    { partnerId },
    { partnerId, status: 'ACTIVE' },
    { partnerId, status: 'LOCKED', type: 'physical' },
    { partnerId, search: 'TRAVEL' },
    { partnerId, search: 'travel', status: 'ACTIVE' },
    { partnerId, search: 'lovelace', type: 'virtual' },
    { partnerId, search: '123' },
    { partnerId, search: '5355 70' },
    { partnerId, search: 'zzzz' },
    { partnerId, search: '00' },
    { partnerId, search: 'zq' },
    // Punctuation and no trigram: the values are scanned with strpos.
    { partnerId, search: 'z.z' },
    { partnerId, search: '** ****' },
    { partnerId, search: '.LOV' },
    { partnerId, search: 'ADA.lovelace', status: 'ACTIVE', type: 'physical' },
    { partnerId, search: 'acme-', status: 'LOCKED' },
    // Without a trigram, with a status or type: the bounded walk first (exact when it reaches the
    // last card of the status and type, or over the cap), else the links.
    { partnerId, search: '** ****', type: 'physical', status: 'LOST' },
    { partnerId, search: '** ****', status: 'ACTIVE' },
    { partnerId, search: 'z.z', status: 'ACTIVE' },
    { partnerId, search: 'a.l', type: 'virtual' },
    // Matches in two fields (masks and numbered nicknames): the distinct count.
    { partnerId, search: '12' },
    { partnerId, search: '12', type: 'virtual' },
    { partnerId, search: '4921', status: 'ACTIVE' },
    { partnerId, search: 'Marketing 5' },
    { partnerId, search: 'ada', type: 'physical', status: 'LOST' },
    // The separator of search_text never matches: fields are searched on their own.
    { partnerId, search: 'lovelace\u001f' },
    { partnerId, search: '100%' },
  ];
  const tunings: SearchTuning[] = [
    { walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX },
    // Always the walk first (it covers every card of the partner here).
    { walkBudget: WALK_BUDGET, sortAllUpTo: 0, walkMax: WALK_MAX },
    // A walk that gives up early, then the longer walk when matches are dense enough.
    { walkBudget: 50, sortAllUpTo: 0, walkMax: 20_000 },
    // A walk that gives up early and no longer walk: every match sorted.
    { walkBudget: 50, sortAllUpTo: 0, walkMax: 50 },
    // Ranges of links cut short: counted value by value, or on the cards.
    { walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX, rangeLinks: 50 },
    { walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX, rangeLinks: 3000 },
    // The cards table only, as before the search links' backfill is marked done.
    { walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX, links: false },
    { walkBudget: 50, sortAllUpTo: 0, walkMax: 50, links: false },
  ];
  for (const filter of filters) {
    it(`pages ${JSON.stringify({ ...filter, partnerId: undefined })} exactly like the reference, with an exact or bounded total and hasMore`, async function () {
      const all = expected(filter);
      // Without a search the total is exact (card_counts); a search's is bounded by the window.
      const total = filter.search === undefined ? all.length : Math.min(all.length, RESULT_WINDOW);
      const reachable = Math.min(all.length, RESULT_WINDOW);
      const lastPage = Math.max(1, Math.ceil(reachable / 7));
      const pages = [{ page: 1, limit: 20 }, { page: 3, limit: 7 }, { page: lastPage, limit: 7 }, { page: lastPage + 1, limit: 7 }, { page: 500, limit: 20 }, { page: 334, limit: 30 }];
      for (const tuning of tunings) {
        for (const page of pages) {
          const got = await searchCards(services.db, filter, page, tuning);
          const from = (page.page - 1) * page.limit;
          const context = `${JSON.stringify(page)} ${JSON.stringify(tuning)}`;
          expect(got.total, context).to.equal(total);
          expect(got.totalCapped, context).to.equal(filter.search !== undefined && all.length > RESULT_WINDOW);
          // Past the window, a list holding more than the window refuses the page; otherwise it is past the end.
          expect(got.withinWindow, context).to.equal(!(all.length > RESULT_WINDOW && from >= RESULT_WINDOW));
          expect(got.items.map((c) => c.cardKey), context).to.deep.equal(all.slice(from, Math.min(from + page.limit, RESULT_WINDOW)).map((c) => c.card_key));
          // A later page within the window holds cards: false on the window's last page whatever follows.
          expect(got.hasMore, `hasMore ${context}`).to.equal(reachable > from + page.limit);
        }
      }
    });
  }

  it('refuses a page past the window while more cards match than it holds, not when fewer match', async function () {
    const beyond = await searchCards(services.db, { partnerId }, { page: 501, limit: 20 });
    expect(beyond).to.deep.include({ total: reference.length, totalCapped: false, withinWindow: false, hasMore: false, items: [] });
    const searched = await searchCards(services.db, { partnerId, search: '5355' }, { page: 501, limit: 20 });
    expect(expected({ partnerId, search: '5355' }).length).to.be.greaterThan(RESULT_WINDOW);
    expect(searched).to.deep.include({ total: RESULT_WINDOW, totalCapped: true, withinWindow: false, hasMore: false, items: [] });
    const pastTheEnd = await searchCards(services.db, { partnerId, search: 'travel' }, { page: 501, limit: 20 });
    expect(pastTheEnd).to.deep.include({ total: expected({ partnerId, search: 'travel' }).length, totalCapped: false, withinWindow: true, hasMore: false, items: [] });
  });
});

describe('unit: cards/card-search search terms kept in step with the cards (migration 022)', function () {
  this.timeout(60_000);
  let services: InProcessServices;
  const partnerId = crypto.randomBytes(12).toString('hex');
  const FIELDS = 'card_key, field::int AS field, partner_id, term, status, type, created_at';
  // What card_search_links should hold, derived from the cards the straightforward way.
  const derived =
    `SELECT c.card_key, v.field::int AS field, c.partner_id, left(lower(v.value), 256) AS term, c.status, c.type, c.created_at ` +
    `FROM cards c CROSS JOIN LATERAL (VALUES (1, c.card_mask), (2, c.nickname), (3, c.embossed_name)) AS v (field, value) ` +
    `WHERE v.value IS NOT NULL AND v.value <> '' AND c.partner_id = $1`;
  const stored = `SELECT ${FIELDS} FROM card_search_links WHERE partner_id = $1`;

  async function count(sql: string): Promise<number> {
    return Number((await services.db.query<{ n: string }>(`SELECT count(*) AS n FROM (${sql}) AS x`, [partnerId])).rows[0].n);
  }
  async function expectInStep(): Promise<void> {
    expect(await count(`${derived} EXCEPT ${stored}`), 'links missing').to.equal(0);
    expect(await count(`${stored} EXCEPT ${derived}`), 'links that should not be there').to.equal(0);
    expect(await count(`SELECT term, field FROM card_search_links WHERE partner_id = $1 EXCEPT SELECT term, field FROM card_search_terms WHERE partner_id = $1`), 'links without their value').to.equal(0);
  }
  const keys = (filter: CardListFilter) => referenceKeys(services.db, partnerId, filter);
  async function someKeys(where: string, n: number): Promise<string[]> {
    const rows = await services.db.query<{ card_key: string }>(`SELECT card_key FROM cards WHERE partner_id = $1 AND ${where} ORDER BY card_key LIMIT ${n}`, [partnerId]);
    expect(rows.rows).to.have.length(n);
    return rows.rows.map((r) => r.card_key);
  }

  before(async function () {
    services = await openServices();
    await seedCards(services.db, { partnerId, count: 2000 });
  });
  after(async function () {
    await services?.close();
  });

  it('links every seeded card (one statement of many rows)', async function () {
    expect(await count(stored)).to.be.greaterThan(2000);
    await expectInStep();
  });

  it('follows status, nickname, embossed name, card key changes, deletes and inserts', async function () {
    const db = services.db;
    await db.query(`UPDATE cards SET status = 'FRAUD' WHERE card_key = ANY($1)`, [await someKeys(`status <> 'FRAUD'`, 40)]);
    await db.query(`UPDATE cards SET type = 'physical' WHERE card_key = ANY($1)`, [await someKeys(`type = 'virtual'`, 10)]);
    await db.query(`UPDATE cards SET nickname = 'Zebra Fund ' || substr(card_key, 3, 4) WHERE card_key = ANY($1)`, [await someKeys('nickname IS NULL', 15)]);
    await db.query('UPDATE cards SET nickname = NULL WHERE card_key = ANY($1)', [await someKeys(`nickname IS NOT NULL AND nickname NOT LIKE 'Zebra%'`, 15)]);
    await db.query(`UPDATE cards SET embossed_name = 'QUINN.XAVIER' WHERE card_key = ANY($1)`, [await someKeys('embossed_name IS NOT NULL', 12)]);
    await db.query(`UPDATE cards SET card_mask = '5355 70** **** 9x9x' WHERE card_key = ANY($1)`, [await someKeys('true', 3)]);
    // A replacement gives the card a new key (gateway/handlers/card-replacement.ts).
    for (const key of await someKeys(`nickname LIKE 'Zebra%'`, 3)) await db.query('UPDATE cards SET card_key = $2 WHERE card_key = $1', [key, `${key}R`]);
    await db.query('UPDATE cards SET updated_at = now() WHERE card_key = ANY($1)', [await someKeys('true', 20)]);
    await db.query('DELETE FROM cards WHERE card_key = ANY($1)', [await someKeys(`embossed_name = 'QUINN.XAVIER'`, 4)]);
    const models = await someKeys('true', 3);
    await db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, embossed_name, nickname, created_at)
       SELECT card_key || 'N', partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date,
              'NEW.HOLDER', 'Brand new ' || substr(card_key, 3, 2), now() FROM cards WHERE card_key = ANY($1)`,
      [models]
    );
    await expectInStep();

    const filters: CardListFilter[] = [
      { partnerId, search: 'zebra' },
      { partnerId, search: 'zebra fund', status: 'FRAUD' },
      { partnerId, search: 'quinn' },
      { partnerId, search: 'new.holder' },
      { partnerId, search: 'brand new' },
      { partnerId, search: '9x9x' },
      { partnerId, search: 'travel', status: 'FRAUD' },
      { partnerId, search: 'ada', type: 'physical' },
      { partnerId, search: 'x.' },
    ];
    for (const filter of filters) {
      const all = await keys(filter);
      for (const page of [{ page: 1, limit: 20 }, { page: 2, limit: 5 }]) {
        const got = await searchCards(db, filter, page);
        const from = (page.page - 1) * page.limit;
        expect(got.total, JSON.stringify(filter)).to.equal(all.length);
        expect(got.items.map((c) => c.cardKey), JSON.stringify(filter)).to.deep.equal(all.slice(from, from + page.limit));
      }
    }
  });

  it('counts per field and distinct cards up to a small cap exactly like the reference', async function () {
    for (const filter of [{ partnerId, search: '12' }, { partnerId, search: '1', type: 'virtual' as const }, { partnerId, search: 'a' }]) {
      const all = await keys(filter);
      for (const cap of [5, 50, 500, 5000]) {
        const got = (await services.db.query<{ n: number }>(cardTermDistinctCountQuery(filter, cap).text, cardTermDistinctCountQuery(filter, cap).values)).rows[0].n;
        expect(got, `${JSON.stringify(filter)} cap ${cap}`).to.equal(Math.min(all.length, cap + 1));
      }
    }
    // '1' is in most masks and in the numbered nicknames ('Travel 12'); in no embossed name.
    const perFieldQuery = cardTermCountQuery({ partnerId, search: '1' }, 30);
    const perField = (await services.db.query<{ mask: number; nickname: number; embossed_name: number }>(perFieldQuery.text, perFieldQuery.values)).rows[0];
    const nicknames = await count(`SELECT 1 FROM cards WHERE partner_id = $1 AND nickname LIKE '%1%'`);
    expect(nicknames).to.be.greaterThan(0);
    expect(perField).to.deep.equal({ mask: 31, nickname: Math.min(nicknames, 31), embossed_name: 0 });
  });
});

describe('unit: cards/card-search search links backfill and pruning (migration 022)', function () {
  this.timeout(180_000);
  // Two connections at once need PostgreSQL: PGlite is one session (the race tests skip there).
  const embedded = process.env.TEST_DB === 'embedded';
  let own: RunDatabase | undefined;
  let services: InProcessServices;
  const A = crypto.randomBytes(12).toString('hex');
  const B = crypto.randomBytes(12).toString('hex');
  const derived = (partner: string) =>
    `SELECT c.card_key, v.field::int AS field, c.partner_id, left(lower(v.value), 256) AS term, c.status, c.type, c.created_at ` +
    `FROM cards c CROSS JOIN LATERAL (VALUES (1, c.card_mask), (2, c.nickname), (3, c.embossed_name)) AS v (field, value) ` +
    `WHERE v.value IS NOT NULL AND v.value <> '' AND c.partner_id = '${partner}'`;
  const stored = (partner: string) => `SELECT card_key, field::int AS field, partner_id, term, status, type, created_at FROM card_search_links WHERE partner_id = '${partner}'`;

  async function count(sql: string, params: unknown[] = []): Promise<number> {
    return Number((await services.db.query<{ n: string }>(`SELECT count(*) AS n FROM (${sql}) AS x`, params)).rows[0].n);
  }
  async function expectInStep(partner: string): Promise<void> {
    expect(await count(`${derived(partner)} EXCEPT ${stored(partner)}`), 'links missing').to.equal(0);
    expect(await count(`${stored(partner)} EXCEPT ${derived(partner)}`), 'links that should not be there').to.equal(0);
  }
  const reference = (filter: CardListFilter) => referenceKeys(services.db, filter.partnerId, filter);
  /** The real database, each statement's text recorded: which tables a search read. */
  function recording(): { db: Queryable; texts: string[] } {
    const texts: string[] = [];
    return { texts, db: { query: (text: string, params?: unknown[]) => (texts.push(text), services.db.query(text, params)) } as Queryable };
  }
  async function expectAnswers(db: Queryable, filters: CardListFilter[]): Promise<void> {
    for (const filter of filters) {
      const all = await reference(filter);
      for (const page of [{ page: 1, limit: 20 }, { page: 2, limit: 3 }]) {
        const got = await searchCards(db, filter, page);
        const from = (page.page - 1) * page.limit;
        expect(got.total, JSON.stringify(filter)).to.equal(Math.min(all.length, RESULT_WINDOW));
        expect(got.items.map((c) => c.cardKey), JSON.stringify(filter)).to.deep.equal(all.slice(from, from + page.limit));
      }
    }
  }
  async function someKeys(partner: string, where: string, n: number): Promise<string[]> {
    const rows = await services.db.query<{ card_key: string }>(`SELECT card_key FROM cards WHERE partner_id = $1 AND ${where} ORDER BY card_key LIMIT ${n}`, [partner]);
    expect(rows.rows).to.have.length(n);
    return rows.rows.map((r) => r.card_key);
  }
  /**
   * The state of a database whose cards were written before migration 022: no links, no values
   * (unless `keepValues`: then the values exist, as when other cards hold them), no mark.
   */
  async function unlinkAll(keepValues = false): Promise<void> {
    await services.db.query('DELETE FROM card_search_links');
    if (!keepValues) await services.db.query('DELETE FROM card_search_terms');
    await services.db.query('UPDATE card_search_backfill SET linked_through = NULL, done_at = NULL');
  }
  /** Waits until a statement matching `like` waits for a lock (another connection holds it). */
  async function waitUntilBlocked(like: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while ((await count(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [like])) === 0) {
      if (Date.now() > deadline) throw new Error(`no statement like ${like} waited for a lock`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  /**
   * The database as main left it before migration 022: cards, none of 022's objects, 022 not
   * recorded; nor 026's, which builds on it (its search-link functions and release triggers, and
   * the card counts), so that both are applied again.
   */
  async function dropMigration022(): Promise<void> {
    await services.db.query(
      `DROP TRIGGER cards_search_terms_release_update ON cards; DROP TRIGGER cards_search_terms_release_delete ON cards;
       DROP TRIGGER cards_counts_insert ON cards; DROP TRIGGER cards_counts_delete ON cards; DROP TRIGGER cards_counts_update ON cards; DROP TRIGGER cards_counts_truncate ON cards;
       DROP FUNCTION card_search_keep_term(bpchar, smallint, text), card_search_release_terms(), card_count_slot(bpchar), card_counts_inserted(), card_counts_deleted(),
         card_counts_updated(), card_counts_truncated(), card_counts_recount();
       DROP TABLE card_counts; DELETE FROM schema_migrations WHERE version = '026';
       DROP TRIGGER cards_search_links_insert ON cards; DROP TRIGGER cards_search_links_update ON cards; DROP TRIGGER cards_search_links_delete ON cards;
       DROP FUNCTION card_search_links_insert(), card_search_links_update(), card_search_links_delete(), card_search_backfill_batch(integer), card_search_link_card(cards), card_search_keep_terms(bpchar[], smallint[], text[]),
         card_search_backfill_missing(text), card_search_prune_batch(bpchar, smallint, text, integer);
       DROP TABLE card_search_links, card_search_terms, card_search_backfill; DELETE FROM schema_migrations WHERE version = '022'`
    );
  }
  /**
   * A value no card of `partner` holds, as the pruning finds them: one a card write's release
   * skipped (another transaction was linking it at that moment), or one left from before migration
   * 026. Card writes themselves delete the values they stop holding (migration 026).
   */
  async function orphanValue(partner: string, term: string): Promise<void> {
    await services.db.query('INSERT INTO card_search_terms (partner_id, field, term) VALUES ($1, 2, $2) ON CONFLICT DO NOTHING', [partner, term]);
  }
  const codeOf = (err: unknown) => (err as { code?: string }).code;
  const NOWAIT_FAILURE = /could not obtain lock on row in relation "cards"/;
  /**
   * The real database, with a hook: each statement that fails for a lock held (SQLSTATE 55P03) is
   * counted, and the first one commits `writer` before the error reaches the caller (the write
   * ends while the backfill pauses before its next try).
   */
  function committingOnLockFailure(writer: { query(text: string): Promise<unknown> } | undefined): { db: Queryable; failures: Error[] } {
    const failures: Error[] = [];
    const db = {
      query: async (text: string, params?: unknown[]) => {
        try {
          return await services.db.query(text, params);
        } catch (err) {
          if (codeOf(err) === '55P03') {
            failures.push(err as Error);
            if (failures.length === 1 && writer) await writer.query('COMMIT');
          }
          throw err;
        }
      },
    } as Queryable;
    return { db, failures };
  }
  const backfillState = async () => (await services.db.query('SELECT linked_through, done_at FROM card_search_backfill')).rows;
  const termsOf = async (partner: string, term: string) =>
    (await services.db.query<{ field: number }>('SELECT field::int AS field FROM card_search_terms WHERE partner_id = $1 AND term = $2 ORDER BY field', [partner, term])).rows.map((r) => r.field);

  before(async function () {
    own = embedded ? undefined : await createOwnDatabase();
    services = await openServices(undefined, own ? { databaseUrl: own.url } : {});
    await seedCards(services.db, { partnerId: A, count: 1500 });
    await seedCards(services.db, { partnerId: B, count: 300 });
  });
  after(async function () {
    // Whatever a test left, the database ends backfilled (the run's database on PGlite is shared).
    if (services) await backfillSearchLinks(services.db);
    await services?.close();
    await own?.drop();
  });

  it('answers from the cards table until the backfill is marked done, then from the links; cards written before and during the backfill are all searchable', async function () {
    const db = services.db;
    await db.query(`UPDATE cards SET nickname = 'Before Zulu ' || substr(card_key, 3, 3) WHERE card_key = ANY($1)`, [await someKeys(A, 'nickname IS NULL', 6)]);
    await unlinkAll();
    const filters: CardListFilter[] = [
      { partnerId: A, search: 'before zulu' },
      { partnerId: A, search: 'during yankee' },
      { partnerId: A, search: 'travel', status: 'FRAUD' },
      { partnerId: A, search: 'ada', type: 'physical' },
      { partnerId: A, search: 'z.z' },
      { partnerId: A, search: '** ****', status: 'ACTIVE' },
      { partnerId: A, status: 'FRAUD' },
    ];
    const before = recording();
    expect(await searchLinksReady(before.db)).to.equal(false);
    await expectAnswers(before.db, filters);
    expect(before.texts.filter((t) => t.includes('card_search_')).length, 'only the mark read').to.equal(before.texts.filter((t) => t.includes('card_search_backfill')).length);

    // One batch, then cards written while the backfill is under way, above and below its cursor.
    const first = await backfillSearchLinks(db, { batch: 400, maxBatches: 1 });
    expect(first).to.deep.equal({ linked: 400, done: false, busy: false, missing: 0 });
    const cursor = (await db.query<{ linked_through: string }>('SELECT linked_through FROM card_search_backfill')).rows[0].linked_through;
    const below = (await someKeys(A, `card_key < '${cursor}'`, 3));
    const above = (await someKeys(A, `card_key > '${cursor}'`, 5));
    await db.query(`UPDATE cards SET status = 'FRAUD' WHERE card_key = ANY($1)`, [[below[0], above[0]]]);
    await db.query(`UPDATE cards SET nickname = 'During Yankee ' || substr(card_key, 3, 3) WHERE card_key = ANY($1)`, [[below[1], above[1]]]);
    // A new key below the cursor for a card the backfill had not reached (the batch never goes back).
    await db.query(`UPDATE cards SET card_key = (SELECT min(card_key) FROM cards) || 'x' WHERE card_key = $1`, [above[2]]);
    await db.query('DELETE FROM cards WHERE card_key = $1', [above[3]]);
    await db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, embossed_name, nickname, created_at)
       SELECT card_key || 'N', partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date,
              embossed_name, 'During Yankee new', now() FROM cards WHERE card_key = ANY($1)`,
      [[below[2], above[4]]]
    );
    const during = recording();
    await expectAnswers(during.db, filters);
    expect(during.texts.some((t) => t.includes('card_search_links'))).to.equal(false);

    const rest = await backfillSearchLinks(db, { batch: 400 });
    expect(rest.done).to.equal(true);
    expect(rest.linked).to.be.greaterThan(1000);
    await expectInStep(A);
    await expectInStep(B);
    const after = recording();
    expect(await searchLinksReady(after.db)).to.equal(true);
    await expectAnswers(after.db, filters);
    expect(after.texts.some((t) => t.includes('card_search_links'))).to.equal(true);
    // Idempotent: once done, nothing more.
    expect(await backfillSearchLinks(db)).to.deep.equal({ linked: 0, done: true, busy: false, missing: 0 });
  });

  it('migrates a database that holds cards without linking any at boot, then the background job links them all and prunes', async function () {
    if (embedded) this.skip(); // drops and re-creates the tables the whole run's database shares
    const db = services.db;
    await dropMigration022();
    // What the reverted migration 020 left on a development database (same names, other shapes): 022 drops it.
    await db.query(
      `CREATE TABLE card_search_terms (term text PRIMARY KEY); CREATE TABLE card_search_links (card_key text, term text REFERENCES card_search_terms);
       CREATE FUNCTION card_search_links_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
       CREATE TRIGGER cards_search_links_change AFTER UPDATE ON cards FOR EACH ROW EXECUTE FUNCTION card_search_links_change()`
    );
    const log = createLogger({ level: 'silent' });
    expect(await migrate(db, log)).to.deep.equal(['022', '026']);
    expect(await count('SELECT 1 FROM card_search_links')).to.equal(0);
    expect((await db.query('SELECT linked_through, done_at FROM card_search_backfill')).rows).to.deep.equal([{ linked_through: null, done_at: null }]);
    expect(await searchLinksReady(recording().db)).to.equal(false);
    // A card written after the migration is linked by its own statement, before any backfill.
    const [key] = await someKeys(A, 'nickname IS NULL', 1);
    await db.query(`UPDATE cards SET nickname = 'After Migration' WHERE card_key = $1`, [key]);
    expect(await count(`SELECT 1 FROM card_search_links WHERE card_key = $1`, [key])).to.be.greaterThan(1);
    // A value its card no longer holds goes with the card's write; one left over, for the job's pruning.
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = $1`, [key]);
    expect(await termsOf(A, 'after migration')).to.deep.equal([]);
    await orphanValue(A, 'left over');
    const stop = startSearchLinks(db, log, { intervalMs: 20, pruneEveryMs: 0 });
    try {
      const deadline = Date.now() + 60_000;
      while (!(await searchLinksReady(recording().db)) || (await termsOf(A, 'left over')).length > 0) {
        if (Date.now() > deadline) throw new Error('the job did not link every card and prune the value');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await stop();
    }
    await expectInStep(A);
    await expectInStep(B);
  });

  it('keeps each partner its own values: B’s never in A’s search, one value per partner', async function () {
    const db = services.db;
    await db.query(`UPDATE cards SET nickname = 'Bravo Sierra' WHERE card_key = ANY($1)`, [await someKeys(B, 'true', 4)]);
    await db.query(`UPDATE cards SET nickname = 'Shared Echo' WHERE card_key = ANY($1)`, [[...(await someKeys(A, `nickname IS NULL`, 2)), ...(await someKeys(B, `nickname IS NULL`, 1))]]);
    expect(await termsOf(A, 'bravo sierra')).to.deep.equal([]);
    expect(await termsOf(B, 'bravo sierra')).to.deep.equal([2]);
    expect(await termsOf(A, 'shared echo')).to.deep.equal([2]);
    expect(await termsOf(B, 'shared echo')).to.deep.equal([2]);
    const links = { links: true, walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX };
    expect(await searchCards(db, { partnerId: A, search: 'bravo' }, { page: 1, limit: 20 }, links)).to.deep.include({ total: 0, items: [] });
    expect((await searchCards(db, { partnerId: B, search: 'bravo' }, { page: 1, limit: 20 }, links)).total).to.equal(4);
    expect((await searchCards(db, { partnerId: A, search: 'shared echo' }, { page: 1, limit: 20 }, links)).total).to.equal(2);
    expect((await searchCards(db, { partnerId: B, search: 'shared echo' }, { page: 1, limit: 20 }, links)).total).to.equal(1);
    const q = cardTermCountQuery({ partnerId: A, search: 'sierra' });
    expect((await db.query(q.text, q.values)).rows[0]).to.deep.equal({ mask: 0, nickname: 0, embossed_name: 0 });
    expect(await count(`SELECT 1 FROM card_search_links l JOIN cards c USING (card_key) WHERE l.partner_id <> c.partner_id`)).to.equal(0);
  });

  it('deletes a value with the card write that stops holding it when no card of its partner holds it, keeps the values still held, and prunes what is left', async function () {
    const db = services.db;
    const [lonely, shared1, shared2] = await someKeys(A, `nickname IS NULL`, 3);
    const [other] = await someKeys(B, `nickname IS NULL`, 1);
    await db.query(`UPDATE cards SET nickname = 'Lonely Victor' WHERE card_key = ANY($1)`, [[lonely, other]]);
    await db.query(`UPDATE cards SET nickname = 'Kept Uniform' WHERE card_key = ANY($1)`, [[shared1, shared2]]);
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = $1`, [lonely]);
    await db.query(`UPDATE cards SET nickname = 'Changed Uniform' WHERE card_key = $1`, [shared1]);
    // The links and the value no card holds any more go with the write itself.
    expect(await count(`SELECT 1 FROM card_search_links WHERE card_key = $1 AND field = 2`, [lonely])).to.equal(0);
    expect(await termsOf(A, 'lonely victor')).to.deep.equal([]);
    expect(await termsOf(B, 'lonely victor'), 'the other partner’s card still holds it').to.deep.equal([2]);
    expect(await termsOf(A, 'kept uniform'), 'another card still holds it').to.deep.equal([2]);
    expect(await termsOf(A, 'changed uniform')).to.deep.equal([2]);
    // A deleted card's values too.
    await db.query('DELETE FROM cards WHERE card_key = $1', [other]);
    expect(await termsOf(B, 'lonely victor')).to.deep.equal([]);
    // What a write left (its release skipped a value another transaction held) goes at the pruning's pass.
    await orphanValue(A, 'left victor');
    const pruned = await pruneSearchTerms(db, { batch: 50 });
    expect(pruned.deleted).to.be.at.least(1);
    expect(await termsOf(A, 'left victor')).to.deep.equal([]);
    expect(await count(`SELECT partner_id, field, term FROM card_search_terms EXCEPT SELECT partner_id, field, term FROM card_search_links`)).to.equal(0);
    await expectInStep(A);
    await expectInStep(B);
  });

  /** Resolves `write`, failing as soon as the session `pid` waits for a lock meanwhile. */
  async function withoutWaiting<T>(pid: number, write: Promise<T>): Promise<T> {
    let settled = false;
    const done = write.finally(() => (settled = true));
    const deadline = Date.now() + 10_000;
    while (!settled) {
      expect(await count(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid]), 'the card write waits for another transaction').to.equal(0);
      if (Date.now() > deadline) throw new Error('the card write did not end');
      await new Promise((resolve) => setImmediate(resolve));
    }
    return done;
  }

  it('leaves a value another transaction is linking to that transaction: the card write that stops holding it skips it, without waiting, and the pruning takes it if that transaction rolls back', async function () {
    if (embedded) this.skip();
    const db = services.db;
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    for (const outcome of ['COMMIT', 'ROLLBACK']) {
      const [holder, linker] = await someKeys(A, 'nickname IS NULL', 2);
      await db.query(`UPDATE cards SET nickname = 'Racing Foxtrot' WHERE card_key = $1`, [holder]);
      const releaser = await db.pool.connect();
      const writer = await db.pool.connect();
      let failed = true;
      try {
        await writer.query('BEGIN');
        // The writer links the value (FOR KEY SHARE on it, its link not committed)...
        await writer.query(`UPDATE cards SET nickname = 'Racing Foxtrot' WHERE card_key = $1`, [linker]);
        // ... while the one card that held it drops it: no committed link holds it any more, and
        // the value is held: the write's release skips it and the write commits at once.
        const pid = (await releaser.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        await withoutWaiting(pid, releaser.query(`UPDATE cards SET nickname = NULL WHERE card_key = $1`, [holder]));
        expect(await termsOf(A, 'racing foxtrot')).to.deep.equal([2]);
        await writer.query(outcome);
        failed = false;
      } finally {
        writer.release(failed);
        releaser.release(failed);
      }
      if (outcome === 'COMMIT') {
        expect(await termsOf(A, 'racing foxtrot'), 'the value the writer linked stays').to.deep.equal([2]);
        await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = $1`, [linker]);
        expect(await termsOf(A, 'racing foxtrot'), 'gone with the last card that held it').to.deep.equal([]);
      } else {
        expect(await termsOf(A, 'racing foxtrot'), 'left for the pruning').to.deep.equal([2]);
        await pruneSearchTerms(db);
        expect(await termsOf(A, 'racing foxtrot')).to.deep.equal([]);
      }
      await expectInStep(A);
    }
  });

  it('keeps a value a transaction drops and links again, and deletes the one it linked in between', async function () {
    const db = services.db;
    const [key] = await someKeys(A, 'nickname IS NULL', 1);
    await db.query(`UPDATE cards SET nickname = 'Round Golf' WHERE card_key = $1`, [key]);
    const client = await db.pool.connect();
    let failed = true;
    try {
      await client.query('BEGIN');
      await client.query(`UPDATE cards SET nickname = 'Round Hotel' WHERE card_key = $1`, [key]);
      await client.query(`UPDATE cards SET nickname = 'ROUND GOLF' WHERE card_key = $1`, [key]);
      await client.query('COMMIT');
      failed = false;
    } finally {
      client.release(failed);
    }
    expect(await termsOf(A, 'round golf')).to.deep.equal([2]);
    expect(await termsOf(A, 'round hotel')).to.deep.equal([]);
    await expectInStep(A);
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = $1`, [key]);
    expect(await termsOf(A, 'round golf')).to.deep.equal([]);
  });

  it('does not grow card_search_terms under a stream of distinct nicknames: the values are those the cards hold', async function () {
    const db = services.db;
    const keys = await someKeys(A, 'nickname IS NULL', 5);
    const values = async () => count('SELECT 1 FROM card_search_terms WHERE partner_id = $1', [A]);
    const before = await values();
    for (let i = 0; i < 200; i++) await db.query(`UPDATE cards SET nickname = $2 WHERE card_key = $1`, [keys[i % keys.length], `Stream ${i} ${crypto.randomBytes(4).toString('hex')}`]);
    expect(await values()).to.equal(before + keys.length);
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = ANY($1)`, [keys]);
    expect(await values()).to.equal(before);
    await expectInStep(A);
  });

  it('keeps every link’s value and no other under concurrent nickname changes among a few values, from several connections', async function () {
    if (embedded) this.skip();
    const db = services.db;
    const keys = await someKeys(A, 'nickname IS NULL', 12);
    const pool = ['Pool India', 'Pool Juliet', 'Pool Kilo', 'Pool Lima', 'Pool Mike', 'Pool November'];
    const failures: string[] = [];
    const clients = await Promise.all(Array.from({ length: 4 }, () => db.pool.connect()));
    try {
      await Promise.all(
        clients.map(async (client, n) => {
          for (let i = 0; i < 60; i++) {
            const key = keys[crypto.randomInt(keys.length)]!;
            const value = i % 5 === 4 ? null : pool[crypto.randomInt(pool.length)]!;
            try {
              if (i % 6 === 5) {
                await client.query('BEGIN');
                await client.query(`UPDATE cards SET nickname = $2 WHERE card_key = $1`, [key, value]);
                await client.query('ROLLBACK');
              } else {
                await client.query(`UPDATE cards SET nickname = $2 WHERE card_key = $1`, [key, value]);
              }
            } catch (err) {
              failures.push(`${n}: ${(err as Error).message}`);
            }
          }
        })
      );
    } finally {
      for (const client of clients) client.release();
    }
    expect(failures, 'no card write failed').to.deep.equal([]);
    await expectInStep(A);
    expect(await count(`SELECT partner_id, field, term FROM card_search_links EXCEPT SELECT partner_id, field, term FROM card_search_terms`), 'links without their value').to.equal(0);
    // What the writes' releases skipped (a value another write held at that moment) goes at the pruning.
    await pruneSearchTerms(db);
    expect(await count(`SELECT partner_id, field, term FROM card_search_terms EXCEPT SELECT partner_id, field, term FROM card_search_links`), 'values no card holds').to.equal(0);
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = ANY($1)`, [keys]);
  });

  it('plans the triggers’ statements once per connection, with sequential scans off, so a plan made while the tables were empty still reads the indexes', async function () {
    // A connection that linked cards right after the migration keeps its plans; with the tables empty
    // a generic plan could scan the links sequentially (186 ms per status change at a million cards).
    // The row-level functions run with enable_seqscan off (migration 026: planning each call, 022's
    // force_custom_plan, cost 0.1-0.5 ms per card write); the set-based ones keep 022's settings.
    const functions = await services.db.query<{ proname: string; proconfig: string[] | null }>(`SELECT proname, proconfig FROM pg_proc WHERE proname LIKE 'card_search%' ORDER BY proname`);
    const noSeqScan = functions.rows.filter((f) => (f.proconfig ?? []).includes('enable_seqscan=off')).map((f) => f.proname);
    expect(noSeqScan).to.deep.equal([
      'card_search_keep_term',
      'card_search_keep_terms',
      'card_search_link_card',
      'card_search_links_delete',
      'card_search_links_update',
      'card_search_release_terms',
    ]);
    expect(functions.rows.filter((f) => (f.proconfig ?? []).some((c) => c.startsWith('plan_cache_mode'))).map((f) => f.proname)).to.deep.equal([]);
    expect(functions.rows.map((f) => f.proname)).to.include.members(['card_search_backfill_batch', 'card_search_links_insert']);
  });

  it('leaves the links alone when an update sets the values they hold again', async function () {
    const db = services.db;
    const [key] = await someKeys(A, 'nickname IS NOT NULL', 1);
    const xmins = async () => (await db.query<{ xmin: string }>('SELECT xmin::text FROM card_search_links WHERE card_key = $1 ORDER BY field', [key])).rows.map((r) => r.xmin);
    const before = await xmins();
    expect(before.length).to.be.greaterThan(1);
    await db.query('UPDATE cards SET status = status, type = type, nickname = nickname, card_mask = card_mask, embossed_name = embossed_name, updated_at = now() WHERE card_key = $1', [key]);
    expect(await xmins()).to.deep.equal(before);
    await db.query(`UPDATE cards SET status = CASE WHEN status = 'LOCKED' THEN 'ACTIVE' ELSE 'LOCKED' END WHERE card_key = $1`, [key]);
    expect(await xmins()).to.not.deep.equal(before);
    await expectInStep(A);
  });

  it('does not lose an update that races a backfill batch, in either order', async function () {
    if (embedded) this.skip();
    const db = services.db;
    await unlinkAll();
    const [first, second] = await someKeys(A, 'true', 2);
    // The batch first: it holds its cards FOR SHARE, so the update waits, then applies on top. This
    // half passes without FOR SHARE too, and cannot be made to fail: the update's trigger upserts
    // the card's links, and that upsert waits for the batch's uncommitted links of the same card
    // (their primary key) and then overwrites them, so the links' primary key orders the two as
    // well. FOR SHARE is what the other order needs (the update first, uncommitted: without it the
    // batch links the card's old values over the update's).
    const batch = await db.pool.connect();
    try {
      await batch.query('BEGIN');
      await batch.query('SELECT * FROM card_search_backfill_batch(500)');
      const update = db.query(`UPDATE cards SET nickname = 'Racing Whiskey' WHERE card_key = $1`, [first]);
      await waitUntilBlocked(`UPDATE cards SET nickname = 'Racing Whiskey'%`);
      await batch.query('COMMIT');
      await update;
    } finally {
      batch.release();
    }
    expect(await count(`SELECT 1 FROM card_search_links WHERE card_key = $1 AND field = 2 AND term = 'racing whiskey'`, [first])).to.equal(1);
    // The update first (uncommitted): the batch fails at once on its card (NOWAIT), writing nothing,
    // and its next try, after the write committed, links the updated row. The values exist
    // already, so nothing but the card's lock stops the batch.
    await unlinkAll(true);
    const writer = await db.pool.connect();
    let failed = true;
    try {
      await writer.query('BEGIN');
      await writer.query(`UPDATE cards SET nickname = 'Racing Xray', status = 'LOST' WHERE card_key = $1`, [second]);
      const racing = committingOnLockFailure(writer);
      expect((await backfillSearchLinks(racing.db, { batch: 500, maxBatches: 1 })).linked).to.equal(500);
      expect(racing.failures).to.have.length(1);
      expect(racing.failures[0].message).to.match(NOWAIT_FAILURE);
      failed = false;
    } finally {
      writer.release(failed);
    }
    expect(await count(`SELECT 1 FROM card_search_links WHERE card_key = $1 AND field = 2 AND term = 'racing xray' AND status = 'LOST'`, [second])).to.equal(1);
    expect(await count(`SELECT 1 FROM card_search_links WHERE card_key = $1 AND status <> 'LOST'`, [second]), 'links of the card before the update').to.equal(0);
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    await expectInStep(A);
  });

  it('never waits for a card write while pruning: no deadlock with a writer that reuses one pruned value, then another', async function () {
    if (embedded) this.skip();
    const db = services.db;
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    const [first, second] = await someKeys(A, 'nickname IS NULL', 2);
    // Two values no card holds any more, one after the other in the pruning's order.
    await orphanValue(A, 'orphan alpha');
    await orphanValue(A, 'orphan bravo');
    expect(await termsOf(A, 'orphan alpha')).to.deep.equal([2]);
    expect(await termsOf(A, 'orphan bravo')).to.deep.equal([2]);
    const writer = await db.pool.connect();
    let failed = true;
    try {
      await writer.query('BEGIN');
      // The writer holds the first value (FOR KEY SHARE, uncommitted link)...
      await writer.query(`UPDATE cards SET nickname = 'Orphan Alpha' WHERE card_key = $1`, [first]);
      // ... the pruning runs: it must end without waiting for the writer (before the fix it deleted
      // the second value, uncommitted, then waited for the first: the writer reusing the second
      // value next closed a deadlock).
      let settled = false;
      const prune = pruneSearchTerms(db).finally(() => (settled = true));
      const deadline = Date.now() + 10_000;
      while (!settled) {
        const waiting = await count(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%card_search_prune_batch%'`);
        expect(waiting, 'the pruning waits for a card write').to.equal(0);
        if (Date.now() > deadline) throw new Error('the pruning did not end');
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await prune).to.deep.include({ raced: 0 });
      expect(await termsOf(A, 'orphan bravo'), 'the value no card held is gone').to.deep.equal([]);
      // ... then reuses the second value: inserted again, no wait, no deadlock.
      await writer.query(`UPDATE cards SET nickname = 'Orphan Bravo' WHERE card_key = $1`, [second]);
      await writer.query('COMMIT');
      failed = false;
    } finally {
      writer.release(failed); // a failed test must not hand its open transaction to the next
    }
    expect(await termsOf(A, 'orphan alpha'), 'the value the writer held stays').to.deep.equal([2]);
    expect(await termsOf(A, 'orphan bravo')).to.deep.equal([2]);
    await expectInStep(A);
    expect(await count(`SELECT partner_id, field, term FROM card_search_links EXCEPT SELECT partner_id, field, term FROM card_search_terms`)).to.equal(0);
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = ANY($1)`, [[first, second]]);
  });

  it('links every card although a card replacement changes the key of a card the next batch reads, and only then marks the backfill done', async function () {
    if (embedded) this.skip();
    const db = services.db;
    await unlinkAll(true);
    const first = await backfillSearchLinks(db, { batch: 100, maxBatches: 1 });
    expect(first).to.deep.equal({ linked: 100, done: false, busy: false, missing: 0 });
    const cursor = (await db.query<{ linked_through: string }>('SELECT linked_through FROM card_search_backfill')).rows[0].linked_through;
    // A card of the next batch gets a key that sorts after every card (as card-replacement.ts gives a
    // new key), in a transaction held open: the batch fails on it at once (NOWAIT), and tries again
    // once it committed. (The batch reads the keys without a lock and then locks by key, so that a
    // replacement committing between the two cannot hand it the new key, as a locking read's
    // recheck did: the cursor then jumped past the cards between. A write that commits in that
    // window cannot be held there by a test now that the batch never waits for a card.)
    const next = (await db.query<{ card_key: string }>('SELECT card_key FROM cards WHERE card_key > $1 ORDER BY card_key LIMIT 1 OFFSET 5', [cursor])).rows[0].card_key;
    const replaced = (await db.query<{ k: string }>(`SELECT max(card_key) || 'zz' AS k FROM cards`)).rows[0].k;
    const writer = await db.pool.connect();
    let failed = true;
    try {
      await writer.query('BEGIN');
      await writer.query('UPDATE cards SET card_key = $2 WHERE card_key = $1', [next, replaced]);
      const racing = committingOnLockFailure(writer);
      const outcome = await backfillSearchLinks(racing.db, { batch: 100, maxBatches: 1 });
      expect(racing.failures).to.have.length(1);
      expect(outcome).to.deep.equal({ linked: 100, done: false, busy: false, missing: 0 });
      failed = false;
    } finally {
      writer.release(failed);
    }
    const moved = (await db.query<{ linked_through: string }>('SELECT linked_through FROM card_search_backfill')).rows[0].linked_through;
    expect(moved < replaced, 'the cursor never jumps to the new key').to.equal(true);
    expect((await backfillSearchLinks(db, { batch: 100 })).done).to.equal(true);
    await expectInStep(A);
    await expectInStep(B);
    await expectAnswers(recording().db, [{ partnerId: A, search: 'ada' }, { partnerId: A, search: '** ****', status: 'ACTIVE' }]);
    await db.query('UPDATE cards SET card_key = $2 WHERE card_key = $1', [replaced, next]);
  });

  it('fails a batch at once when a write holds one of its cards, writing nothing, tries it again after a pause, and links it once the write commits', async function () {
    if (embedded) this.skip();
    const db = services.db;
    await unlinkAll(true);
    // One card of the next batch (the 42nd of 100) held by a write that has not ended.
    const held = (await db.query<{ card_key: string }>('SELECT card_key FROM cards ORDER BY card_key LIMIT 1 OFFSET 41')).rows[0].card_key;
    const writer = await db.pool.connect();
    let failed = true;
    try {
      await writer.query('BEGIN');
      await writer.query('UPDATE cards SET updated_at = now() WHERE card_key = $1', [held]);
      // The batch does not wait for it: NOWAIT's failure (a lock_timeout would say "canceling
      // statement due to lock timeout"), and nothing written, the state row free again.
      const err = await db.query('SELECT linked, done, busy, missing FROM card_search_backfill_batch(100)').then(
        () => undefined,
        (e: unknown) => e as Error
      );
      expect(codeOf(err)).to.equal('55P03');
      expect(err?.message).to.match(NOWAIT_FAILURE);
      expect(await backfillState()).to.deep.equal([{ linked_through: null, done_at: null }]);
      expect(await count('SELECT 1 FROM card_search_links')).to.equal(0);
      // The job's retries: each try fails the same way at once; after the last one the pass fails, nothing written.
      const holding = committingOnLockFailure(undefined);
      const given = await backfillSearchLinks(holding.db, { batch: 100, maxBatches: 1 }).then(
        () => undefined,
        (e: unknown) => e as Error
      );
      expect(codeOf(given)).to.equal('55P03');
      expect(holding.failures).to.have.length(LOCK_RETRIES + 1);
      for (const failure of holding.failures) expect(failure.message).to.match(NOWAIT_FAILURE);
      expect(await backfillState()).to.deep.equal([{ linked_through: null, done_at: null }]);
      expect(await count('SELECT 1 FROM card_search_links')).to.equal(0);
      // The write commits during the pause after the first failure: the next try links the batch.
      const racing = committingOnLockFailure(writer);
      expect(await backfillSearchLinks(racing.db, { batch: 100, maxBatches: 1 })).to.deep.equal({ linked: 100, done: false, busy: false, missing: 0 });
      expect(racing.failures).to.have.length(1);
      failed = false;
    } finally {
      writer.release(failed);
    }
    expect(await count('SELECT 1 FROM card_search_links WHERE card_key = $1', [held])).to.be.greaterThan(0);
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    await expectInStep(A);
    await expectInStep(B);
  });

  it('gives up a batch after 20 ms when a write has inserted, uncommitted, a value the batch needs', async function () {
    if (embedded) this.skip();
    const db = services.db;
    const [model] = await someKeys(A, 'nickname IS NULL', 1);
    await db.query(`UPDATE cards SET nickname = 'Fresh Zebra' WHERE card_key = $1`, [model]);
    // No value exists: the batch inserts every value of its cards, among them 'fresh zebra'.
    await unlinkAll();
    const through = (await db.query<{ n: string }>('SELECT count(*) AS n FROM cards WHERE card_key <= $1', [model])).rows[0].n;
    const writer = await db.pool.connect();
    let failed = true;
    try {
      await writer.query('BEGIN');
      // A new card of the same value: its insert trigger inserts the value, uncommitted.
      await writer.query(
        `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, embossed_name, nickname, created_at)
         SELECT card_key || 'F', partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, embossed_name, nickname, now() FROM cards WHERE card_key = $1`,
        [model]
      );
      const err = await db.query('SELECT linked, done, busy, missing FROM card_search_backfill_batch($1)', [Number(through)]).then(
        () => undefined,
        (e: unknown) => e as Error
      );
      expect(codeOf(err)).to.equal('55P03');
      expect(err?.message).to.match(/lock timeout/);
      expect(await backfillState()).to.deep.equal([{ linked_through: null, done_at: null }]);
      expect(await count('SELECT 1 FROM card_search_links')).to.equal(0);
      await writer.query('COMMIT');
      failed = false;
    } finally {
      writer.release(failed);
    }
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    expect(await termsOf(A, 'fresh zebra')).to.deep.equal([2]);
    await expectInStep(A);
    await db.query('DELETE FROM cards WHERE card_key = $1', [`${model}F`]);
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = $1`, [model]);
  });

  it('fails the migration after 5 s of waiting for a lock on cards instead of holding card writes behind it, and the next start applies it', async function () {
    if (embedded) this.skip(); // two connections at once, and the run's shared database on PGlite
    const db = services.db;
    await dropMigration022();
    const log = createLogger({ level: 'silent' });
    // The migration on a connection of its own, to read its settings afterwards.
    const migrator = new Database(own!.url, { max: 1, log });
    const [idle, queued] = await someKeys(A, 'nickname IS NULL', 2);
    const holder = await db.pool.connect();
    let failed = true;
    try {
      // A session idle in transaction after writing a card: CREATE TRIGGER waits for it.
      await holder.query('BEGIN');
      await holder.query('UPDATE cards SET updated_at = now() WHERE card_key = $1', [idle]);
      const migrating = migrate(migrator, log).then(
        () => undefined,
        (e: unknown) => e as Error
      );
      await waitUntilBlocked('-- Issue 22, S5%');
      // A card write queues behind the waiting migration...
      const write = db.query(`UPDATE cards SET nickname = 'Queued Yankee' WHERE card_key = $1`, [queued]);
      await waitUntilBlocked(`UPDATE cards SET nickname = 'Queued Yankee'%`);
      // ... until the migration gives up (lock_timeout): rolled back whole, and the write goes through
      // while the idle transaction still holds its card.
      const err = await migrating;
      expect(err?.message).to.match(/^migration 022_card_search_links failed: canceling statement due to lock timeout/);
      expect((await write).rowCount).to.equal(1);
      expect((await db.query(`SELECT version FROM schema_migrations WHERE version = '022'`)).rows).to.deep.equal([]);
      expect((await db.query(`SELECT to_regclass('card_search_links') AS t`)).rows[0].t).to.equal(null);
      expect(await count(`SELECT 1 FROM pg_trigger WHERE tgrelid = 'cards'::regclass AND tgname LIKE 'cards_search_links%'`)).to.equal(0);
      // SET LOCAL ended with the migration's transaction: the connection's setting is the default.
      expect((await migrator.query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0].lock_timeout).to.equal('0');
      await holder.query('COMMIT');
      failed = false;
    } finally {
      holder.release(failed);
    }
    // The next start: applied.
    try {
      expect(await migrate(migrator, log)).to.deep.equal(['022', '026']);
    } finally {
      await migrator.close();
    }
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    expect(await termsOf(A, 'queued yankee')).to.deep.equal([2]);
    await expectInStep(A);
    await expectInStep(B);
    await db.query(`UPDATE cards SET nickname = NULL WHERE card_key = $1`, [queued]);
  });

  it('leaves a pruning batch that waited 200 ms for a lock for the next pass, deleting nothing, and deletes at the next pass', async function () {
    if (embedded) this.skip();
    const db = services.db;
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    await orphanValue(A, 'orphan delta');
    expect(await termsOf(A, 'orphan delta')).to.deep.equal([2]);
    const holder = await db.pool.connect();
    let failed = true;
    try {
      // A lock the pruning's batch needs (on the links), not its way to the next batch (the values).
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE card_search_links IN ACCESS EXCLUSIVE MODE');
      const outcome = await pruneSearchTerms(db);
      expect(outcome.deleted).to.equal(0);
      expect(outcome.raced).to.be.greaterThan(0);
      expect(await termsOf(A, 'orphan delta')).to.deep.equal([2]);
      await holder.query('COMMIT');
      failed = false;
    } finally {
      holder.release(failed);
    }
    expect(await pruneSearchTerms(db)).to.deep.include({ raced: 0 });
    expect(await termsOf(A, 'orphan delta')).to.deep.equal([]);
  });

  it('sends the backfill back to the start instead of marking it done while a card lacks its links', async function () {
    const db = services.db;
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    const [key] = await someKeys(A, 'true', 1);
    // A card the batches went past without linking it (what the key race above did before the fix).
    await db.query('DELETE FROM card_search_links WHERE card_key = $1', [key]);
    await db.query(`UPDATE card_search_backfill SET linked_through = (SELECT max(card_key) FROM cards), done_at = NULL`);
    expect(await backfillSearchLinks(db, { maxBatches: 1 })).to.deep.equal({ linked: 0, done: false, busy: false, missing: 1 });
    expect((await db.query('SELECT linked_through, done_at FROM card_search_backfill')).rows).to.deep.equal([{ linked_through: null, done_at: null }]);
    expect((await backfillSearchLinks(db, { batch: 500 })).done).to.equal(true);
    await expectInStep(A);
    // The job says so in the gateway's log, with the count only (no card key or value).
    await db.query('DELETE FROM card_search_links WHERE card_key = $1', [key]);
    await db.query(`UPDATE card_search_backfill SET linked_through = (SELECT max(card_key) FROM cards), done_at = NULL`);
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const stop = startSearchLinks(db, log, { intervalMs: 3_600_000, pruneEveryMs: 3_600_000, batch: 500, pauseMs: 1 });
    try {
      const deadline = Date.now() + 30_000;
      while (!(await searchLinksReady(recording().db))) {
        if (Date.now() > deadline) throw new Error('the job did not start over and mark the backfill done');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await stop();
    }
    const warned = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 'warn');
    expect(warned).to.have.length(1);
    expect(warned[0]).to.include({ missing: 1, msg: 'card search links: cards the backfill went past had no links; the backfill starts over' });
    expect(lines.join('\n')).to.not.include(key);
    await expectInStep(A);
  });

  it('lets one instance link and prune at a time: another finds the state row taken and stops at once, and two jobs at once link each card once', async function () {
    if (embedded) this.skip();
    const db = services.db;
    await unlinkAll(true);
    // A value no card holds, for a pruning that must not run while another instance holds the state row.
    await orphanValue(A, 'held charlie');
    const holder = await db.pool.connect();
    let failed = true;
    try {
      await holder.query('BEGIN');
      expect((await holder.query('SELECT linked, done, busy, missing FROM card_search_backfill_batch(100)')).rows[0]).to.deep.equal({ linked: 100, done: false, busy: false, missing: 0 });
      // Neither waits for the batch held open: the backfill answers busy, the pruning does nothing.
      expect(await backfillSearchLinks(db, { batch: 100 })).to.deep.equal({ linked: 0, done: false, busy: true, missing: 0 });
      expect(await pruneSearchTerms(db)).to.deep.equal({ deleted: 0, raced: 0 });
      expect(await termsOf(A, 'held charlie')).to.deep.equal([2]);
      await holder.query('COMMIT');
      failed = false;
    } finally {
      holder.release(failed);
    }
    // Two instances' backfills at once: each card is linked by exactly one batch.
    const cards = await count('SELECT 1 FROM cards');
    const both = await Promise.all([backfillSearchLinks(db, { batch: 50 }), backfillSearchLinks(db, { batch: 50 })]);
    const rest = await backfillSearchLinks(db, { batch: 50 });
    expect(rest.done).to.equal(true);
    expect(100 + both[0].linked + both[1].linked + rest.linked).to.equal(cards);
    expect(both.some((o) => o.busy) || both.some((o) => o.linked === 0), 'one of the two stopped').to.equal(true);
    await expectInStep(A);
    await expectInStep(B);
  });

  it('stops its job between batches, runs at most its batches per pass, and prunes only after the backfill', async function () {
    const db = services.db;
    await unlinkAll(true);
    const log = createLogger({ level: 'silent' });
    const cursor = async () => (await db.query<{ linked_through: string | null }>('SELECT linked_through FROM card_search_backfill')).rows[0].linked_through;
    const third = (await db.query<{ card_key: string }>('SELECT card_key FROM cards ORDER BY card_key LIMIT 1 OFFSET 149')).rows[0].card_key;
    // A pass of three batches of 50, the next pass an hour away: the cursor stops at the 150th card.
    const stop = startSearchLinks(db, log, { intervalMs: 3_600_000, pruneEveryMs: 0, batch: 50, batchesPerPass: 3, pauseMs: 1 });
    const deadline = Date.now() + 30_000;
    while ((await cursor()) !== third) {
      if (Date.now() > deadline) throw new Error('the first pass did not link its three batches');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await stop();
    expect(await cursor()).to.equal(third);
    expect(await searchLinksReady(recording().db)).to.equal(false);
    // Stopped in the middle of a pass: the pass ends after its current batch, and stop() waits for it.
    const again = startSearchLinks(db, log, { intervalMs: 3_600_000, pruneEveryMs: 0, batch: 10, pauseMs: 1 });
    while ((await cursor()) === third) {
      if (Date.now() > deadline) throw new Error('the second pass did not start');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await again();
    const where = await cursor();
    if (!embedded) {
      // No batch runs any more: the state row is free.
      expect((await db.query('SELECT 1 FROM card_search_backfill FOR UPDATE NOWAIT')).rowCount).to.equal(1);
    }
    expect(where).to.not.equal(null);
    expect((await db.query<{ done: boolean }>('SELECT done_at IS NOT NULL AS done FROM card_search_backfill')).rows[0].done).to.equal(false);
    expect(await cursor()).to.equal(where);
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    await expectInStep(A);
  });

  it('writes and finds a card whose embossed name from the issuer is longer than a value the links hold (256 characters)', async function () {
    const db = services.db;
    expect((await backfillSearchLinks(db)).done).to.equal(true);
    const [model] = await someKeys(A, 'true', 1);
    // 3,609 characters that do not compress (a repeated pattern would, and fit the index): over the btree's 2,704 bytes.
    const name = 'LONGNAME ' + crypto.randomBytes(1800).toString('hex').toUpperCase();
    await db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, embossed_name, nickname, created_at)
       SELECT card_key || 'L', partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, $2, nickname, now() FROM cards WHERE card_key = $1`,
      [model, name]
    );
    await db.query(`UPDATE cards SET embossed_name = $2 || 'X' WHERE card_key = $1`, [model, name]);
    await expectInStep(A);
    const links = { links: true, walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX };
    const found = await searchCards(db, { partnerId: A, search: name.slice(0, 30).toLowerCase() }, { page: 1, limit: 20 }, links);
    expect(found.items.map((c) => c.cardKey).sort()).to.deep.equal([model, `${model}L`].sort());
    await db.query('DELETE FROM cards WHERE card_key = $1', [`${model}L`]);
    await db.query(`UPDATE cards SET embossed_name = 'ADA.LOVELACE' WHERE card_key = $1`, [model]);
  });
});
