import crypto from 'node:crypto';
import fs from 'node:fs';
import type { RequestHandler } from 'express';
import { checkGatewayConfig, ConfigRefusedError, type RefusalStage } from '../boot/config-guards';
import { routeModelOf, type RouteModel } from '../route-model';
import { envReplace } from './env-substitution';
import { withCatalogParams } from './catalog-params';
import type { GatewayConfig } from './gateway-config';
import type { GatewayServices } from '../../policies';
import type { GatewayRuntime } from './gateway-runtime';
import { yamlErrorDetail } from './gateway-yaml';
import { servedPipelines } from './served-pipelines';

/** Where building a candidate stopped (a reload never stops at `load`: that is the boot's loading of express-gateway). */
export type RejectionStage = RefusalStage;

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
  /**
   * The parsed, schema-validated configuration (a candidate's own object, never express-gateway's
   * singleton), with the params its steps take from the catalog (`withCatalogParams`).
   */
  gatewayConfig: GatewayConfig;
  /** Its route model, read once (what the rules checked; the OpenAPI document reads it too). */
  model: RouteModel;
  /** `${VAR}` references with no such variable and no default: replaced by "null", as express-gateway does. */
  unknownVariables: string[];
}

/** A configuration that passed every check, with its pipelines built (not yet serving). */
export interface ConfigCandidate extends CheckedConfig {
  /** Its pipelines: the request handler the partner app runs (whichever engine built it). */
  router: RequestHandler;
}

/** SHA-256 (hex) of a configuration file's bytes. The same file gives the same hash in every worker. */
export function configHash(bytes: Buffer | string): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads gateway.config.yml once. Throws {@link ConfigRefusedError} (stage `read`) when it cannot be read.
 */
export function readConfigSource(path: string): ConfigSource {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigRefusedError('read', [{ where: 'gateway.config.yml', message: `cannot be read (${code})` }], `cannot read ${path} (${code})`);
  }
  return { path, text: bytes.toString('utf8'), hash: configHash(bytes) };
}

export { envReplace } from './env-substitution';

function parseYaml(text: string, path: string, runtime: GatewayRuntime): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = runtime.parseYaml(text, path);
  } catch (err) {
    const detail = yamlErrorDetail(err);
    throw new ConfigRefusedError('yaml', [{ where: 'gateway.config.yml', message: detail }], detail);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const detail = 'is not a YAML mapping';
    throw new ConfigRefusedError('yaml', [{ where: 'gateway.config.yml', message: detail }], `gateway.config.yml ${detail}`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Checks a configuration the way the gateway boots, without touching what serves: `${VAR}`
 * substitution, YAML, express-gateway's gateway.config schema; the params its steps take from the
 * catalog are filled in (`withCatalogParams`); the configuration is then read once
 * into its route model, and checked by the whole rule set of the policy audit, the boot's own rules
 * included (`checkGatewayConfig`, with the runtime's guard context).
 *
 * Throws {@link ConfigRefusedError} naming the stage and the reason.
 */
export function checkConfig(source: ConfigSource, runtime: GatewayRuntime, env: NodeJS.ProcessEnv = process.env): CheckedConfig {
  const unknownVariables: string[] = [];
  const parsed = parseYaml(envReplace(source.text, env, (name) => unknownVariables.push(name)), source.path, runtime);
  const schemaError = runtime.schemaError(parsed);
  if (schemaError !== undefined) {
    const detail = `express-gateway's gateway.config schema refuses it: ${schemaError}`;
    throw new ConfigRefusedError('schema', [{ where: 'gateway.config.yml', message: detail }], detail);
  }
  // After express-gateway's schema (its AJV 6 may fill defaults in), the steps written without
  // params take those of the catalog; then read once: what the rules check is what the pipelines
  // are built from.
  const gatewayConfig = withCatalogParams(parsed as GatewayConfig);
  const model = routeModelOf(gatewayConfig);
  const problems = checkGatewayConfig(model, runtime.systemConfig, runtime.guardContext);
  if (problems.length > 0) throw new ConfigRefusedError('guards', problems);
  return { source, gatewayConfig, model, unknownVariables };
}

/**
 * Builds the pipelines of a checked configuration into a fresh request handler (policy factories run here,
 * with `services`; the policy and condition registries are only read): outside sandbox mode without
 * the sandbox-only pipelines (`servedPipelines`). Throws {@link ConfigRefusedError} (stage `pipelines`).
 */
export async function buildChecked(checked: CheckedConfig, runtime: GatewayRuntime, services: GatewayServices): Promise<ConfigCandidate> {
  let router: RequestHandler;
  try {
    router = await runtime.buildPipelines(servedPipelines(checked.gatewayConfig, checked.model, services.sandboxMode), checked.source.path, services);
  } catch (err) {
    const detail = `express-gateway could not build the pipelines: ${(err as Error).message}`;
    throw new ConfigRefusedError('pipelines', [{ where: 'pipelines', message: detail }], detail);
  }
  return { ...checked, router };
}

/**
 * A hot reload's candidate: {@link checkConfig}, then {@link buildChecked} with the services the
 * serving pipelines were built with. Throws {@link ConfigRefusedError} naming the stage and the
 * reason; nothing of what serves changes.
 *
 * @example
 * const candidate = await buildCandidate(readConfigSource(file), runtime, services);
 * partnerApp.setPipelines(candidate.router);
 */
export async function buildCandidate(source: ConfigSource, runtime: GatewayRuntime, services: GatewayServices, env: NodeJS.ProcessEnv = process.env): Promise<ConfigCandidate> {
  return buildChecked(checkConfig(source, runtime, env), runtime, services);
}

/**
 * Reads and checks the configuration the gateway starts with, by the code of every reload (so the
 * hash reported is that of the bytes that serve, and a file a reload would refuse also refuses the
 * boot). Throws {@link ConfigRefusedError}, as a refused reload does.
 */
export function checkInitialConfig(runtime: GatewayRuntime, file: string, env: NodeJS.ProcessEnv = process.env): CheckedConfig {
  return checkConfig(readConfigSource(file), runtime, env);
}

/** Builds the pipelines of the configuration the boot checked, with the gateway's services. Throws ConfigRefusedError. */
export async function buildInitialConfig(checked: CheckedConfig, runtime: GatewayRuntime, services: GatewayServices): Promise<ConfigCandidate> {
  return buildChecked(checked, runtime, services);
}
