import { expect } from 'chai';
import { checkGatewayConfig, ConfigRefusedError } from '../../../../gateway/boot/config-guards';
import { AUDIT_RULES, auditGatewayConfig, auditRouteModel, refusalOf, type AuditRule, type RuleSpec } from '../../../../gateway/policy-audit';
import { readRouteModel } from '../../../../gateway/route-model';
import { changedConfig as changed, guardContext, SYSTEM_CONFIG, type Yaml } from './shipped-config';
import { mountPathToRegexp } from '../../../../gateway/runtime/mount-paths';

const LOOPBACK = { adminHost: '127.0.0.1', adminTokenConfigured: true, pathToRegexp: mountPathToRegexp };
const RULES = Object.entries(AUDIT_RULES) as [AuditRule, RuleSpec][];

function refusals(change: (c: Yaml) => void): string[] {
  return checkGatewayConfig(readRouteModel(changed(change)), SYSTEM_CONFIG, guardContext()).map((p) => `${p.where}: ${p.message}`);
}

describe('unit: one rule set for the boot and the policy audit (gateway/policy-audit/rules.ts)', function () {
  it("the boot's own rules are CRITICAL and not in the report", function () {
    const bootOnly = RULES.filter(([, spec]) => !spec.report);
    expect(bootOnly.length).to.be.greaterThan(5);
    for (const [rule, spec] of bootOnly) expect(spec, rule).to.deep.equal({ severity: 'CRITICAL', report: false, boot: 'plain' });
  });

  it('every CRITICAL rule refuses, in its own words or, named, in those of a boot rule', function () {
    for (const [rule, spec] of RULES.filter(([, s]) => s.severity === 'CRITICAL')) {
      if (spec.boot !== 'never') continue;
      expect(spec.sameFactAs, rule).to.be.a('string');
      expect(AUDIT_RULES[spec.sameFactAs as AuditRule], `${rule} → ${spec.sameFactAs}`).to.include({ severity: 'CRITICAL', report: false });
    }
    for (const [rule, spec] of RULES.filter(([, s]) => s.severity !== 'CRITICAL')) expect(spec.boot, rule).to.equal('never');
  });

  it('a refusal is tagged with its audit rule, except the rules whose words the boot always used', function () {
    const f = (rule: AuditRule) => ({ severity: AUDIT_RULES[rule].severity, rule, where: 'w', message: 'm' });
    expect(refusalOf(f('public-route-shape'))).to.deep.equal({ where: 'w', message: 'm [policy audit: public-route-shape]' });
    expect(refusalOf(f('stock-admin-api'))).to.deep.equal({ where: 'w', message: 'm' });
    expect(refusalOf(f('route-path'))).to.deep.equal({ where: 'w', message: 'm' });
    expect(refusalOf(f('jwt-missing'))).to.equal(undefined);
    expect(refusalOf(f('validation-missing'))).to.equal(undefined);
  });

  it('a route without the JWT policy: the report says jwt-missing, the boot refuses once, in the words of jwt-first', function () {
    const change = (c: Yaml) => c.pipelines.me.policies.shift();
    const report = auditGatewayConfig({ model: readRouteModel(changed(change)), ...LOOPBACK }).findings.filter((f) => f.severity === 'CRITICAL');
    expect(report.map((f) => f.rule)).to.deep.equal(['jwt-missing']);
    expect(refusals(change)).to.deep.equal(['apiEndpoint "me": route /api/partner/me (pipeline "me") lacks the es512-jwt policy as its first, unconditional policy']);
  });

  it("express-gateway's admin section: one finding, reported and refused in the same words", function () {
    const change = (c: Yaml) => (c.admin = { port: 9876 });
    const text = "express-gateway's admin API has no authentication and can run code: remove the admin section (use ADMIN_HOST/ADMIN_PORT/ADMIN_TOKEN)";
    expect(auditGatewayConfig({ model: readRouteModel(changed(change)), ...LOOPBACK }).findings.filter((f) => f.rule === 'stock-admin-api').map((f) => f.message)).to.deep.equal([text]);
    expect(refusals(change)).to.deep.equal([`gateway.config.yml admin: ${text}`]);
  });

  it("the boot's rules run only with the runtime's facts, and their findings stay out of the report", function () {
    const model = readRouteModel(changed((c) => (c.apiEndpoints.me.paths = '/internal/me')));
    const withBoot = auditRouteModel({ model, ...LOOPBACK }, { facts: guardContext(), declaredPlugins: ['partner-gateway'] });
    expect(withBoot.bootFindings.map((f) => `${f.rule} ${f.where}: ${f.message}`)).to.include('route-path apiEndpoint "me": path "/internal/me" is outside /api/partner');
    expect(auditRouteModel({ model, ...LOOPBACK }).bootFindings).to.deep.equal([]);
    expect(auditGatewayConfig({ model, ...LOOPBACK }).findings.map((f) => f.rule)).to.not.include('route-path');
  });

  it('the boot lists what the model could not read, in its own words', function () {
    expect(refusals((c) => c.pipelines.me.policies.splice(1, 0, 'oops'))).to.include('pipeline "me": each entry of policies must be a single-key map: - <policy>: [actions]');
  });
});

describe('unit: ConfigRefusedError, the one error for a refused configuration', function () {
  it('lists every problem in its message, and says them on one line as its reason', function () {
    const error = new ConfigRefusedError('guards', [
      { where: 'pipeline "a"', message: 'has no policies' },
      { where: 'ADMIN_HOST', message: 'beyond loopback' },
    ]);
    expect(error.message).to.equal('configuration refused:\n  - pipeline "a": has no policies\n  - ADMIN_HOST: beyond loopback');
    expect(error.reason).to.equal('pipeline "a": has no policies; ADMIN_HOST: beyond loopback');
    expect(error.stage).to.equal('guards');
    expect(error.name).to.equal('ConfigRefusedError');
  });

  it('takes a reason of its own (a file that cannot be read names its path)', function () {
    const error = new ConfigRefusedError('read', [{ where: 'gateway.config.yml', message: 'cannot be read (ENOENT)' }], 'cannot read /x/gateway.config.yml (ENOENT)');
    expect(error.reason).to.equal('cannot read /x/gateway.config.yml (ENOENT)');
    expect(error.message).to.equal('configuration refused:\n  - gateway.config.yml: cannot be read (ENOENT)');
  });
});
