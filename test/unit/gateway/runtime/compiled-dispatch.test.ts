import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import { ConfigRefusedError } from '../../../../gateway/boot/config-guards';
import { createPartnerApp } from '../../../../gateway/http/partner-app';
import { loadAndCheck, type LoadedGateway } from '../../../../gateway/runtime/express-gateway';
import { checkGatewayConfig } from '../../../../gateway/boot/config-guards';
import { readRouteModel } from '../../../../gateway/route-model';
import { changedConfig, guardContext, SYSTEM_CONFIG, type Yaml } from '../policy-audit/shipped-config';
import { RouteTrie, trieSegments } from '../../../../gateway/runtime/route-trie';
import { pipelineEngineOf } from '../../../../gateway/runtime/pipeline-engine';
import { readSettings } from '../../../../gateway/settings';
import { openServices, type InProcessServices } from '../../../support/in-process';

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', '..', '..', 'config');

// What the shipped configuration does not exercise (the e2e comparison covers its routes): routes
// that overlap, a pipeline that hands on without answering, conditions, dotted paths, hosts, an
// apiEndpoint no pipeline serves. Each request goes
// to both engines; the answers must be the same, and the route that answered is asserted (the
// rate-limit step names it in `RateLimit-Policy`).

const answering = [{ 'rate-limit': [{ action: { limit: 1000, windowSeconds: 60 } }] }, { operation: [{ action: { name: 'health-check' } }] }];

function crafted(): Record<string, any> {
  return {
    apiEndpoints: {
      // Declared first: their hosts' routes are mounted before those of every host ('*').
      'on-host': { host: 'api.example.com', paths: '/h', methods: 'GET' },
      'on-wildcard-host': { host: '*.example.org', paths: '/h', methods: 'GET' },
      'on-host-regex': { hostRegex: '^v\\d\\.example\\.net$', paths: '/h', methods: 'GET' },
      first: { paths: ['/x/:id', '/y'], methods: 'GET' },
      second: { paths: '/x/special', methods: ['GET', 'POST'] },
      orphan: { paths: '/orphan', methods: 'GET' },
      'hands-on': { paths: '/ft', methods: 'GET' },
      'takes-over': { paths: '/ft', methods: 'GET' },
      'conditional': { paths: '/cond', methods: ['GET', 'POST'] },
      'no-host': { paths: '/h', methods: 'GET' },
      'dotted': { paths: '/api/v1.2/items/:id', methods: 'GET' },
    },
    policies: ['rate-limit', 'operation'],
    pipelines: {
      first: { apiEndpoints: ['first', 'dotted'], policies: answering },
      second: { apiEndpoints: ['second', 'takes-over', 'on-host', 'on-wildcard-host', 'on-host-regex', 'no-host'], policies: answering },
      // Answers nothing: its one step never runs (condition `never`), so the request goes on to the next route of /ft.
      'hands-on': { apiEndpoints: ['hands-on'], policies: [{ operation: [{ condition: { name: 'never' }, action: { name: 'health-check' } }] }] },
      // The rate limit only on POST; the answer on GET only when the path is exact (pathExact on req.url).
      conditional: {
        apiEndpoints: ['conditional'],
        policies: [
          { 'rate-limit': [{ condition: { name: 'method', methods: 'POST' }, action: { limit: 1000, windowSeconds: 60 } }] },
          { operation: [{ condition: { name: 'pathExact', path: '/cond' }, action: { name: 'health-check' } }] },
        ],
      },
    },
  };
}

interface Answer {
  status: number;
  headers: string[];
  body: string;
}

function send(port: number, method: string, target: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path: target, headers: { 'x-request-id': 'same', ...headers } }, (response) => {
      let body = '';
      response.setEncoding('latin1');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const raw: string[] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          if (response.rawHeaders[i]!.toLowerCase() === 'date') continue;
          raw.push(`${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]!.replace(/;t=\d+/, '')}`);
        }
        resolve({ status: response.statusCode!, headers: raw, body });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

describe('unit: gateway/runtime/compiled-dispatch (the compiled engine against express-gateway on a crafted configuration)', function () {
  this.timeout(30_000);
  let loaded: LoadedGateway;
  const services: InProcessServices[] = [];
  const servers: http.Server[] = [];
  const ports = { compiled: 0, reference: 0 };
  let compiledHandler: RequestHandler;

  before(async function () {
    loaded = loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1' });
    for (const engine of ['compiled', 'express-gateway'] as const) {
      const bundle = await openServices();
      services.push(bundle);
      const config = crafted();
      const runtime = loaded.runtimeFor(engine);
      expect(runtime.schemaError(config)).to.equal(undefined);
      const handler = await runtime.buildPipelines(config, 'crafted.yml', bundle);
      if (engine === 'compiled') compiledHandler = handler;
      const server = http.createServer(createPartnerApp(handler, bundle.log).app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      ports[engine === 'compiled' ? 'compiled' : 'reference'] = (server.address() as AddressInfo).port;
    }
  });

  after(async function () {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    for (const bundle of services) await bundle.close();
  });

  /** Sends to both engines, expects the same answer, returns it. */
  async function both(method: string, target: string, headers: Record<string, string> = {}): Promise<Answer> {
    const compiled = await send(ports.compiled, method, target, headers);
    const reference = await send(ports.reference, method, target, headers);
    expect(compiled, `${method} ${target} ${JSON.stringify(headers)}`).to.deep.equal(reference);
    return compiled;
  }

  const servedBy = (answer: Answer): string | undefined => answer.headers.find((h) => h.startsWith('RateLimit-Policy: '))?.match(/"([^"]+)"/)?.[1];

  it('builds no Express router (the reference does)', function () {
    expect((compiledHandler as unknown as { stack?: unknown }).stack).to.equal(undefined);
  });

  it('serves overlapping endpoints by the first declared, and the method by the route serving it', async function () {
    expect(servedBy(await both('GET', '/x/special'))).to.equal('first');
    expect(servedBy(await both('POST', '/x/special'))).to.equal('second');
    expect(servedBy(await both('GET', '/X/SPECIAL/'))).to.equal('first');
    expect(servedBy(await both('GET', '/x/other'))).to.equal('first');
    expect(servedBy(await both('GET', '/y'))).to.equal('first');
    expect((await both('POST', '/y')).status).to.equal(404);
  });

  it('hands a request on to the next route when a pipeline ends without answering', async function () {
    const answer = await both('GET', '/ft');
    expect(answer.status).to.equal(200);
    expect(servedBy(answer)).to.equal('takes-over');
  });

  it('checks each condition at its own step', async function () {
    const get = await both('GET', '/cond');
    expect(get.status).to.equal(200);
    expect(servedBy(get), 'no rate limit on GET').to.equal(undefined);
    const post = await both('POST', '/cond');
    expect(servedBy(post)).to.equal('conditional');
    // The path ignores case and a trailing slash; pathExact compares req.url as sent: no step answers.
    const other = await both('GET', '/COND/');
    expect(other.status).to.equal(404);
    expect(other.body).to.include('route_not_found');
  });

  it('matches dotted paths as express does, and refuses a parameter it cannot decode (400)', async function () {
    expect(servedBy(await both('GET', '/api/v1.2/items/a.b'))).to.equal('dotted');
    expect((await both('GET', '/api/v1x2/items/a')).status).to.equal(404);
    expect((await both('GET', '/api/v1.2/items/%E0%A4%A')).status).to.equal(400);
  });

  it("answers an apiEndpoint no pipeline serves with express-gateway's plain 404", async function () {
    const answer = await both('GET', '/orphan');
    expect(answer.status).to.equal(404);
    expect(answer.body).to.equal('Not Found');
  });

  it('serves a host\'s routes to that host only, the hosts in the order they first appear', async function () {
    expect(servedBy(await both('GET', '/h', { host: 'api.example.com' }))).to.equal('on-host');
    expect(servedBy(await both('GET', '/h', { host: 'API.example.com:8080' }))).to.equal('on-host');
    expect(servedBy(await both('GET', '/h', { host: 'shop.example.org' }))).to.equal('on-wildcard-host');
    expect(servedBy(await both('GET', '/h', { host: 'v2.example.net' }))).to.equal('on-host-regex');
    expect(servedBy(await both('GET', '/h', { host: 'elsewhere.test' }))).to.equal('no-host');
    expect(servedBy(await both('GET', '/h', { host: 'v22.example.net' }))).to.equal('no-host');
  });

  // The route shapes the boot's rules refuse: the compiled dispatch does not serve them either.
  const refusedShapes: { shape: string; entry: Yaml }[] = [
    { shape: 'a pathRegex', entry: { pathRegex: '^/api/partner/me$', methods: 'GET' } },
    { shape: 'a wildcard path', entry: { paths: '/api/partner/*', methods: 'GET' } },
    { shape: 'an optional parameter', entry: { paths: '/api/partner/me/:id?', methods: 'GET' } },
    { shape: 'no methods (every method)', entry: { paths: '/api/partner/me' } },
    { shape: 'no paths (every path)', entry: { methods: 'GET' } },
  ];
  for (const { shape, entry } of refusedShapes) {
    it(`refuses ${shape}, as the boot's rules do`, async function () {
      const config = changedConfig((c) => (c.apiEndpoints.me = entry));
      expect(checkGatewayConfig(readRouteModel(config), SYSTEM_CONFIG, guardContext()).filter((p) => p.where.startsWith('apiEndpoint "me"') || p.where.includes('operation "me"'))).to.not.deep.equal([]);
      const bundle = services[0]!;
      let refusal: unknown;
      try {
        await loaded.runtimeFor('compiled').buildPipelines(config, 'shape.yml', bundle);
      } catch (err) {
        refusal = err;
      }
      // Every method: the OpenAPI document's build (the openapi-document step) refuses it first.
      expect(String(refusal)).to.match(/not (a route shape|one) the compiled dispatch serves|list its methods explicitly/);
    });
  }

  it('answers OPTIONS with the methods of the routes of the path, HEAD with GET routes', async function () {
    const options = await both('OPTIONS', '/x/special');
    expect(options.status).to.equal(200);
    expect(options.body).to.equal('GET,HEAD,POST');
    const head = await both('HEAD', '/x/special');
    expect(head.status).to.equal(200);
    expect(servedBy(head)).to.equal('first');
  });
});

describe('unit: gateway/runtime/route-trie', function () {
  it('holds static and :name segments, and refuses anything else', function () {
    expect(trieSegments('/api/partner/cards/:id/status')).to.deep.equal(['api', 'partner', 'cards', ':id', 'status']);
    expect(trieSegments('/api/partner/')).to.deep.equal(['api', 'partner']);
    expect(trieSegments('/')).to.deep.equal([]);
    for (const path of ['/opt/:id?', '/files/*', '/a/:id.json', '/a/(b)', '*', '/a//b', 'relative']) {
      expect(trieSegments(path), path).to.equal(undefined);
      expect(() => new RouteTrie([path]), path).to.throw(/not one the compiled dispatch serves/);
    }
  });

  it('finds every matching mount path in declaration order, parameters raw', function () {
    const trie = new RouteTrie(['/cards/:id', '/cards/special', '/cards/:id/status', '/']);
    expect(trie.match('/cards/special').map((h) => h.index)).to.deep.equal([0, 1]);
    expect(trie.match('/CARDS/abc%20d/').map((h) => [h.index, h.values])).to.deep.equal([[0, ['abc%20d']]]);
    expect(trie.match('/cards/a/status')[0]).to.deep.include({ index: 2, names: ['id'], values: ['a'] });
    expect(trie.match('/').map((h) => h.index)).to.deep.equal([3]);
    expect(trie.match('//')).to.deep.equal([]);
    expect(trie.match('/cards//status')).to.deep.equal([]);
    expect(trie.match('/cards/a/status//')).to.deep.equal([]);
  });
});

describe('unit: gateway/runtime/pipeline-engine', function () {
  it('is the compiled engine unless PIPELINE_ENGINE names express-gateway; refuses anything else', function () {
    expect(pipelineEngineOf(readSettings({}).pipelineEngine)).to.equal('compiled');
    expect(pipelineEngineOf(readSettings({ PIPELINE_ENGINE: ' ' }).pipelineEngine)).to.equal('compiled');
    expect(pipelineEngineOf(readSettings({ PIPELINE_ENGINE: 'express-gateway' }).pipelineEngine)).to.equal('express-gateway');
    expect(() => pipelineEngineOf(readSettings({ PIPELINE_ENGINE: 'fastify' }).pipelineEngine)).to.throw(/PIPELINE_ENGINE must be one of compiled, express-gateway, got "fastify"/);
  });

  it('refuses to load with an unknown engine (ConfigRefusedError at stage load)', function () {
    let refusal: unknown;
    try {
      loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1', pipelineEngine: 'nope' });
    } catch (err) {
      refusal = err;
    }
    expect(refusal).to.be.instanceOf(ConfigRefusedError);
    expect((refusal as ConfigRefusedError).stage).to.equal('load');
    expect((refusal as ConfigRefusedError).message).to.match(/PIPELINE_ENGINE must be one of compiled, express-gateway, got "nope"/);
  });
});
