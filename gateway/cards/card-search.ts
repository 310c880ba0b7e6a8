import type { Queryable } from '../db/database';
import { offsetOf, type PageRequest } from '../db/paging';
import type { Card, CardRow } from './card-store';
import type { CardStatus } from './card-status';
import { cardCounterQuery, countCards } from './card-counts';

/**
 * The partner-wide card list (spec 4.3): filters, the query builder, the bounded count and the
 * choice of plan. Index design, measurements and the decisions: docs/card-search.md.
 */

/**
 * The result window: only the first 10,000 matching cards can be paged through, and a page cannot
 * start past them while more cards match (a list of a million cards is narrowed with status, type
 * or search, never paged through). It is also the cap of a search's count: a search's `total` is
 * exact up to this many cards; above it the answer says `total: 10000` and sets
 * `X-Total-Capped: true`. Without a search `total` is exact at any size (card_counts).
 */
export const RESULT_WINDOW = 10_000;

/**
 * Separates the fields in `cards.search_text` (migration 002): a search that contains it could
 * match across two fields there, so then each field is checked on its own as well.
 */
export const SEARCH_FIELD_SEPARATOR = '\u001f';

/** Filters of the list (the query of `GET /cards`, already validated). */
export interface CardListFilter {
  partnerId: string;
  status?: CardStatus;
  type?: 'virtual' | 'physical';
  /** Case-insensitive substring of cardMask, nickname or embossedName, taken literally. */
  search?: string;
}

/** The card summary of the list: the full card (2.3) without productCode and holderClientCode. */
export type CardSummary = Pick<
  Card,
  'cardKey' | 'cardMask' | 'type' | 'status' | 'statusCode' | 'currency' | 'ownerType' | 'ownerId' | 'nickname' | 'embossedName' | 'expDate' | 'createdAt'
>;

/** A SQL text with its positional parameters. */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * How a search is written in SQL: `like` (`search_text LIKE '%…%'`, which the trigram index
 * serves) or `strpos` (`strpos(search_text, …) > 0`, the same test that no index serves, so that
 * PostgreSQL walks the partner's cards newest first).
 */
export type SearchForm = 'like' | 'strpos';

/**
 * How a page is read: `walk` the partner's cards newest first through a btree index until the page
 * is full, or `sort-all` (fetch every match through the cards' trigram index, then sort: the path
 * before the search links are backfilled, see searchCards).
 */
export type PageForm = 'walk' | 'sort-all';

type SummaryRow = Pick<
  CardRow,
  'card_key' | 'card_mask' | 'type' | 'status' | 'status_code' | 'currency' | 'owner_type' | 'owner_id' | 'nickname' | 'embossed_name' | 'exp_date' | 'created_at'
>;

const SUMMARY_COLUMNS = 'card_key, card_mask, type, status, status_code, currency, owner_type, owner_id, nickname, embossed_name, exp_date, created_at';

// The order of cards_partner_created_idx (001) and of the status and type indexes (002).
const ORDER = 'ORDER BY created_at DESC, card_key';

/**
 * Escapes `\`, `%` and `_` so that a LIKE pattern matches the text literally (backslash is
 * PostgreSQL's default LIKE escape character).
 *
 * @example escapeLike('50%_off') // '50\\%\\_off'
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The LIKE pattern of a search: the escaped text anywhere in the value. */
export function searchPattern(search: string): string {
  return `%${escapeLike(search)}%`;
}

/**
 * Whether the trigram index can serve a search: pg_trgm takes trigrams from runs of letters and
 * digits only, and for a pattern without any PostgreSQL reads the whole GIN index (it
 * underestimates that: about a second at a million cards). Three ASCII letters or digits in a row
 * are a safe test.
 */
export function usesTrigramIndex(search: string): boolean {
  return /[A-Za-z0-9]{3}/.test(search);
}

interface Conditions {
  /** partner, status, type: what the btree indexes serve. */
  base: string[];
  /** The search, if any. */
  search: string[];
  values: unknown[];
}

function conditionsOf(filter: CardListFilter, form: SearchForm): Conditions {
  const values: unknown[] = [filter.partnerId];
  const base = ['partner_id = $1'];
  const search: string[] = [];
  if (filter.status !== undefined) {
    values.push(filter.status);
    base.push(`status = $${values.length}`);
  }
  if (filter.type !== undefined) {
    values.push(filter.type);
    base.push(`type = $${values.length}`);
  }
  if (filter.search !== undefined) {
    const like = form === 'like' && usesTrigramIndex(filter.search);
    values.push(like ? searchPattern(filter.search) : filter.search);
    const text = `lower($${values.length})`;
    const matches = (column: string) => (like ? `${column} LIKE ${text}` : `strpos(${column}, ${text}) > 0`);
    search.push(matches('search_text'));
    if (filter.search.includes(SEARCH_FIELD_SEPARATOR)) {
      search.push(`(${['card_mask', 'nickname', 'embossed_name'].map((c) => matches(`lower(${c})`)).join(' OR ')})`);
    }
  }
  return { base, search, values };
}

/**
 * The WHERE clause of a filter and its parameters, numbered from `$1`. The search works on
 * `search_text`, the lower-cased mask, nickname and embossed name that PostgreSQL keeps in a
 * generated column, with the search lower-cased by the same `lower()`.
 *
 * @param form how the search is written; a search the trigram index cannot serve is always `strpos`.
 */
export function cardListWhere(filter: CardListFilter, form: SearchForm = 'like'): SqlQuery {
  const { base, search, values } = conditionsOf(filter, form);
  return { text: [...base, ...search].join(' AND '), values };
}

/**
 * The rows of one page: `rows` cards from `offset`, newest first, read the `form` way. A `walk` with
 * a `budget` looks at the partner's `budget` newest cards (of the status and type asked) only, and
 * may then come back short although more cards match (a search's every match is then read from the
 * search links, cardTermPageQuery, or before their backfill with `sort-all`).
 */
export function cardPageQuery(filter: CardListFilter, offset: number, rows: number, form: PageForm = 'walk', budget?: number): SqlQuery {
  if (form === 'sort-all') {
    const where = cardListWhere(filter, 'like');
    const n = where.values.length;
    // MATERIALIZED, and no LIMIT inside: PostgreSQL fetches the matches through the trigram index
    // and cannot bet on filling the page early by walking the newest cards.
    return {
      text: `WITH matching AS MATERIALIZED (SELECT ${SUMMARY_COLUMNS} FROM cards WHERE ${where.text}) SELECT * FROM matching ${ORDER} LIMIT $${n + 1} OFFSET $${n + 2}`,
      values: [...where.values, rows, offset],
    };
  }
  const { base, search, values } = conditionsOf(filter, 'strpos');
  const n = values.length;
  const limit = `LIMIT $${n + 1} OFFSET $${n + 2}`;
  if (budget === undefined || search.length === 0) {
    return { text: `SELECT ${SUMMARY_COLUMNS} FROM cards WHERE ${[...base, ...search].join(' AND ')} ${ORDER} ${limit}`, values: [...values, rows, offset] };
  }
  // The search is tested outside the LIMIT of the newest cards, so it cannot be pushed down.
  return {
    text:
      `SELECT ${SUMMARY_COLUMNS} FROM (SELECT ${SUMMARY_COLUMNS}, search_text FROM cards WHERE ${base.join(' AND ')} ${ORDER} LIMIT $${n + 3}) AS newest ` +
      `WHERE ${search.join(' AND ')} ${ORDER} ${limit}`,
    values: [...values, rows, offset, budget],
  };
}

/**
 * A page of the list without a search and, in the same statement, the exact count of the status and
 * type asked (card_counts, an InitPlan run once) in the column `total` of every row: one round trip
 * and one snapshot for both, whatever the partner's size. A page past the last card has no row, and
 * then no total (countCards reads it).
 */
export function cardCountedPageQuery(filter: Omit<CardListFilter, 'search'>, offset: number, rows: number): SqlQuery {
  const { base, values } = conditionsOf({ ...filter, search: undefined }, 'strpos');
  // The counter's parameters are the page's first ones, in the same order (partner, status, type).
  const counter = cardCounterQuery(filter);
  const n = values.length;
  return {
    text: `SELECT ${SUMMARY_COLUMNS}, (${counter.text}) AS total FROM cards WHERE ${base.join(' AND ')} ${ORDER} LIMIT $${n + 1} OFFSET $${n + 2}`,
    values: [...values, rows, offset],
  };
}

/**
 * The count of a filter, bounded: it stops after `cap + 1` matching cards, so that its cost does
 * not grow with the partner's card count. A result above `cap` means "more than cap".
 */
export function cardCountQuery(filter: CardListFilter, cap = RESULT_WINDOW): SqlQuery {
  const where = cardListWhere(filter, 'like');
  return {
    text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM cards WHERE ${where.text} LIMIT $${where.values.length + 1}) AS matching`,
    values: [...where.values, cap + 1],
  };
}

/** The searched fields as numbered in `card_search_links.field` (migration 022). */
export const SEARCH_FIELDS = { mask: 1, nickname: 2, embossedName: 3 } as const;

/**
 * The search's matches from the search terms (migration 022): the partner's distinct lower-cased
 * values of the searched fields (each with its field) that contain the search
 * (`card_search_terms`, through the trigram index of the field, or a `strpos` scan of the
 * partner's values when the search has no trigram), then each value's links to the partner's
 * cards (`card_search_links`, index-only, field, status and type in the index). One row
 * per matching field of a card. The OFFSET 0 keeps the links a per-value index lookup (PostgreSQL
 * cannot turn it into a join that reads every link of the partner). `field` names the parameter
 * (1, 2, 3) of a field to read alone.
 */
function termMatches(filter: CardListFilter, columns: string, field?: string): SqlQuery & { termMatch: (alias: string) => string; statusType: string[] } {
  const values: unknown[] = [filter.partnerId];
  const search = filter.search ?? '';
  const like = usesTrigramIndex(search);
  values.push(like ? searchPattern(search) : search);
  const termMatch = (alias: string) => (like ? `${alias}.term LIKE lower($2)` : `strpos(${alias}.term, lower($2)) > 0`);
  const statusType: string[] = [];
  if (filter.status !== undefined) {
    values.push(filter.status);
    statusType.push(`l.status = $${values.length}`);
  }
  if (filter.type !== undefined) {
    values.push(filter.type);
    statusType.push(`l.type = $${values.length}`);
  }
  const links = ['l.partner_id = $1', 'l.term = t.term', 'l.field = t.field', ...statusType];
  return {
    text: `card_search_terms t CROSS JOIN LATERAL (SELECT ${columns} FROM card_search_links l WHERE ${links.join(' AND ')} OFFSET 0) AS l WHERE t.partner_id = $1 AND ${termMatch('t')}${field === undefined ? '' : ` AND t.field = ${field}`}`,
    values,
    termMatch,
    statusType,
  };
}

/**
 * Over this many matching values in a field, cardTermCountQuery reads the range of their links
 * instead of each value's: 500 descents of about 4 pages cost more than a range of 25,000 links
 * (about 330 pages). Below, the descents win, more so with a selective status or type, which the
 * descents find in the index and the range tests link by link (`travel&status=FRAUD`, 101 values:
 * 17,000 links in its range for 126 matches).
 */
export const RANGE_FROM_VALUES = 500;

/** The most links cardTermCountQuery reads in a range (about 330 index pages) before counting value by value. */
export const RANGE_LINKS = 25_000;

/**
 * The bounded count of a search per searched field, from the search terms: for each field, how
 * many of the partner's cards hold a matching value in it, reading at most `cap + 1` links
 * (index-only). A card is linked once per field, so within a field the count is of distinct cards;
 * a card matching in two fields is in two counts (cardTermDistinctCountQuery then). Answers
 * `{ mask, nickname, embossed_name }`.
 *
 * The links of a field are read one of two ways. Up to RANGE_FROM_VALUES matching values, value by
 * value (a descent of the index per value). More (`4921`: 10,001 masks; `5355 70`: 8,500), as one
 * range of the links index from the first matching value to the last, testing the search, status
 * and type on each link: matching values that sit next to each other (a BIN, a nickname with
 * numbers) are then read as consecutive index pages instead of 700 descents of about 4 pages. The
 * range is read for at most RANGE_LINKS links; when that finds neither `cap + 1` matches nor the
 * end of the range (many values, few of whose links match: `** ****&status=LOST`), the field
 * answers -1, "not counted": 20,000 descents would cost more than the count on the cards table,
 * which searchCards then runs (cardCountQuery). Otherwise the count is of exactly the matching
 * links.
 */
export function cardTermCountQuery(filter: CardListFilter, cap = RESULT_WINDOW, rangeLinks = RANGE_LINKS): SqlQuery {
  const { values, termMatch: matches, statusType } = termMatches(filter, '1');
  const n = values.length;
  const limit = `$${n + 1}`;
  const like = usesTrigramIndex(filter.search ?? '');
  const linkFilters = statusType.map((c) => ` AND ${c}`).join('');
  // A search without a trigram scans the values once (strpos), not once per field.
  const scanned = like ? '' : 'WITH terms AS MATERIALIZED (SELECT t.term, t.field FROM card_search_terms t WHERE t.partner_id = $1 AND strpos(t.term, lower($2)) > 0) ';
  const valuesOf = (field: number) => (like ? `card_search_terms t WHERE t.partner_id = $1 AND ${matches('t')} AND t.field = ${field}` : `terms t WHERE t.field = ${field}`);
  const per = (field: number) => {
    const byValue = like
      ? `(SELECT count(*) FROM (SELECT 1 FROM ${termMatches(filter, '1', String(field)).text} LIMIT ${limit}) AS matching)`
      : `(SELECT count(*) FROM (SELECT 1 FROM terms t CROSS JOIN LATERAL (SELECT 1 FROM card_search_links l WHERE l.partner_id = $1 AND l.term = t.term AND l.field = t.field${linkFilters} OFFSET 0) AS l ` +
        `WHERE t.field = ${field} LIMIT ${limit}) AS matching)`;
    // The range's links, at most rangeLinks of them; the count stops at the cap + 1st match. Short
    // of it, the range is read again, without the search, to tell its end from the bound.
    const range = `SELECT l.term, l.field, l.status, l.type FROM card_search_links l WHERE l.partner_id = $1 AND l.term >= r.lo AND l.term <= r.hi LIMIT ${rangeLinks}`;
    const hits = `(SELECT count(*) FROM (SELECT 1 FROM (${range}) AS l WHERE l.field = ${field} AND ${matches('l')}${linkFilters} LIMIT ${limit}) AS matching)`;
    const inRange = `(SELECT CASE WHEN q.c = ${limit} OR (SELECT count(*) FROM (${range}) AS l) < ${rangeLinks} THEN q.c ELSE -1 END FROM (SELECT ${hits} AS c OFFSET 0) AS q)`;
    return (
      `(SELECT CASE WHEN r.n = 0 THEN 0 WHEN r.n <= ${RANGE_FROM_VALUES} THEN ${byValue} ELSE ${inRange} END ` +
      `FROM (SELECT min(t.term) AS lo, max(t.term) AS hi, count(*) AS n FROM ${valuesOf(field)}) AS r)::int`
    );
  };
  return {
    text: `${scanned}SELECT ${per(SEARCH_FIELDS.mask)} AS mask, ${per(SEARCH_FIELDS.nickname)} AS nickname, ${per(SEARCH_FIELDS.embossedName)} AS embossed_name`,
    values: [...values, cap + 1],
  };
}

/**
 * The bounded count of the distinct cards of a search that matches in more than one field: it
 * reads at most `3 × (cap + 1)` links. Fewer: every match was read and the count is exact; that
 * many hold at least `cap + 1` distinct cards (three links per card at most). Over `cap` distinct
 * cards, it answers `cap + 1`, "more than cap". Answers `{ n }`.
 */
export function cardTermDistinctCountQuery(filter: CardListFilter, cap = RESULT_WINDOW): SqlQuery {
  const from = termMatches(filter, 'l.card_key');
  const n = from.values.length;
  return {
    text:
      `SELECT CASE WHEN sum(links) = $${n + 1} OR count(*) > $${n + 2} THEN $${n + 2} ELSE count(*) END::int AS n ` +
      `FROM (SELECT card_key, count(*) AS links FROM (SELECT l.card_key FROM ${from.text} LIMIT $${n + 1}) AS matching GROUP BY card_key) AS cards`,
    values: [...from.values, 3 * (cap + 1), cap + 1],
  };
}

/**
 * A page of a search read from the search terms: every match's card key and creation time
 * (index-only), sorted, the page's keys cut from them, then those cards read by key.
 */
export function cardTermPageQuery(filter: CardListFilter, offset: number, rows: number): SqlQuery {
  const from = termMatches(filter, 'l.card_key, l.created_at');
  const n = from.values.length;
  return {
    text:
      `WITH matching AS MATERIALIZED (SELECT DISTINCT l.card_key, l.created_at FROM ${from.text}), ` +
      `page AS MATERIALIZED (SELECT card_key FROM matching ${ORDER} LIMIT $${n + 1} OFFSET $${n + 2}) ` +
      `SELECT ${SUMMARY_COLUMNS} FROM cards WHERE partner_id = $1 AND card_key IN (SELECT card_key FROM page) ${ORDER}`,
    values: [...from.values, rows, offset],
  };
}

/** How many of the partner's `budget` newest cards (of the status and type asked) match the search. */
export function cardNewestMatchCountQuery(filter: CardListFilter, budget: number): SqlQuery {
  const { base, search, values } = conditionsOf(filter, 'strpos');
  return {
    text: `SELECT count(*)::int AS n FROM (SELECT search_text, card_mask, nickname, embossed_name FROM cards WHERE ${base.join(' AND ')} ${ORDER} LIMIT $${values.length + 1}) AS newest WHERE ${search.join(' AND ')}`,
    values: [...values, budget],
  };
}

/**
 * How many of the partner's `budget` newest cards (of the status and type asked) match the search
 * (`n`), and how many cards that walk looked at (`seen`: fewer than `budget` when it reached the
 * last card of the status and type, and then `n` is the exact count).
 */
export function cardNewestWalkCountQuery(filter: CardListFilter, budget: number): SqlQuery {
  const { base, search, values } = conditionsOf(filter, 'strpos');
  return {
    text:
      `SELECT (count(*) FILTER (WHERE ${search.join(' AND ')}))::int AS n, count(*)::int AS seen ` +
      `FROM (SELECT search_text, card_mask, nickname, embossed_name FROM cards WHERE ${base.join(' AND ')} ${ORDER} LIMIT $${values.length + 1}) AS newest`,
    values: [...values, budget],
  };
}

/** The part of a page inside the result window: its offset and how many rows to read (0 past it). */
export function windowOf(page: PageRequest, window = RESULT_WINDOW): { offset: number; rows: number } {
  const offset = offsetOf(page);
  return { offset, rows: Math.max(0, Math.min(page.limit, window - offset)) };
}

/**
 * Newest cards a bounded walk looks at before the page is read by sorting every match instead:
 * about 7 ms of index and heap reads at a million cards (docs/card-search.md).
 */
export const WALK_BUDGET = 20_000;

/**
 * At most this many matches (the bounded count) are read and sorted at once, without trying the
 * walk first: the count just read them, and a walk would rarely fill a page among so few.
 */
export const SORT_ALL_UP_TO = 1_000;

/**
 * The longest walk (cards looked at, about 100 ms at a million cards) taken for a deep page of a
 * search matching more than RESULT_WINDOW cards, when the matches among the newest cards say it
 * reaches the page; past it, sorting every match is the cheaper bet.
 */
export const WALK_MAX = 300_000;

/** The walk and sort thresholds of searchCards (tests lower them to reach every path on few cards). */
export interface SearchTuning {
  walkBudget: number;
  sortAllUpTo: number;
  walkMax: number;
  /** RANGE_LINKS of cardTermCountQuery. */
  rangeLinks?: number;
  /**
   * Whether a search reads the search links: by default once their backfill is marked done
   * (searchLinksReady); tests set it to reach either path.
   */
  links?: boolean;
}

/** Databases (pools) on which the search links' backfill was seen done: it is never undone. */
const linksSeenReady = new WeakMap<Queryable, true>();

/**
 * Whether the search links (migration 022) hold every card: their backfill's done mark
 * (gateway/cards/search-links.ts). Until it is set, searches read the cards table (its own indexes),
 * so answers stay right while old cards are still being linked; the mark is read once
 * per search until then (one row by primary key), and remembered per pool once set.
 */
export async function searchLinksReady(db: Queryable): Promise<boolean> {
  if (linksSeenReady.has(db)) return true;
  const row = (await db.query<{ ready: boolean }>('SELECT done_at IS NOT NULL AS ready FROM card_search_backfill')).rows[0];
  if (row?.ready) linksSeenReady.set(db, true);
  return row?.ready ?? false;
}

/** Maps a row to the card summary. Only listed fields: a PAN or CVV can never slip through. */
export function toCardSummary(row: SummaryRow): CardSummary {
  return {
    cardKey: row.card_key,
    cardMask: row.card_mask,
    type: row.type,
    status: row.status,
    statusCode: row.status_code,
    currency: row.currency,
    ownerType: row.owner_type,
    ownerId: row.owner_id,
    nickname: row.nickname,
    embossedName: row.embossed_name,
    expDate: row.exp_date,
    createdAt: row.created_at.toISOString(),
  };
}

/** One page of the list. */
export interface CardSearchResult {
  /**
   * Matching cards. Without a search, exact (card_counts, read in the statement of the page);
   * with a search, exact up to RESULT_WINDOW, and RESULT_WINDOW when more match (capped).
   */
  total: number;
  /** True when a search matches more than RESULT_WINDOW cards (then `total` is a lower bound). */
  totalCapped: boolean;
  /** False when the page starts past the result window while more cards match than it holds. */
  withinWindow: boolean;
  /**
   * A later page holds cards: the page was read with one card more than it shows. Within the result
   * window only: false on the window's last page whatever follows it, since a page past the window
   * is refused.
   */
  hasMore: boolean;
  items: CardSummary[];
}

async function readPage(db: Queryable, query: SqlQuery): Promise<CardSummary[]> {
  return (await db.query<SummaryRow>(query.text, query.values)).rows.map(toCardSummary);
}

async function countOf(db: Queryable, query: SqlQuery): Promise<number> {
  return (await db.query<{ n: number }>(query.text, query.values)).rows[0].n;
}

const countMatching = (db: Queryable, filter: CardListFilter) => countOf(db, cardCountQuery(filter));
/**
 * The bounded count of a search: per field first; a field over the cap means more than the cap; a
 * field not counted (-1) sends the count to the cards table (through `cards_search_text_trgm_idx`
 * or the btree walks); one field with matches is the count; matches in
 * two or three fields (a card may be in both) are counted again as distinct cards.
 */
async function countSearchMatching(db: Queryable, filter: CardListFilter, walkBudget: number, rangeLinks = RANGE_LINKS): Promise<number> {
  // A search without a trigram (punctuation: `** ****`) may match most of a field's values while
  // few of their links have the status or type asked; the range of links then reads RANGE_LINKS
  // for nothing before the count on the cards. With a status or type, the walk of the newest cards
  // of that status and type comes first, bounded: it counts exactly when it reaches their last card
  // (a rare status) or finds more than the cap (a dense search); otherwise the links count.
  if (filter.search !== undefined && !usesTrigramIndex(filter.search) && (filter.status !== undefined || filter.type !== undefined)) {
    const walk = (await db.query<{ n: number; seen: number }>(...queryArgs(cardNewestWalkCountQuery(filter, walkBudget)))).rows[0];
    if (walk.n > RESULT_WINDOW) return RESULT_WINDOW + 1;
    if (walk.seen < walkBudget) return walk.n;
  }
  const counts = (await db.query<{ mask: number; nickname: number; embossed_name: number }>(...queryArgs(cardTermCountQuery(filter, RESULT_WINDOW, rangeLinks)))).rows[0];
  const perField = [counts.mask, counts.nickname, counts.embossed_name];
  if (perField.some((n) => n > RESULT_WINDOW)) return RESULT_WINDOW + 1;
  // A field of many values, few of whose links match: counted on the cards table.
  if (perField.some((n) => n < 0)) return countMatching(db, filter);
  if (perField.filter((n) => n > 0).length <= 1) return Math.max(...perField);
  return countOf(db, cardTermDistinctCountQuery(filter));
}

const queryArgs = (query: SqlQuery): [string, unknown[]] => [query.text, query.values];
const countNewestMatching = (db: Queryable, filter: CardListFilter, budget: number) => countOf(db, cardNewestMatchCountQuery(filter, budget));

/**
 * The answer of a page with a bounded count (a search): `matching` is exact up to RESULT_WINDOW,
 * RESULT_WINDOW + 1 for "more". `read` holds up to one card past the page (hasMore).
 */
function searched(matching: number, rows: number, read: CardSummary[]): CardSearchResult {
  const totalCapped = matching > RESULT_WINDOW;
  // Past the window with an exact total, the page is simply past the end (empty, like any list).
  return { total: Math.min(matching, RESULT_WINDOW), totalCapped, withinWindow: rows > 0 || !totalCapped, hasMore: read.length > rows, items: read.slice(0, rows) };
}

/** The answer of a page of a list without a search: `total` is exact. `read` as for searched. */
function listed(total: number, rows: number, read: CardSummary[]): CardSearchResult {
  return { total, totalCapped: false, withinWindow: rows > 0 || total <= RESULT_WINDOW, hasMore: read.length > rows, items: read.slice(0, rows) };
}

/**
 * A page of the partner's cards matching `filter`, newest first, its total and whether a later page
 * holds cards: one query at a time, each bounded (docs/card-search.md). Every page is read with one
 * card more than it shows, for `hasMore`, except the result window's last. The planner's LIKE
 * estimates are never bet on: a rare search estimated common would otherwise walk a million cards
 * for one page, and a common one estimated rare would read and sort tens of thousands.
 *
 * - No search: one statement, the page walking the newest cards and the exact count of the status
 *   and type from `card_counts` (cardCountedPageQuery), whatever the partner's size; a page past the
 *   last card reads the count alone.
 * - A search, once the search links are backfilled (searchLinksReady): the bounded count first,
 *   from the search terms (index-only; for a search without a trigram and a status or type, a
 *   bounded walk of the newest cards first, countSearchMatching); no page query when the page starts past the matches; a few
 *   matches (SORT_ALL_UP_TO) are read from the search terms and sorted; otherwise a walk of the
 *   WALK_BUDGET newest cards. When that does not complete the page (a deep page), over
 *   RESULT_WINDOW matches a longer walk (up to WALK_MAX) if the density of matches among the newest
 *   cards says it reaches the page, else every match is read from the search terms and sorted.
 * - Before the backfill's mark, the same steps on the cards table for a search the cards' trigram
 *   index serves (its bounded count, `sort-all` through that index); one
 *   the trigram index cannot serve is walked like no search, with the bounded count on the cards.
 */
export async function searchCards(
  db: Queryable,
  filter: CardListFilter,
  page: PageRequest,
  tuning: SearchTuning = { walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX }
): Promise<CardSearchResult> {
  const { offset, rows } = windowOf(page);
  // The card after the page, when the page ends inside the window: whether a later page holds cards.
  const wanted = rows > 0 && offset + rows < RESULT_WINDOW ? rows + 1 : rows;
  const links = filter.search !== undefined && (tuning.links ?? (await searchLinksReady(db)));
  if (filter.search !== undefined && (links || usesTrigramIndex(filter.search))) {
    const matching = links ? await countSearchMatching(db, filter, tuning.walkBudget, tuning.rangeLinks) : await countMatching(db, filter);
    if (rows === 0 || offset >= matching) return searched(matching, rows, []);
    const expected = Math.min(wanted, matching - offset);
    if (matching > tuning.sortAllUpTo) {
      const walked = await readPage(db, cardPageQuery(filter, offset, wanted, 'walk', tuning.walkBudget));
      if (walked.length === expected) return searched(matching, rows, walked);
      if (matching > RESULT_WINDOW) {
        const seen = walked.length > 0 ? offset + walked.length : await countNewestMatching(db, filter, tuning.walkBudget);
        if (seen > 0 && ((offset + wanted) * tuning.walkBudget) / seen <= tuning.walkMax) {
          const further = await readPage(db, cardPageQuery(filter, offset, wanted, 'walk', tuning.walkMax));
          if (further.length === expected) return searched(matching, rows, further);
        }
      }
    }
    return searched(matching, rows, await readPage(db, links ? cardTermPageQuery(filter, offset, wanted) : cardPageQuery(filter, offset, wanted, 'sort-all')));
  }
  if (filter.search === undefined) {
    if (rows > 0) {
      const counted = await db.query<SummaryRow & { total: string }>(...queryArgs(cardCountedPageQuery(filter, offset, wanted)));
      if (counted.rows.length > 0) return listed(Number(counted.rows[0].total), rows, counted.rows.map(toCardSummary));
    }
    return listed(await countCards(db, filter), rows, []);
  }
  // Before the links' mark, a search without a trigram: its count is the bounded one on the cards.
  if (rows > 0) {
    const read = await readPage(db, cardPageQuery(filter, offset, wanted));
    if (read.length < wanted && (read.length > 0 || offset === 0)) return searched(offset + read.length, rows, read);
    return searched(await countMatching(db, filter), rows, read);
  }
  return searched(await countMatching(db, filter), rows, []);
}
