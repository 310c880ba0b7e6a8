/**
 * The `pg` driver, loaded without its Cloudflare Workers probe loading Node's fetch. pg decides at
 * load whether it runs in a Worker; where `navigator` is missing (Node 20) it probes with
 * `new Response(...)`, and the first touch of the `Response` global makes Node 20 load undici, its
 * fetch implementation: about 45 ms of CPU and 10 MB of RSS per process that the gateway never
 * uses (it sends nothing with fetch). While pg loads, `Response` reads as undefined, so the probe
 * answers "not a Worker" at once; the global is put back as it was right after. On a Node that
 * has `navigator` (22 and later) pg never reaches the probe and this changes nothing.
 *
 * Every import of pg's values in the gateway goes through this module (types may come from `pg`).
 */
import type * as Pg from 'pg';

function loadPg(): typeof Pg {
  const own = Object.getOwnPropertyDescriptor(globalThis, 'Response');
  // Only Node's own lazy global is shadowed; anything else (already loaded, or replaced) is left alone.
  if (!own?.configurable || !own.get) return require('pg') as typeof Pg;
  Object.defineProperty(globalThis, 'Response', { value: undefined, configurable: true, writable: true, enumerable: false });
  try {
    return require('pg') as typeof Pg;
  } finally {
    Object.defineProperty(globalThis, 'Response', own);
  }
}

const pg = loadPg();

export const Pool: typeof Pg.Pool = pg.Pool;
export type Pool = Pg.Pool;
export const Client: typeof Pg.Client = pg.Client;
export type Client = Pg.Client;
/** A string as an SQL literal (quotes doubled; an `E''` literal when it holds a backslash): pg's own. */
export const escapeLiteral: (value: string) => string = pg.escapeLiteral;
export type { PoolClient, QueryResult, QueryResultRow } from 'pg';
