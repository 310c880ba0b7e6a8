import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import { createPartnerApp } from '../../../gateway/http/partner-app';
import type { Logger } from '../../../gateway/logging/logger';
import { buildChecked, checkConfig, readConfigSource } from '../../../gateway/runtime/config-candidate';
import { loadAndCheck } from '../../../gateway/runtime/express-gateway';
import { signPartnerToken } from '../../../scripts/token';
import { openServices, type InProcessServices } from '../../support/in-process';
import { makeKeyPair } from '../../support/partners';
import { recordSecret } from '../../support/secrets';
import { createRunDatabase, runDatabaseUrl, type RunDatabase } from '../../support/test-database';

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', '..', 'config');

/** Serves a pipeline router in the partner app on loopback; resolves with its base URL and a closer. */
async function serveRouter(router: RequestHandler, log: Logger): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(createPartnerApp(router, log).app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/partner`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The remaining count `r` of a `RateLimit` header. */
const remaining = (response: Response): number => Number(/;r=(\d+);/.exec(response.headers.get('ratelimit') ?? '')?.[1]);

// With services passed in, one process can hold two gateways' pipelines: each policy and handler
// reads the bundle its pipeline was built with, never another's (the global locator made this
// impossible: the last bundle published served every pipeline).
describe('unit: gateway/compose-services (two bundles in one process share nothing)', function () {
  this.timeout(30_000);
  let first: InProcessServices;
  let second: InProcessServices;
  let secondDatabase: RunDatabase;
  const servers: { url: string; close(): Promise<void> }[] = [];
  let viaFirst: string;
  let viaSecond: string;

  before(async function () {
    first = await openServices();
    // A database of its own, named under the run's so that the run's clean-up drops it too.
    secondDatabase = await createRunDatabase(`${new URL(runDatabaseUrl()).pathname.slice(1)}_o`);
    second = await openServices(undefined, { databaseUrl: secondDatabase.url });
    const { runtime } = loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1' });
    const checked = checkConfig(readConfigSource(path.join(SHIPPED_CONFIG, 'gateway.config.yml')), runtime);
    const a = await serveRouter((await buildChecked(checked, runtime, first)).router, first.log);
    const b = await serveRouter((await buildChecked(checked, runtime, second)).router, second.log);
    servers.push(a, b);
    viaFirst = a.url;
    viaSecond = b.url;
  });

  after(async function () {
    for (const server of servers) await server.close();
    await first?.close();
    await second?.close();
    await secondDatabase?.drop();
  });

  async function partnerOf(services: InProcessServices, name: string): Promise<{ id: string; token: string }> {
    const keys = makeKeyPair();
    const issuer = `https://${name}-${Date.now().toString(36)}.example`;
    const created = await services.partners.create({ name, issuer, publicKey: keys.publicPem });
    const token = await signPartnerToken({ partnerId: created._id, issuer, privateKey: keys.privateKey });
    recordSecret('jwt', token);
    return { id: created._id, token };
  }

  const me = (base: string, token: string) => fetch(`${base}/me`, { headers: { authorization: `Bearer ${token}` } });

  it("authenticates a partner only through the pipelines of its own bundle's database, and caches its token only there", async function () {
    const one = await partnerOf(first, 'bundle-one');
    const two = await partnerOf(second, 'bundle-two');

    const accepted = await me(viaFirst, one.token);
    expect(accepted.status).to.equal(200);
    expect(((await accepted.json()) as { partner: { _id: string } }).partner._id).to.equal(one.id);
    expect(first.tokenCache.get(one.token)?.partner._id, "the first bundle's cache holds the token it verified").to.equal(one.id);

    // The same token, just verified and cached by the first bundle, means nothing to the second.
    const refused = await me(viaSecond, one.token);
    await refused.arrayBuffer();
    expect(refused.status).to.equal(401);
    expect(second.tokenCache.get(one.token), "the second bundle's cache does not hold it").to.equal(undefined);
    expect(second.tokenCache.isUnknown(one.id), "the second bundle looked the partner up in its own database").to.equal(true);

    const acceptedByTwo = await me(viaSecond, two.token);
    await acceptedByTwo.arrayBuffer();
    expect(acceptedByTwo.status).to.equal(200);
    const refusedByOne = await me(viaFirst, two.token);
    await refusedByOne.arrayBuffer();
    expect(refusedByOne.status).to.equal(401);
  });

  it('counts rate limits per bundle: requests through one pipeline do not use up the other\'s', async function () {
    const calls = async (base: string, count: number): Promise<number> => {
      let last = NaN;
      for (let i = 0; i < count; i++) {
        const response = await fetch(`${base}/openapi.json`);
        await response.arrayBuffer();
        expect(response.status).to.equal(200);
        last = remaining(response);
      }
      return last;
    };
    const afterThree = await calls(viaFirst, 3);
    const afterOne = await calls(viaSecond, 1);
    expect(afterOne - afterThree, 'the second counts from its own start').to.equal(2);
    expect(first.rateLimits).to.not.equal(second.rateLimits);
  });
});
