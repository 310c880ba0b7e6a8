import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { limitConcurrency, PROCESS_CONCURRENCY } from '../support/concurrency';
import { runGatewayExpectingFailure, startGatewayProcess } from '../support/gateway-process';
import { ATTACK_CONTRADICTION, PUBLIC_ROUTE_ATTACKS } from '../support/public-route-attacks';
import { shippedConfigCopy, type Yaml } from '../support/config-files';

/** A copy of the shipped config folder, with a change applied to gateway or system config. */
const brokenConfig = (change: Parameters<typeof shippedConfigCopy>[0]): string => shippedConfigCopy(change);

/** The first action of a pipeline's step of a policy (wherever the step sits in the chain). */
function actionOf(c: Yaml, pipeline: string, policy: string): Yaml {
  return (c.pipelines[pipeline].policies as Yaml[]).find((step) => policy in step)![policy][0];
}

/** The first action of the me pipeline's operation step. */
function operationOfMe(c: Yaml): Yaml {
  return actionOf(c, 'me', 'operation');
}

/** Removes a pipeline's steps of a policy. */
function withoutStep(c: Yaml, pipeline: string, policy: string): void {
  c.pipelines[pipeline].policies = (c.pipelines[pipeline].policies as Yaml[]).filter((step) => !(policy in step));
}

/**
 * One refusal. `config` builds its own configuration directory; or the case changes the shipped
 * config folder (`gateway`, `system`, `files`), and every case with the same `together` is refused
 * by one boot of all their changes, applied in the order of the list: the guards stage lists every
 * problem the policy audit finds (plugins that failed to load among them). A group holds changes
 * that do not hide one another (gateway/policy-audit/boot-rules.ts: a route outside /api/partner
 * skips that route's JWT checks, an unknown policy skips its step's checks) and messages that only
 * their own change produces. Four groups because of the JWT checks on the me route: removing the
 * JWT step, putting it last, putting it behind a condition and moving the route outside
 * /api/partner each produce or hide the message another of them is matched by, so each sits in a
 * group of its own; the two public-route attacks (one message pattern for both, and a JWT-first
 * message of their own) sit apart, and not beside "the JWT policy after the handler".
 */
type GuardCase = { description: string; expectedMessage: RegExp } & ({ config: () => string } | ({ together: string } & ConfigChange));

/** Changes to the shipped config folder (shippedConfigCopy's): gateway.config.yml, system.config.yml, files. */
type ConfigChange = NonNullable<Parameters<typeof shippedConfigCopy>[0]>;

/** One copy of the shipped config folder with every change of `changes` applied, in order. */
function allChanges(changes: ConfigChange[]): string {
  const of = <K extends keyof ConfigChange>(key: K) => changes.flatMap((change) => (change[key] ? [change[key]!] : []));
  const [gateway, system, files] = [of('gateway'), of('system'), of('files')];
  return brokenConfig({
    gateway: gateway.length > 0 ? (c) => gateway.forEach((change) => change(c)) : undefined,
    system: system.length > 0 ? (c) => system.forEach((change) => change(c)) : undefined,
    files: files.length > 0 ? (dir) => files.forEach((change) => change(dir)) : undefined,
  });
}

describe('e2e: boot guards refuse a broken configuration (exit 1, clear message)', function () {
  this.timeout(60_000);

  const cases: GuardCase[] = [
    {
      description: 'a missing models/users.json (express-gateway would crash)',
      config: () => brokenConfig({ files: (dir) => fs.rmSync(path.join(dir, 'models', 'users.json')) }),
      expectedMessage: /models\/users\.json: missing/,
    },
    {
      description: 'an invalid system.config.yml (express-gateway loads it)',
      config: () => brokenConfig({ files: (dir) => fs.appendFileSync(path.join(dir, 'system.config.yml'), '\nplugins: [unclosed\n') }),
      expectedMessage: /express-gateway could not load the configuration: unexpected end of the stream/,
    },
    {
      description: 'a !!js/function tag in gateway.config.yml (read with the safe schema)',
      config: () => brokenConfig({ files: (dir) => fs.appendFileSync(path.join(dir, 'gateway.config.yml'), '\nx-probe: !!js/function "function () { return 1 }"\n') }),
      expectedMessage: /gateway\.config\.yml: invalid YAML at line \d+, column \d+: unknown tag/,
    },
    {
      description: 'a plugin whose package does not exist',
      together: 'audit-c',
      system: (c) => (c.plugins['ghost-plugin'] = { package: '/nonexistent/ghost-plugin.js' }),
      expectedMessage: /a plugin failed to load: .*ghost-plugin/,
    },
    {
      description: 'a plugin that throws while it initialises',
      together: 'audit-b',
      system: (c) => (c.plugins['throwing-plugin'] = { package: '${EG_CONFIG_DIR}/throwing-plugin.js' }),
      files: (dir) =>
        fs.writeFileSync(path.join(dir, 'throwing-plugin.js'), "module.exports = { version: '1.2.0', init() { throw new Error('boom in init'); } };\n"),
      expectedMessage: /a plugin failed to load: .*boom in init/,
    },
    {
      description: 'a pipeline naming an unknown policy',
      together: 'audit-a',
      gateway: (c) => {
        c.policies.push('rate-limiter-9000');
        c.pipelines.me.policies.splice(1, 0, { 'rate-limiter-9000': [{ action: {} }] });
      },
      expectedMessage: /pipeline "me", policy "rate-limiter-9000": unknown policy/,
    },
    {
      description: 'a pipeline using a policy missing from the whitelist',
      together: 'audit-d',
      gateway: (c) => (c.policies = ['es512-jwt']),
      expectedMessage: /policy "operation": is not declared in the policies whitelist/,
    },
    {
      description: 'a step with an unknown condition',
      together: 'audit-b',
      gateway: (c) => (operationOfMe(c).condition = { name: 'moon-phase' }),
      expectedMessage: /unknown condition "moon-phase"/,
    },
    {
      description: 'the expression condition (it runs code from configuration)',
      together: 'audit-c',
      gateway: (c) => (operationOfMe(c).condition = { name: 'expression', expression: 'true' }),
      expectedMessage: /the expression condition runs code from configuration and is never allowed/,
    },
    {
      description: 'action params of the wrong type',
      together: 'audit-c',
      gateway: (c) => (c.pipelines.me.policies[0]['es512-jwt'][0].action.clockSkewSeconds = 'lots'),
      expectedMessage: /pipeline "me", policy "es512-jwt": invalid action params: \/clockSkewSeconds must be integer/,
    },
    {
      description: 'an unknown action param (a typo)',
      together: 'audit-b',
      gateway: (c) => (c.pipelines.me.policies[0]['es512-jwt'][0].action.clockSkew = 5),
      expectedMessage: /invalid action params: action must NOT have additional properties "clockSkew"/,
    },
    // A pipeline that contradicts its operation's catalog entry (gateway/catalog). The guard lists
    // every contradiction it finds, so these share one refused boot (each on a pipeline of its
    // own, so that none hides another), with other guards' cases; gateway/boot's unit tests take
    // each alone.
    {
      description: 'an operation the catalog does not have',
      together: 'audit-a',
      gateway: (c) => (operationOfMe(c).action.name = 'delete-everything'),
      expectedMessage: /pipeline "me", operation "delete-everything": is not an operation of the catalog/,
    },
    {
      description: "an apiEndpoint at another path than its operation's",
      together: 'audit-a',
      gateway: (c) => (c.apiEndpoints['get-individual'].paths = '/api/partner/individuals/:id'),
      expectedMessage: /pipeline "get-individual", operation "get-individual": apiEndpoint "get-individual" is GET \/api\/partner\/individuals\/:id; the operation is GET \/api\/partner\/individual\/accounts\/:id/,
    },
    {
      description: "an apiEndpoint with another method than its operation's",
      together: 'audit-a',
      gateway: (c) => (c.apiEndpoints['lock-card'].methods = 'PUT'),
      expectedMessage: /pipeline "lock-card", operation "lock-card": apiEndpoint "lock-card" is PUT \/api\/partner\/cards\/:id\/lock; the operation is POST/,
    },
    {
      description: 'an operation checking card ownership, its pipeline without the ownership step',
      together: 'audit-a',
      gateway: (c) => withoutStep(c, 'unlock-card', 'ownership'),
      expectedMessage: /pipeline "unlock-card", operation "unlock-card": checks the owner of the card named by path parameter id, but no unconditional ownership step does/,
    },
    {
      description: 'an operation checking ownership of body fields, its ownership step checking another field',
      together: 'audit-a',
      gateway: (c) => (c.pipelines['check-card-issuing-fee'].policies.find((s: Yaml) => 'ownership' in s).ownership = [{ action: { resource: 'card', in: 'body', param: 'cardKey' } }]),
      expectedMessage: /pipeline "check-card-issuing-fee", operation "check-card-issuing-fee": checks the owner of the client named by body\.clientId/,
    },
    {
      description: 'an operation with a body schema, its pipeline validating another',
      together: 'audit-a',
      gateway: (c) => (c.pipelines['activate-card'].policies.find((s: Yaml) => 'validate' in s).validate = [{ action: { body: 'card-restrict' } }]),
      expectedMessage: /pipeline "activate-card", operation "activate-card": reads the body as card-status-change, but no unconditional validate step checks it/,
    },
    {
      description: 'an operation with a query schema, its pipeline without the validate step',
      together: 'audit-a',
      gateway: (c) => withoutStep(c, 'list-individuals', 'validate'),
      expectedMessage: /pipeline "list-individuals", operation "list-individuals": reads the query as pagination-query, but no unconditional validate step checks it/,
    },
    {
      description: 'a sensitive operation without sensitive-data',
      together: 'audit-a',
      gateway: (c) => withoutStep(c, 'change-card-pin', 'sensitive-data'),
      expectedMessage: /pipeline "change-card-pin", operation "change-card-pin": returns or carries card data, a PIN or a 3DS answer, but the pipeline runs no unconditional sensitive-data step/,
    },
    {
      description: 'a pipeline ending in no operation',
      together: 'audit-a',
      gateway: (c) => withoutStep(c, 'get-card-status', 'operation'),
      expectedMessage: /pipeline "get-card-status": has no operation step/,
    },
    {
      description: 'a partner route without the JWT policy',
      together: 'audit-d',
      gateway: (c) => c.pipelines.me.policies.shift(),
      expectedMessage: /route \/api\/partner\/me \(pipeline "me"\) lacks the es512-jwt policy/,
    },
    {
      description: 'the JWT policy after the handler',
      together: 'audit-b',
      gateway: (c) => c.pipelines.me.policies.reverse(),
      expectedMessage: /lacks the es512-jwt policy as its first, unconditional policy/,
    },
    {
      description: 'the JWT policy behind a condition',
      together: 'audit-c',
      gateway: (c) => (c.pipelines.me.policies[0]['es512-jwt'][0].condition = { name: 'never' }),
      expectedMessage: /the JWT policy must run unconditionally/,
    },
    {
      description: "express-gateway's stock admin API enabled",
      together: 'audit-a',
      gateway: (c) => (c.admin = { port: 9876, host: 'localhost' }),
      expectedMessage: /admin API has no authentication/,
    },
    {
      description: 'the expression built-in whitelisted',
      together: 'audit-a',
      gateway: (c) => c.policies.push('expression'),
      expectedMessage: /the expression policy runs code from configuration and is never allowed/,
    },
    {
      description: 'an unused built-in (proxy) whitelisted',
      together: 'audit-a',
      gateway: (c) => c.policies.push('proxy'),
      expectedMessage: /policies "proxy": express-gateway built-in policies are not whitelisted/,
    },
    {
      description: 'a route outside /api/partner',
      together: 'audit-a',
      gateway: (c) => (c.apiEndpoints.me.paths = '/internal/me'),
      expectedMessage: /path "\/internal\/me" is outside \/api\/partner/,
    },
    {
      description: 'a wildcard route',
      together: 'audit-b',
      gateway: (c) => (c.apiEndpoints.me.paths = '/api/partner/*'),
      expectedMessage: /must not use wildcards/,
    },
    // The configs an outside review hot-reloaded (a public route turned into a card-data proxy): refused at boot too.
    // One attack to a group (a boot of its own beyond the second): the contradiction's pattern fits
    // either attack's message.
    ...PUBLIC_ROUTE_ATTACKS.map((attack, i) => ({
      description: attack.description,
      together: ['audit-a', 'audit-c'][i] ?? `attack-${i}`,
      gateway: (c: Yaml) => attack.change(c, 'CK3FA09B21C4D5E6F7'),
      expectedMessage: new RegExp(`${ATTACK_CONTRADICTION.source}[\\s\\S]*is not its public shape .*\\[policy audit: public-route-shape\\]`),
    })),
    {
      description: 'invalid YAML',
      config: () => brokenConfig({ files: (dir) => fs.appendFileSync(path.join(dir, 'gateway.config.yml'), '\npipelines: [unclosed\n') }),
      expectedMessage: /gateway\.config\.yml: invalid YAML at line \d+, column \d+/,
    },
    {
      description: "a config express-gateway's schema rejects",
      config: () => brokenConfig({ gateway: (c) => (c.apiEndpoints = 'everything') }),
      expectedMessage: /gateway\.config\.yml: express-gateway's gateway\.config schema refuses it: data\.apiEndpoints should be object/,
    },
  ];

  /**
   * Each case (or group of cases) is a gateway process that loads express-gateway, then refuses its
   * configuration: about a second of one core, most of it the process starting. They share nothing
   * (a config folder each, no database write), so the `before` hook starts them all, one per core
   * (at most four) at a time, and each `it` awaits and checks its own: a case still fails, and is
   * reported, on its own.
   */
  let refusals: Promise<{ code: number | null; output: string }>[] = [];
  let shippedHealth: Promise<number>;
  let badEnvironment: Promise<{ code: number | null; output: string }>;

  before(function () {
    const run = limitConcurrency(PROCESS_CONCURRENCY);
    // The one gateway that starts (the longest job) first, so that the refusals run beside it.
    shippedHealth = run(async () => {
      const gateway = await startGatewayProcess({ configDir: brokenConfig({}) });
      try {
        const response = await fetch(`${gateway.baseUrl}/api/partner/health-check`);
        await response.arrayBuffer();
        return response.status;
      } finally {
        await gateway.stop();
      }
    });
    const boots = new Map<string, ReturnType<typeof runGatewayExpectingFailure>>();
    refusals = cases.map((testCase) => {
      if ('config' in testCase) return run(() => runGatewayExpectingFailure({ configDir: testCase.config() }));
      const { together } = testCase;
      if (!boots.has(together)) {
        const changes = cases.flatMap((other) => ('together' in other && other.together === together ? [other] : []));
        boots.set(together, run(() => runGatewayExpectingFailure({ configDir: allChanges(changes) })));
      }
      return boots.get(together)!;
    });
    badEnvironment = run(() => runGatewayExpectingFailure({ env: { ADMIN_TOKEN: 'short' } }));
  });

  cases.forEach((testCase, i) => {
    it(`refuses ${testCase.description}`, async function () {
      const result = await refusals[i];
      expect(result.code, result.output).to.equal(1);
      expect(result.output).to.match(/configuration refused/);
      expect(result.output).to.match(testCase.expectedMessage);
      expect(result.output, 'no stack trace on stderr').to.not.match(/^\s+at .*\(.*\.js:\d+:\d+\)$/m);
    });
  });

  it('starts with the shipped configuration copied the same way (the cases above fail for their reason only)', async function () {
    expect(await shippedHealth).to.equal(200);
  });

  it('refuses a bad environment variable before anything starts', async function () {
    const result = await badEnvironment;
    expect(result.code).to.equal(1);
    expect(result.output).to.match(/ADMIN_TOKEN must be at least 32 characters/);
  });
});
