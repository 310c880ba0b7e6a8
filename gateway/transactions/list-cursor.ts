import { decodeSignedCursor, encodeSignedCursor, SIGNED_CURSOR_PATTERN, signedCursorKey } from '../db/signed-cursor';
import type { TransactionFilters, TransactionPosition } from './projection';

/**
 * Cursors of the partner-wide transaction search (docs/transactions.md, "Paging"): the signed
 * cursors of gateway/db/signed-cursor.ts, scoped to the partner and the filters. The scope is
 * the array it always was, so that a cursor given before `GET /tokens` shared the mechanism still
 * verifies.
 */

/** What a cursor looks like (the query schema's pattern). */
export const TRANSACTION_CURSOR_PATTERN = SIGNED_CURSOR_PATTERN;

/** The database's cursor key, made on first use (every instance reads the same one). */
export const cursorKey = signedCursorKey;

/** The filters as one canonical array (an absent filter and an empty one differ from any value). */
function scope(partnerId: string, filters: TransactionFilters): unknown[] {
  return [partnerId, filters.cardKey ?? null, filters.individualId ?? null, filters.status ?? null, filters.type ?? null, filters.from ?? null, filters.to ?? null];
}

/** The cursor of the page after `position`, for this partner and these filters. */
export function encodeTransactionCursor(key: Buffer, partnerId: string, filters: TransactionFilters, position: TransactionPosition): string {
  return encodeSignedCursor(key, scope(partnerId, filters), position);
}

/** The position a cursor stands for, or undefined when it was not made by this gateway for this partner and these filters. */
export function decodeTransactionCursor(key: Buffer, partnerId: string, filters: TransactionFilters, cursor: string): TransactionPosition | undefined {
  return decodeSignedCursor(key, scope(partnerId, filters), cursor);
}
