/**
 * `npm run audit:policies [-- --json] [--config FILE]` prints every route of the gateway
 * configuration with its chain of policies and the policy audit's findings by severity
 * (docs/policy-audit.md). Exit 0 when nothing is HIGH or CRITICAL, 1 otherwise, 2 when the
 * configuration cannot be read.
 *
 * The file is read as the gateway reads it (`${VAR:-default}` substituted from the environment);
 * ADMIN_HOST and ADMIN_TOKEN come from the environment as well.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { auditGatewayConfig, auditReport, formatAuditText } from '../gateway/policy-audit';
import { readGatewayConfigFile } from '../gateway/runtime/config-file';
import { mountPathToRegexp } from '../gateway/runtime/mount-paths';
import { readRouteModel } from '../gateway/route-model';

const USAGE = 'usage: npm run audit:policies [-- --json] [--config FILE]\n';

/** The admin API's settings as the gateway would read them from this environment. */
function adminFromEnv(env: NodeJS.ProcessEnv): { adminHost: string; adminTokenConfigured: boolean } {
  const token = env.ADMIN_TOKEN || undefined;
  // Unset: the gateway generates one into DATA_DIR/admin-token. Set but short: the gateway refuses it.
  return { adminHost: env.ADMIN_HOST || '127.0.0.1', adminTokenConfigured: token === undefined || token.length >= 32 };
}

/** SANDBOX_MODE as the gateway reads it (gateway/settings.ts): by default, on when no upstream URL is set. */
export function sandboxModeFromEnv(env: NodeJS.ProcessEnv): boolean {
  const raw = (env.SANDBOX_MODE ?? '').toLowerCase();
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  return !env.ISSUER_URL && !env.PROCESSING_URL && !env.ACCOUNTS_URL;
}

function main(): number {
  let values: { json?: boolean; config?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ options: { json: { type: 'boolean' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (err) {
    process.stderr.write(`audit-policies: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const root = path.resolve(__dirname, '..', '..');
  const file = path.resolve(values.config ?? path.join(process.env.CONFIG_DIR || path.join(root, 'config'), 'gateway.config.yml'));
  let gatewayConfig: Record<string, unknown>;
  try {
    gatewayConfig = readGatewayConfigFile(file);
  } catch (err) {
    process.stderr.write(`audit-policies: cannot read ${file}: ${(err as Error).message}\n`);
    return 2;
  }
  const report = auditReport(auditGatewayConfig({ model: readRouteModel(gatewayConfig), ...adminFromEnv(process.env), sandboxMode: sandboxModeFromEnv(process.env), pathToRegexp: mountPathToRegexp }));
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(`${file}\n\n${formatAuditText(report)}`);
  return report.summary.passed ? 0 : 1;
}

if (require.main === module) process.exitCode = main();
