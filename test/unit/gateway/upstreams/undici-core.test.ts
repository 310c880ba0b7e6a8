import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';

const CORE = path.resolve(__dirname, '..', '..', '..', '..', 'gateway', 'upstreams', 'undici-core.js');

describe("unit: gateway/upstreams/undici-core (undici's Client, Pool and buildConnector without its index)", function () {
  it("loads them without undici's index, with the request API on Client and Pool", function () {
    // A fresh process: this one may have loaded undici's index already.
    const script = `
      const core = require(${JSON.stringify(CORE)});
      const indexLoaded = Object.keys(require.cache).some((file) => /node_modules[\\\\/]undici[\\\\/]index\\.js$/.test(file));
      const methods = ['request', 'stream', 'pipeline', 'connect', 'upgrade'];
      process.stdout.write(JSON.stringify({
        indexLoaded,
        client: methods.filter((m) => typeof core.Client.prototype[m] === 'function'),
        pool: methods.filter((m) => typeof core.Pool.prototype[m] === 'function'),
        buildConnector: typeof core.buildConnector,
      }));
    `;
    const result = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    const all = ['request', 'stream', 'pipeline', 'connect', 'upgrade'];
    expect(result).to.deep.equal({ indexLoaded: false, client: all, pool: all, buildConnector: 'function' });
  });

  it("gives the very classes and functions undici's index exports, with the same request API", function () {
    const core = require(CORE) as typeof import('../../../../gateway/upstreams/undici-core');
    const undici = require('undici') as typeof import('undici');
    expect(core.Client).to.equal(undici.Client);
    expect(core.Pool).to.equal(undici.Pool);
    expect(core.buildConnector).to.equal(undici.buildConnector);
    for (const method of ['request', 'stream', 'pipeline', 'connect', 'upgrade'] as const) {
      expect(core.Client.prototype[method], method).to.equal(undici.Dispatcher.prototype[method]);
    }
  });

  it('answers a request made through a Client from it', async function () {
    const http = await import('node:http');
    const { Client } = await import('../../../../gateway/upstreams/undici-core');
    const server = http.createServer((_req, res) => res.end('pong'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as import('node:net').AddressInfo;
    const client = new Client(`http://127.0.0.1:${port}`);
    try {
      const answer = await client.request({ method: 'GET', path: '/' });
      expect(answer.statusCode).to.equal(200);
      expect(await answer.body.text()).to.equal('pong');
    } finally {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
