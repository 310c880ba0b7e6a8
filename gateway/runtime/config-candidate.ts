import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import express, { type Router } from 'express';
import { checkGatewayConfig, type ConfigProblem } from '../boot/config-guards';
import { envReplace } from './env-substitution';
import type { CheckedRuntime } from './express-gateway';

/** The `$id` under which express-gateway registers its gateway.config schema (lib/config/schemas). */
export const GATEWAY_CONFIG_SCHEMA_ID = 'http://express-gateway.io/models/gateway.config.json';

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

/** A configuration that passed every check, with its pipelines built (not yet serving). */
export interface ConfigCandidate {
  source: ConfigSource;
  /** The parsed, schema-validated configuration the router was built from (never express-gateway's singleton). */
  gatewayConfig: Record<string, any>;
  router: Router;
  /** `${VAR}` references with no such variable and no default: replaced by "null", as express-gateway does. */
  unknownVariables: string[];
}

interface JsYaml {
  safeLoad(text: string, options?: { filename?: string }): unknown;
}
interface YamlException extends Error {
  reason?: string;
  mark?: { line: number; column: number };
}
interface SchemaRegistry {
  validate(id: string, data: unknown): { isValid: boolean; error: string };
}

// express-gateway's own copy of js-yaml: the same parser (YAML 1.2, merge keys, timestamps) as at boot.
const requireFromExpressGateway = createRequire(require.resolve('express-gateway/package.json'));

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

function parseYaml(text: string, path: string): Record<string, any> {
  const yaml = requireFromExpressGateway('js-yaml') as JsYaml;
  let parsed: unknown;
  try {
    // safeLoad, not express-gateway's load: the `!!js/function` and `!!js/regexp` tags are refused.
    parsed = yaml.safeLoad(text, { filename: path });
  } catch (err) {
    const { reason, mark, message } = err as YamlException;
    // The reason and position only: js-yaml's full message quotes the text after substitution.
    const where = mark ? ` at line ${mark.line + 1}, column ${mark.column + 1}` : '';
    const detail = `invalid YAML${where}: ${reason ?? message}`;
    throw new ConfigRejectedError('yaml', detail, [{ where: 'gateway.config.yml', message: detail }]);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const detail = 'is not a YAML mapping';
    throw new ConfigRejectedError('yaml', `gateway.config.yml ${detail}`, [{ where: 'gateway.config.yml', message: detail }]);
  }
  return parsed as Record<string, any>;
}

function validateSchema(config: Record<string, any>): void {
  const schemas = require('express-gateway/lib/schemas') as SchemaRegistry;
  let result: { isValid: boolean; error: string };
  try {
    // express-gateway's AJV 6 (coerceTypes, useDefaults) may fill defaults in, exactly as at boot.
    result = schemas.validate(GATEWAY_CONFIG_SCHEMA_ID, config);
  } catch (err) {
    result = { isValid: false, error: (err as Error).message };
  }
  if (!result.isValid) {
    const detail = `express-gateway's gateway.config schema refuses it: ${result.error}`;
    throw new ConfigRejectedError('schema', detail, [{ where: 'gateway.config.yml', message: detail }]);
  }
}

/**
 * Builds a candidate configuration from `source`, the way the gateway boots, without touching what
 * serves: `${VAR}` substitution, YAML, express-gateway's gateway.config schema, every boot guard
 * (`checkGatewayConfig`, with the runtime's guard context), then express-gateway's pipeline builder on
 * a fresh router and a config object of its own (express-gateway's `config` singleton is never
 * given a candidate). Policy factories run here; the policy and condition registries are only read.
 *
 * Throws {@link ConfigRejectedError} naming the stage and the reason.
 *
 * @example
 * const candidate = await buildCandidate(readConfigSource(file), runtime);
 * partnerApp.setPipelines(candidate.router);
 */
export async function buildCandidate(source: ConfigSource, runtime: CheckedRuntime, env: NodeJS.ProcessEnv = process.env): Promise<ConfigCandidate> {
  const unknownVariables: string[] = [];
  const gatewayConfig = parseYaml(envReplace(source.text, env, (name) => unknownVariables.push(name)), source.path);
  validateSchema(gatewayConfig);

  const problems = checkGatewayConfig(gatewayConfig, runtime.config.systemConfig, runtime.guardContext);
  if (problems.length > 0) {
    throw new ConfigRejectedError('guards', problems.map((p) => `${p.where}: ${p.message}`).join('; '), problems);
  }

  const candidateConfig = {
    gatewayConfig,
    systemConfig: runtime.config.systemConfig,
    models: runtime.config.models,
    gatewayConfigPath: source.path,
    systemConfigPath: runtime.config.systemConfigPath,
  };
  const pipelines = require('express-gateway/lib/gateway/pipelines') as typeof import('express-gateway/lib/gateway/pipelines');
  let router: Router;
  try {
    router = await pipelines.bootstrap({ app: express.Router(), config: candidateConfig });
    // express-gateway mounts each policy's middlewares in a `.then` it does not return: its
    // bootstrap resolves before the routers are complete. Serve nothing until those have run.
    await new Promise<void>((resolve) => setImmediate(resolve));
  } catch (err) {
    const detail = `express-gateway could not build the pipelines: ${(err as Error).message}`;
    throw new ConfigRejectedError('pipelines', detail, [{ where: 'pipelines', message: detail }]);
  }
  return { source, gatewayConfig, router, unknownVariables };
}
