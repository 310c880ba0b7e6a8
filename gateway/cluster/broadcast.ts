import cluster, { type Worker } from 'node:cluster';

// With the cluster (WORKERS > 1) an admin call lands on one worker, but some calls must reach every
// worker before they answer: a key revocation (each worker has its own verified-token cache) and a
// config reload (each worker has its own pipelines). The worker that received the call asks the
// primary, the primary runs the topic's handler on every live worker, collects one answer per
// worker (or notes that it timed out or exited) and hands the list back to the asking worker.

/** Set by the primary for its workers: broadcasts are served. */
const BROADCAST_ENV = 'PARTNER_GATEWAY_CLUSTER_BROADCAST';
const REQUEST = 'partner-gateway:broadcast';
const RUN = 'partner-gateway:broadcast-run';
const DONE = 'partner-gateway:broadcast-done';
const RESULT = 'partner-gateway:broadcast-result';

/** What one worker answered to a broadcast. */
export interface WorkerAnswer {
  /** cluster worker id (1, 2, ...); 0 outside a cluster. */
  worker: number;
  pid: number;
  /** The handler ran and resolved. */
  ok: boolean;
  /** What the handler resolved with (when ok). */
  value?: unknown;
  /** Why not: the handler's error, or `timeout`, `killed`, `exited`, `not_ready` (no handler registered yet). */
  error?: string;
}

export interface BroadcastOptions {
  /** How long the primary waits for each worker (default 5 s). */
  timeoutMs?: number;
  /**
   * Kill a worker that does not answer in time (and wait for its exit) rather than report it:
   * for changes no worker may miss, such as a revocation.
   */
  killOnTimeout?: boolean;
}

interface Request {
  type: typeof REQUEST;
  id: number;
  topic: string;
  payload: unknown;
  timeoutMs: number;
  killOnTimeout: boolean;
}
interface Run {
  type: typeof RUN;
  id: number;
  topic: string;
  payload: unknown;
}
interface Done {
  type: typeof DONE;
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}
interface Result {
  type: typeof RESULT;
  id: number;
  answers: WorkerAnswer[];
}

const DEFAULT_TIMEOUT_MS = 5000;
let serving = false;

/**
 * Primary side (call in the cluster primary before forking the workers). Sets
 * `PARTNER_GATEWAY_CLUSTER_BROADCAST` in the primary's environment, which the workers inherit.
 */
export function serveClusterBroadcast(): void {
  if (serving || !cluster.isPrimary) return;
  serving = true;
  process.env[BROADCAST_ENV] = '1';
  let nextRunId = 0;
  const waiting = new Map<string, (done: Done) => void>();

  const runOn = (worker: Worker, request: Request): Promise<WorkerAnswer> => {
    const runId = nextRunId++;
    const pid = worker.process.pid ?? 0;
    const key = `${worker.id}:${runId}`;
    return new Promise<WorkerAnswer>((resolve) => {
      let settled = false;
      const settle = (answer: Omit<WorkerAnswer, 'worker' | 'pid'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        waiting.delete(key);
        worker.off('exit', onExit);
        resolve({ worker: worker.id, pid, ...answer });
      };
      const onExit = () => settle({ ok: false, error: 'exited' });
      const timer = setTimeout(() => {
        if (!request.killOnTimeout) return settle({ ok: false, error: 'timeout' });
        // A worker that cannot confirm is stopped: a dead worker serves nothing stale.
        worker.off('exit', onExit);
        worker.once('exit', () => settle({ ok: false, error: 'killed' }));
        worker.process.kill('SIGKILL');
      }, request.timeoutMs);
      timer.unref();
      worker.once('exit', onExit);
      waiting.set(key, (done) => settle(done.ok ? { ok: true, value: done.value } : { ok: false, error: done.error ?? 'failed' }));
      try {
        worker.send({ type: RUN, id: runId, topic: request.topic, payload: request.payload } satisfies Run);
      } catch {
        settle({ ok: false, error: 'exited' });
      }
    });
  };

  cluster.on('message', (worker, message: Partial<Request | Done> | null) => {
    if (message?.type === DONE && typeof message.id === 'number') {
      waiting.get(`${worker.id}:${message.id}`)?.(message as Done);
      return;
    }
    if (message?.type !== REQUEST || typeof message.id !== 'number') return;
    const request = message as Request;
    const targets = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected() && !w.isDead());
    void Promise.all(targets.map((w) => runOn(w, request))).then((answers) => {
      if (worker.isConnected()) worker.send({ type: RESULT, id: request.id, answers } satisfies Result);
    });
  });
}

/** True in a worker whose primary serves broadcasts. */
export function clusterBroadcastAvailable(): boolean {
  return cluster.isWorker && process.env[BROADCAST_ENV] === '1' && typeof process.send === 'function';
}

type Handler = (payload: unknown) => unknown;
const handlers = new Map<string, Handler>();
let workerReady = false;
let nextId = 0;
const pending = new Map<number, { resolve(answers: WorkerAnswer[]): void; reject(err: Error): void; timer: NodeJS.Timeout }>();

function prepareWorker(): void {
  if (workerReady) return;
  workerReady = true;
  process.on('message', (message: Partial<Run | Result> | null) => {
    if (message?.type === RUN && typeof message.id === 'number') {
      const run = message as Run;
      const reply = (done: Omit<Done, 'type' | 'id'>) => {
        if (process.connected) process.send!({ type: DONE, id: run.id, ...done } satisfies Done);
      };
      const handler = handlers.get(run.topic);
      if (!handler) return reply({ ok: false, error: 'not_ready' });
      Promise.resolve()
        .then(() => handler(run.payload))
        .then(
          (value) => reply({ ok: true, value }),
          (err: unknown) => reply({ ok: false, error: (err as Error)?.message ?? String(err) })
        );
      return;
    }
    if (message?.type === RESULT && typeof message.id === 'number') {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      clearTimeout(waiting.timer);
      waiting.resolve((message as Result).answers);
    }
  });
}

// Installed as soon as a worker loads this module: the primary may ask before the first call.
if (clusterBroadcastAvailable()) prepareWorker();

/** Registers what this process does for a topic (replaces an earlier handler of the topic). */
export function onClusterBroadcast(topic: string, handler: Handler): void {
  handlers.set(topic, handler);
}

/**
 * Runs the topic's handler on every worker of the cluster (this one included) through the primary
 * and resolves with one answer per worker. Outside a cluster (or without a serving primary), runs
 * it in this process only. Rejects only when the primary does not answer at all.
 */
export async function broadcast(topic: string, payload: unknown, options: BroadcastOptions = {}): Promise<WorkerAnswer[]> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!clusterBroadcastAvailable()) {
    const self = { worker: cluster.worker?.id ?? 0, pid: process.pid };
    const handler = handlers.get(topic);
    if (!handler) return [{ ...self, ok: false, error: 'not_ready' }];
    try {
      return [{ ...self, ok: true, value: await handler(payload) }];
    } catch (err) {
      return [{ ...self, ok: false, error: (err as Error)?.message ?? String(err) }];
    }
  }
  prepareWorker();
  const id = nextId++;
  return new Promise<WorkerAnswer[]>((resolve, reject) => {
    // The primary answers within timeoutMs (plus the time to kill a silent worker).
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`cluster broadcast "${topic}": the primary did not answer`));
    }, timeoutMs + 10_000);
    timer.unref();
    pending.set(id, { resolve, reject, timer });
    process.send!({ type: REQUEST, id, topic, payload, timeoutMs, killOnTimeout: options.killOnTimeout === true } satisfies Request);
  });
}
