// mocha's spec reporter plus, at the end of a run, the 10 slowest test files and one plain closing
// line, "N passed, N failed[, N skipped]", which CI reads to know that tests ran. The closing line
// is written after mocha's global teardown (test/setup.ts), so a failure found there (the secrets
// scan) is counted in it and in the exit code.
import path from 'node:path';
import Mocha from 'mocha';
import { describeGatewayBoots, recordedGatewayBoots } from './gateway-boots';
import { recordedFileTimes, runFailures, type FileTime } from './run-failures';


/** Wall time of each test file: from its first hook or test starting to its last one ending. */
class FileTimes {
  private readonly spans = new Map<string, { start: number; end: number }>();

  mark(file: string | undefined): void {
    if (!file) return;
    const now = Date.now();
    const span = this.spans.get(file);
    if (span) span.end = now;
    else this.spans.set(file, { start: now, end: now });
  }

  slowest(n: number): { file: string; ms: number }[] {
    return [...this.spans.entries()]
      .map(([file, { start, end }]) => ({ file, ms: end - start }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, n);
  }
}

class SummaryReporter extends Mocha.reporters.Spec {
  private readonly times = new FileTimes();

  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END, EVENT_HOOK_END } = Mocha.Runner.constants;
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => this.times.mark(suite.file));
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => this.times.mark(suite.file));
    runner.on(EVENT_TEST_END, (test: Mocha.Test) => this.times.mark(test.file));
    runner.on(EVENT_HOOK_END, (hook: Mocha.Hook) => this.times.mark(hook.parent?.file));
  }

  /** Called by mocha once the run and its global teardown are over. */
  override done(failures: number, fn?: (failures: number) => void): void {
    const { passes, pending } = this.stats;
    const root = process.cwd();
    // Parallel workers recorded their files' times themselves; in serial mode the events tell.
    const recorded = recordedFileTimes().sort((a, b) => b.ms - a.ms);
    const cpu = (ms: number | undefined) => (ms === undefined ? '' : `  ${(ms / 1000).toFixed(1).padStart(6)} s CPU`);
    const lines = (recorded.length > 0 ? recorded.slice(0, 10) : this.times.slowest(10)).map(
      ({ file, ms, cpuMs }: FileTime) => `  ${(ms / 1000).toFixed(1).padStart(6)} s${cpu(cpuMs)}  ${path.relative(root, file)}`
    );
    if (lines.length > 0) process.stdout.write(`\nslowest test files (wall time${recorded.some((r) => r.cpuMs !== undefined) ? ', CPU time of the worker and the processes it started' : ''}):\n${lines.join('\n')}\n`);
    const boots = describeGatewayBoots(recordedGatewayBoots());
    if (boots) process.stdout.write(`\n${boots}\n`);
    for (const message of runFailures()) process.stdout.write(`\nrun failure: ${message}\n`);
    const failed = failures + runFailures().length;
    process.stdout.write(`\n${passes} passed, ${failed} failed${pending ? `, ${pending} skipped` : ''}\n`);
    fn?.(failed);
  }
}

export = SummaryReporter;
