import fs from 'node:fs';
import path from 'node:path';
// The audit itself, not the policy-audit index: its config-file reader is for
// `npm run audit:policies`, not for the boot.
import { auditRouteModel } from '../policy-audit/audit';
import type { RuntimeFacts } from '../policy-audit/boot-rules';
import { refusalOf } from '../policy-audit/rules';
import type { PathToRegexp, RouteModel } from '../route-model';

/** Model files express-gateway `require`s at boot (a missing one crashes it with a stack trace). */
export const REQUIRED_MODEL_FILES = ['users.json', 'credentials.json', 'applications.json'];

/** One reason the configuration is refused. */
export interface ConfigProblem {
  /** Where: `pipeline "me", policy "es512-jwt"`, `apiEndpoint "x"`, `system.config.yml` ... */
  where: string;
  message: string;
}

/** Where the gateway stopped reading a configuration it refuses. */
export type RefusalStage = 'load' | 'read' | 'yaml' | 'schema' | 'guards' | 'pipelines';

/**
 * The one error for a refused configuration, at boot and on a hot reload: its stage, every problem,
 * and `reason`, one line (what a refused reload reports). Its message lists every problem (what
 * main prints when the boot is refused).
 */
export class ConfigRefusedError extends Error {
  readonly reason: string;

  constructor(
    readonly stage: RefusalStage,
    readonly problems: ConfigProblem[],
    /** One line; by default every problem, `where: message`, joined by `; `. */
    reason?: string
  ) {
    super(`configuration refused:\n${problems.map((p) => `  - ${p.where}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigRefusedError';
    this.reason = reason ?? problems.map((p) => `${p.where}: ${p.message}`).join('; ');
  }
}

/** Checks, before express-gateway reads the folder, that every model file it requires is there. */
export function checkConfigDir(configDir: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const file of ['gateway.config.yml', 'system.config.yml']) {
    if (!fs.existsSync(path.join(configDir, file))) problems.push({ where: configDir, message: `${file} is missing` });
  }
  for (const file of REQUIRED_MODEL_FILES) {
    const full = path.join(configDir, 'models', file);
    if (!fs.existsSync(full)) {
      problems.push({ where: `models/${file}`, message: 'missing: express-gateway requires it at boot' });
      continue;
    }
    try {
      const parsed = JSON.parse(fs.readFileSync(full, 'utf8')) as { $id?: unknown };
      if (typeof parsed.$id !== 'string') problems.push({ where: `models/${file}`, message: 'has no "$id"' });
    } catch (err) {
      problems.push({ where: `models/${file}`, message: `is not valid JSON (${(err as Error).message})` });
    }
  }
  return problems;
}

/** What the boot's rules know about the runtime (registered policies and conditions, plugin errors) and the admin API's settings. */
export interface GuardContext extends RuntimeFacts {
  /** `ADMIN_HOST` of our admin API (the policy audit refuses anything beyond loopback). */
  adminHost: string;
  /** True when the admin API has a bearer token: ADMIN_TOKEN, or the token generated into DATA_DIR. */
  adminTokenConfigured: boolean;
  /** The matcher express-gateway mounts paths with (the policy audit's `pathToRegexp`). */
  pathToRegexp: PathToRegexp;
}

/**
 * Every check the gateway makes on a configuration's route model and `system.config.yml` before it
 * serves a request: the whole rule set of the policy audit (gateway/policy-audit), the boot's own
 * rules included, with the runtime's registries. Its CRITICAL findings refuse, in the boot's words:
 * the boot's rules first, in their order, then the policy audit's. An empty list means the
 * configuration may be served; anything else refuses the boot (and a hot reload).
 */
export function checkGatewayConfig(model: RouteModel, systemConfig: Readonly<{ plugins?: Readonly<Record<string, unknown>> | null }>, context: GuardContext): ConfigProblem[] {
  const declaredPlugins = Object.keys(systemConfig.plugins ?? {});
  const audit = auditRouteModel({ model, adminHost: context.adminHost, adminTokenConfigured: context.adminTokenConfigured, pathToRegexp: context.pathToRegexp }, { facts: context, declaredPlugins });
  return [...audit.bootFindings, ...audit.findings].flatMap((f) => refusalOf(f) ?? []);
}
