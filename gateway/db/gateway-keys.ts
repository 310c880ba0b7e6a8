import crypto from 'node:crypto';
import type { Queryable } from './database';

const keys = new WeakMap<object, Map<string, Promise<Buffer>>>();

/**
 * The database's 32-byte key named `name` (table `gateway_keys`), made on first use by whichever
 * instance comes first and read by every other, so that all instances sign and check with the same
 * key. Read once per process and database; a failed read is tried again at the next call.
 */
export function gatewayKey(db: Queryable, name: string): Promise<Buffer> {
  let named = keys.get(db);
  if (!named) {
    named = new Map();
    keys.set(db, named);
  }
  let key = named.get(name);
  if (!key) {
    key = (async () => {
      await db.query('INSERT INTO gateway_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, crypto.randomBytes(32)]);
      const rows = await db.query<{ key: Buffer | Uint8Array }>('SELECT key FROM gateway_keys WHERE name = $1', [name]);
      return Buffer.from(rows.rows[0].key);
    })();
    key.catch(() => named.delete(name));
    named.set(name, key);
  }
  return key;
}
