// mocha's configuration. Test files run in parallel worker processes (four on the two cores of
// the machines this suite targets), longest first so that the short ones fill in around them; the
// global fixtures of test/setup.ts (the run's database, the shared gateway, the secrets scan) run
// once in the main process. `--no-parallel` (or MOCHA_PARALLEL=false) runs them in one process.
'use strict';
const fs = require('fs');
const path = require('path');

/** Files that take longest (figures printed at the end of every run): started first. */
const LONGEST_FIRST = [
  'dist/test/fuzz/',
  'dist/test/e2e/idempotency-takeover.test.js',
  'dist/test/e2e/exact-counts.test.js',
  'dist/test/e2e/database.test.js',
  'dist/test/e2e/idempotency-once-embedded.test.js',
  'dist/test/e2e/idempotency-once.test.js',
  'dist/test/faults/upstream-faults.test.js',
  'dist/test/e2e/webhooks-guard-and-crash.test.js',
  'dist/test/e2e/boot-guards.test.js',
  'dist/test/bench/',
  'dist/test/e2e/hot-reload.test.js',
  'dist/test/e2e/revocation.test.js',
  'dist/test/e2e/webhooks.test.js',
  'dist/test/e2e/webhooks-secrets-at-rest.test.js',
  'dist/test/e2e/individuals.test.js',
  'dist/test/faults/',
  'dist/test/soak/',
  'dist/test/e2e/upstream-operation-ids.test.js',
  'dist/test/sdk/packed-sdk.test.js',
  'dist/test/e2e/policy-audit.test.js',
];

function testFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.js') ? [full] : [];
  });
}

const rank = (file) => {
  const i = LONGEST_FIRST.findIndex((prefix) => file.startsWith(prefix));
  return i === -1 ? LONGEST_FIRST.length : i;
};
/**
 * Files named on the command line (`npx mocha dist/test/e2e/foundation.test.js`) run alone: mocha
 * would otherwise add them to this spec list and run everything.
 */
function filesOnCommandLine() {
  const takesValue = new Set(['--require', '-r', '--reporter', '-R', '--file', '--ignore', '--config', '--grep', '-g', '--fgrep', '-f', '--jobs', '-j', '--timeout', '-t', '--reporter-option', '-O']);
  const args = process.argv.slice(2);
  return args.filter((arg, i) => !arg.startsWith('-') && !takesValue.has(args[i - 1]) && /\.js$|\*/.test(arg));
}

const spec = filesOnCommandLine().length > 0 ? [] : testFiles('dist/test').sort().sort((a, b) => rank(a) - rank(b));

module.exports = {
  spec,
  require: ['dist/test/setup.js'],
  timeout: 30000,
  exit: true,
  parallel: process.env.MOCHA_PARALLEL !== 'false',
  // Four workers on the two cores this suite targets: many files wait on timers, child processes
  // and PostgreSQL, and the extra workers fill that idle time; a fifth starves the longest file
  // (measured back to back on a quiet 2-core machine, 2,547 tests: 3 workers 213.7 s, 4 workers
  // 184.6 s, 6 workers 201.0 s). MOCHA_JOBS overrides it.
  jobs: Number(process.env.MOCHA_JOBS || 4),
  reporter: './dist/test/support/summary-reporter.js',
};
