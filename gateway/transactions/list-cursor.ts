import crypto from 'node:crypto';
import type { Queryable } from '../db/database';
import type { TransactionFilters, TransactionPosition } from './projection';

/**
 * Cursors of the partner-wide transaction search (docs/transactions.md, "Paging"): the position of
 * a page's last transaction (its `createdAt` at microsecond precision and its id), bound by an
 * HMAC-SHA256 to the partner and the filters it was made for. A cursor that was changed, or that is
 * used by another partner or with other filters, does not verify (400), so a page never silently
 * answers for a search other than the one it continues. The key is made once per database (table
 * `gateway_keys`) and shared by every instance; it never leaves the gateway.
 */

/** What a cursor looks like (the query schema's pattern). */
export const TRANSACTION_CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,200}\\.[A-Za-z0-9_-]{22}$';

const KEY_NAME = 'transaction-cursor';
const keys = new WeakMap<object, Promise<Buffer>>();

/** The database's cursor key, made on first use (every instance reads the same one). */
export function cursorKey(db: Queryable): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    key = (async () => {
      await db.query('INSERT INTO gateway_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [KEY_NAME, crypto.randomBytes(32)]);
      const rows = await db.query<{ key: Buffer | Uint8Array }>('SELECT key FROM gateway_keys WHERE name = $1', [KEY_NAME]);
      return Buffer.from(rows.rows[0].key);
    })();
    key.catch(() => keys.delete(db));
    keys.set(db, key);
  }
  return key;
}

/** The filters as one canonical string (an absent filter and an empty one differ from any value). */
function scope(partnerId: string, filters: TransactionFilters): string {
  return JSON.stringify([partnerId, filters.cardKey ?? null, filters.individualId ?? null, filters.status ?? null, filters.type ?? null, filters.from ?? null, filters.to ?? null]);
}

function mac(key: Buffer, scopeText: string, payload: string): string {
  return crypto.createHmac('sha256', key).update(scopeText).update('\n').update(payload).digest().subarray(0, 16).toString('base64url');
}

/** The cursor of the page after `position`, for this partner and these filters. */
export function encodeTransactionCursor(key: Buffer, partnerId: string, filters: TransactionFilters, position: TransactionPosition): string {
  const payload = Buffer.from(JSON.stringify([position.createdAt, position.id]), 'utf8').toString('base64url');
  return `${payload}.${mac(key, scope(partnerId, filters), payload)}`;
}

/** The position a cursor stands for, or undefined when it was not made by this gateway for this partner and these filters. */
export function decodeTransactionCursor(key: Buffer, partnerId: string, filters: TransactionFilters, cursor: string): TransactionPosition | undefined {
  const dot = cursor.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = cursor.slice(0, dot);
  const expected = Buffer.from(mac(key, scope(partnerId, filters), payload));
  const given = Buffer.from(cursor.slice(dot + 1));
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(createdAt))) return undefined;
    return { createdAt, id };
  } catch {
    return undefined;
  }
}
