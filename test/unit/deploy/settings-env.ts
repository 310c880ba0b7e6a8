// The environment variables the gateway reads, taken from gateway/settings.ts itself, so that the
// deployment manifests and the operator guide are checked against the code rather than a list.
import fs from 'node:fs';
import path from 'node:path';

/** The repository root (this file runs from dist/test/unit/deploy). */
export const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** Every variable `readSettings` reads: `env.NAME` and the `xxxFrom(env, 'NAME', ...)` helpers. */
export function settingsEnvNames(): Set<string> {
  const source = fs.readFileSync(path.join(ROOT, 'gateway', 'settings.ts'), 'utf8');
  const names = new Set<string>();
  for (const [, name] of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(name);
  for (const [, name] of source.matchAll(/\w+From\(env, '([A-Z][A-Z0-9_]*)'/g)) names.add(name);
  return names;
}

/** Variables substituted into config/gateway.config.yml (`${NAME}` or `${NAME:-default}`) at load. */
export function configEnvNames(): Set<string> {
  const text = fs.readFileSync(path.join(ROOT, 'config', 'gateway.config.yml'), 'utf8');
  return new Set([...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)(?::-[^}]*)?\}/g)].map(([, name]) => name));
}
