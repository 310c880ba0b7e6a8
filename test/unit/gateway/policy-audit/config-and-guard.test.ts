import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { checkGatewayConfig } from '../../../../gateway/boot/config-guards';
import { readRouteModel } from '../../../../gateway/route-model';
import { BUILTIN_POLICIES, PLUGIN_POLICY_NAMES, POLICY } from '../../../../gateway/policy-audit';
import { readGatewayConfigFile, substituteEnv } from '../../../../gateway/runtime/config-file';
import { JWT_POLICY, POLICIES } from '../../../../policies';
import { parseGatewayYaml } from '../../../../gateway/runtime/gateway-yaml';
import { changedConfig as changed, guardContext, SHIPPED_CONFIG_FILE, shippedConfig, stepOf, SYSTEM_CONFIG, withoutStep, type Yaml } from './shipped-config';

describe('unit: policy-audit configuration file (env substitution as express-gateway does it)', function () {
  const table: { description: string; text: string; env: NodeJS.ProcessEnv; expected: string }[] = [
    { description: 'a set variable wins over the default', text: 'limit: ${RL:-600}', env: { RL: '5' }, expected: 'limit: 5' },
    { description: 'the default when unset', text: 'limit: ${RL:-600}', env: {}, expected: 'limit: 600' },
    { description: 'an empty variable is used as it is', text: 'limit: ${RL:-600}', env: { RL: '' }, expected: 'limit: ' },
    { description: 'unset without default: null', text: 'limit: ${RL}', env: {}, expected: 'limit: null' },
    { description: 'an escaped reference stays', text: 'x: $${RL}', env: { RL: '5' }, expected: 'x: $${RL}' },
    { description: 'several on one line', text: '${A:-1} ${B:-2} ${A}', env: { A: 'a' }, expected: 'a 2 a' },
  ];
  for (const row of table) {
    it(row.description, function () {
      expect(substituteEnv(row.text, row.env)).to.equal(row.expected);
    });
  }

  it('reads the shipped file with its rate limits overridable from the environment, and the upstream timeout from the settings only', function () {
    const limitsOf = (c: Yaml) =>
      Object.fromEntries(
        Object.entries(c.pipelines as Yaml).map(([name, p]) => [name, (p.policies as Yaml[]).find((s) => 'rate-limit' in s)?.['rate-limit'][0].action.limit])
      );
    const defaults = limitsOf(shippedConfig());
    expect(defaults.me).to.equal(600);
    expect(defaults['lock-card']).to.equal(120);
    expect(defaults['openapi-document']).to.equal(600);
    expect(defaults['api-docs']).to.equal(600);
    expect(defaults['health-check'], 'the health check is not rate limited').to.equal(undefined);
    const tuned = readGatewayConfigFile(SHIPPED_CONFIG_FILE, { RATE_LIMIT_READS_PER_MINUTE: '7', RATE_LIMIT_WRITES_PER_MINUTE: '3', RATE_LIMIT_PUBLIC_PER_MINUTE: '9', UPSTREAM_TIMEOUT_MS: '800' }) as Yaml;
    expect(limitsOf(tuned)).to.include({ me: 7, 'lock-card': 3, 'openapi-document': 9, 'api-docs': 9, 'get-card-cvv': 7, 'check-card-issuing-fee': 3 });
    const operation = (tuned.pipelines['get-card-cvv'].policies as Yaml[]).find((s) => 'operation' in s)!.operation[0].action;
    // The upstream calls' timeout is a setting (settings.ts), never substituted into the YAML.
    expect(operation).to.deep.equal({ name: 'get-card-cvv' });
    expect(fs.readFileSync(SHIPPED_CONFIG_FILE, 'utf8')).to.not.match(/\$\{UPSTREAM_TIMEOUT_MS/);
  });

  it("parses with express-gateway's own js-yaml, so the audit reads what the gateway boots with", function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-audit-yaml-'));
    const file = path.join(dir, 'gateway.config.yml');
    // YAML 1.1 reads `yes` as true; express-gateway's js-yaml reads the string.
    fs.writeFileSync(file, 'base: &base { flag: yes }\nused: *base\nsecret: ${AUDIT_SECRET}\n');
    const parsed = readGatewayConfigFile(file, { AUDIT_SECRET: 's3cr3t-value' }) as Yaml;
    expect(parsed).to.deep.equal({ ...parseGatewayYaml(fs.readFileSync(file, 'utf8').replace('${AUDIT_SECRET}', 's3cr3t-value')) as Yaml });
    expect(parsed.used).to.deep.equal({ flag: 'yes' });
    // A parse error names the position and reason, never the text after substitution.
    fs.writeFileSync(file, 'pipelines:\n  me: [${AUDIT_SECRET}\n');
    expect(() => readGatewayConfigFile(file, { AUDIT_SECRET: 's3cr3t-value' }))
      .to.throw(/^invalid YAML at line \d+, column \d+: /)
      .and.satisfy((err: Error) => !err.message.includes('s3cr3t-value'));
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('unit: policy-audit facts agree with the code', function () {
  it('knows every policy our plugin registers, and the JWT policy by its name', function () {
    expect([...PLUGIN_POLICY_NAMES]).to.have.members(POLICIES.map((p) => p.name));
    expect(POLICY.jwt).to.equal(JWT_POLICY);
  });

  it("knows every express-gateway built-in policy (its lib/policies folders)", function () {
    const dir = path.dirname(require.resolve('express-gateway/lib/policies'));
    const folders = fs.readdirSync(dir).filter((entry) => fs.statSync(path.join(dir, entry)).isDirectory());
    expect(Object.keys(BUILTIN_POLICIES)).to.have.members(folders);
  });
});

describe('unit: checkGatewayConfig runs the policy audit (CRITICAL refuses)', function () {
  const systemConfig = SYSTEM_CONFIG;
  const context = guardContext;

  it('accepts the shipped config', function () {
    expect(checkGatewayConfig(readRouteModel(shippedConfig()), systemConfig, context())).to.deep.equal([]);
  });

  it('refuses an {id} route without ownership, naming the rule (and the operation whose entry says it checks it)', function () {
    const problems = checkGatewayConfig(readRouteModel(
      changed((c) => withoutStep(c, 'get-card-pan', 'ownership'))),
      systemConfig,
      context()
    );
    expect(problems.map((p) => p.where)).to.deep.equal(['pipeline "get-card-pan", operation "get-card-pan"', 'apiEndpoint "get-card-pan" (pipeline "get-card-pan")']);
    expect(problems[0].message).to.match(/^checks the owner of the card named by path parameter id/);
    expect(problems[1].message).to.match(/runs no ownership step.*\[policy audit: ownership-missing\]$/);
  });

  it('refuses the admin API beyond loopback, or without a token', function () {
    expect(checkGatewayConfig(readRouteModel(shippedConfig()), systemConfig, context({ adminHost: '0.0.0.0' })).map((p) => p.where)).to.deep.equal(['ADMIN_HOST']);
    expect(checkGatewayConfig(readRouteModel(shippedConfig()), systemConfig, context({ adminTokenConfigured: false })).map((p) => p.where)).to.deep.equal(['ADMIN_TOKEN']);
  });

  it("refuses express-gateway's json-schema condition, which rewrites the body it tests after validation and ownership", function () {
    const config = changed(
      (c) =>
        (stepOf(c, 'check-card-issuing-fee', 'operation').operation[0].condition = {
          name: 'json-schema',
          logErrors: false,
          schema: { $id: 'urn:guard-test', properties: { cardKey: { default: 'CK0000000000000000' } } },
        })
    );
    const problems = checkGatewayConfig(readRouteModel(config), systemConfig, context());
    expect(problems.map((p) => p.where)).to.deep.equal(['pipeline "check-card-issuing-fee", policy "operation"']);
    expect(problems[0].message).to.match(/json-schema condition rewrites the request body .* \[policy audit: body-rewriting-condition\]$/);
  });

  it('refuses an idempotency step on a route whose answer carries a secret (its replay store would keep it in clear)', function () {
    const steps = [{ action: { ttlHours: 168 } }, { action: { ttlHours: 168 }, condition: { name: 'method', methods: ['POST'] } }, { action: { ttlHours: 1 }, condition: { name: 'not', condition: { name: 'never' } } }];
    for (const [pipeline, step] of ['create-webhook-endpoint', 'rotate-webhook-secret', 'create-authorization-endpoint', 'rotate-authorization-endpoint-secret', 'get-card-cvv', 'get-card-pan'].flatMap((p) => steps.map((s) => [p, s] as const))) {
      const config = changed((c) => c.pipelines[pipeline].policies.splice(-1, 0, { idempotency: [step] }));
      const problems = checkGatewayConfig(readRouteModel(config), systemConfig, context());
      expect(problems.map((p) => p.message).join('\n'), `${pipeline} ${JSON.stringify(step)}`).to.match(/\[policy audit: secret-replay-store\]/);
    }
  });

  it('lets HIGH and MEDIUM findings through (they fail npm run audit:policies, not the boot)', function () {
    const config = changed((c) => {
      stepOf(c, 'get-card-pan', 'operation').operation = [{ action: { name: 'get-card-pan' } }];
      withoutStep(c, 'me', 'rate-limit');
    });
    expect(checkGatewayConfig(readRouteModel(config), systemConfig, context())).to.deep.equal([]);
  });

  it('lists a cause the guard checks itself once, not twice', function () {
    const table: { description: string; change: (c: Yaml) => void; message: RegExp }[] = [
      { description: 'no JWT', change: (c) => withoutStep(c, 'me', 'es512-jwt'), message: /lacks the es512-jwt policy as its first/ },
      { description: 'stock admin API', change: (c) => (c.admin = { port: 1 }), message: /admin API has no authentication/ },
      { description: 'expression policy', change: (c) => c.policies.push('expression'), message: /expression policy runs code/ },
      {
        description: 'nested expression condition',
        change: (c) => ((c.pipelines.me.policies as Yaml[]).find((s) => 'operation' in s)!.operation[0].condition = { name: 'allOf', conditions: [{ name: 'always' }, { name: 'expression', expression: '1' }] }),
        message: /expression condition runs code/,
      },
    ];
    for (const row of table) {
      const problems = checkGatewayConfig(readRouteModel(changed(row.change)), systemConfig, context());
      expect(problems, row.description).to.have.length(1);
      expect(problems[0].message, row.description).to.match(row.message);
    }
  });

  it('checks the names of nested conditions', function () {
    const problems = checkGatewayConfig(readRouteModel(
      changed((c) => ((c.pipelines.me.policies as Yaml[]).find((s) => 'operation' in s)!.operation[0].condition = { name: 'not', condition: { name: 'moon-phase' } }))),
      systemConfig,
      context()
    );
    expect(problems.map((p) => p.message)).to.deep.equal(['unknown condition "moon-phase"']);
  });
});
