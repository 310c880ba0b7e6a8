import { expect } from 'chai';
import { auditGatewayConfig, formatAuditText, type AuditFinding, type AuditRule, type Severity } from '../../../../gateway/policy-audit';
import { readRouteModel } from '../../../../gateway/route-model';
import { changedConfig as changed, shippedConfig, stepOf, withoutStep, type Yaml } from './shipped-config';
import { mountPathToRegexp } from '../../../../gateway/runtime/mount-paths';

const LOOPBACK = { adminHost: '127.0.0.1', adminTokenConfigured: true, pathToRegexp: mountPathToRegexp };

interface RuleCase {
  description: string;
  config: () => Yaml;
  admin?: { adminHost: string; adminTokenConfigured: boolean };
  rule: AuditRule;
  severity: Severity;
  where: RegExp;
  message?: RegExp;
}

describe('unit: policy-audit auditGatewayConfig', function () {
  it('finds nothing above LOW in the shipped config (INFO: the three public routes)', function () {
    const { routes, findings } = auditGatewayConfig({ model: readRouteModel(shippedConfig()), ...LOOPBACK });
    expect(findings.filter((f) => ['CRITICAL', 'HIGH', 'MEDIUM'].includes(f.severity)), JSON.stringify(findings, null, 2)).to.deep.equal([]);
    expect(findings.map((f) => `${f.severity} ${f.rule} ${f.where}`)).to.have.members([
      'INFO public-route apiEndpoint "health-check" (pipeline "health-check")',
      'INFO public-route apiEndpoint "openapi-document" (pipeline "openapi-document")',
      'INFO public-route apiEndpoint "api-docs" (pipeline "api-docs")',
    ]);
    expect(routes).to.have.length(Object.keys(shippedConfig().apiEndpoints).length);
  });

  it('lists each route with its methods, paths, pipeline and policy chain', function () {
    const { routes } = auditGatewayConfig({ model: readRouteModel(shippedConfig()), ...LOOPBACK });
    expect(routes.find((r) => r.name === 'get-card-cvv')).to.deep.equal({
      name: 'get-card-cvv',
      methods: ['GET'],
      paths: ['/api/partner/cards/:id/cvv'],
      pipeline: 'get-card-cvv',
      policies: ['es512-jwt', 'rate-limit', 'ownership', 'sensitive-data', 'validate', 'operation'],
      // Each step with its effective params: the ownership, sensitive-data and validate steps are
      // written without them and take the catalog's; the issuer call's timeout is the setting's.
      steps: [
        { policy: 'es512-jwt', actions: [{ params: { clockSkewSeconds: 30, maxLifetimeSeconds: 300 } }] },
        { policy: 'rate-limit', actions: [{ params: { limit: 600, windowSeconds: 60 } }] },
        { policy: 'ownership', actions: [{ params: { resource: 'card', param: 'id' }, fromCatalog: true }] },
        { policy: 'sensitive-data', actions: [{ params: {}, fromCatalog: true }] },
        { policy: 'validate', actions: [{ params: { query: 'card-secret-query' }, fromCatalog: true }] },
        { policy: 'operation', actions: [{ params: { name: 'get-card-cvv' }, timeoutFrom: 'UPSTREAM_TIMEOUT_MS' }] },
      ],
      public: false,
    });
    expect(routes.find((r) => r.name === 'health-check')).to.include({ pipeline: 'health-check', public: true });
    expect(routes.find((r) => r.name === 'health-check')?.policies).to.deep.equal(['operation']);
    expect(routes.filter((r) => r.public).map((r) => r.name)).to.have.members(['health-check', 'openapi-document', 'api-docs']);
  });

  it('shows the sandbox-only routes as off outside sandbox mode and on in it, and no other route so', function () {
    const SANDBOX_ONLY = [
      'simulate-card-transaction',
      'simulate-card-issuer-status',
      'simulate-card-authorization',
      'simulate-transaction-clearing',
      'simulate-transaction-reversal',
      'simulate-transaction-expiry',
      'simulate-transaction-refund',
      'simulate-card-tokenization',
      'simulate-token-verification',
      'simulate-token-authorization',
    ];
    const sandboxRoutes = (sandboxMode?: boolean) =>
      auditGatewayConfig({ model: readRouteModel(shippedConfig()), ...LOOPBACK, ...(sandboxMode === undefined ? {} : { sandboxMode }) })
        .routes.filter((r) => r.sandbox !== undefined)
        .map((r) => [r.name, r.sandbox]);
    expect(sandboxRoutes(false)).to.deep.equal(SANDBOX_ONLY.map((name) => [name, 'off']));
    expect(sandboxRoutes()).to.deep.equal(sandboxRoutes(false));
    expect(sandboxRoutes(true)).to.deep.equal(SANDBOX_ONLY.map((name) => [name, 'on']));
    const text = formatAuditText(auditGatewayConfig({ model: readRouteModel(shippedConfig()), ...LOOPBACK, sandboxMode: false }));
    expect(text).to.include('POST /api/partner/simulate/cards/:id/transactions  [simulate-card-transaction → pipeline simulate-card-transaction]  (sandbox only: off, answers 404)');
  });

  it('every shipped route runs rate-limit right after es512-jwt (first on the documentation routes, none on the health check), and sensitive-data right after ownership', function () {
    const { routes } = auditGatewayConfig({ model: readRouteModel(shippedConfig()), ...LOOPBACK });
    for (const route of routes) {
      const chain = route.policies;
      if (chain[0] === 'es512-jwt') expect(chain[1], route.name).to.equal('rate-limit');
      else if (route.name === 'health-check') expect(chain, route.name).to.deep.equal(['operation']);
      else expect(chain[0], route.name).to.equal('rate-limit');
      const sensitive = chain.indexOf('sensitive-data');
      if (sensitive >= 0 && chain.includes('ownership')) expect(chain[sensitive - 1], route.name).to.equal('ownership');
    }
    const marked = routes.filter((r) => r.policies.includes('sensitive-data')).map((r) => r.name);
    expect(marked).to.have.members([
      'get-card',
      'get-card-cvv',
      'get-card-pan',
      'set-card-3ds-answer',
      'change-card-pin',
      'force-card-pin-lock',
      'reset-card-pin-tries',
      'authorize-cardholder',
      'get-pin-encryption-key',
      'create-webhook-endpoint',
      'rotate-webhook-secret',
      'create-authorization-endpoint',
      'rotate-authorization-endpoint-secret',
      'provision-card-apple-pay',
      'provision-card-google-pay',
    ]);
  });

  const cases: RuleCase[] = [
    {
      description: 'a protected route without es512-jwt',
      config: () => changed((c) => withoutStep(c, 'get-card', 'es512-jwt')),
      rule: 'jwt-missing',
      severity: 'CRITICAL',
      where: /^apiEndpoint "get-card" \(pipeline "get-card"\)$/,
      message: /lacks the es512-jwt policy/,
    },
    {
      description: 'es512-jwt behind a condition',
      config: () =>
        changed((c) => {
          c.pipelines.me.policies[0] = { 'es512-jwt': [{ action: { clockSkewSeconds: 30 }, condition: { name: 'method', methods: ['POST'] } }] };
        }),
      rule: 'jwt-missing',
      severity: 'CRITICAL',
      where: /^apiEndpoint "me"/,
      message: /runs only under a condition/,
    },
    {
      description: 'a step before es512-jwt on a protected route',
      config: () => changed((c) => c.pipelines.me.policies.reverse()),
      rule: 'jwt-not-first',
      severity: 'CRITICAL',
      where: /^apiEndpoint "me"/,
      message: /operation, rate-limit run before es512-jwt/,
    },
    {
      description: 'an {id} route without ownership',
      config: () => changed((c) => withoutStep(c, 'get-card-cvv', 'ownership')),
      rule: 'ownership-missing',
      severity: 'CRITICAL',
      where: /^apiEndpoint "get-card-cvv"/,
    },
    {
      description: 'an individual {id} route without ownership',
      config: () => changed((c) => withoutStep(c, 'list-individual-transactions', 'ownership')),
      rule: 'ownership-missing',
      severity: 'CRITICAL',
      where: /^apiEndpoint "list-individual-transactions"/,
    },
    {
      description: 'an {id} route whose only ownership step checks a body field',
      config: () =>
        changed((c) => {
          stepOf(c, 'get-card-cvv', 'ownership').ownership = [{ action: { resource: 'card', in: 'body', param: 'cardKey' } }];
        }),
      rule: 'ownership-missing',
      severity: 'CRITICAL',
      where: /^apiEndpoint "get-card-cvv"/,
      message: /names a resource in its path/,
    },
    {
      description: 'a fee check that does not own the cardKey of its body',
      config: () =>
        changed((c) => {
          const step = stepOf(c, 'check-card-issuing-fee', 'ownership');
          step.ownership = (step.ownership as Yaml[]).filter((a) => a.action.param !== 'cardKey');
        }),
      rule: 'ownership-missing',
      severity: 'CRITICAL',
      where: /^apiEndpoint "check-card-issuing-fee"/,
      message: /"cardKey" names a card/,
    },
    {
      description: 'a fee check without body ownership',
      config: () => changed((c) => withoutStep(c, 'check-card-delivery-fee', 'ownership')),
      rule: 'ownership-missing',
      severity: 'CRITICAL',
      where: /^apiEndpoint "check-card-delivery-fee"/,
    },
    {
      description: 'a POST route without body validation',
      config: () => changed((c) => withoutStep(c, 'lock-card', 'validate')),
      rule: 'validation-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "lock-card"/,
      message: /takes a body/,
    },
    {
      description: 'a PUT route validating its path parameters but not its body',
      config: () => changed((c) => (stepOf(c, 'set-card-limit', 'validate').validate = [{ action: { params: 'limit-params' } }])),
      rule: 'validation-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "set-card-limit"/,
      message: /takes a body/,
    },
    {
      description: 'an operation forwarding query parameters upstream without query validation',
      config: () => changed((c) => withoutStep(c, 'list-delivery-methods', 'validate')),
      rule: 'validation-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "list-delivery-methods"/,
      message: /reads the query string \(operation\)/,
    },
    {
      description: 'an operation answered locally that reads the query string, without query validation',
      config: () => changed((c) => withoutStep(c, 'list-cards', 'validate')),
      rule: 'validation-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "list-cards"/,
      message: /reads the query string \(operation\)/,
    },
    {
      description: 'an apiEndpoint without methods (all of them, POST included) and no validation',
      config: () =>
        changed((c) => {
          delete c.apiEndpoints.me.methods;
        }),
      rule: 'validation-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "me"/,
      message: /^\* \/api\/partner\/me takes a body/,
    },
    {
      description: 'the PAN route without sensitive-data',
      config: () => changed((c) => withoutStep(c, 'get-card-pan', 'sensitive-data')),
      rule: 'sensitive-data-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "get-card-pan"/,
    },
    {
      description: 'the card details route without sensitive-data',
      config: () => changed((c) => withoutStep(c, 'get-card', 'sensitive-data')),
      rule: 'sensitive-data-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "get-card"/,
    },
    {
      description: 'a PIN change without sensitive-data',
      config: () => changed((c) => withoutStep(c, 'change-card-pin', 'sensitive-data')),
      rule: 'sensitive-data-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "change-card-pin"/,
    },
    {
      description: 'a CVV path served by another operation without sensitive-data (found by its path)',
      config: () =>
        changed((c) => {
          withoutStep(c, 'get-card-cvv', 'sensitive-data');
          withoutStep(c, 'get-card-cvv', 'validate');
          c.pipelines['get-card-cvv'].policies = c.pipelines['get-card-cvv'].policies.map((step: Yaml) => ('operation' in step ? { operation: [{ action: { name: 'me' } }] } : step));
        }),
      rule: 'sensitive-data-missing',
      severity: 'HIGH',
      where: /^apiEndpoint "get-card-cvv"/,
    },
    {
      description: 'a route without rate-limit',
      config: () => changed((c) => withoutStep(c, 'me', 'rate-limit')),
      rule: 'rate-limit-missing',
      severity: 'MEDIUM',
      where: /^apiEndpoint "me"/,
    },
    {
      description: 'a rate-limit step that runs only under a condition',
      config: () => changed((c) => (c.pipelines.me.policies[1] = { 'rate-limit': [{ action: { limit: 5 }, condition: { name: 'never' } }] })),
      rule: 'rate-limit-missing',
      severity: 'MEDIUM',
      where: /^apiEndpoint "me"/,
      message: /only under a condition/,
    },
    {
      description: 'the expression policy whitelisted',
      config: () => changed((c) => c.policies.push('expression')),
      rule: 'expression-policy',
      severity: 'CRITICAL',
      where: /^policies "expression"$/,
    },
    {
      description: 'the expression condition nested in a not',
      config: () =>
        changed((c) => (stepOf(c, 'me', 'operation').operation[0].condition = { name: 'not', condition: { name: 'expression', expression: 'false' } })),
      rule: 'expression-condition',
      severity: 'CRITICAL',
      where: /^pipeline "me", policy "operation"$/,
    },
    {
      description: 'the json-schema condition (it rewrites the body it tests) nested in an allOf',
      config: () =>
        changed(
          (c) =>
            (stepOf(c, 'me', 'operation').operation[0].condition = {
              name: 'allOf',
              conditions: [{ name: 'always' }, { name: 'json-schema', logErrors: false, schema: { $id: 'urn:audit-test', properties: { cardKey: { default: 'CK0000000000000000' } } } }],
            })
        ),
      rule: 'body-rewriting-condition',
      severity: 'CRITICAL',
      where: /^pipeline "me", policy "operation"$/,
    },
    {
      description: 'an idempotency step on a route whose answer carries a webhook signing secret',
      config: () => changed((c) => c.pipelines['rotate-webhook-secret'].policies.splice(-1, 0, { idempotency: [{ action: { ttlHours: 24 } }] })),
      rule: 'secret-replay-store',
      severity: 'CRITICAL',
      where: /^apiEndpoint "rotate-webhook-secret"/,
    },
    {
      description: 'an unused built-in (proxy) whitelisted',
      config: () => changed((c) => c.policies.push('proxy')),
      rule: 'builtin-policy',
      severity: 'HIGH',
      where: /^policies "proxy"$/,
    },
    {
      description: 'a built-in that evaluates code (log) whitelisted',
      config: () => changed((c) => c.policies.push('log')),
      rule: 'builtin-policy',
      severity: 'HIGH',
      where: /^policies "log"$/,
      message: /evaluates code from configuration/,
    },
    {
      description: "express-gateway's stock admin section",
      config: () => changed((c) => (c.admin = { port: 9876, host: 'localhost' })),
      rule: 'stock-admin-api',
      severity: 'CRITICAL',
      where: /^gateway\.config\.yml admin$/,
    },
    {
      description: 'the admin API on every interface',
      config: shippedConfig,
      admin: { adminHost: '0.0.0.0', adminTokenConfigured: true },
      rule: 'admin-api-exposed',
      severity: 'CRITICAL',
      where: /^ADMIN_HOST$/,
      message: /0\.0\.0\.0, beyond loopback/,
    },
    {
      description: 'the admin API on a private address',
      config: shippedConfig,
      admin: { adminHost: '10.0.0.5', adminTokenConfigured: true },
      rule: 'admin-api-exposed',
      severity: 'CRITICAL',
      where: /^ADMIN_HOST$/,
    },
    {
      description: 'the admin API without a token',
      config: shippedConfig,
      admin: { adminHost: '127.0.0.1', adminTokenConfigured: false },
      rule: 'admin-token-missing',
      severity: 'CRITICAL',
      where: /^ADMIN_TOKEN$/,
    },
    {
      description: 'an apiEndpoint served by two pipelines',
      config: () => changed((c) => (c.pipelines['me-again'] = { apiEndpoints: ['me'], policies: c.pipelines.me.policies })),
      rule: 'pipeline-ambiguous',
      severity: 'MEDIUM',
      where: /^apiEndpoint "me" \(pipeline "me-again"\)$/,
    },
    {
      description: 'an apiEndpoint no pipeline serves',
      config: () => changed((c) => (c.apiEndpoints.orphan = { paths: '/api/partner/orphan', methods: 'GET' })),
      rule: 'route-unserved',
      severity: 'LOW',
      where: /^apiEndpoint "orphan"$/,
    },
    {
      description: 'a pathRegex route',
      config: () => changed((c) => (c.apiEndpoints.me = { pathRegex: '^/api/partner/m.*$', methods: 'GET' })),
      rule: 'route-unauditable',
      severity: 'HIGH',
      where: /^apiEndpoint "me"/,
    },
  ];

  for (const testCase of cases) {
    it(`${testCase.severity} ${testCase.rule}: ${testCase.description}`, function () {
      const { findings } = auditGatewayConfig({ model: readRouteModel(testCase.config()), ...(testCase.admin ?? LOOPBACK), pathToRegexp: mountPathToRegexp });
      const hits = findings.filter((f) => f.rule === testCase.rule && testCase.where.test(f.where));
      expect(hits, JSON.stringify(findings, null, 2)).to.have.length(1);
      expect(hits[0].severity).to.equal(testCase.severity);
      if (testCase.message) expect(hits[0].message).to.match(testCase.message);
      // Nothing else became worse than the shipped config's INFO findings, but what the case caused.
      const others = findings.filter((f: AuditFinding) => f !== hits[0] && f.severity !== 'INFO');
      expect(others.every((f) => f.rule === testCase.rule || f.where.startsWith(hits[0].where.split(' (')[0])), JSON.stringify(others, null, 2)).to.equal(true);
    });
  }

  it('routes without a path parameter or an owned body field need no ownership (pin-encryption-key, delivery-methods); the fee checks own cardKey and clientId of their body', function () {
    const { findings } = auditGatewayConfig({
      model: readRouteModel(changed((c) => {
        for (const name of ['get-pin-encryption-key', 'list-delivery-methods']) {
          expect((c.pipelines[name].policies as Yaml[]).some((s) => 'ownership' in s), name).to.equal(false);
        }
        for (const name of ['check-card-issuing-fee', 'check-card-delivery-fee']) {
          expect(stepOf(c, name, 'ownership').ownership.map((a: Yaml) => a.action), name).to.deep.equal([
            { resource: 'card', in: 'body', param: 'cardKey' },
            { resource: 'client', in: 'body', param: 'clientId' },
          ]);
        }
      })),
      ...LOOPBACK,
    });
    expect(findings.filter((f) => f.rule === 'ownership-missing')).to.deep.equal([]);
  });

  it('our rate-limit whitelisted is not an express-gateway built-in; loopback admin hosts pass', function () {
    for (const adminHost of ['127.0.0.1', '127.10.0.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      const { findings } = auditGatewayConfig({ model: readRouteModel(shippedConfig()), adminHost, adminTokenConfigured: true, pathToRegexp: mountPathToRegexp });
      expect(findings.filter((f) => f.severity !== 'INFO'), adminHost).to.deep.equal([]);
    }
    for (const adminHost of ['::', '0.0.0.0', '192.168.1.4', 'admin.internal', '128.0.0.1']) {
      const { findings } = auditGatewayConfig({ model: readRouteModel(shippedConfig()), adminHost, adminTokenConfigured: true, pathToRegexp: mountPathToRegexp });
      expect(findings.map((f) => f.rule), adminHost).to.include('admin-api-exposed');
    }
  });

  it('sorts findings most severe first and survives an empty config', function () {
    const { findings } = auditGatewayConfig({
      model: readRouteModel(changed((c) => {
        withoutStep(c, 'me', 'rate-limit');
        withoutStep(c, 'get-card', 'ownership');
        withoutStep(c, 'get-card-pan', 'sensitive-data');
      })),
      ...LOOPBACK,
    });
    const order = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'];
    const ranks = findings.map((f) => order.indexOf(f.severity));
    expect(ranks).to.deep.equal([...ranks].sort((a, b) => a - b));
    expect(auditGatewayConfig({ model: readRouteModel({}), ...LOOPBACK })).to.deep.equal({ routes: [], findings: [] });
  });
});
