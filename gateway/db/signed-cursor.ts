import crypto from 'node:crypto';
import type { Queryable } from './database';
import { gatewayKey } from './gateway-keys';

/**
 * Cursors of the lists paged by position, newest first (`GET /transactions`, `GET /tokens`): the
 * position of a page's last item (its `createdAt` at microsecond precision and its id), bound by an
 * HMAC-SHA256 to a scope: the list it belongs to, the partner and the filters it was made for. A
 * cursor that was changed, or that is used by another partner, with other filters or on another
 * list, does not verify (400), so a page never silently answers for a search other than the one it
 * continues. The key is made once per database (table `gateway_keys`) and shared by every instance;
 * it never leaves the gateway.
 */

/** What a cursor looks like (the query schemas' pattern): the payload, a dot, 16 bytes of MAC. */
export const SIGNED_CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,200}\\.[A-Za-z0-9_-]{22}$';

/** Where a page starts: after the item at (createdAt, id), newest first. */
export interface ListPosition {
  createdAt: string;
  id: string;
}

// The transactions' name of the key, kept so that their cursors given before the key was shared still verify.
const KEY_NAME = 'transaction-cursor';

/** The database's cursor key, made on first use (every instance reads the same one). */
export function signedCursorKey(db: Queryable): Promise<Buffer> {
  return gatewayKey(db, KEY_NAME);
}

/**
 * The MAC of a payload in a scope. The scope is one canonical JSON array: each list writes its own
 * (a list other than the transactions' starts it with its kind, `"tokens"`), in which an absent
 * filter (`null`) differs from any value.
 */
function mac(key: Buffer, scope: readonly unknown[], payload: string): string {
  return crypto.createHmac('sha256', key).update(JSON.stringify(scope)).update('\n').update(payload).digest().subarray(0, 16).toString('base64url');
}

/** The cursor of the page after `position`, in `scope`. */
export function encodeSignedCursor(key: Buffer, scope: readonly unknown[], position: ListPosition): string {
  const payload = Buffer.from(JSON.stringify([position.createdAt, position.id]), 'utf8').toString('base64url');
  return `${payload}.${mac(key, scope, payload)}`;
}

/** The position a cursor stands for, or undefined when it was not made by this gateway in this scope. */
export function decodeSignedCursor(key: Buffer, scope: readonly unknown[], cursor: string): ListPosition | undefined {
  const dot = cursor.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = cursor.slice(0, dot);
  const expected = Buffer.from(mac(key, scope, payload));
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
