/**
 * Preloaded into the bench's single-worker gateway (`node --require`): counts the statements the
 * process sends to PostgreSQL (every `pg` `Client#query`, which `Pool#query` goes through once, and
 * `BEGIN`/`COMMIT` included: each is one round trip) and writes the running total to
 * `$BENCH_QUERY_COUNT_FILE` at most every 200 ms, when it changed (a write and a rename are two
 * system calls that the serving process's CPU figure would carry: every 25 ms they would be about 3 %
 * of a decision's CPU in a saturation round's profile). The bench's authorization phase
 * reads it before and after a round: queries per decision. A counter and a wrapper call per query:
 * far below the clock-tick resolution of the CPU figures. S1 sends no query (the token and
 * ownership caches), so its figures do not carry it.
 */
import fs from 'node:fs';
import { QUERY_COUNT_EVERY_MS } from './stats';

const file = process.env.BENCH_QUERY_COUNT_FILE;
if (file) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
  const original = pg.Client.prototype.query;
  let count = 0;
  let written = -1;
  pg.Client.prototype.query = function countedQuery(this: unknown, ...args: unknown[]) {
    count += 1;
    return original.apply(this, args);
  };
  // Written to a temporary file and renamed: a reader never sees a truncated count.
  const write = (value: number) => {
    fs.writeFileSync(`${file}.tmp`, String(value));
    fs.renameSync(`${file}.tmp`, file);
  };
  write(0);
  setInterval(() => {
    if (count === written) return;
    written = count;
    write(count);
  }, QUERY_COUNT_EVERY_MS).unref();
}
