import type { Queryable } from '../db/database';
import type { CardStatus } from './card-status';

/**
 * The partner's cards by status and type (`card_counts`, migration 026): kept by triggers on
 * `cards` in the transaction of each card write, so a count read from it is exact, and its cost is
 * that of at most 9 statuses × 2 types × the slots the partner's concurrent writes took, whatever
 * the number of cards. It knows nothing of searches (docs/card-search.md, "Total").
 */

/** What a counter can count: the partner's cards, narrowed by status and type. */
export interface CardCountFilter {
  partnerId: string;
  status?: CardStatus;
  type?: 'virtual' | 'physical';
}

/**
 * The count of the partner's cards of the status and type asked (either or both may be absent):
 * the sum of `card_counts`' slots. Answers `{ n }` (a bigint, as text).
 *
 * @example cardCounterQuery({ partnerId, status: 'ACTIVE' }).text
 * // SELECT coalesce(sum(cards), 0)::bigint AS n FROM card_counts WHERE partner_id = $1 AND status = $2
 */
export function cardCounterQuery(filter: CardCountFilter): { text: string; values: unknown[] } {
  const values: unknown[] = [filter.partnerId];
  const where = ['partner_id = $1'];
  if (filter.status !== undefined) {
    values.push(filter.status);
    where.push(`status = $${values.length}`);
  }
  if (filter.type !== undefined) {
    values.push(filter.type);
    where.push(`type = $${values.length}`);
  }
  return { text: `SELECT coalesce(sum(cards), 0)::bigint AS n FROM card_counts WHERE ${where.join(' AND ')}`, values };
}

/** How many cards the partner has of the status and type asked (exact, from `card_counts`). */
export async function countCards(db: Queryable, filter: CardCountFilter): Promise<number> {
  const query = cardCounterQuery(filter);
  return Number((await db.query<{ n: string }>(query.text, query.values)).rows[0].n);
}
