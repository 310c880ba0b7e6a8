import fs from 'node:fs';
import YAML from 'yaml';
import { envReplace } from '../runtime/env-substitution';

/**
 * Replaces `${VAR}` and `${VAR:-default}` in configuration text exactly as the gateway's loader does
 * (one implementation: gateway/runtime/env-substitution.ts).
 *
 * @example substituteEnv('limit: ${RATE_LIMIT:-600}', {}) // 'limit: 600'
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv): string {
  return envReplace(text, env);
}

/**
 * Reads a gateway.config.yml as express-gateway would load it: environment variables substituted,
 * then YAML 1.1 (js-yaml's dialect) with anchors and aliases resolved.
 */
export function readGatewayConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const parsed = YAML.parse(substituteEnv(fs.readFileSync(file, 'utf8'), env), { version: '1.1', maxAliasCount: -1 }) as unknown;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${file} does not hold a YAML map`);
  return parsed as Record<string, unknown>;
}
