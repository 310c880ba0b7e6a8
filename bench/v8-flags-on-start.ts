/**
 * Preloaded into the bench's single-worker gateway (`node --require`) when
 * `BENCH_GATEWAY_V8_FLAGS` is set: passes those V8 flags to `v8.setFlagsFromString` before the
 * gateway's code loads. A diagnostic (docs/performance.md, "Diagnostics"): the
 * tracing flags (`--trace-gc`, `--trace-gc-nvp`, `--trace-incremental-marking`, ...) and
 * `--heap-growing-percent` are refused in `NODE_OPTIONS`. Their output goes to the gateway's
 * stdout: `BENCH_GATEWAY_STDOUT_FILE` keeps it. Also writes `{pid, epoch, perfNow}` to
 * `$BENCH_GATEWAY_STDOUT_FILE.start.json` when both are set: V8's trace times are milliseconds since
 * the process started (about `performance.now()`), that line maps them to epoch milliseconds.
 */
import fs from 'node:fs';
import v8 from 'node:v8';

const flags = process.env.BENCH_GATEWAY_V8_FLAGS;
if (flags) {
  v8.setFlagsFromString(flags);
  const out = process.env.BENCH_GATEWAY_STDOUT_FILE;
  if (out) fs.writeFileSync(`${out}.start.json`, `${JSON.stringify({ pid: process.pid, epoch: Date.now(), perfNow: performance.now(), flags })}\n`);
}
