import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/** A child process started by the bench, with the JSON line it announced itself with. */
export interface BenchProcess {
  child: ChildProcess;
  ready: Record<string, unknown>;
  /**
   * Set when the child exited after it was ready without `stop()` asking it to: what it was, its
   * code or signal and the tail of its stderr. The run has already been marked failed.
   */
  readonly unexpectedExit: string | undefined;
  stop(): Promise<void>;
}

/**
 * The environment of a one-worker bench gateway in front of the sandbox's upstreams: free ports
 * (bench runs may overlap with another gateway on this machine), the bounded V8 heap `npm start`
 * and the container run it with (docs/performance.md, "Memory"), and rate limits far above any rate a bench
 * reaches (the benches measure throughput, not the rate limiter). Callers add or override the rest.
 */
export function benchGatewayEnv(o: { databaseUrl: string; sandbox: BenchProcess; adminToken: string; dataDir: string }): Record<string, string> {
  return {
    DATABASE_URL: o.databaseUrl,
    ISSUER_URL: o.sandbox.ready.issuer as string,
    PROCESSING_URL: o.sandbox.ready.processing as string,
    ACCOUNTS_URL: o.sandbox.ready.accounts as string,
    PORT: '0',
    ADMIN_PORT: '0',
    NOTIFICATIONS_PORT: '0',
    ADMIN_TOKEN: o.adminToken,
    WORKERS: '1',
    LOG_LEVEL: 'info',
    NODE_OPTIONS: '--max-old-space-size=160',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000',
    RATE_LIMIT_READS_PER_MINUTE: '100000000',
    RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
    DATA_DIR: o.dataDir,
  };
}

/** Whether a child process is still running (a child killed by a signal keeps `exitCode` null). */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Spawns `node <script>` and resolves with the first stdout JSON line for which `isReady` is true.
 * Everything else the child writes is discarded (a bench must not be slowed by its own reader),
 * or, given `stdoutFile`, the rest of its stdout is appended there.
 * A child that exits after it was ready, unasked, is reported on stderr (script, code, signal,
 * stderr tail) and fails the run (`process.exitCode = 1`): a bench must never measure a dead
 * process or hide why it died.
 */
export function startNode(script: string, env: NodeJS.ProcessEnv, isReady: (line: Record<string, unknown>) => boolean, timeoutMs = 60_000, stdoutFile?: string): Promise<BenchProcess> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let buffer = '';
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start:\n${errors}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith('{')) continue;
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (isReady(parsed)) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          // A diagnostic (BENCH_GATEWAY_STDOUT_FILE, docs/performance.md "Diagnostics"): the rest of the
          // child's stdout (V8's --trace-gc lines among them) appended to a file instead of dropped.
          if (stdoutFile) child.stdout!.pipe(fs.createWriteStream(stdoutFile, { flags: 'a' }));
          else child.stdout!.resume();
          let stopping = false;
          let unexpectedExit: string | undefined;
          // 'close', not 'exit': by then the child's last stderr words have been read.
          child.once('close', (code, signal) => {
            if (stopping) return;
            unexpectedExit = `bench: ${script} exited unexpectedly (code ${code}, signal ${signal}): ${errors.trim() || '(nothing on stderr)'}`;
            process.stderr.write(`${unexpectedExit}\n`);
            process.exitCode = 1;
          });
          resolve({
            child,
            ready: parsed,
            get unexpectedExit() {
              return unexpectedExit;
            },
            stop: () =>
              new Promise<void>((done) => {
                stopping = true;
                if (!isRunning(child)) return done();
                child.once('exit', () => done());
                child.kill('SIGTERM');
                setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
              }),
          });
          return;
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${errors}`));
    });
  });
}

/** The child processes of `pid` (a cluster primary's workers), read from /proc. */
export function childrenOf(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/))
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Peak resident set (VmHWM) in MB of a process, and of each of its child processes (cluster workers). */
export function peakRssMb(pid: number): { process: number; children: number[] } {
  const read = (p: number) => {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      return match ? Math.round(Number(match[1]) / 1024) : 0;
    } catch {
      return 0;
    }
  };
  return { process: read(pid), children: childrenOf(pid).map(read) };
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system) a process has used so far, in milliseconds, from /proc/<pid>/stat (its
 * threads included: libuv's pool, V8's compiler and GC threads). Clock-tick resolution (10 ms):
 * compare it over hundreds of requests at least.
 */
export function cpuTimeMs(pid: number): number {
  clockTicks ??= (() => {
    try {
      return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      return 100;
    }
  })();
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** CPU time in ms ({@link cpuTimeMs}) of each of `pids` that is still there; one that ended since it was listed is left out. */
export function cpuByPid(pids: readonly number[]): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const pid of pids) {
    try {
      cpu.set(pid, cpuTimeMs(pid));
    } catch {
      // ended since it was listed
    }
  }
  return cpu;
}
