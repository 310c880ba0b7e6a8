import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import { createPartnerApp } from '../../gateway/http/partner-app';
import { routeModelOf, type Route } from '../../gateway/route-model';
import { buildChecked, checkConfig, readConfigSource } from '../../gateway/runtime/config-candidate';
import { loadAndCheck } from '../../gateway/runtime/express-gateway';
import { servedPipelines } from '../../gateway/runtime/served-pipelines';
import { signPartnerToken } from '../../scripts/token';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { cardBody, individualBody } from '../support/api';
import { openServices, type InProcessServices } from '../support/in-process';
import { makeKeyPair } from '../support/partners';
import { recordSecret } from '../support/secrets';

// The compiled engine (gateway/runtime/compiled-dispatch.ts) against the reference built the old
// way (express-gateway's own pipeline builder: its endpoint router, a Router per pipeline, an
// egContext per request): the same requests, sent to both, get byte-identical answers (status, raw
// headers in their order and case, body), on a set covering every route of the shipped
// gateway.config.yml (sandbox mode: the simulations too) with refusals, real answers, HEAD, OPTIONS,
// case, trailing slashes, malformed parameters and 404s.
//
// Each engine is served by a bundle of services of its own (its caches, token cache and
// rate-limit counts) on one database and one set of sandboxes, so a request counts the same in
// both. Only reads and refusals are compared (a write that succeeded would leave the second engine
// another state). What is left out of the comparison: `Date`, and the `t=` (seconds to the window's
// end) of `RateLimit`, which may differ by one second between the two engines' windows (checked to
// be within 1).

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', 'config');
const SHIPPED_FILE = path.join(SHIPPED_CONFIG, 'gateway.config.yml');

interface Server {
  port: number;
  close(): Promise<void>;
}

async function serve(handler: RequestHandler, services: InProcessServices): Promise<Server> {
  const server = http.createServer(createPartnerApp(handler, services.log).app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Why this request is in the set (the failure message). */
  why: string;
}

interface Answer {
  status: number;
  rawHeaders: string[];
  body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function send(port: number, probe: Probe, requestId: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'x-request-id': requestId, ...probe.headers };
    if (probe.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(probe.body));
    }
    const request = http.request({ host: '127.0.0.1', port, method: probe.method, path: probe.path, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, rawHeaders: response.rawHeaders, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(probe.body);
  });
}

/** Raw headers without `Date`, `RateLimit`'s `t=` replaced; the `t=` values returned apart. */
function comparable(answer: Answer): { status: number; headers: string[]; body: string; resets: number[] } {
  const headers: string[] = [];
  const resets: number[] = [];
  for (let i = 0; i < answer.rawHeaders.length; i += 2) {
    const name = answer.rawHeaders[i]!;
    let value = answer.rawHeaders[i + 1]!;
    if (name.toLowerCase() === 'date') continue;
    if (name.toLowerCase() === 'ratelimit') {
      value = value.replace(/;t=(\d+)/, (_m, t: string) => {
        resets.push(Number(t));
        return ';t=<t>';
      });
    }
    headers.push(`${name}: ${value}`);
  }
  return { status: answer.status, headers, body: answer.body.toString('latin1'), resets };
}

/** An upper-cased path (the parameters' values kept: only the route's own segments change case). */
function upperCased(path: string, values: readonly string[]): string {
  return path
    .split('/')
    .map((segment) => (values.includes(segment) ? segment : segment.toUpperCase()))
    .join('/');
}

describe('e2e: compiled dispatch against express-gateway\'s own routing (byte-identical answers)', function () {
  this.timeout(180_000);
  let sandboxes: Sandboxes;
  let compiledServices: InProcessServices;
  let referenceServices: InProcessServices;
  let setUpServices: InProcessServices;
  let setUpServer: Server;
  let compiled: Server;
  let reference: Server;
  let compiledHandler: RequestHandler;
  let referenceHandler: RequestHandler;
  let routes: readonly Route[];
  const ids = { individual: '', card: '', otherIndividual: '', otherCard: '' };
  let partner: { id: string; issuer: string; privateKey: crypto.KeyObject };

  before(async function () {
    sandboxes = await startSandboxes();
    const upstreams = { issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url };
    compiledServices = await openServices(upstreams, { settings: { sandboxMode: true } });
    referenceServices = await openServices(upstreams, { settings: { sandboxMode: true } });
    const loaded = loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1' }, { engine: 'compiled' });
    const checked = checkConfig(readConfigSource(SHIPPED_FILE), loaded.runtime);
    compiledHandler = (await buildChecked(checked, loaded.runtimeFor('compiled'), compiledServices)).router;
    referenceHandler = (await buildChecked(checked, loaded.runtimeFor('express-gateway'), referenceServices)).router;
    compiled = await serve(compiledHandler, compiledServices);
    reference = await serve(referenceHandler, referenceServices);
    routes = routeModelOf(servedPipelines(checked.gatewayConfig, checked.model, true)).routes;
    // The set-up's writes go through a third bundle: they count in neither compared engine's rate limits.
    setUpServices = await openServices(upstreams, { settings: { sandboxMode: true } });
    setUpServer = await serve((await buildChecked(checked, loaded.runtime, setUpServices)).router, setUpServices);

    // Two partners, each with an individual and a virtual card.
    const makePartner = async (name: string) => {
      const keys = makeKeyPair();
      const issuer = `https://${name}-${crypto.randomUUID().slice(0, 8)}.example`;
      const created = await compiledServices.partners.create({ name, issuer, publicKey: keys.publicPem });
      return { id: created._id, issuer, privateKey: keys.privateKey };
    };
    partner = await makePartner('compare-acme');
    const other = await makePartner('compare-globex');
    const setUp = async (who: typeof partner, target: string, body: unknown) => {
      const answer = await send(setUpServer.port, { method: 'POST', path: `/api/partner${target}`, body: JSON.stringify(body), headers: { authorization: `Bearer ${await tokenOf(who)}`, 'idempotency-key': crypto.randomUUID() }, why: 'set-up' }, crypto.randomUUID());
      expect(answer.status, `set-up POST ${target}: ${answer.body.toString()}`).to.equal(201);
      return JSON.parse(answer.body.toString());
    };
    const individual = await setUp(partner, '/individual/accounts', individualBody());
    const card = await setUp(partner, `/individual/accounts/${individual._id}/cards/virtual`, cardBody(individual.clientID));
    const otherIndividual = await setUp(other, '/individual/accounts', individualBody());
    const otherCard = await setUp(other, `/individual/accounts/${otherIndividual._id}/cards/virtual`, cardBody(otherIndividual.clientID));
    Object.assign(ids, { individual: individual._id, card: card.cardKey, otherIndividual: otherIndividual._id, otherCard: otherCard.cardKey });
  });

  after(async function () {
    agent.destroy();
    await compiled?.close();
    await reference?.close();
    await setUpServer?.close();
    await setUpServices?.close();
    await compiledServices?.close();
    await referenceServices?.close();
    await sandboxes?.close();
  });

  async function tokenOf(who: { id: string; issuer: string; privateKey: crypto.KeyObject }): Promise<string> {
    const token = await signPartnerToken({ partnerId: who.id, issuer: who.issuer, privateKey: who.privateKey, ttlSeconds: 300 });
    recordSecret('jwt', token);
    return token;
  }

  /** The kind of resource a route's ownership step checks for its `:id` (undefined: none). */
  function ownedKind(route: Route): string | undefined {
    for (const step of route.pipeline?.steps ?? []) {
      if (step.policy !== 'ownership') continue;
      for (const action of step.actions) if (action.params.param === 'id' && action.params.in === undefined) return String(action.params.resource);
    }
    return undefined;
  }

  const hasStep = (route: Route, policy: string): boolean => route.pipeline?.steps.some((s) => s.policy === policy) ?? false;

  /** The requests of one route: what each may do without changing any state. */
  function probesOf(route: Route, token: string): Probe[] {
    const probes: Probe[] = [];
    const auth = { authorization: `Bearer ${token}` };
    const kind = ownedKind(route);
    const own = kind === 'card' ? ids.card : kind === 'individual' ? ids.individual : undefined;
    const others = kind === 'card' ? ids.otherCard : kind === 'individual' ? ids.otherIndividual : undefined;
    const limitName = 'DAILY_PURCHASE';
    const fill = (pattern: string, id: string) => pattern.replace(':id', encodeURIComponent(id)).replace(':limitName', limitName);
    const protectedRoute = hasStep(route, 'es512-jwt');
    for (const pattern of route.endpoint.paths) {
      for (const method of route.endpoint.methods) {
        const name = `${method} ${pattern} (${route.endpoint.name})`;
        const read = method === 'GET';
        const anyId = own ?? '0123456789abcdef01234567';
        // No token: 401 on a protected route, the answer itself on a public one.
        probes.push({ method, path: fill(pattern, anyId), why: `${name}, no token` });
        if (!protectedRoute) {
          probes.push({ method, path: `${fill(pattern, anyId)}/`, why: `${name}, trailing slash` });
          probes.push({ method, path: upperCased(fill(pattern, anyId), []), why: `${name}, upper case` });
          probes.push({ method: 'HEAD', path: fill(pattern, anyId), why: `${name}, HEAD` });
          continue;
        }
        if (pattern.includes(':id')) {
          // A malformed id: refused by ownership (or the handler) before anything changes.
          probes.push({ method, path: fill(pattern, 'not an id!'), headers: auth, body: read ? undefined : '{}', why: `${name}, malformed id` });
          if (others) probes.push({ method, path: fill(pattern, others), headers: auth, body: read ? undefined : '{}', why: `${name}, another partner's ${kind}` });
          // An id percent-encoded wrongly: express's decoding error (400).
          probes.push({ method, path: pattern.replace(':id', '%E0%A4%A').replace(':limitName', limitName), headers: auth, why: `${name}, undecodable id` });
        }
        if (read) {
          const target = fill(pattern, anyId);
          const values = [encodeURIComponent(anyId), limitName];
          probes.push({ method, path: target, headers: auth, why: `${name}, own` });
          probes.push({ method, path: `${target}/`, headers: auth, why: `${name}, own, trailing slash` });
          probes.push({ method, path: upperCased(target, values), headers: auth, why: `${name}, own, upper case` });
          probes.push({ method: 'HEAD', path: target, headers: auth, why: `${name}, own, HEAD` });
          probes.push({ method, path: `${target}?page=0&limit=1000`, headers: auth, why: `${name}, own, odd query` });
        } else if (hasStep(route, 'validate')) {
          // A body the route's schema refuses (400 problem), or malformed JSON (400 from the body parser).
          probes.push({ method, path: fill(pattern, anyId), headers: auth, body: '{"unexpected":true}', why: `${name}, invalid body` });
          probes.push({ method, path: upperCased(fill(pattern, anyId), [encodeURIComponent(anyId), limitName]) + '/', headers: auth, body: '[1,2', why: `${name}, malformed JSON, upper case, trailing slash` });
        } else {
          // Writes without a body schema: only the refusals above (no token, others' or malformed ids).
          probes.push({ method, path: fill(pattern, anyId), headers: { authorization: 'Bearer not.a.token' }, why: `${name}, garbage token` });
        }
        // A method the path does not serve (unless another route serves it): 404 problem, or OPTIONS' Allow.
        probes.push({ method: 'OPTIONS', path: fill(pattern, anyId), headers: auth, why: `${name}, OPTIONS` });
        probes.push({ method: 'TRACE', path: fill(pattern, anyId), headers: auth, why: `${name}, TRACE` });
      }
    }
    return probes;
  }

  const unrouted: Probe[] = [
    { method: 'GET', path: '/api/partner/no-such-route', why: 'an unknown path' },
    { method: 'GET', path: '/api/partner', why: 'the prefix alone' },
    { method: 'GET', path: '/', why: 'the root' },
    { method: 'GET', path: '/api/partner/me//', why: 'two trailing slashes' },
    { method: 'GET', path: '/api/partner//me', why: 'an empty segment' },
    { method: 'GET', path: '/api/partner/cards//status', why: 'an empty parameter' },
    { method: 'DELETE', path: '/api/partner/cards/abc', why: 'a method no route of the path serves' },
    { method: 'POST', path: '/api/partner/cards/abc/status/extra', why: 'a path one segment too long' },
    { method: 'GET', path: '/api/partner/%6De', why: 'an encoded static segment' },
    { method: 'HEAD', path: '/api/partner/fees/card-issuing', why: 'HEAD on a POST-only path' },
    { method: 'OPTIONS', path: '/api/partner/cards/abc/limits', why: 'OPTIONS on a path with two routes' },
    { method: 'OPTIONS', path: '/api/partner/nothing', why: 'OPTIONS on an unknown path' },
    { method: 'GET', path: 'http://127.0.0.1/api/partner/health-check', why: 'an absolute-form request target' },
  ];

  it('is compared with a reference built by express-gateway\'s own pipeline builder', function () {
    // express-gateway's builder answers an Express Router (a stack of layers); the compiled engine a plain handler.
    expect((referenceHandler as unknown as { stack?: unknown[] }).stack, 'reference router stack').to.be.an('array');
    expect((compiledHandler as unknown as { stack?: unknown }).stack, 'compiled handler').to.equal(undefined);
  });

  it('answers every route, its refusals, HEAD, OPTIONS, case, trailing slashes and 404s byte for byte as express-gateway does', async function () {
    const token = await tokenOf(partner);
    const probes = [...routes.flatMap((route) => probesOf(route, token)), ...unrouted];
    const covered = new Set<string>();
    const statuses = new Map<number, number>();
    const differences: string[] = [];
    for (const probe of probes) {
      const requestId = `cmp-${crypto.randomUUID()}`;
      const a = comparable(await send(compiled.port, probe, requestId));
      const b = comparable(await send(reference.port, probe, requestId));
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      const route = probe.why.match(/\(([^)]+)\)/)?.[1];
      if (route) covered.add(route);
      const same = a.status === b.status && JSON.stringify(a.headers) === JSON.stringify(b.headers) && a.body === b.body;
      const resetsClose = a.resets.length === b.resets.length && a.resets.every((t, i) => Math.abs(t - b.resets[i]!) <= 1);
      if (!same || !resetsClose) {
        differences.push(`${probe.method} ${probe.path} (${probe.why}):\n  compiled  ${a.status} ${a.headers.join(' | ')} ${a.body.slice(0, 300)}\n  reference ${b.status} ${b.headers.join(' | ')} ${b.body.slice(0, 300)}`);
      }
    }
    expect(differences, differences.join('\n')).to.deep.equal([]);
    // Every route of the configuration was reached, and the set holds real answers and refusals alike.
    expect([...covered].sort()).to.deep.equal(routes.map((r) => r.endpoint.name).sort());
    for (const status of [200, 400, 401, 403, 404]) expect(statuses.get(status) ?? 0, `answers with status ${status}`).to.be.greaterThan(0);
    expect(probes.length).to.be.greaterThan(routes.length * 5);
    console.log(`      compared ${probes.length} requests over ${routes.length} routes: ${[...statuses].sort(([x], [y]) => x - y).map(([s, n]) => `${s}×${n}`).join(', ')}`);
  });
});
