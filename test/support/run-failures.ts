import fs from 'node:fs';
import path from 'node:path';

/**
 * Failures of a whole test run found after its last test (mocha's global teardown, test/setup.ts):
 * the reporter (test/support/summary-reporter.ts) counts them in its closing line and exit code.
 * Kept on a global so that the reporter and the setup file agree however they were loaded.
 */
const KEY = Symbol.for('partner-gateway.test.run-failures');
type Holder = { [KEY]?: string[] };

function store(): string[] {
  const holder = globalThis as Holder;
  holder[KEY] ??= [];
  return holder[KEY];
}

/** Records a failure of the whole run. */
export function reportRunFailure(message: string): void {
  store().push(message);
}

/** The failures recorded so far. */
export function runFailures(): readonly string[] {
  return store();
}

/** A test file's wall time and the CPU time of its worker plus the child processes it reaped (gateways, CLIs). */
export interface FileTime {
  file: string;
  ms: number;
  cpuMs?: number;
}

/**
 * CPU time of this process and of its children that have exited and been waited for, in ms, from
 * /proc (Linux); undefined elsewhere. A gateway a test file started and stopped counts in it.
 */
export function cpuWithChildrenMs(): number | undefined {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name "(...)": utime, stime, cutime and cstime are the 12th to 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return (ticks * 1000) / 100;
  } catch {
    return undefined;
  }
}

/** Records how long a test file took (parallel workers: see test/setup.ts), in the run's output directory. */
export function recordFileTime(time: FileTime): void {
  const dir = process.env.TEST_OUTPUT_DIR;
  if (!dir) return;
  fs.appendFileSync(path.join(dir, `file-times-${process.pid}.jsonl`), `${JSON.stringify(time)}\n`);
}

/** The file times recorded by every worker of the run. */
export function recordedFileTimes(): FileTime[] {
  const dir = process.env.TEST_OUTPUT_DIR;
  if (!dir || !fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => /^file-times-\d+\.jsonl$/.test(name))
    .flatMap((name) => fs.readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as FileTime);
}
