import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { shippedConfigCopy, type Yaml } from '../support/config-files';
import { auditGatewayConfig, auditReport, formatAuditText } from '../../gateway/policy-audit';
import { readGatewayConfigFile } from '../../gateway/runtime/config-file';
import { mountPathToRegexp } from '../../gateway/runtime/mount-paths';
import { readRouteModel } from '../../gateway/route-model';
import { limitConcurrency, PROCESS_CONCURRENCY } from '../support/concurrency';
import { runGatewayExpectingFailure } from '../support/gateway-process';
import { PUBLIC_ROUTE_ATTACKS } from '../support/public-route-attacks';
import { sandboxModeFromEnv } from '../../scripts/audit-policies';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'scripts', 'audit-policies.js');
const SHIPPED_CONFIG = path.join(ROOT, 'config');

/** A copy of the shipped config folder with a change to gateway.config.yml. */
const brokenConfig = (change: (c: Yaml) => void): string => shippedConfigCopy({ gateway: change }, 'pgw-audit-');

function withoutStep(c: Yaml, pipeline: string, policy: string): void {
  c.pipelines[pipeline].policies = (c.pipelines[pipeline].policies as Yaml[]).filter((step) => !(policy in step));
}

type AuditRun = { code: number; stdout: string; stderr: string };

/** The environment the CLI runs in: this one without ADMIN_HOST and ADMIN_TOKEN, plus `env`. */
function auditEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (!('ADMIN_HOST' in env)) delete childEnv.ADMIN_HOST;
  if (!('ADMIN_TOKEN' in env)) delete childEnv.ADMIN_TOKEN;
  return childEnv;
}

/** Runs `npm run audit:policies` (its compiled script) and resolves whatever its exit code. */
async function runCli(args: string[], env: Record<string, string>): Promise<AuditRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd: ROOT, env: auditEnv(env) });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * What the CLI does for `[--json] --config FILE` (scripts/audit-policies.ts is a thin wrapper over
 * gateway/policy-audit), in this process: read the file as the gateway does, audit it, print the
 * report the CLI prints, exit 1 unless it passed. The admin settings are the CLI's for an
 * environment without ADMIN_HOST and ADMIN_TOKEN (loopback, a generated token). The CLI's own
 * behaviours (argument errors, exit 2, the environment it reads, both output formats with exit 0
 * and 1) are checked on real runs below; the other findings are checked here, without a process each.
 */
function auditInProcess(args: string[], env: Record<string, string> = {}): AuditRun {
  const json = args.includes('--json');
  const at = args.indexOf('--config');
  expect(at, 'auditInProcess needs --config FILE').to.be.greaterThan(-1);
  expect(args.filter((a, i) => a !== '--json' && i !== at && i !== at + 1), 'auditInProcess knows --json and --config only').to.deep.equal([]);
  expect(env, 'the admin settings come from the environment in the CLI only').to.not.have.any.keys('ADMIN_HOST', 'ADMIN_TOKEN');
  const file = path.resolve(args[at + 1]);
  const report = auditReport(
    auditGatewayConfig({ model: readRouteModel(readGatewayConfigFile(file, auditEnv(env))), adminHost: '127.0.0.1', adminTokenConfigured: true, sandboxMode: sandboxModeFromEnv(auditEnv(env)), pathToRegexp: mountPathToRegexp })
  );
  const stdout = json ? `${JSON.stringify(report, null, 2)}\n` : `${file}\n\n${formatAuditText(report)}`;
  return { code: report.summary.passed ? 0 : 1, stdout, stderr: '' };
}

describe('e2e: npm run audit:policies (exit codes, JSON) and the boot refusing CRITICAL findings', function () {
  this.timeout(60_000);

  // Child processes (CLI runs and the gateway refusals below) run one per core (at most four) at a
  // time; a CLI run with the same arguments and environment is made once and its result shared by
  // the tests that read it.
  const limit = limitConcurrency(PROCESS_CONCURRENCY);
  const cliRuns = new Map<string, Promise<AuditRun>>();
  function audit(args: string[], env: Record<string, string> = {}): Promise<AuditRun> {
    const key = JSON.stringify([args, env]);
    if (!cliRuns.has(key)) cliRuns.set(key, limit(() => runCli(args, env)));
    return cliRuns.get(key)!;
  }

  let refused: Promise<{ code: number | null; output: string }>[] = [];
  before(function () {
    // The two gateway refusals (the slowest cases) start first, beside the CLI runs.
    refused = refusals.map((refusal) => limit(() => runGatewayExpectingFailure({ configDir: refusal.configDir?.(), env: refusal.env })));
    audit([]);
    audit(['--json']);
  });

  it('passes the shipped config: exit 0, every route with its chain, nothing above LOW', async function () {
    const result = await audit([]);
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    expect(result.stdout).to.include('GET /api/partner/cards/:id/cvv  [get-card-cvv → pipeline get-card-cvv]');
    expect(result.stdout).to.include('es512-jwt → rate-limit → ownership → sensitive-data → validate → operation');
    // Every step with its effective params, those written without params taken from the catalog.
    expect(result.stdout).to.include('      ownership       { resource: card, param: id }  (the catalog\'s)\n      sensitive-data  (no params)  (the catalog\'s)\n      validate        { query: card-secret-query }  (the catalog\'s)\n      operation       { name: get-card-cvv }  (upstream timeout: UPSTREAM_TIMEOUT_MS)');
    expect(result.stdout).to.match(/86 routes; 0 CRITICAL, 0 HIGH, 0 MEDIUM, 0 LOW, 3 INFO: PASS/);
  });

  it('explains the public-route rule: the public routes marked, their exact shapes, what else is CRITICAL', async function () {
    const result = await audit([]);
    expect(result.stdout).to.include('GET /api/partner/health-check  [health-check → pipeline health-check]  (public)');
    expect(result.stdout).to.include('INFO     public-route: GET /api/partner/health-check is public by design: served without a token, in its exact public shape');
    expect(result.stdout).to.include('Public routes (served without a token) are judged by what they run, not by their path.');
    expect(result.stdout).to.include('GET or HEAD /api/partner/health-check → operation health-check (no rate limit)');
    expect(result.stdout).to.include('GET or HEAD /api/partner/openapi.json → rate-limit → operation openapi-document');
    expect(result.stdout).to.include('GET or HEAD /api/partner/docs → rate-limit → operation api-docs');
    expect(result.stdout).to.match(/is CRITICAL public-route-shape/);
    const json = JSON.parse((await audit(['--json'])).stdout);
    expect(json.publicRouteRule).to.include('GET or HEAD /api/partner/health-check → operation health-check (no rate limit)');
  });

  it('the in-process audit the cases below use prints what the CLI prints, with its exit code (shipped config, text and --json)', async function () {
    const file = path.join(SHIPPED_CONFIG, 'gateway.config.yml');
    for (const json of [false, true]) {
      const cli = await audit(json ? ['--json'] : []);
      const inProcess = auditInProcess([...(json ? ['--json'] : []), '--config', file]);
      expect({ code: inProcess.code, stdout: inProcess.stdout }).to.deep.equal({ code: cli.code, stdout: cli.stdout });
    }
  });

  PUBLIC_ROUTE_ATTACKS.forEach((attack, i) => {
    // The first on the CLI (the text report of a failing audit, exit 1), the others in process.
    const how = i === 0 ? 'the CLI' : 'in process';
    it(`exit 1, CRITICAL public-route-shape and proxy-path-contract, on ${attack.description} (${how})`, async function () {
      const audited = i === 0 ? audit : async (args: string[]) => auditInProcess(args);
      const dir = brokenConfig((c) => attack.change(c, 'CK3FA09B21C4D5E6F7'));
      const text = await audited(['--config', path.join(dir, 'gateway.config.yml')]);
      expect(text.code).to.equal(1);
      expect(text.stdout).to.match(/CRITICAL public-route-shape: .* is not its public shape \(GET or HEAD /);
      expect(text.stdout).to.include('Public routes (served without a token) are judged by what they run');
      const json = auditInProcess(['--json', '--config', path.join(dir, 'gateway.config.yml')]);
      expect(json.code).to.equal(1);
      const report = JSON.parse(json.stdout);
      const critical = report.findings.filter((f: Yaml) => f.severity === 'CRITICAL').map((f: Yaml) => f.rule);
      expect(critical).to.include.members(['public-route-shape', 'jwt-missing', 'proxy-path-contract']);
    });
  });

  it('shows the sandbox simulations off outside sandbox mode and on in it, by SANDBOX_MODE or the upstream URLs', async function () {
    const line = 'POST /api/partner/simulate/cards/:id/transactions  [simulate-card-transaction → pipeline simulate-card-transaction]';
    const off = await audit([], { SANDBOX_MODE: 'false' });
    expect(off.code, off.stdout + off.stderr).to.equal(0);
    expect(off.stdout).to.include(`${line}  (sandbox only: off, answers 404)`);
    expect(off.stdout).to.include('[simulate-card-issuer-status → pipeline simulate-card-issuer-status]  (sandbox only: off, answers 404)');
    expect((await audit([], { SANDBOX_MODE: 'true' })).stdout).to.include(`${line}  (sandbox only: on)`);
    expect((await audit([], { SANDBOX_MODE: '', ISSUER_URL: 'https://issuer.example' })).stdout).to.include(`${line}  (sandbox only: off, answers 404)`);
    const json = JSON.parse((await audit(['--json'], { SANDBOX_MODE: 'false' })).stdout);
    expect(json.routes.filter((r: Yaml) => r.sandbox).map((r: Yaml) => [r.name, r.sandbox])).to.deep.equal([
      ['simulate-card-transaction', 'off'],
      ['simulate-card-issuer-status', 'off'],
      ['simulate-card-authorization', 'off'],
      ['simulate-transaction-clearing', 'off'],
      ['simulate-transaction-reversal', 'off'],
      ['simulate-transaction-expiry', 'off'],
      ['simulate-transaction-refund', 'off'],
      ['simulate-card-tokenization', 'off'],
      ['simulate-token-verification', 'off'],
      ['simulate-token-authorization', 'off'],
    ]);
  });

  it('runs wallet provisioning with sensitive-data and without an idempotency step, whose replay store would keep the payload (docs/tokens.md)', async function () {
    const report = JSON.parse((await audit(['--json'])).stdout);
    for (const name of ['provision-card-apple-pay', 'provision-card-google-pay']) {
      const route = report.routes.find((r: Yaml) => r.name === name);
      expect(route?.policies, name).to.deep.equal(['es512-jwt', 'rate-limit', 'ownership', 'sensitive-data', 'validate', 'operation']);
    }
  });

  it('--json prints {routes, findings, summary}', async function () {
    const result = await audit(['--json']);
    expect(result.code).to.equal(0);
    const report = JSON.parse(result.stdout);
    expect(report).to.have.all.keys('routes', 'findings', 'summary', 'publicRouteRule');
    expect(report.routes).to.have.length(86);
    expect(report.routes[0]).to.have.all.keys('name', 'methods', 'paths', 'pipeline', 'policies', 'steps', 'public');
    expect(report.findings.every((f: Yaml) => f.severity === 'INFO')).to.equal(true);
    expect(report.findings[0]).to.have.all.keys('severity', 'rule', 'where', 'message');
    expect(report.summary).to.deep.equal({ routes: 86, findings: { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, INFO: 3 }, highest: 'INFO', passed: true });
  });

  // ADMIN_HOST is read from the environment by the CLI: that row runs the CLI (the JSON report of a
  // failing audit, exit 1); the config findings are checked in process.
  const table: { description: string; change: (c: Yaml) => void; env?: Record<string, string>; code: number; rule: string; severity: string; cli?: true }[] = [
    { description: 'an {id} route without ownership (CRITICAL)', change: (c) => withoutStep(c, 'get-card-cvv', 'ownership'), code: 1, rule: 'ownership-missing', severity: 'CRITICAL' },
    { description: 'a card-data route without sensitive-data (HIGH)', change: (c) => withoutStep(c, 'get-card-pan', 'sensitive-data'), code: 1, rule: 'sensitive-data-missing', severity: 'HIGH' },
    { description: 'a POST route without validate (HIGH)', change: (c) => withoutStep(c, 'lock-card', 'validate'), code: 1, rule: 'validation-missing', severity: 'HIGH' },
    { description: 'a route without rate-limit (MEDIUM: still exit 0)', change: (c) => withoutStep(c, 'me', 'rate-limit'), code: 0, rule: 'rate-limit-missing', severity: 'MEDIUM' },
    { description: 'ADMIN_HOST beyond loopback (CRITICAL)', change: () => undefined, env: { ADMIN_HOST: '0.0.0.0' }, code: 1, rule: 'admin-api-exposed', severity: 'CRITICAL', cli: true },
  ];
  for (const row of table) {
    it(`exit ${row.code} on ${row.description} (${row.cli ? 'the CLI' : 'in process'})`, async function () {
      const dir = brokenConfig(row.change);
      const args = ['--json', '--config', path.join(dir, 'gateway.config.yml')];
      const result = row.cli ? await audit(args, row.env) : auditInProcess(args, row.env);
      expect(result.code, result.stderr).to.equal(row.code);
      const report = JSON.parse(result.stdout);
      expect(report.findings.filter((f: Yaml) => f.severity !== 'INFO').map((f: Yaml) => `${f.severity} ${f.rule}`)).to.deep.equal([`${row.severity} ${row.rule}`]);
      expect(report.summary.passed).to.equal(row.code === 0);
    });
  }

  it('reads the file as the gateway does: ${VAR:-default} substituted from the environment', async function () {
    const dir = brokenConfig((c) => {
      // A proxy timeout that only an environment variable sets.
      const step = (c.pipelines['get-card-status'].policies as Yaml[]).find((s) => 'operation' in s)!;
      step.operation[0].action.timeoutMs = '${AUDIT_TEST_TIMEOUT_MS}';
    });
    const file = path.join(dir, 'gateway.config.yml');
    // The operation step's effective params, as the report prints them.
    const timeoutOf = (report: Yaml) => report.routes.find((r: Yaml) => r.name === 'get-card-status').steps.find((s: Yaml) => s.policy === 'operation').actions[0].params.timeoutMs;
    // Unset, in process (no default: express-gateway's `null`); set, on the CLI (which reads its own environment).
    const unset = JSON.parse(auditInProcess(['--json', '--config', file]).stdout);
    expect(timeoutOf(unset)).to.equal(null);
    const set = await audit(['--json', '--config', file], { AUDIT_TEST_TIMEOUT_MS: '900' });
    expect(set.code).to.equal(0);
    expect(timeoutOf(JSON.parse(set.stdout))).to.equal(900);
  });

  it('exit 2 on a file it cannot read, or an unknown option', async function () {
    const [missing, unknown] = await Promise.all([audit(['--config', path.join(os.tmpdir(), 'no-such-dir', 'gateway.config.yml')]), audit(['--frobnicate'])]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/cannot read/);
    expect(unknown.code).to.equal(2);
  });

  const refusals: { description: string; configDir?: () => string; env?: Record<string, string>; expectedMessage: RegExp }[] = [
    {
      description: 'an {id} route without ownership',
      configDir: () => brokenConfig((c) => withoutStep(c, 'get-card-cvv', 'ownership')),
      expectedMessage: /apiEndpoint "get-card-cvv" \(pipeline "get-card-cvv"\): .*runs no ownership step.*\[policy audit: ownership-missing\]/,
    },
    {
      description: 'the admin API on every interface (ADMIN_HOST=0.0.0.0)',
      env: { ADMIN_HOST: '0.0.0.0' },
      expectedMessage: /ADMIN_HOST: the admin API listens on 0\.0\.0\.0, beyond loopback.*\[policy audit: admin-api-exposed\]/,
    },
  ];
  refusals.forEach((refusal, i) => {
    it(`the gateway refuses to start on a CRITICAL finding: ${refusal.description}`, async function () {
      const result = await refused[i];
      expect(result.code, result.output).to.equal(1);
      expect(result.output).to.match(/configuration refused/);
      expect(result.output).to.match(refusal.expectedMessage);
    });
  });
});
