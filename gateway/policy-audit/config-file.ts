import fs from 'node:fs';
import YAML from 'yaml';

const ENV_REFERENCE = /\$?\$\{([A-Za-z0-9_]+)(?::-(.*?))?\}/g;

/**
 * Replaces `${VAR}` and `${VAR:-default}` in configuration text the way express-gateway's config
 * loader does before it parses the YAML: a set variable wins (even when empty), then a non-empty
 * default; a variable with neither becomes `null`. `$${VAR}` is left as it is.
 *
 * @example substituteEnv('limit: ${RATE_LIMIT:-600}', {}) // 'limit: 600'
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(ENV_REFERENCE, (whole: string, name: string, fallback: string | undefined) => {
    if (whole.startsWith('$$')) return whole;
    if (Object.prototype.hasOwnProperty.call(env, name)) return String(env[name]);
    if (fallback) return fallback;
    return 'null';
  });
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
