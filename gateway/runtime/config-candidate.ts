import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Router } from 'express';
import { checkGatewayConfig, ConfigRefusedError, servedPipelines, type ConfigProblem } from '../boot/config-guards';
import { envReplace } from './env-substitution';
import type { GatewayServices } from '../../policies';
import type { GatewayRuntime } from './express-gateway';
import { yamlErrorDetail } from './gateway-yaml';

/** Where building a candidate stopped. */
export type RejectionStage = 'read' | 'yaml' | 'schema' | 'guards' | 'pipelines';

/** A candidate gateway.config.yml was refused; `reason` says why in one line. */
export class ConfigRejectedError extends Error {
  constructor(
    readonly stage: RejectionStage,
    readonly reason: string,
    /** The guards' problems (stage `guards`), else one problem naming the file. */
    readonly problems: ConfigProblem[]
  ) {
    super(reason);
    this.name = 'ConfigRejectedError';
  }
}

/** gateway.config.yml as read once: the hash and the build come from the same bytes. */
export interface ConfigSource {
  path: string;
  text: string;
  /** SHA-256 (hex) of the file's bytes as written, before `${VAR}` substitution. */
  hash: string;
}

/** A configuration that passed every check (YAML, schema, boot guards); its pipelines are not built yet. */
export interface CheckedConfig {
  source: ConfigSource;
  /** The parsed, schema-validated configuration (a candidate's own object, never express-gateway's singleton). */
  gatewayConfig: Record<string, any>;
  /** `${VAR}` references with no such variable and no default: replaced by "null", as express-gateway does. */
  unknownVariables: string[];
}

/** A configuration that passed every check, with its pipelines built (not yet serving). */
export interface ConfigCandidate extends CheckedConfig {
  router: Router;
}

/** SHA-256 (hex) of a configuration file's bytes. The same file gives the same hash in every worker. */
export function configHash(bytes: Buffer | string): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads gateway.config.yml once. Throws {@link ConfigRejectedError} (stage `read`) when it cannot be read.
 */
export function readConfigSource(path: string): ConfigSource {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigRejectedError('read', `cannot read ${path} (${code})`, [{ where: 'gateway.config.yml', message: `cannot be read (${code})` }]);
  }
  return { path, text: bytes.toString('utf8'), hash: configHash(bytes) };
}

export { envReplace } from './env-substitution';

function parseYaml(text: string, path: string, runtime: GatewayRuntime): Record<string, any> {
  let parsed: unknown;
  try {
    parsed = runtime.parseYaml(text, path);
  } catch (err) {
    const detail = yamlErrorDetail(err);
    throw new ConfigRejectedError('yaml', detail, [{ where: 'gateway.config.yml', message: detail }]);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const detail = 'is not a YAML mapping';
    throw new ConfigRejectedError('yaml', `gateway.config.yml ${detail}`, [{ where: 'gateway.config.yml', message: detail }]);
  }
  return parsed as Record<string, any>;
}

/**
 * Checks a configuration the way the gateway boots, without touching what serves: `${VAR}`
 * substitution, YAML, express-gateway's gateway.config schema, then every boot guard
 * (`checkGatewayConfig`, with the runtime's guard context, the policy audit included).
 *
 * Throws {@link ConfigRejectedError} naming the stage and the reason.
 */
export function checkConfig(source: ConfigSource, runtime: GatewayRuntime, env: NodeJS.ProcessEnv = process.env): CheckedConfig {
  const unknownVariables: string[] = [];
  const gatewayConfig = parseYaml(envReplace(source.text, env, (name) => unknownVariables.push(name)), source.path, runtime);
  const schemaError = runtime.schemaError(gatewayConfig);
  if (schemaError !== undefined) {
    const detail = `express-gateway's gateway.config schema refuses it: ${schemaError}`;
    throw new ConfigRejectedError('schema', detail, [{ where: 'gateway.config.yml', message: detail }]);
  }
  const problems = checkGatewayConfig(gatewayConfig, runtime.systemConfig, runtime.guardContext);
  if (problems.length > 0) {
    throw new ConfigRejectedError('guards', problems.map((p) => `${p.where}: ${p.message}`).join('; '), problems);
  }
  return { source, gatewayConfig, unknownVariables };
}

/**
 * Builds the pipelines of a checked configuration on a fresh router (policy factories run here,
 * with `services`; the policy and condition registries are only read): outside sandbox mode without
 * the sandbox-only pipelines (`servedPipelines`). Throws {@link ConfigRejectedError} (stage `pipelines`).
 */
export async function buildChecked(checked: CheckedConfig, runtime: GatewayRuntime, services: GatewayServices): Promise<ConfigCandidate> {
  let router: Router;
  try {
    router = await runtime.buildPipelines(servedPipelines(checked.gatewayConfig, services.sandboxMode), checked.source.path, services);
  } catch (err) {
    const detail = `express-gateway could not build the pipelines: ${(err as Error).message}`;
    throw new ConfigRejectedError('pipelines', detail, [{ where: 'pipelines', message: detail }]);
  }
  return { ...checked, router };
}

/**
 * A hot reload's candidate: {@link checkConfig}, then {@link buildChecked} with the services the
 * serving pipelines were built with. Throws {@link ConfigRejectedError} naming the stage and the
 * reason; nothing of what serves changes.
 *
 * @example
 * const candidate = await buildCandidate(readConfigSource(file), runtime, services);
 * partnerApp.setPipelines(candidate.router);
 */
export async function buildCandidate(source: ConfigSource, runtime: GatewayRuntime, services: GatewayServices, env: NodeJS.ProcessEnv = process.env): Promise<ConfigCandidate> {
  return buildChecked(checkConfig(source, runtime, env), runtime, services);
}

/** The boot's refusal: the problems of a rejected candidate, as the boot guards report them. */
function refused(err: unknown): unknown {
  return err instanceof ConfigRejectedError ? new ConfigRefusedError(err.problems) : err;
}

/**
 * Reads and checks the configuration the gateway starts with, by the code of every reload (so the
 * hash reported is that of the bytes that serve, and a file a reload would refuse also refuses the
 * boot). Throws ConfigRefusedError, as the boot guards do.
 */
export function checkInitialConfig(runtime: GatewayRuntime, file: string, env: NodeJS.ProcessEnv = process.env): CheckedConfig {
  try {
    return checkConfig(readConfigSource(file), runtime, env);
  } catch (err) {
    throw refused(err);
  }
}

/** Builds the pipelines of the configuration the boot checked, with the gateway's services. Throws ConfigRefusedError. */
export async function buildInitialConfig(checked: CheckedConfig, runtime: GatewayRuntime, services: GatewayServices): Promise<ConfigCandidate> {
  try {
    return await buildChecked(checked, runtime, services);
  } catch (err) {
    throw refused(err);
  }
}
