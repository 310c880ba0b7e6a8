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

/** Records how long a test file took (parallel workers: see test/setup.ts), in the run's output directory. */
export function recordFileTime(file: string, ms: number): void {
  const dir = process.env.TEST_OUTPUT_DIR;
  if (!dir) return;
  fs.appendFileSync(path.join(dir, `file-times-${process.pid}.jsonl`), `${JSON.stringify({ file, ms })}\n`);
}

/** The file times recorded by every worker of the run. */
export function recordedFileTimes(): { file: string; ms: number }[] {
  const dir = process.env.TEST_OUTPUT_DIR;
  if (!dir || !fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => /^file-times-\d+\.jsonl$/.test(name))
    .flatMap((name) => fs.readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as { file: string; ms: number });
}
