import { createRequire } from 'node:module';

interface JsYaml {
  safeLoad(text: string, options?: { filename?: string }): unknown;
}

interface YamlException extends Error {
  reason?: string;
  mark?: { line: number; column: number };
}

let jsYaml: JsYaml | undefined;

/**
 * Parses a gateway.config.yml text with express-gateway's own copy of js-yaml: the parser (YAML 1.2,
 * merge keys, timestamps, anchors and aliases) that its loader boots with, so that the boot guards,
 * hot reload and `npm run audit:policies` read exactly what express-gateway reads. js-yaml is loaded
 * at the first parse. Throws the parser's error; {@link yamlErrorDetail} describes it safely.
 *
 * @example parseGatewayYaml('pipelines: {}', 'gateway.config.yml') // { pipelines: {} }
 */
export function parseGatewayYaml(text: string, file?: string): unknown {
  jsYaml ??= createRequire(require.resolve('express-gateway/package.json'))('js-yaml') as JsYaml;
  return jsYaml.safeLoad(text, file === undefined ? undefined : { filename: file });
}

/**
 * "invalid YAML at line L, column C: reason": the reason and position of a parse error only, never
 * js-yaml's full message, which quotes the text (after `${VAR}` substitution, so possibly a secret).
 */
export function yamlErrorDetail(err: unknown): string {
  const { reason, mark, message } = err as YamlException;
  const where = mark ? ` at line ${mark.line + 1}, column ${mark.column + 1}` : '';
  return `invalid YAML${where}: ${reason ?? message}`;
}
