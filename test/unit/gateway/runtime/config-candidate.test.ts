import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import express from 'express';
import YAML from 'yaml';
import { changedYaml, type Yaml } from '../../../support/config-files';
import type { PolicySchema } from '../../../../policies/policy';
import { ConfigRefusedError } from '../../../../gateway/boot/config-guards';
import { buildCandidate, buildInitialConfig, configHash, envReplace, readConfigSource, type ConfigSource } from '../../../../gateway/runtime/config-candidate';
import { loadAndCheck, type GatewayRuntime, type LoadedGateway } from '../../../../gateway/runtime/express-gateway';
import { openServices, type InProcessServices } from '../../../support/in-process';

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', '..', '..', 'config');
const SHIPPED_FILE = path.join(SHIPPED_CONFIG, 'gateway.config.yml');

const sourceOf = (text: string): ConfigSource => ({ path: '/virtual/gateway.config.yml', text, hash: configHash(text) });
const changed = (change: (c: Yaml) => void): string => changedYaml(fs.readFileSync(SHIPPED_FILE, 'utf8'), change);

describe('unit: gateway/runtime/config-candidate', function () {
  describe('envReplace (express-gateway semantics)', function () {
    const env = { PGW_A: 'alpha', PGW_EMPTY: '' };
    const cases: { description: string; text: string; expected: string; unknown?: string[] }[] = [
      { description: 'a set variable', text: 'x: ${PGW_A}', expected: 'x: alpha' },
      { description: 'a set variable wins over its default', text: 'x: ${PGW_A:-d}', expected: 'x: alpha' },
      { description: 'a set but empty variable is empty', text: 'x: "${PGW_EMPTY}"', expected: 'x: ""' },
      { description: 'a set but empty variable wins over its default (unlike the shell)', text: 'x: "${PGW_EMPTY:-d}"', expected: 'x: ""' },
      { description: 'an unset variable takes its default', text: 'x: ${PGW_UNSET:-/opt/dist}', expected: 'x: /opt/dist' },
      { description: 'an unset variable without default is "null"', text: 'x: ${PGW_UNSET}', expected: 'x: null', unknown: ['PGW_UNSET'] },
      { description: 'an empty default counts as none', text: 'x: ${PGW_UNSET:-}', expected: 'x: null', unknown: ['PGW_UNSET'] },
      { description: '$${...} is left as written', text: 'x: $${PGW_A}', expected: 'x: $${PGW_A}' },
      { description: 'several on one line', text: '${PGW_A}-${PGW_UNSET:-b}-${PGW_A}', expected: 'alpha-b-alpha' },
    ];
    for (const testCase of cases) {
      it(testCase.description, function () {
        const unknown: string[] = [];
        expect(envReplace(testCase.text, env, (name) => unknown.push(name))).to.equal(testCase.expected);
        expect(unknown).to.deep.equal(testCase.unknown ?? []);
      });
    }
  });

  describe('buildCandidate', function () {
    this.timeout(30_000);
    let services: InProcessServices;
    let loaded: LoadedGateway;
    let runtime: GatewayRuntime;

    before(async function () {
      services = await openServices();
      loaded = loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1' });
      runtime = loaded.runtime;
    });

    after(async function () {
      await services?.close();
    });

    it("substitutes variables exactly as express-gateway's own loader does", function () {
      // express-gateway's envReplace is not exported: its Config class (a fresh instance, not the
      // singleton) loads a file full of references, and our substitution must parse to the same.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-env-'));
      const text = 'apiEndpoints:\n  probe:\n    host: "${PGW_ENV_A}|${PGW_ENV_A:-d}|${PGW_ENV_UNSET:-d}|${PGW_ENV_UNSET}|$${PGW_ENV_A}|${PGW_ENV_EMPTY}|${PGW_ENV_EMPTY:-d}|${PGW_ENV_UNSET:-}"\n';
      fs.writeFileSync(path.join(dir, 'gateway.config.yml'), text);
      process.env.PGW_ENV_A = 'alpha';
      process.env.PGW_ENV_EMPTY = '';
      try {
        const Config = require('express-gateway/lib/config/config') as new () => { gatewayConfigPath?: string; gatewayConfig: Yaml; loadConfig(type: string): void };
        const theirs = new Config();
        theirs.gatewayConfigPath = path.join(dir, 'gateway.config.yml');
        theirs.loadConfig('gateway');
        const ours = YAML.parse(envReplace(text, process.env)) as Yaml;
        expect(ours.apiEndpoints.probe.host).to.equal(theirs.gatewayConfig.apiEndpoints.probe.host);
        expect(ours.apiEndpoints.probe.host).to.equal('alpha|alpha|d|null|$${PGW_ENV_A}|||null');
      } finally {
        delete process.env.PGW_ENV_A;
        delete process.env.PGW_ENV_EMPTY;
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('hands express-gateway superagent, chokidar and esprima, loaded at their first use (stand-ins until then)', function () {
      const egRequire = createRequire(require.resolve('express-gateway/package.json'));
      for (const [name, member] of [
        ['superagent', 'get'],
        ['chokidar', 'watch'],
        ['esprima', 'parse'],
      ] as const) {
        const modulePath = egRequire.resolve(name);
        // What express-gateway's modules hold (a stand-in, unless the test process loaded it first).
        const held = require.cache[modulePath]!.exports as Record<string, unknown>;
        const used = held[member];
        expect(used, `${name}.${member}`).to.be.a('function');
        // The first use loaded the real module into the cache, and the stand-in hands out its members.
        const real = egRequire(name) as Record<string, unknown>;
        expect(require.cache[modulePath]!.exports).to.equal(real);
        expect(real[member]).to.equal(used);
      }
      const request = (require.cache[egRequire.resolve('superagent')]!.exports as (method: string, url: string) => { method: string; url: string })('GET', 'http://127.0.0.1:1/x');
      expect(request.method).to.equal('GET');
      expect(request.url).to.equal('http://127.0.0.1:1/x');
    });

    it("builds the shipped configuration on its own config object, never express-gateway's singleton", async function () {
      const singleton = require('express-gateway/lib/config') as { gatewayConfig: Yaml };
      const singletonConfig = singleton.gatewayConfig;
      const snapshot = JSON.stringify(singletonConfig);
      const source = readConfigSource(SHIPPED_FILE);
      expect(source.hash).to.equal(crypto.createHash('sha256').update(fs.readFileSync(SHIPPED_FILE)).digest('hex'));

      const candidate = await buildCandidate(source, runtime, services);
      expect(candidate.router).to.be.a('function');
      expect(candidate.unknownVariables).to.deep.equal([]);
      expect(candidate.gatewayConfig).to.not.equal(singletonConfig);
      expect(singleton.gatewayConfig).to.equal(singletonConfig);
      expect(JSON.stringify(singleton.gatewayConfig)).to.equal(snapshot);

      // Built twice (a reload of the same file): policy factories tolerate it.
      expect((await buildCandidate(source, runtime, services)).router).to.be.a('function');
    });

    it('reads gateway.config.yml once per boot: express-gateway\'s loader never reads it, the pipelines are built from the bytes checked', async function () {
      const reads: string[] = [];
      const readFileSync = fs.readFileSync;
      const counting = ((file: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
        if (typeof file === 'string' && path.basename(file).startsWith('gateway.config.')) reads.push(file);
        return (readFileSync as (...args: unknown[]) => unknown)(file, ...rest);
      }) as typeof fs.readFileSync;
      fs.readFileSync = counting;
      let boot: LoadedGateway;
      try {
        boot = loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1' });
        expect(reads, 'reads while loading and checking').to.deep.equal([SHIPPED_FILE]);
        const built = await buildInitialConfig(boot.initial, boot.runtime, services);
        expect(reads, 'no read while building the pipelines').to.have.length(1);
        expect(built.source.hash).to.equal(configHash(readFileSync(SHIPPED_FILE)));
        expect(built.gatewayConfig).to.equal(boot.initial.gatewayConfig);
      } finally {
        fs.readFileSync = readFileSync;
      }
      // express-gateway's config singleton is the one the runtime loaded, holding the configuration
      // checked above: requiring it loads nothing a second time.
      const singleton = require('express-gateway/lib/config') as { gatewayConfig: Yaml; gatewayConfigPath: string };
      expect(singleton.gatewayConfig).to.equal(boot.initial.gatewayConfig);
      expect(singleton.gatewayConfigPath).to.equal(SHIPPED_FILE);
    });

    it('names the apiEndpoint a pipeline serves on the request (req.apiEndpointName), never through egContext', async function () {
      const candidate = await buildCandidate(readConfigSource(SHIPPED_FILE), runtime, services);
      const seen: (string | undefined)[] = [];
      const app = express();
      app.use((req, res, next) => {
        res.on('finish', () => seen.push(req.apiEndpointName));
        next();
      });
      app.use(candidate.router);
      const server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const health = await fetch(`${base}/api/partner/health-check`);
        expect(health.status).to.equal(200);
        const document = await fetch(`${base}/api/partner/openapi.json`);
        await document.arrayBuffer();
        expect(document.status).to.equal(200);
        // The rate-limit policy counts by the same name.
        expect(document.headers.get('ratelimit-policy')).to.match(/^"openapi-document";/);
        const unrouted = await fetch(`${base}/api/partner/no-such-route`);
        await unrouted.arrayBuffer();
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      expect(seen).to.deep.equal(['health-check', 'openapi-document', undefined]);
    });

    it("hands our policies the services they are built with, never express-gateway's config: a build without them refuses", function () {
      // What express-gateway's pipeline builder does with a registered policy: `policy(action, config)`.
      const registered = (require('express-gateway/lib/policies') as typeof import('express-gateway/lib/policies')).resolve('operation');
      const egConfig = { gatewayConfig: loaded.initial.gatewayConfig, systemConfig: runtime.systemConfig };
      expect(() => registered.policy({ name: 'health-check' }, egConfig)).to.throw(/policy operation: built without the gateway's services/);
    });

    /** A runtime whose guards know a policy express-gateway's registry does not: only the build can fail. */
    const withGhostPolicy = (r: GatewayRuntime): GatewayRuntime => ({
      ...r,
      guardContext: {
        ...r.guardContext,
        pluginPolicies: new Map([...r.guardContext.pluginPolicies, ['ghost-policy', { $id: 'urn:test:ghost', type: 'object', description: 'test', properties: {} } as PolicySchema]]),
      },
    });

    const rejections: { description: string; text: () => string; stage: string; reason: RegExp; runtime?: (r: GatewayRuntime) => GatewayRuntime }[] = [
      { description: 'invalid YAML (position, no quoted text)', text: () => 'pipelines: [unclosed\n', stage: 'yaml', reason: /^invalid YAML at line 2, column 1: unexpected end/ },
      { description: 'a YAML list instead of a mapping', text: () => '- a\n- b\n', stage: 'yaml', reason: /is not a YAML mapping/ },
      { description: 'a !!js/function tag (safe schema)', text: () => 'x: !!js/function "function () { return 1 }"\n', stage: 'yaml', reason: /unknown tag/ },
      { description: "express-gateway's schema", text: () => changed((c) => (c.apiEndpoints = 'everything')), stage: 'schema', reason: /schema refuses it: data\.apiEndpoints should be object/ },
      {
        description: 'an unknown policy (guards)',
        text: () =>
          changed((c) => {
            c.policies.push('rate-limiter-9000');
            c.pipelines.me.policies.splice(1, 0, { 'rate-limiter-9000': [{ action: {} }] });
          }),
        stage: 'guards',
        reason: /pipeline "me", policy "rate-limiter-9000": unknown policy/,
      },
      {
        description: 'a policy the guards know but express-gateway has not registered (pipeline build)',
        text: () =>
          changed((c) => {
            c.policies.push('ghost-policy');
            c.pipelines.me.policies.splice(1, 0, { 'ghost-policy': [{ action: {} }] });
          }),
        stage: 'pipelines',
        reason: /^express-gateway could not build the pipelines: POLICY_NOT_FOUND/,
        runtime: withGhostPolicy,
      },
    ];

    for (const testCase of rejections) {
      it(`refuses ${testCase.description}`, async function () {
        const singleton = require('express-gateway/lib/config') as { gatewayConfig: Yaml };
        const snapshot = JSON.stringify(singleton.gatewayConfig);
        const error = await buildCandidate(sourceOf(testCase.text()), testCase.runtime ? testCase.runtime(runtime) : runtime, services).then(
          () => undefined,
          (err: unknown) => err
        );
        expect(error).to.be.instanceOf(ConfigRefusedError);
        const rejected = error as ConfigRefusedError;
        expect(rejected.stage).to.equal(testCase.stage);
        expect(rejected.reason).to.match(testCase.reason);
        expect(rejected.problems).to.not.be.empty;
        expect(JSON.stringify(singleton.gatewayConfig), 'the singleton never sees a candidate').to.equal(snapshot);
      });
    }

    it('builds steps written without params with the catalog\'s, accepts params written that agree, refuses ones that contradict it (as a reload does)', async function () {
      const stepOf = (c: Yaml, pipeline: string, policy: string): Yaml => (c.pipelines[pipeline].policies as Yaml[]).find((s) => policy in s)!;
      const shipped = await buildCandidate(readConfigSource(SHIPPED_FILE), runtime, services);
      expect(stepOf(shipped.gatewayConfig as Yaml, 'get-card', 'ownership').ownership).to.deep.equal([{ action: { resource: 'card', param: 'id' } }]);
      expect(shipped.model.pipelines.get('get-card-pan')!.steps.find((s) => s.policy === 'validate')!.actions.map((a) => a.params)).to.deep.equal([{ query: 'card-secret-query' }]);
      const agreeing = changed((c) => (stepOf(c, 'get-card', 'ownership').ownership = [{ action: { resource: 'card', param: 'id' } }]));
      expect((await buildCandidate(sourceOf(agreeing), runtime, services)).router).to.be.a('function');
      const contradicting = changed((c) => (stepOf(c, 'get-card', 'ownership').ownership = [{ action: { resource: 'individual', param: 'id' } }]));
      const refusal = await buildCandidate(sourceOf(contradicting), runtime, services).then(
        () => undefined,
        (err: unknown) => err as ConfigRefusedError
      );
      expect(refusal).to.be.instanceOf(ConfigRefusedError);
      expect(refusal!.stage).to.equal('guards');
      expect(refusal!.reason).to.include('pipeline "get-card", operation "get-card": checks the owner of the card named by path parameter id');
    });

    it('refuses a file that cannot be read (stage read)', function () {
      const error = (() => {
        try {
          readConfigSource('/nonexistent/gateway.config.yml');
          return undefined;
        } catch (err) {
          return err as ConfigRefusedError;
        }
      })();
      expect(error).to.be.instanceOf(ConfigRefusedError);
      expect(error!.stage).to.equal('read');
      expect(error!.reason).to.match(/cannot read .* \(ENOENT\)/);
      expect(error!.message).to.equal('configuration refused:\n  - gateway.config.yml: cannot be read (ENOENT)');
    });
  });
});
