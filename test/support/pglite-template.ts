import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../gateway/db/embedded';
import { createLogger } from '../../gateway/logging/logger';

/**
 * A pre-initialised PGlite data directory for the embedded test gateways.
 *
 * A gateway started on an empty DATA_DIR runs PostgreSQL's initdb inside WASM before anything else
 * (about 5 s of CPU of its 7 s boot). Most tests that start one do not test that first start: they
 * get a copy of a template instead ({@link copyPgliteTemplate}), a `pgdata` directory on which
 * initdb ran and nothing else, so the gateway still applies every migration itself. The first start
 * stays covered by the test that asks for it (`StartOptions.firstStart`, test/e2e/database.test.ts).
 *
 * The template is made by `startEmbeddedPostgres` itself (the gateway's own function, so the same
 * PGlite and options: gateway/db/embedded.ts), started and stopped cleanly in a child process, and
 * kept across runs under node_modules/.cache, keyed by the installed @electric-sql/pglite version and
 * the compiled embedded.js: a new PGlite or a change to how the gateway opens it makes a new one.
 * It is built in a temporary directory and renamed into place once complete, by one process at a
 * time (a lock file naming its pid): a parallel worker that needs it meanwhile waits for it.
 */

/**
 * V8 flags of an embedded gateway in a test: `--liftoff-only` compiles PGlite's WebAssembly with V8's
 * baseline compiler only, without the optimising tier-up in the background, which halves the CPU
 * of an embedded boot (measured: 4.9 s against 2.5 s per gateway) for the few queries a test sends.
 * The code that runs and its answers are the same; the production start keeps V8's defaults.
 */
export const EMBEDDED_TEST_NODE_FLAGS: readonly string[] = ['--liftoff-only'];

const ROOT = path.resolve(__dirname, '..', '..', '..');
const EMBEDDED_JS = path.join(ROOT, 'dist', 'gateway', 'db', 'embedded.js');
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'partner-gateway-tests');
const PREFIX = 'pglite-template-';
const BUILD_TIMEOUT_MS = 180_000;

/** The installed @electric-sql/pglite (resolved as the gateway resolves it) and its version. */
function pgliteVersion(): string {
  let dir = path.dirname(require.resolve('@electric-sql/pglite', { paths: [path.dirname(EMBEDDED_JS)] }));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('@electric-sql/pglite/package.json not found');
    dir = parent;
  }
}

function templateDir(): string {
  const version = pgliteVersion();
  const code = crypto.createHash('sha256').update(fs.readFileSync(EMBEDDED_JS)).digest('hex').slice(0, 12);
  return path.join(CACHE_DIR, `${PREFIX}${version}-${code}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the build lock (true), or tells that a live process holds it (false); a dead holder's lock is broken. */
function tryLock(lock: string): boolean {
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let holder = NaN;
  let age = 0;
  try {
    holder = Number(fs.readFileSync(lock, 'utf8'));
    age = Date.now() - fs.statSync(lock).mtimeMs;
  } catch {
    return false; // released meanwhile: the caller looks again
  }
  // An empty file is a lock being written (the pid follows at once) unless it is old.
  const stale = Number.isInteger(holder) && holder > 0 ? !isAlive(holder) : age > 10_000;
  if (stale) fs.rmSync(lock, { force: true });
  return false;
}

/** Runs initdb in `dir/pgdata` in a child process (this file's `--build` entry below). */
function buildInChild(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...EMBEDDED_TEST_NODE_FLAGS, __filename, '--build', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), BUILD_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && fs.existsSync(path.join(dir, 'pgdata', 'PG_VERSION'))) resolve();
      else reject(new Error(`building the PGlite template failed (exit ${code ?? signal}):\n${output}`));
    });
  });
}

async function build(final: string): Promise<void> {
  const tmp = `${final}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  try {
    await buildInChild(tmp);
    try {
      fs.renameSync(tmp, final);
    } catch (err) {
      // Another process's build got there first (two could break one stale lock at once): it is as good.
      if (!fs.existsSync(final)) throw err;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  prune(final);
}

/** Removes the templates of other PGlite versions or embedded.js builds, and what a killed build left behind. */
function prune(final: string): void {
  for (const name of fs.readdirSync(CACHE_DIR)) {
    const full = path.join(CACHE_DIR, name);
    if (!name.startsWith(PREFIX) || full === final || name.endsWith('.lock')) continue;
    const building = /\.tmp-(\d+)-[0-9a-f]+$/.exec(name);
    if (building && isAlive(Number(building[1]))) continue;
    fs.rmSync(full, { recursive: true, force: true });
  }
}

let ready: Promise<string> | undefined;

/** The template's directory (it holds `pgdata`), built first if this PGlite has none yet. */
export function pgliteTemplate(): Promise<string> {
  if (ready) return ready;
  const attempt = (async () => {
    const final = templateDir();
    const lock = `${final}.lock`;
    fs.mkdirSync(CACHE_DIR, { recursive: true });
    const deadline = Date.now() + BUILD_TIMEOUT_MS + 30_000;
    while (!fs.existsSync(final)) {
      if (tryLock(lock)) {
        try {
          if (!fs.existsSync(final)) await build(final);
        } finally {
          fs.rmSync(lock, { force: true });
        }
        break;
      }
      if (Date.now() > deadline) throw new Error(`the PGlite template ${final} was not built in time (lock ${lock})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return final;
  })();
  ready = attempt;
  // A failed build is tried again by the next caller.
  attempt.catch(() => {
    if (ready === attempt) ready = undefined;
  });
  return attempt;
}

/** Copies the template's `pgdata` into `dataDir` (which has none yet), as the gateway's embedded database. */
export async function copyPgliteTemplate(dataDir: string): Promise<void> {
  const template = await pgliteTemplate();
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // FICLONE: a copy-on-write clone where the file system has one, a plain copy elsewhere.
  fs.cpSync(path.join(template, 'pgdata'), path.join(dataDir, 'pgdata'), { recursive: true, errorOnExist: true, force: false, mode: fs.constants.COPYFILE_FICLONE });
}

// `node pglite-template.js --build <dir>`: initdb only, by the gateway's own function, then a clean close.
if (require.main === module && process.argv[2] === '--build') {
  const dir = process.argv[3]!;
  void (async () => {
    const embedded = await startEmbeddedPostgres(dir, createLogger({ level: 'silent' }), 1);
    await embedded.stop();
  })().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    }
  );
}
