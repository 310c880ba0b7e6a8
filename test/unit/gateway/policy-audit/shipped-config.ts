import path from 'node:path';
import { readGatewayConfigFile } from '../../../../gateway/policy-audit';

export type Yaml = Record<string, any>;

/** config/gateway.config.yml (this file runs from dist/test/unit/gateway/policy-audit). */
export const SHIPPED_CONFIG_FILE = path.resolve(__dirname, '..', '..', '..', '..', '..', 'config', 'gateway.config.yml');

/** The shipped gateway config as the gateway loads it, without env overrides. */
export function shippedConfig(): Yaml {
  return readGatewayConfigFile(SHIPPED_CONFIG_FILE, {});
}

/** A copy of the shipped config with a change applied (aliased steps are shared: replace them, do not mutate them). */
export function changedConfig(change: (c: Yaml) => void): Yaml {
  const config = structuredClone(shippedConfig());
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
