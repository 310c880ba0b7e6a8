import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';

const DB_MODULE = path.resolve(__dirname, '..', '..', '..', '..', 'gateway', 'db', 'database.js');

describe('unit: gateway/db/pg (pg loaded without Node 20 loading its fetch)', function () {
  it("loads pg and the database layer without undici, and leaves the Response global as Node's own", function () {
    // A fresh process: the test's own may have loaded undici already.
    const script = `
      const before = Object.getOwnPropertyDescriptor(globalThis, 'Response');
      const { Database } = require(${JSON.stringify(DB_MODULE)});
      const undiciAtLoad = process.moduleLoadList.some((m) => m.includes('undici'));
      const after = Object.getOwnPropertyDescriptor(globalThis, 'Response');
      const sameGlobal = before.get === after.get && before.set === after.set && before.configurable === after.configurable && before.enumerable === after.enumerable;
      const { Pool, Client } = require(${JSON.stringify(path.join(path.dirname(DB_MODULE), 'pg.js'))});
      process.stdout.write(JSON.stringify({ undiciAtLoad, sameGlobal, database: typeof Database, pool: typeof Pool, client: typeof Client, response: typeof Response, ok: new Response('x').status }));
    `;
    const result = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    expect(result).to.deep.equal({ undiciAtLoad: false, sameGlobal: true, database: 'function', pool: 'function', client: 'function', response: 'function', ok: 200 });
  });
});
