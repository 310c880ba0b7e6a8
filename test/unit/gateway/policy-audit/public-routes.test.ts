import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { checkGatewayConfig } from '../../../../gateway/boot/config-guards';
import { OPERATION_NAMES, OPERATIONS, type Operation } from '../../../../gateway/catalog';
import { auditGatewayConfig, PUBLIC_ROUTE_RULE, UPSTREAM_CONTRACT_PATHS, type AuditFinding } from '../../../../gateway/policy-audit';
import { readRouteModel } from '../../../../gateway/route-model';
import { upstreamPathProblem } from '../../../../gateway/policy-audit/audit';
import { ATTACK_CONTRADICTION, PUBLIC_ROUTE_ATTACKS } from '../../../support/public-route-attacks';
import { changedConfig as changed, guardContext, shippedConfig, stepOf, SYSTEM_CONFIG, withoutStep, type Yaml } from './shipped-config';
import { mountPathToRegexp } from '../../../../gateway/runtime/mount-paths';

const LOOPBACK = { adminHost: '127.0.0.1', adminTokenConfigured: true, pathToRegexp: mountPathToRegexp };
const JWT = { 'es512-jwt': [{ action: { clockSkewSeconds: 30, maxLifetimeSeconds: 300 } }] };
const CARD_KEY = 'CK3FA09B21C4D5E6F7';

function findingsOf(config: Yaml): AuditFinding[] {
  return auditGatewayConfig({ model: readRouteModel(config), ...LOOPBACK }).findings;
}

/** `SEVERITY rule where` of every finding above INFO. */
function serious(config: Yaml): string[] {
  return findingsOf(config)
    .filter((f) => f.severity !== 'INFO')
    .map((f) => `${f.severity} ${f.rule} ${f.where}`);
}

/** An operation step ending in an operation that calls the issuer straight. */
function issuerOperation(name: 'get-card' | 'get-pin-encryption-key'): Yaml {
  return { operation: [{ action: { name, timeoutMs: 5000 } }] };
}

const OBSERVED_ATTACKS = PUBLIC_ROUTE_ATTACKS;

describe('unit: policy-audit public routes are judged by what they run, not by their path', function () {
  it('the shipped public routes are in their exact public shape: INFO public-route stating it, nothing above LOW', function () {
    const findings = findingsOf(shippedConfig());
    expect(findings.filter((f) => f.severity !== 'INFO')).to.deep.equal([]);
    const info = findings.filter((f) => f.rule === 'public-route');
    expect(info.map((f) => f.where)).to.have.members([
      'apiEndpoint "health-check" (pipeline "health-check")',
      'apiEndpoint "openapi-document" (pipeline "openapi-document")',
      'apiEndpoint "api-docs" (pipeline "api-docs")',
    ]);
    expect(info.find((f) => f.where.includes('"health-check"'))!.message).to.match(/exact public shape \(GET or HEAD \/api\/partner\/health-check → operation health-check \(no rate limit\)\)/);
    expect(info.find((f) => f.where.includes('"openapi-document"'))!.message).to.match(/→ rate-limit → operation openapi-document/);
  });

  it('the rule in words names each public shape and what else is CRITICAL', function () {
    expect(PUBLIC_ROUTE_RULE).to.include('GET or HEAD /api/partner/health-check → operation health-check (no rate limit)');
    expect(PUBLIC_ROUTE_RULE).to.include('GET or HEAD /api/partner/openapi.json → rate-limit → operation openapi-document');
    expect(PUBLIC_ROUTE_RULE).to.include('GET or HEAD /api/partner/docs → rate-limit → operation api-docs');
    expect(PUBLIC_ROUTE_RULE).to.match(/CRITICAL public-route-shape/);
    expect(PUBLIC_ROUTE_RULE).to.match(/CRITICAL jwt-missing/);
  });

  for (const attack of OBSERVED_ATTACKS) {
    it(`CRITICAL on the observed attack: ${attack.description}`, function () {
      const found = serious(changed((c) => attack.change(c, CARD_KEY)));
      expect(found.some((f) => f.startsWith('CRITICAL public-route-shape apiEndpoint')), found.join('\n')).to.equal(true);
      expect(found.some((f) => f.startsWith('CRITICAL jwt-missing apiEndpoint')), found.join('\n')).to.equal(true);
      // The operation returns card data (the catalog says so): no-store and the URL kept out of the log.
      expect(found.some((f) => f.startsWith('HIGH sensitive-data-missing apiEndpoint')), found.join('\n')).to.equal(true);
    });
  }

  interface ShapeCase {
    description: string;
    change: (c: Yaml) => void;
    /** The apiEndpoint and pipeline of the public-route-shape finding. */
    where: string;
    message: RegExp;
  }
  const shapeCases: ShapeCase[] = [
    {
      description: 'a new method (POST) on the health check',
      change: (c) => (c.apiEndpoints['health-check'].methods = ['GET', 'POST']),
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /it answers POST/,
    },
    {
      description: 'methods omitted (every method)',
      change: (c) => delete c.apiEndpoints['openapi-document'].methods,
      where: 'apiEndpoint "openapi-document" (pipeline "openapi-document")',
      message: /it answers every method/,
    },
    {
      description: 'methods: all (express router.all)',
      change: (c) => (c.apiEndpoints['api-docs'].methods = 'all'),
      where: 'apiEndpoint "api-docs" (pipeline "api-docs")',
      message: /it answers every method/,
    },
    {
      description: 'a second entry of the apiEndpoint (another host) answering DELETE',
      change: (c) => (c.apiEndpoints['health-check'] = [c.apiEndpoints['health-check'], { host: 'internal.example', paths: '/api/partner/health-check', methods: 'DELETE' }]),
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /it answers DELETE/,
    },
    {
      description: 'another policy (validate) on the documentation',
      change: (c) => c.pipelines['api-docs'].policies.splice(1, 0, { validate: [{ action: { query: 'pagination-query' } }] }),
      where: 'apiEndpoint "api-docs" (pipeline "api-docs")',
      message: /runs rate-limit → validate → operation instead of rate-limit → operation/,
    },
    {
      description: 'the rate limit put back on the health check (the spec: always 200)',
      change: (c) => c.pipelines['health-check'].policies.unshift({ 'rate-limit': [{ action: { limit: 600, windowSeconds: 60 } }] }),
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /runs rate-limit → operation instead of operation/,
    },
    {
      description: 'the documentation without its public rate limit',
      change: (c) => withoutStep(c, 'openapi-document', 'rate-limit'),
      where: 'apiEndpoint "openapi-document" (pipeline "openapi-document")',
      message: /runs operation instead of rate-limit → operation/,
    },
    {
      description: 'another local handler (me) behind the health check path',
      change: (c) => (stepOf(c, 'health-check', 'operation').operation = [{ action: { name: 'list-cards' } }]),
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /its operation is "list-cards", not "health-check"/,
    },
    {
      description: 'another operation (an issuer call, no card id) instead of its own',
      change: (c) => (c.pipelines['api-docs'].policies = [{ 'rate-limit': [{ action: { limit: 5 } }] }, issuerOperation('get-pin-encryption-key')]),
      where: 'apiEndpoint "api-docs" (pipeline "api-docs")',
      message: /its operation is "get-pin-encryption-key", not "api-docs"/,
    },
    {
      description: 'a condition on the handler step',
      change: (c) => (stepOf(c, 'health-check', 'operation').operation[0].condition = { name: 'method', methods: ['GET'] }),
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /its operation step runs under a condition/,
    },
    {
      description: 'a condition on the rate-limit step',
      change: (c) => (c.pipelines['openapi-document'].policies[0] = { 'rate-limit': [{ action: { limit: 600 }, condition: { name: 'never' } }] }),
      where: 'apiEndpoint "openapi-document" (pipeline "openapi-document")',
      message: /its rate-limit step runs under a condition/,
    },
    {
      description: 'two actions in the handler step (the second under a condition)',
      change: (c) =>
        (stepOf(c, 'health-check', 'operation').operation = [
          { action: { name: 'health-check' } },
          { action: { name: 'list-cards' }, condition: { name: 'pathExact', path: '/api/partner/health-check' } },
        ]),
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /its operation step has 2 actions/,
    },
    {
      description: 'a second path on the public apiEndpoint',
      change: (c) => (c.apiEndpoints['health-check'].paths = ['/api/partner/health-check', '/api/partner/health-check-details']),
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /it also serves path "\/api\/partner\/health-check-details"/,
    },
    {
      description: 'a route parameter that matches the public paths (/api/partner/:x), even behind es512-jwt',
      change: (c) => {
        c.apiEndpoints.catchall = { paths: '/api/partner/:x', methods: 'GET' };
        c.pipelines.catchall = { apiEndpoints: ['catchall'], policies: [JWT, { operation: [{ action: { name: 'me' } }] }] };
      },
      where: 'apiEndpoint "catchall" (pipeline "catchall")',
      message: /path "\/api\/partner\/:x" also answers \/api\/partner\/health-check, \/api\/partner\/openapi\.json, \/api\/partner\/docs/,
    },
    {
      description: 'a wildcard (/api/partner/*)',
      change: (c) => {
        c.apiEndpoints.catchall = { paths: '/api/partner/*', methods: 'GET' };
        c.pipelines.catchall = { apiEndpoints: ['catchall'], policies: [JWT, { operation: [{ action: { name: 'me' } }] }] };
      },
      where: 'apiEndpoint "catchall" (pipeline "catchall")',
      message: /path "\/api\/partner\/\*" also answers/,
    },
    {
      description: 'another spelling of a public path (express matches case-insensitively)',
      change: (c) => {
        c.apiEndpoints.shouting = { paths: '/api/partner/HEALTH-CHECK', methods: 'GET' };
        c.pipelines.shouting = { apiEndpoints: ['shouting'], policies: [{ operation: [{ action: { name: 'health-check' } }] }] };
      },
      where: 'apiEndpoint "shouting" (pipeline "shouting")',
      message: /path "\/api\/partner\/HEALTH-CHECK" also answers \/api\/partner\/health-check/,
    },
    {
      description: 'a trailing slash (express matches it too)',
      change: (c) => (c.apiEndpoints['api-docs'].paths = '/api/partner/docs/'),
      where: 'apiEndpoint "api-docs" (pipeline "api-docs")',
      message: /path "\/api\/partner\/docs\/" also answers \/api\/partner\/docs/,
    },
    {
      description: 'a pathRegex matching a public path',
      change: (c) => {
        c.apiEndpoints.regex = { pathRegex: '^/api/partner/(openapi|docs).*$', methods: 'GET' };
        c.pipelines.regex = { apiEndpoints: ['regex'], policies: [{ operation: [{ action: { name: 'openapi-document' } }] }] };
      },
      where: 'apiEndpoint "regex" (pipeline "regex")',
      message: /pathRegex .* also answers \/api\/partner\/openapi\.json, \/api\/partner\/docs/,
    },
    {
      description: 'an apiEndpoint without paths (express-gateway mounts it on every path)',
      change: (c) => {
        c.apiEndpoints.everything = { methods: 'GET' };
        c.pipelines.everything = { apiEndpoints: ['everything'], policies: [JWT, { 'rate-limit': [{ action: {} }] }, { operation: [{ action: { name: 'me' } }] }] };
      },
      where: 'apiEndpoint "everything" (pipeline "everything")',
      message: /path "\*" also answers/,
    },
    {
      description: 'the public apiEndpoint shared with a second pipeline reading card details (the last one runs)',
      change: (c) => (c.pipelines['health-check-too'] = { apiEndpoints: ['health-check'], policies: [issuerOperation('get-card')] }),
      where: 'apiEndpoint "health-check" (pipeline "health-check-too")',
      message: /pipeline "health-check-too" its operation is "get-card", not "health-check"/,
    },
    {
      description: 'the public apiEndpoint shared with a second pipeline listed first (checked too, whichever runs)',
      change: (c) => {
        const { ['health-check']: original, ...rest } = c.pipelines;
        c.pipelines = { 'health-check-first': { apiEndpoints: ['health-check'], policies: [{ operation: [{ action: { name: 'me' } }] }] }, 'health-check': original, ...rest };
      },
      where: 'apiEndpoint "health-check" (pipeline "health-check")',
      message: /pipeline "health-check-first" its operation is "me"/,
    },
  ];

  for (const testCase of shapeCases) {
    it(`CRITICAL public-route-shape: ${testCase.description}`, function () {
      const findings = findingsOf(changed(testCase.change));
      const hits = findings.filter((f) => f.rule === 'public-route-shape');
      expect(hits, JSON.stringify(findings, null, 2)).to.have.length(1);
      expect(hits[0]).to.include({ severity: 'CRITICAL', where: testCase.where });
      expect(hits[0].message).to.match(testCase.message);
      expect(hits[0].message, 'the message states the public shape').to.match(/is not its public shape \(GET or HEAD \/api\/partner\/[a-z.-]+ → /);
      // A route on a public path that is not in its public shape is never exempt from the token.
      const name = testCase.where.split('"')[1];
      const route = auditGatewayConfig({ model: readRouteModel(changed(testCase.change)), ...LOOPBACK }).routes.find((r) => r.name === name)!;
      expect(route.public).to.equal(false);
      expect(findings.some((f) => f.rule === 'public-route' && f.where.startsWith(`apiEndpoint "${name}"`))).to.equal(false);
    });
  }

  it('a route on a public path outside its shape also needs es512-jwt (CRITICAL jwt-missing)', function () {
    const found = serious(changed((c) => (c.apiEndpoints['health-check'].methods = ['GET', 'POST'])));
    expect(found).to.include('CRITICAL jwt-missing apiEndpoint "health-check" (pipeline "health-check")');
  });

  const allowed: { description: string; change: (c: Yaml) => void; isPublic: boolean }[] = [
    { description: 'HEAD besides GET', change: (c) => (c.apiEndpoints['health-check'].methods = 'GET,HEAD'), isPublic: true },
    { description: 'HEAD alone', change: (c) => (c.apiEndpoints['api-docs'].methods = ['HEAD']), isPublic: true },
    { description: 'a host restriction', change: (c) => (c.apiEndpoints['openapi-document'].host = 'api.example'), isPublic: true },
    { description: 'the always condition, written out', change: (c) => (stepOf(c, 'health-check', 'operation').operation[0].condition = { name: 'always' }), isPublic: true },
    { description: 'es512-jwt in front of the health check (then a protected route)', change: (c) => c.pipelines['health-check'].policies.unshift(JWT), isPublic: false },
    { description: 'es512-jwt in front of the documentation', change: (c) => c.pipelines['api-docs'].policies.unshift(JWT), isPublic: false },
  ];
  for (const row of allowed) {
    it(`allows the exact shape with ${row.description}`, function () {
      const config = changed(row.change);
      expect(serious(config)).to.deep.equal([]);
      const { routes } = auditGatewayConfig({ model: readRouteModel(config), ...LOOPBACK });
      expect(routes.filter((r) => r.public).length).to.equal(row.isPublic ? 3 : 2);
    });
  }

  describe('es512-jwt: a pipeline without it reaching any non-public route is CRITICAL, whatever the names', function () {
    it('the health-check pipeline and apiEndpoint names moved to the PAN path', function () {
      const config = changed((c) => (c.apiEndpoints['health-check'] = { paths: '/api/partner/cards/:id/pan', methods: 'GET' }));
      expect(serious(config)).to.include('CRITICAL jwt-missing apiEndpoint "health-check" (pipeline "health-check")');
    });

    it('the public health-check pipeline also serving the PAN route', function () {
      const config = changed((c) => c.pipelines['health-check'].apiEndpoints.push('get-card-pan'));
      expect(serious(config)).to.include('CRITICAL jwt-missing apiEndpoint "get-card-pan" (pipeline "health-check")');
    });

    it('a protected route shared with a second pipeline without es512-jwt, listed first (not the one that runs)', function () {
      const config = changed((c) => {
        c.pipelines = { 'me-open': { apiEndpoints: ['me'], policies: [{ operation: [{ action: { name: 'me' } }] }] }, ...c.pipelines };
      });
      expect(serious(config)).to.include('CRITICAL jwt-missing apiEndpoint "me" (pipeline "me-open")');
    });
  });

  describe('proxy-path-contract: an upstream path (the catalog\'s) holds only contract segments and route parameters', function () {
    const proxyPathCases: { description: string; upstream?: string; path: string; message: RegExp }[] = [
      { description: 'a literal cardKey', path: `/cards/${CARD_KEY}/pan`, message: new RegExp(`names "${CARD_KEY}": neither a fixed segment of the issuer contract`) },
      { description: 'a literal 24-hex object id', path: '/cards/65f1c0de0123456789abcdef', message: /names "65f1c0de0123456789abcdef"/ },
      { description: 'a literal 8-digit clientId', upstream: 'processing', path: '/transactions/48213377', message: /names "48213377": neither a fixed segment of the processing contract/ },
      { description: "the sandbox's test-only secrets route", path: '/__sandbox/cards/{id}/secrets', message: /names "__sandbox", "secrets"/ },
      { description: 'a dot-dot segment', path: '/cards/{id}/../pan', message: /names "\.\."/ },
      { description: 'a parameter where the contract has a fixed segment', path: '/cards/{id}/{id}', message: /is not a path of the issuer contract/ },
      { description: 'a fixed segment where the contract has a parameter', path: '/cards/status/pan', message: /is not a path of the issuer contract/ },
      { description: 'a path of the other upstream', upstream: 'processing', path: '/cards/{id}/pan', message: /names "pan": neither a fixed segment of the processing contract/ },
      { description: 'a placeholder inside a segment', path: '/cards/CK{id}/pan', message: /names "CK\{id\}"/ },
      { description: 'an upstream without a contract', upstream: 'ledger', path: '/cards/{id}', message: /upstream "ledger" has no contract/ },
    ];
    for (const row of proxyPathCases) {
      it(`refuses ${row.description}: ${row.path}`, function () {
        expect(upstreamPathProblem(row.upstream ?? 'issuer', row.path)).to.match(row.message);
      });
    }

    it('accepts contract paths with route parameters in their {} places', function () {
      expect(upstreamPathProblem('issuer', '/cards/{id}/limits/{limitName}/available')).to.equal(undefined);
      expect(upstreamPathProblem('processing', '/fees')).to.equal(undefined);
    });

    it('every upstream path of the catalog passes, with {parameters} of its own route only', function () {
      const upstreamCalls = OPERATION_NAMES.map((name) => [name, OPERATIONS[name] as Operation] as const).filter(([, o]) => o.ends.kind === 'upstream');
      expect(upstreamCalls.length).to.be.greaterThan(8);
      for (const [name, operation] of upstreamCalls) {
        if (operation.ends.kind !== 'upstream') continue;
        expect(upstreamPathProblem(operation.ends.upstream, operation.ends.path), name).to.equal(undefined);
        const routeParams = [...operation.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
        for (const [, placeholder] of operation.ends.path.matchAll(/\{([A-Za-z][A-Za-z0-9_]*)\}/g)) expect(routeParams, `${name} {${placeholder}}`).to.include(placeholder);
      }
      expect(findingsOf(shippedConfig()).filter((f) => f.rule === 'proxy-path-contract')).to.deep.equal([]);
    });

    it('CRITICAL when the route does not have a {parameter} of its operation\'s upstream path', function () {
      const config = changed((c) => (c.apiEndpoints['get-card-pan'].paths = '/api/partner/cards/:cardKey/pan'));
      const hits = findingsOf(config).filter((f) => f.rule === 'proxy-path-contract');
      expect(hits.map((f) => `${f.severity} ${f.where}`)).to.deep.equal(['CRITICAL apiEndpoint "get-card-pan" (pipeline "get-card-pan")']);
      expect(hits[0].message).to.match(/the upstream path "\/cards\/\{id\}\/pan" of operation "get-card-pan" uses \{id\}, which route \/api\/partner\/cards\/:cardKey\/pan does not have/);
    });

    it('the contract table is docs/upstreams.md sections 4 to 6, without the test-only /__sandbox/ routes', function () {
      const doc = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', '..', '..', 'docs', 'upstreams.md'), 'utf8');
      const sections: Record<string, string> = { accounts: '## 4. ', issuer: '## 5. ', processing: '## 6. ' };
      const normalise = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
      for (const [upstream, heading] of Object.entries(sections)) {
        const start = doc.indexOf(heading);
        expect(start, heading).to.be.greaterThan(0);
        const end = doc.indexOf('\n## ', start + heading.length);
        const text = doc.slice(start, end);
        const documented = new Set([...text.matchAll(/`(?:GET|POST|PUT|PATCH|DELETE) (\/[^`?\s]*)/g)].map((m) => normalise(m[1])).filter((p) => !p.startsWith('/__sandbox/')));
        expect([...new Set(UPSTREAM_CONTRACT_PATHS[upstream].map(normalise))], upstream).to.have.members([...documented]);
      }
    });
  });

  describe('checkGatewayConfig refuses at boot and on reload', function () {
    const systemConfig = SYSTEM_CONFIG;
    const context = guardContext();

    for (const attack of OBSERVED_ATTACKS) {
      it(`the observed attack: ${attack.description}`, function () {
        const problems = checkGatewayConfig(readRouteModel(changed((c) => attack.change(c, CARD_KEY))), systemConfig, context);
        const text = problems.map((p) => `${p.where}: ${p.message}`);
        expect(text.some((t) => /is not its public shape.*\[policy audit: public-route-shape\]$/.test(t)), text.join('\n')).to.equal(true);
        expect(text.some((t) => /lacks the es512-jwt policy as its first, unconditional policy/.test(t)), text.join('\n')).to.equal(true);
        expect(text.some((t) => ATTACK_CONTRADICTION.test(t)), text.join('\n')).to.equal(true);
      });
    }

    it('exempts a public path from the token only in its exact shape', function () {
      const problems = checkGatewayConfig(readRouteModel(changed((c) => stepOf(c, 'health-check', 'operation').operation[0].condition = { name: 'never' })), systemConfig, context);
      expect(problems.map((p) => p.message)).to.include('route /api/partner/health-check (pipeline "health-check") lacks the es512-jwt policy as its first, unconditional policy');
    });

    it('accepts the shipped config, and the health check put behind es512-jwt', function () {
      expect(checkGatewayConfig(readRouteModel(shippedConfig()), systemConfig, context)).to.deep.equal([]);
      expect(checkGatewayConfig(readRouteModel(changed((c) => c.pipelines['health-check'].policies.unshift(JWT))), systemConfig, context)).to.deep.equal([]);
    });
  });
});
