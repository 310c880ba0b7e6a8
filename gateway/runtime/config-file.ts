import fs from 'node:fs';
import { envReplace } from './env-substitution';
import { parseGatewayYaml, yamlErrorDetail } from './gateway-yaml';
import { withCatalogParams } from './catalog-params';
import type { GatewayConfig } from './gateway-config';

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
 * Reads a gateway.config.yml as express-gateway loads it: environment variables substituted, then
 * parsed by express-gateway's own js-yaml (anchors and aliases resolved), and the params its steps
 * take from the catalog filled in (`withCatalogParams`), as the gateway checks and builds it. A parse
 * error names its position and reason only, never the text.
 */
export function readGatewayConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const text = substituteEnv(fs.readFileSync(file, 'utf8'), env);
  let parsed: unknown;
  try {
    parsed = parseGatewayYaml(text, file);
  } catch (err) {
    throw new Error(yamlErrorDetail(err));
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${file} does not hold a YAML map`);
  return withCatalogParams(parsed as GatewayConfig);
}
