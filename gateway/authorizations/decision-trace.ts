import fs from 'node:fs';
import v8 from 'node:v8';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';

/**
 * A diagnostic of where an authorization decision's time goes (docs/performance.md, "Run K"): off
 * unless `AUTHORIZATION_TRACE_FILE` names a file. Then each decision appends one JSON line of
 * timestamps (epoch ms, sub-millisecond), and the process appends its garbage collections and,
 * every second, its event loop's delay. Never on in production: it writes a line per decision.
 */
const file = process.env.AUTHORIZATION_TRACE_FILE;

/** A decision's timestamps by step (epoch ms). */
export type DecisionTrace = Record<string, number | string>;

/** Whether the diagnostic is on (`AUTHORIZATION_TRACE_FILE`). */
export const tracing = file !== undefined && file !== '';

/** Epoch ms with the monotonic clock's resolution. */
export const traceNow = (): number => performance.timeOrigin + performance.now();

/** Marks `step` now on `trace` (nothing without one). */
export function mark(trace: DecisionTrace | undefined, step: string): void {
  if (trace) trace[step] = traceNow();
}

let stream: fs.WriteStream | undefined;

/** Appends one line to the trace file. */
export function writeTrace(record: object): void {
  if (!tracing) return;
  stream ??= fs.createWriteStream(file!, { flags: 'a' });
  stream.write(`${JSON.stringify(record)}\n`);
}

let monitoring = false;

/** Starts the process-wide records (collections, the event loop's delay each second), once. */
export function startTraceMonitors(): void {
  if (!tracing || monitoring) return;
  monitoring = true;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      writeTrace({ gc: performance.timeOrigin + entry.startTime, ms: entry.duration, kind: (entry as { detail?: { kind?: number } }).detail?.kind });
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  /** The process's threads' time waiting on a run queue (ns, /proc schedstat's second field), summed. */
  const runQueueWaitNs = (): number => {
    try {
      let total = 0;
      for (const task of fs.readdirSync('/proc/self/task')) total += Number(fs.readFileSync(`/proc/self/task/${task}/schedstat`, 'utf8').split(' ')[1]);
      return total;
    } catch {
      return 0;
    }
  };
  let waitedNs = runQueueWaitNs();
  setInterval(() => {
    const waited = runQueueWaitNs();
    const runQueueMs = (waited - waitedNs) / 1e6;
    waitedNs = waited;
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_used_size / 1e5) / 10]));
    writeTrace({ eld: traceNow(), maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6, meanMs: delay.mean / 1e6, newMb: spaces.new_space, oldMb: spaces.old_space, heapMb: Math.round(v8.getHeapStatistics().used_heap_size / 1e5) / 10, runQueueMs });
    delay.reset();
  }, 1000).unref();
}
