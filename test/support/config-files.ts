import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';

/** The shipped configuration folder (config/), seen from dist/test/support. */
export const SHIPPED_CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');

export type Yaml = Record<string, any>;

const parses = new Map<string, unknown>();

/**
 * `YAML.parse(text)`, parsed once per test process and text and handed out as a copy to change.
 * The shipped gateway.config.yml (about 1,000 lines with anchors) costs 30 to 350 ms of CPU per
 * parse with the `yaml` package, and the config tests parse it a few hundred times a run.
 */
export function parseYaml(text: string): Yaml {
  if (!parses.has(text)) parses.set(text, YAML.parse(text));
  return structuredClone(parses.get(text)) as Yaml;
}

/** A shipped config file (`gateway.config.yml`, `system.config.yml`) parsed, as a copy to change. */
export function shippedYaml(file = 'gateway.config.yml'): Yaml {
  return parseYaml(fs.readFileSync(path.join(SHIPPED_CONFIG_DIR, file), 'utf8'));
}

/** `text` (a YAML document) with `change` applied, written back as YAML. */
export function changedYaml(text: string, change: (c: Yaml) => void): string {
  const parsed = parseYaml(text);
  change(parsed);
  return YAML.stringify(parsed);
}

/**
 * A temporary copy of the shipped config folder, with `change` applied to its config files
 * (`gateway` to gateway.config.yml, `system` to system.config.yml) and `files` run on the folder.
 */
export function shippedConfigCopy(
  change: { gateway?: (c: Yaml) => void; system?: (c: Yaml) => void; files?: (dir: string) => void } = {},
  prefix = 'pgw-config-'
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.cpSync(SHIPPED_CONFIG_DIR, dir, { recursive: true });
  for (const [file, fn] of [
    ['gateway.config.yml', change.gateway],
    ['system.config.yml', change.system],
  ] as const) {
    if (!fn) continue;
    const parsed = shippedYaml(file);
    fn(parsed);
    fs.writeFileSync(path.join(dir, file), YAML.stringify(parsed));
  }
  change.files?.(dir);
  return dir;
}
