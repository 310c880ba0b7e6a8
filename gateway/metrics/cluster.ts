import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { registry } from './registry';

// With the cluster (WORKERS > 1) each worker has its own registry, and the shared admin port hands
// a scrape to any one worker. When the primary serves aggregation (serveClusterMetrics), the
// worker that received the scrape asks the primary, which gathers every worker's registry through
// prom-client's AggregatorRegistry (counters and histograms summed) and answers with the text.

/** Set by the primary for its workers: aggregation is served. */
const AGGREGATION_ENV = 'PARTNER_GATEWAY_METRICS_AGGREGATION';
const COLLECT_REQUEST = 'partner-gateway:metrics-collect';
const COLLECT_RESPONSE = 'partner-gateway:metrics-collected';
/** prom-client gives up on silent workers after 5 s; the asking worker waits a little longer. */
const COLLECT_TIMEOUT_MS = 6_000;

interface CollectRequest {
  type: typeof COLLECT_REQUEST;
  id: number;
}
interface CollectResponse {
  type: typeof COLLECT_RESPONSE;
  id: number;
  text?: string;
  error?: string;
}

let serving = false;

/**
 * Primary side (call in the cluster primary before forking the workers): aggregates the workers'
 * registries for whichever worker serves a scrape of `/admin/metrics`. Sets
 * `PARTNER_GATEWAY_METRICS_AGGREGATION` in the primary's environment, which the workers inherit.
 * Without this call each worker answers a scrape with its own metrics only.
 *
 * @example serveClusterMetrics(); for (let i = 0; i < settings.workers; i++) fork();
 */
export function serveClusterMetrics(): void {
  if (serving || !cluster.isPrimary) return;
  serving = true;
  const aggregator = new AggregatorRegistry();
  process.env[AGGREGATION_ENV] = '1';
  cluster.on('message', (worker, message: Partial<CollectRequest> | null) => {
    if (message?.type !== COLLECT_REQUEST || typeof message.id !== 'number') return;
    const id = message.id;
    const reply = (response: Omit<CollectResponse, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: COLLECT_RESPONSE, id, ...response } satisfies CollectResponse);
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (err: unknown) => reply({ error: (err as Error).message })
    );
  });
}

/** True in a worker whose primary serves aggregation. */
export function clusterAggregation(): boolean {
  return cluster.isWorker && process.env[AGGREGATION_ENV] === '1' && typeof process.send === 'function';
}

let workerReady = false;
let nextId = 0;
const pending = new Map<number, { resolve(text: string): void; reject(err: Error): void; timer: NodeJS.Timeout }>();

/** Worker side: answers the primary's requests for this registry, and routes its answers to us. */
function prepareWorker(): void {
  if (workerReady) return;
  workerReady = true;
  AggregatorRegistry.setRegistries([registry]);
  // The constructor installs prom-client's worker listener (it answers with getMetricsAsJSON()).
  new AggregatorRegistry();
  process.on('message', (message: Partial<CollectResponse> | null) => {
    if (message?.type !== COLLECT_RESPONSE || typeof message.id !== 'number') return;
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (typeof message.text === 'string') waiting.resolve(message.text);
    else waiting.reject(new Error(`cluster metrics: ${message.error ?? 'no answer'}`));
  });
}

// Installed as soon as a worker loads the metrics: the primary may ask before the first scrape.
if (clusterAggregation()) prepareWorker();

/** Worker side: the metrics of every worker, aggregated by the primary. */
export function metricsFromPrimary(): Promise<string> {
  prepareWorker();
  const id = nextId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error('cluster metrics: the primary did not answer'));
    }, COLLECT_TIMEOUT_MS);
    timer.unref();
    pending.set(id, { resolve, reject, timer });
    process.send!({ type: COLLECT_REQUEST, id } satisfies CollectRequest);
  });
}
