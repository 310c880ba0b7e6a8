import fs from 'node:fs';
import path from 'node:path';

/**
 * The headless Chromium of the browser tests (test/e2e/docs-page.test.ts), found without a hand step:
 *
 * 1. `CHROMIUM_PATH`, when set (it must exist);
 * 2. Debian's `/usr/bin/chromium`, when installed (`apt-get install -y chromium`);
 * 3. the Chromium that `npm install` brings: the devDependency `@sparticuz/chromium` ships a
 *    headless-shell build inside its npm package (no download at install or at run time); it is
 *    unpacked once into `node_modules/.cache/chromium/` and reused by every later run.
 *
 * Never a silent skip: with none of them, {@link findChromium} throws an error naming what is missing.
 * docs/decisions.md says why the npm package is the fallback rather than an install step.
 */
export interface Chromium {
  executablePath: string;
  args: string[];
  /** Where it came from, for the test's title and failure messages. */
  source: 'CHROMIUM_PATH' | 'debian' | 'npm';
}

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** Flags for a headless run as root on a machine with no outside network (docs/decisions.md). */
const COMMON_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'chromium');

interface SparticuzChromium {
  executablePath(input?: string): Promise<string>;
  args: string[];
  setGraphicsMode: boolean;
}

/**
 * Unpacks `@sparticuz/chromium` into {@link CACHE_DIR} once. The package unpacks into `os.tmpdir()`,
 * so TMPDIR points at a private folder during the call; the folder is then renamed into place, so
 * two runs unpacking at once never see a half-written binary.
 */
async function unpackNpmChromium(): Promise<Chromium> {
  let mod: { default?: SparticuzChromium } & Partial<SparticuzChromium>;
  try {
    mod = require('@sparticuz/chromium');
  } catch (err) {
    throw new Error(
      `no browser for the docs page test: ${DEBIAN_CHROMIUM} is not installed and the devDependency @sparticuz/chromium ` +
        `is missing (${(err as Error).message}). Run \`npm install\`, or install Debian's chromium (apt-get install -y chromium), or set CHROMIUM_PATH.`
    );
  }
  const chromium = (mod.default ?? mod) as SparticuzChromium;
  const executablePath = path.join(CACHE_DIR, 'chromium');
  if (!fs.existsSync(executablePath)) {
    fs.mkdirSync(path.dirname(CACHE_DIR), { recursive: true });
    const staging = fs.mkdtempSync(`${CACHE_DIR}.unpacking-`);
    const previousTmp = process.env.TMPDIR;
    try {
      // WebGL is not needed: skip unpacking SwiftShader.
      chromium.setGraphicsMode = false;
      process.env.TMPDIR = staging;
      const unpacked = await chromium.executablePath();
      if (path.dirname(unpacked) !== staging) throw new Error(`@sparticuz/chromium unpacked to ${unpacked}, not into ${staging}`);
    } finally {
      if (previousTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previousTmp;
    }
    try {
      fs.renameSync(staging, CACHE_DIR);
    } catch {
      // Another run put it in place first: use theirs.
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
  // Its own flags (single process, no zygote) plus ours; headless is set by the launcher.
  const args = [...new Set([...chromium.args.filter((a) => !a.startsWith('--headless')), ...COMMON_ARGS])];
  return { executablePath, args, source: 'npm' };
}

/** Finds (and on first use unpacks) the Chromium the browser tests drive; throws naming what is missing. */
export async function findChromium(): Promise<Chromium> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!fs.existsSync(configured)) throw new Error(`CHROMIUM_PATH is ${configured}, which does not exist`);
    return { executablePath: configured, args: COMMON_ARGS, source: 'CHROMIUM_PATH' };
  }
  if (fs.existsSync(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, args: COMMON_ARGS, source: 'debian' };
  return unpackNpmChromium();
}
