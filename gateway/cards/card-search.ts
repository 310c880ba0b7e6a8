import type { Queryable } from '../db/database';
import { offsetOf, type PageRequest } from '../db/paging';
import type { Card, CardRow } from './card-store';
import type { CardStatus } from './card-status';

/**
 * The partner-wide card list (spec 4.3): filters, the query builder, the bounded count and the
 * choice of plan. Index design, measurements and the decisions: docs/card-search.md.
 */

/**
 * `total` is counted exactly up to this many cards; above it the answer says `total: 10000` and
 * sets `X-Total-Capped: true`. It is also the result window: a page cannot start past it while
 * more cards match (a list of a million cards is narrowed with status, type or search, never paged
 * through).
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
 * is full, or `sort-all` (fetch every match through the trigram index, then sort).
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
 * may then come back short although more cards match.
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

/** How many of the partner's `budget` newest cards (of the status and type asked) match the search. */
export function cardNewestMatchCountQuery(filter: CardListFilter, budget: number): SqlQuery {
  const { base, search, values } = conditionsOf(filter, 'strpos');
  return {
    text: `SELECT count(*)::int AS n FROM (SELECT search_text, card_mask, nickname, embossed_name FROM cards WHERE ${base.join(' AND ')} ${ORDER} LIMIT $${values.length + 1}) AS newest WHERE ${search.join(' AND ')}`,
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
  /** Matching cards, exact up to RESULT_WINDOW; RESULT_WINDOW when capped. */
  total: number;
  /** True when more than RESULT_WINDOW cards match (then `total` is a lower bound). */
  totalCapped: boolean;
  /** False when the page starts past the result window while more cards match than it holds. */
  withinWindow: boolean;
  items: CardSummary[];
}

async function readPage(db: Queryable, query: SqlQuery): Promise<CardSummary[]> {
  return (await db.query<SummaryRow>(query.text, query.values)).rows.map(toCardSummary);
}

async function countOf(db: Queryable, query: SqlQuery): Promise<number> {
  return (await db.query<{ n: number }>(query.text, query.values)).rows[0].n;
}

const countMatching = (db: Queryable, filter: CardListFilter) => countOf(db, cardCountQuery(filter));
const countNewestMatching = (db: Queryable, filter: CardListFilter, budget: number) => countOf(db, cardNewestMatchCountQuery(filter, budget));

function result(matching: number, rows: number, items: CardSummary[]): CardSearchResult {
  const totalCapped = matching > RESULT_WINDOW;
  // Past the window with an exact total, the page is simply past the end (empty, like any list).
  return { total: Math.min(matching, RESULT_WINDOW), totalCapped, withinWindow: rows > 0 || !totalCapped, items };
}

/**
 * A page of the partner's cards matching `filter`, newest first, and the bounded total: one query
 * at a time, each bounded (docs/card-search.md). The planner's LIKE estimates are never bet on: a
 * rare search estimated common would otherwise walk a million cards for one page, and a common one
 * estimated rare would read and sort tens of thousands.
 *
 * - A search the trigram index serves: the bounded count first (through the index); no page query
 *   when the page starts past the matches; a few matches (SORT_ALL_UP_TO) are read and sorted;
 *   otherwise a walk of the WALK_BUDGET newest cards. When that does not complete the page (a deep
 *   page), over RESULT_WINDOW matches a longer walk (up to WALK_MAX) if the density of matches
 *   among the newest cards says it reaches the page, else every match is read and sorted.
 * - No search, or one the index cannot serve: the page first, walking the newest cards; a short
 *   page is the last one and gives the total, else the bounded count follows.
 */
export async function searchCards(
  db: Queryable,
  filter: CardListFilter,
  page: PageRequest,
  tuning: SearchTuning = { walkBudget: WALK_BUDGET, sortAllUpTo: SORT_ALL_UP_TO, walkMax: WALK_MAX }
): Promise<CardSearchResult> {
  const { offset, rows } = windowOf(page);
  if (filter.search !== undefined && usesTrigramIndex(filter.search)) {
    const matching = await countMatching(db, filter);
    if (rows === 0 || offset >= matching) return result(matching, rows, []);
    const expected = Math.min(rows, matching - offset);
    if (matching > tuning.sortAllUpTo) {
      const walked = await readPage(db, cardPageQuery(filter, offset, rows, 'walk', tuning.walkBudget));
      if (walked.length === expected) return result(matching, rows, walked);
      if (matching > RESULT_WINDOW) {
        const seen = walked.length > 0 ? offset + walked.length : await countNewestMatching(db, filter, tuning.walkBudget);
        if (seen > 0 && ((offset + rows) * tuning.walkBudget) / seen <= tuning.walkMax) {
          const further = await readPage(db, cardPageQuery(filter, offset, rows, 'walk', tuning.walkMax));
          if (further.length === expected) return result(matching, rows, further);
        }
      }
    }
    return result(matching, rows, await readPage(db, cardPageQuery(filter, offset, rows, 'sort-all')));
  }
  if (rows > 0) {
    const items = await readPage(db, cardPageQuery(filter, offset, rows, 'walk'));
    if (items.length < rows && (items.length > 0 || offset === 0)) return result(offset + items.length, rows, items);
    return result(await countMatching(db, filter), rows, items);
  }
  return result(await countMatching(db, filter), rows, []);
}
