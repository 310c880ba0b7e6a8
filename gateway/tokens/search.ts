import type { Queryable } from '../db/database';
import { decodeSignedCursor, encodeSignedCursor, type ListPosition } from '../db/signed-cursor';
import type { Token, TokenStatus, WalletProvider } from '../shapes/token';
import { TOKEN_COLUMNS, toToken, type TokenRow } from './store';

/**
 * `GET /tokens` (docs/tokens.md, "Reading tokens"): the partner's network tokens, newest first by
 * `createdAt`, ties by `_id`, filtered by card, status and wallet (combined with AND), paged by a
 * signed cursor (gateway/db/signed-cursor.ts) in the scope `["tokens", partner, filters]`, so that
 * a cursor of another partner, of other filters or of the transactions' search never verifies.
 */

/** The filters of the search (all optional). */
export interface TokenFilters {
  cardKey?: string;
  status?: TokenStatus;
  walletProvider?: WalletProvider;
}

/** Where a page starts: after the token at (createdAt, id). */
export type TokenPosition = ListPosition;

/** The scope a cursor is signed in: the list's kind, the partner, and every filter (absent: null). */
function scope(partnerId: string, filters: TokenFilters): unknown[] {
  return ['tokens', partnerId, filters.cardKey ?? null, filters.status ?? null, filters.walletProvider ?? null];
}

/** The cursor of the page after `position`, for this partner and these filters. */
export function encodeTokenCursor(key: Buffer, partnerId: string, filters: TokenFilters, position: TokenPosition): string {
  return encodeSignedCursor(key, scope(partnerId, filters), position);
}

/** The position a cursor stands for, or undefined when this gateway did not make it for this partner and these filters. */
export function decodeTokenCursor(key: Buffer, partnerId: string, filters: TokenFilters, cursor: string): TokenPosition | undefined {
  return decodeSignedCursor(key, scope(partnerId, filters), cursor);
}

/**
 * One page of the partner's tokens, newest first (ties by id, descending), after `after`: `limit`
 * of them, and the position of the last when an older page exists. Only the conditions asked for
 * are written, so each shape walks one index of migration 028 in its order (partner, [card |
 * status | wallet | status and wallet,] created_at DESC, id DESC) and stops after `limit + 1` rows;
 * the position is a row comparison on the same columns, so tokens made meanwhile never shift a page.
 */
export async function searchTokens(
  db: Queryable,
  partnerId: string,
  filters: TokenFilters,
  page: { limit: number; after?: TokenPosition }
): Promise<{ data: Token[]; last?: TokenPosition }> {
  const params: unknown[] = [partnerId, page.limit + 1];
  let where = 'partner_id = $1';
  if (filters.cardKey !== undefined) where += ` AND card_key = $${params.push(filters.cardKey)}`;
  if (filters.status !== undefined) where += ` AND status = $${params.push(filters.status)}`;
  if (filters.walletProvider !== undefined) where += ` AND wallet_provider = $${params.push(filters.walletProvider)}`;
  if (page.after !== undefined) where += ` AND (created_at, id) < ($${params.push(page.after.createdAt)}::timestamptz, $${params.push(page.after.id)})`;
  // The position is read at the database's precision (microseconds): a Date would round it to milliseconds.
  const rows = await db.query<TokenRow & { position_at: string }>(
    `SELECT ${TOKEN_COLUMNS}, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position_at
       FROM tokens WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $2`,
    params
  );
  const items = rows.rows.slice(0, page.limit);
  const lastRow = items[items.length - 1];
  return { data: items.map(toToken), ...(rows.rows.length > page.limit && lastRow ? { last: { createdAt: lastRow.position_at, id: lastRow.id } } : {}) };
}
