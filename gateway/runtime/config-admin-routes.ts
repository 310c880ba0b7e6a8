import cluster from 'node:cluster';
import type { Application } from 'express';
import { GatewayError } from '../errors';
import { writeAnswer } from '../http/answer';
import type { Logger } from '../logging/logger';
import { broadcast, clusterBroadcastAvailable, onClusterBroadcast, type WorkerAnswer } from '../cluster/broadcast';
import type { ConfigReloader, ConfigStatus, ReloadOutcome } from './config-reloader';

/** The cluster broadcast topic of `POST /admin/config/reload`. */
export const CONFIG_RELOAD_TOPIC = 'config-reload';
/** How long the primary waits for each worker's reload. */
export const CONFIG_RELOAD_TIMEOUT_MS = 15_000;

/** What one worker reports of its reload (sent over cluster IPC). */
export interface WorkerReload {
  result: ReloadOutcome['result'];
  /** The hash that serves on that worker after the attempt. */
  hash: string;
  stage?: string;
  reason?: string;
  rejectedHash?: string | null;
  status: ConfigStatus;
}

/** One worker in the answer of `POST /admin/config/reload`. */
export interface WorkerReloadLine extends Record<string, string | number | boolean | null> {
  worker: number;
  pid: number;
  /** `applied`, `unchanged`, `rejected`, or `no_answer` (timeout, exited, not ready). */
  result: string;
  hash: string | null;
  reason: string | null;
}

/** The outcome of a reload over every worker. */
export type ClusterReload =
  | { ok: true; result: 'applied' | 'unchanged'; status: ConfigStatus; workers: WorkerReloadLine[] }
  | { ok: false; error: GatewayError; workers: WorkerReloadLine[] };

function summarise(outcome: ReloadOutcome): WorkerReload {
  return outcome.result === 'rejected'
    ? { result: 'rejected', hash: outcome.status.hash, stage: outcome.rejection.stage, reason: outcome.rejection.reason, rejectedHash: outcome.rejection.hash, status: outcome.status }
    : { result: outcome.result, hash: outcome.status.hash, status: outcome.status };
}

/**
 * Puts the workers' answers together (pure). `applied` (or `unchanged`) only when every worker
 * answered, none refused the file, and all serve the same hash; otherwise a 409 `conflict` that
 * names each worker that refused it or did not answer, in `detail` and in `workers`.
 */
export function aggregateReload(answers: readonly WorkerAnswer[]): ClusterReload {
  const workers: WorkerReloadLine[] = answers.map((a) => {
    const reload = a.ok ? (a.value as WorkerReload | undefined) : undefined;
    if (!reload) return { worker: a.worker, pid: a.pid, result: 'no_answer', hash: null, reason: a.error ?? 'no answer' };
    return { worker: a.worker, pid: a.pid, result: reload.result, hash: reload.hash, reason: reload.result === 'rejected' ? `${reload.stage}: ${reload.reason}` : null };
  });
  const reloads = answers.map((a) => (a.ok ? (a.value as WorkerReload | undefined) : undefined));
  const hashes = new Set(workers.map((w) => w.hash));
  const refused = workers.filter((w) => w.result === 'rejected' || w.result === 'no_answer');
  if (answers.length > 0 && refused.length === 0 && hashes.size === 1) {
    const result = workers.some((w) => w.result === 'applied') ? 'applied' : 'unchanged';
    return { ok: true, result, status: reloads[0]!.status, workers };
  }
  const rejection = reloads.find((r) => r?.result === 'rejected');
  const applied = workers.filter((w) => w.result === 'applied' || w.result === 'unchanged');
  const named = refused.map((w) => (w.result === 'rejected' ? `worker ${w.worker} (pid ${w.pid}) refused it (${w.reason})` : `worker ${w.worker} (pid ${w.pid}) did not answer (${w.reason})`));
  let detail: string;
  if (answers.length === 0) detail = 'No worker answered the reload.';
  else if (refused.length === 0) detail = `The workers serve different files (hashes ${[...hashes].join(', ')}): gateway.config.yml changed during the reload; reload again.`;
  else if (applied.length === 0 && rejection && refused.every((w) => w.result === 'rejected')) {
    detail = `gateway.config.yml was refused (${rejection.stage}): ${rejection.reason}. The previous configuration keeps serving.`;
  } else {
    detail = `gateway.config.yml was not applied by every worker: ${named.join('; ')}.${applied.length ? ` Applied by ${applied.map((w) => `worker ${w.worker} (pid ${w.pid})`).join(', ')}.` : ''} Those keep their previous configuration.`;
  }
  const error = new GatewayError('conflict', detail, {
    extensions: {
      ...(rejection ? { stage: rejection.stage!, activeHash: rejection.hash, ...(rejection.rejectedHash ? { rejectedHash: rejection.rejectedHash } : {}) } : {}),
      refusedBy: refused,
      workers,
    },
  });
  return { ok: false, error, workers };
}

/**
 * The admin routes of the gateway configuration, mounted behind the admin token by
 * `createAdminApi({ extraRoutes })`:
 *
 * - `GET /admin/config`: hash and load time of the configuration that serves (on the worker that
 *   answers), reload counters, the last rejection;
 * - `POST /admin/config/reload`: reads gateway.config.yml now on every worker (through the cluster
 *   primary when WORKERS > 1); 200 `{result: "applied" | "unchanged", ...status, workers}` when every
 *   worker serves it, or a 409 `conflict` problem naming the workers that refused it or did not
 *   answer (those keep their previous configuration).
 *
 * Registers this process's reloader as the handler of {@link CONFIG_RELOAD_TOPIC}.
 */
export function configAdminRoutes(reloader: ConfigReloader, log: Logger): (app: Application) => void {
  const reloadHere = async () => summarise(await reloader.reload('admin'));
  onClusterBroadcast(CONFIG_RELOAD_TOPIC, reloadHere);
  // Outside a cluster, this process's own reloader (not whichever registered the topic last).
  const reloadEverywhere = async (): Promise<WorkerAnswer[]> =>
    clusterBroadcastAvailable()
      ? broadcast(CONFIG_RELOAD_TOPIC, null, { timeoutMs: CONFIG_RELOAD_TIMEOUT_MS })
      : [{ worker: cluster.worker?.id ?? 0, pid: process.pid, ok: true, value: await reloadHere() }];
  return (app) => {
    app.get('/admin/config', (_req, res) => {
      writeAnswer(res, { status: 200, body: reloader.status() });
    });
    app.post('/admin/config/reload', (req, res, next) => {
      reloadEverywhere()
        .then((answers) => {
          const outcome = aggregateReload(answers);
          log.info(
            { requestId: req.requestId, operation: 'config.reload', result: outcome.ok ? outcome.result : 'rejected', ...(outcome.ok ? { hash: outcome.status.hash } : {}), workers: outcome.workers.map((w) => ({ worker: w.worker, result: w.result, hash: w.hash })) },
            'admin change'
          );
          if (!outcome.ok) throw outcome.error;
          writeAnswer(res, { status: 200, body: { result: outcome.result, ...outcome.status, workers: outcome.workers } });
        })
        .catch(next);
    });
  };
}
