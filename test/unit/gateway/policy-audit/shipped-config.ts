import path from 'node:path';
import type { GuardContext } from '../../../../gateway/boot/config-guards';
import { BUILTIN_POLICIES } from '../../../../gateway/policy-audit';
import { readGatewayConfigFile } from '../../../../gateway/runtime/config-file';
import { JWT_POLICY, POLICIES } from '../../../../policies';
import { mountPathToRegexp } from '../../../../gateway/runtime/mount-paths';

export type Yaml = Record<string, any>;

/** config/gateway.config.yml (this file runs from dist/test/unit/gateway/policy-audit). */
export const SHIPPED_CONFIG_FILE = path.resolve(__dirname, '..', '..', '..', '..', '..', 'config', 'gateway.config.yml');

let parsed: Yaml | undefined;

/**
 * The shipped gateway config as the gateway loads it, without env overrides: a copy of one parse
 * per process (the suite asked for it about 700 times, 4 s of YAML parsing). structuredClone keeps
 * the aliases of the YAML shared within each copy, as a parse does.
 */
export function shippedConfig(): Yaml {
  parsed ??= readGatewayConfigFile(SHIPPED_CONFIG_FILE, {});
  return structuredClone(parsed);
}

/** A copy of the shipped config with a change applied (aliased steps are shared: replace them, do not mutate them). */
export function changedConfig(change: (c: Yaml) => void): Yaml {
  const config = shippedConfig();
  change(config);
  return config;
}

/** Removes a pipeline's step of the given policy. */
export function withoutStep(c: Yaml, pipeline: string, policy: string): void {
  c.pipelines[pipeline].policies = (c.pipelines[pipeline].policies as Yaml[]).filter((step) => !(policy in step));
}

/** A pipeline's step of the given policy. */
export function stepOf(c: Yaml, pipeline: string, policy: string): Yaml {
  return (c.pipelines[pipeline].policies as Yaml[]).find((step) => policy in step)!;
}

/** The system config the guard tests check against (one plugin). */
export const SYSTEM_CONFIG = { plugins: { 'partner-gateway': { package: 'x' } } };

/** What the boot guards know at boot (our plugin's policies, express-gateway's built-ins and conditions), with overrides. */
export function guardContext(overrides: Partial<GuardContext> = {}): GuardContext {
  return {
    pluginPolicies: new Map(POLICIES.map((p) => [p.name, p.schema])),
    builtinPolicies: new Set(Object.keys(BUILTIN_POLICIES)),
    conditions: new Set(['always', 'never', 'allOf', 'oneOf', 'not', 'method', 'pathExact', 'pathMatch', 'hostMatch', 'authenticated', 'anonymous', 'tlsClientAuthenticated', 'expression', 'json-schema']),
    pluginLoadErrors: [],
    jwtPolicy: JWT_POLICY,
    adminHost: '127.0.0.1',
    adminTokenConfigured: true,
    pathToRegexp: mountPathToRegexp,
    ...overrides,
  };
}
