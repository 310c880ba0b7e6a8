/**
 * Preloaded into the gateway of `npm run bench:lists` (`node --require`, bench/list-routes.ts):
 * appends every statement a request marked `x-bench-record-queries: <label>` sends to PostgreSQL
 * (`pg` `Client#query`: its text and parameters) as one JSON line `{label, text, values}` to
 * `$BENCH_RECORD_QUERIES_FILE`, so that the bench can explain the statements each route runs,
 * whichever build of the gateway it started (`--gateway DIR`).
 *
 * The request's label follows its asynchronous work through an AsyncLocalStorage entered only for
 * marked requests: the bench sends them after its measured calls, so that until then the only cost
 * is a header check per request and an empty store lookup per statement (no promise hooks run
 * before the first marked request enters the store).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const file = process.env.BENCH_RECORD_QUERIES_FILE;
/** The request header that marks a request whose statements are recorded, under its value. */
export const RECORD_HEADER = 'x-bench-record-queries';

if (file) {
  const recording = new AsyncLocalStorage<string>();
  const emit = http.Server.prototype.emit as (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;
  http.Server.prototype.emit = function emitRecorded(this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      const label = (args[0] as http.IncomingMessage).headers[RECORD_HEADER];
      if (typeof label === 'string') return recording.run(label, () => emit.call(this, event, ...args));
    }
    return emit.call(this, event, ...args);
  };

  // The gateway's own pg (resolved from its main script, which may be another build's), loaded as
  // gateway/db/pg.ts loads it: without the Worker probe that would load Node's fetch.
  const main = process.argv[1] ? path.dirname(process.argv[1]) : process.cwd();
  const own = Object.getOwnPropertyDescriptor(globalThis, 'Response');
  if (own?.configurable && own.get) Object.defineProperty(globalThis, 'Response', { value: undefined, configurable: true, writable: true, enumerable: false });
  let pg: { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    pg = require(require.resolve('pg', { paths: [main] })) as typeof pg;
  } finally {
    if (own?.configurable && own.get) Object.defineProperty(globalThis, 'Response', own);
  }
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function recordedQuery(this: unknown, ...args: unknown[]) {
    const label = recording.getStore();
    if (label !== undefined) {
      const [config, values] = args as [string | { text?: string; values?: unknown[] } | undefined, unknown];
      const text = typeof config === 'string' ? config : config?.text;
      if (text !== undefined) {
        const params = Array.isArray(values) ? values : typeof config === 'object' ? (config.values ?? []) : [];
        fs.appendFileSync(file, `${JSON.stringify({ label, text, values: params })}\n`);
      }
    }
    return query.apply(this, args);
  };
}
