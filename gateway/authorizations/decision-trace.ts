import fs from 'node:fs';
import v8 from 'node:v8';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import type { Logger } from '../logging/logger';

/**
 * A diagnostic of where an authorization decision's time goes (docs/performance.md, "Diagnostics: the decision trace and GC tracing"): off
 * unless `AUTHORIZATION_TRACE_FILE` names a file (gateway/settings.ts checks its directory at start;
 * docs/operator-guide.md: a diagnostic, never set in production). Then each decision appends one
 * JSON line of timestamps (epoch ms, sub-millisecond), and the process appends its garbage
 * collections and, every second, its event loop's delay. Every line carries the process id (the
 * workers of a cluster append to one file). Opened at start ({@link openDecisionTrace}): a file
 * that cannot be written (opened or appended to) is logged once and turns the diagnostic off, never
 * the gateway. Lines beyond {@link TRACE_BUFFER_BYTES} not yet written (a slow disk) are dropped and
 * counted rather than held; the count is written once the file catches up and logged at the end.
 */

/** A decision's timestamps by step (epoch ms). */
export type DecisionTrace = Record<string, number | string>;

/** Bytes of lines waiting for the file past which new lines are dropped (and counted). */
export const TRACE_BUFFER_BYTES = 1 << 20;

let stream: fs.WriteStream | undefined;
let on = false;
let dropped = 0;
let droppedReported = 0;

/** Whether the diagnostic is on: a trace file open and not failed. */
export function tracing(): boolean {
  return on;
}

/** Epoch ms with the monotonic clock's resolution. */
export const traceNow = (): number => performance.timeOrigin + performance.now();

/** Marks `step` now on `trace` (nothing without one). */
export function mark(trace: DecisionTrace | undefined, step: string): void {
  if (trace) trace[step] = traceNow();
}

/** The open trace file: {@link DecisionTraceFile.close} ends it (the lines written so far reach it). */
export interface DecisionTraceFile {
  /** Lines dropped so far because the file fell {@link TRACE_BUFFER_BYTES} behind. */
  dropped(): number;
  close(): Promise<void>;
}

/**
 * Opens `file` for appending and turns the diagnostic on (one file per process). An error of the
 * stream (the file cannot be opened, a full disk) is logged once, with the file's path and the
 * error's code, and turns the diagnostic off; the gateway goes on.
 */
export function openDecisionTrace(file: string, log: Logger, bufferBytes = TRACE_BUFFER_BYTES): DecisionTraceFile {
  if (stream) throw new Error('the decision trace is already open');
  const opened = fs.createWriteStream(file, { flags: 'a' });
  stream = opened;
  on = true;
  dropped = 0;
  droppedReported = 0;
  limit = bufferBytes;
  opened.once('error', (err: NodeJS.ErrnoException) => {
    on = false;
    log.error({ file, code: err.code, dropped }, 'AUTHORIZATION_TRACE_FILE cannot be written: the decision trace is off');
  });
  // After an error the stream may emit others: the first one is logged, the rest are swallowed.
  opened.on('error', () => undefined);
  let closing: Promise<void> | undefined;
  return {
    dropped: () => dropped,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        const failed = !on;
        on = false;
        stopMonitors?.();
        if (stream === opened) stream = undefined;
        if (dropped > 0) log.warn({ file, dropped }, 'decision trace lines were dropped: the file fell behind');
        if (failed || opened.destroyed) return resolve();
        opened.end(() => resolve());
        opened.once('error', () => resolve());
      })),
  };
}

let limit = TRACE_BUFFER_BYTES;

/** Appends one line to the trace file, with the process's id; dropped (and counted) when the file is behind. */
export function writeTrace(record: object): void {
  if (!on || !stream) return;
  if (stream.writableLength > limit) {
    dropped++;
    return;
  }
  if (dropped > droppedReported) {
    stream.write(`${JSON.stringify({ pid: process.pid, dropped: dropped - droppedReported, at: traceNow() })}\n`);
    droppedReported = dropped;
  }
  stream.write(`${JSON.stringify({ pid: process.pid, ...record })}\n`);
}

let stopMonitors: (() => void) | undefined;

/** Starts the process-wide records (collections, the event loop's delay each second), once; the trace's close stops them. */
export function startTraceMonitors(): void {
  if (!on || stopMonitors) return;
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
  const interval = setInterval(() => {
    const waited = runQueueWaitNs();
    const runQueueMs = (waited - waitedNs) / 1e6;
    waitedNs = waited;
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_used_size / 1e5) / 10]));
    writeTrace({ eld: traceNow(), maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6, meanMs: delay.mean / 1e6, newMb: spaces.new_space, oldMb: spaces.old_space, heapMb: Math.round(v8.getHeapStatistics().used_heap_size / 1e5) / 10, runQueueMs });
    delay.reset();
  }, 1000).unref();
  stopMonitors = () => {
    clearInterval(interval);
    gc.disconnect();
    delay.disable();
    stopMonitors = undefined;
  };
}
