import fs from 'node:fs';
import path from 'node:path';

/** One gateway process a test started: a boot that went to "gateway ready", or one expected to refuse to start. */
export interface GatewayBoot {
  kind: 'started' | 'refused';
  /** The test file that asked for it (relative to the repository), `(setup)` for the run's shared gateway, `(unknown)` when the stack does not say. */
  file: string;
}

const FILE = 'gateway-boots.jsonl';

/** The first test file (not support code) on the current stack, relative to the repository; call it before any await. */
function callerFile(): string {
  const root = path.resolve(__dirname, '..', '..', '..');
  for (const line of (new Error().stack ?? '').split('\n').slice(1)) {
    const match = /\(?((?:\/|[A-Za-z]:\\)[^():]+\.js):\d+:\d+\)?$/.exec(line.trim());
    if (!match) continue;
    const file = path.relative(root, match[1]!);
    if (file.startsWith(`dist${path.sep}test${path.sep}`) && !file.startsWith(`dist${path.sep}test${path.sep}support${path.sep}`)) {
      return file === path.join('dist', 'test', 'setup.js') ? '(setup)' : file;
    }
  }
  return '(unknown)';
}

/**
 * Records a gateway process start in the run's output directory (`gateway-boots.jsonl`, every
 * worker appends to it): the reporter prints how many the run made and which files made most,
 * since boots are much of the suite's CPU.
 */
export function recordGatewayBoot(kind: GatewayBoot['kind']): void {
  const dir = process.env.TEST_OUTPUT_DIR;
  if (!dir) return;
  const boot: GatewayBoot = { kind, file: callerFile() };
  fs.appendFileSync(path.join(dir, FILE), `${JSON.stringify(boot)}\n`);
}

/** Every gateway boot of the run so far. */
export function recordedGatewayBoots(): GatewayBoot[] {
  const dir = process.env.TEST_OUTPUT_DIR;
  const file = dir ? path.join(dir, FILE) : '';
  if (!file || !fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as GatewayBoot);
}

/** "N gateway processes started (K expected to refuse); most by file: …", or undefined when none were. */
export function describeGatewayBoots(boots: GatewayBoot[], top = 8): string | undefined {
  if (boots.length === 0) return undefined;
  const refused = boots.filter((b) => b.kind === 'refused').length;
  const byFile = new Map<string, number>();
  for (const boot of boots) byFile.set(boot.file, (byFile.get(boot.file) ?? 0) + 1);
  const most = [...byFile.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, top)
    .map(([file, n]) => `  ${String(n).padStart(4)}  ${file}`);
  return `gateway processes started: ${boots.length} (${refused} expected to refuse to start) by ${byFile.size} files; most:\n${most.join('\n')}`;
}
