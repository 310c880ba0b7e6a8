import cluster, { type Worker } from 'node:cluster';
import { resolveAdminToken } from './admin/admin-token';
import { ConfigRefusedError } from './boot/config-guards';
import { createLogger, initLogger, type Logger } from './logging/logger';
import { serveClusterBroadcast } from './cluster/broadcast';
import { notificationSecrets, type NotifySecrets } from './inbound/secrets';
import { readSettings, type Settings } from './settings';
import { warnIfSecretsUnencrypted } from './webhooks/secret-storage';
import type { SandboxNotifyTarget } from '../sandbox';
import { startGateway, type RunningGateway } from './start';

/** Messages a worker sends to the primary. */
type WorkerMessage = { type: 'ready'; port: number; adminPort: number; notifyPort?: number; database: string; upstreams: unknown } | { type: 'failed'; message: string };

function fail(log: Logger, err: unknown): void {
  const message = err instanceof ConfigRefusedError ? err.message : `failed to start: ${(err as Error).message}`;
  log.fatal({ err }, message);
  // Also on stderr, so an operator sees why even with LOG_LEVEL=silent.
  process.stderr.write(`partner-gateway: ${message}\n`);
  if (cluster.isWorker) process.send?.({ type: 'failed', message } satisfies WorkerMessage);
  log.flush(() => process.exit(1));
}

/** SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close everything, exit 0. */
function stopOnSignal(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    stop().then(
      () => log.flush(() => process.exit(0)),
      () => process.exit(1)
    );
  };
  process.once('SIGTERM', () => handler('SIGTERM'));
  process.once('SIGINT', () => handler('SIGINT'));
}

/**
 * A crash (an uncaught exception or unhandled rejection, also from an embedded sandbox) is logged
 * with its reason and stack, in the log and as one JSON line on stderr, and exits 1: never a
 * silent death (issue 14).
 */
function exitLoudlyOnCrash(log: Logger): void {
  const crash = (reason: unknown, origin: string) => {
    const err = reason instanceof Error ? reason : new Error(String(reason));
    try {
      log.fatal({ err, origin }, 'gateway exiting');
      process.stderr.write(`${JSON.stringify({ msg: 'gateway exiting', origin, reason: err.message, stack: err.stack, pid: process.pid })}\n`);
    } finally {
      log.flush(() => process.exit(1));
      // A logger that cannot flush must not keep a crashed process alive.
      setTimeout(() => process.exit(1), 1000).unref();
    }
  };
  process.on('uncaughtException', (err, origin) => crash(err, origin));
  process.on('unhandledRejection', (reason) => crash(reason, 'unhandledRejection'));
}

/** One process serving everything (WORKERS=1, or a cluster worker). */
async function runSingle(settings: Settings, log: Logger): Promise<void> {
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(settings, log, { announce: cluster.isPrimary });
  } catch (err) {
    fail(log, err);
    return;
  }
  if (cluster.isWorker) {
    process.send?.({ type: 'ready', port: gateway.port, adminPort: gateway.adminPort, notifyPort: gateway.notifyPort, database: gateway.database, upstreams: gateway.upstreams } satisfies WorkerMessage);
    // A worker stops when the primary tells it to (or its channel closes).
    process.on('disconnect', () => void gateway.close().then(() => log.flush(() => process.exit(0))));
  }
  stopOnSignal(log, () => gateway.close());
}

/**
 * The cluster primary (WORKERS > 1): starts the sandboxes the workers share when upstream URLs are
 * not set, resolves the admin token once, forks the workers (they share the listening ports) and
 * replaces a worker that dies. On SIGTERM each worker finishes its in-flight requests, then exits.
 */
async function runPrimary(settings: Settings, log: Logger): Promise<void> {
  const env: Record<string, string> = {};
  let closeSandboxes: (() => Promise<void>) | undefined;
  let setNotifyTarget: ((target: SandboxNotifyTarget) => void) | undefined;
  let notifySecrets: NotifySecrets | undefined;
  try {
    if (!settings.issuerUrl || !settings.processingUrl || !settings.accountsUrl) {
      const { startSandboxes } = await import('../sandbox');
      const sandboxes = await startSandboxes();
      closeSandboxes = () => sandboxes.close();
      setNotifyTarget = (target) => sandboxes.setNotifyTarget(target);
      env.ISSUER_URL = settings.issuerUrl ?? sandboxes.issuer.url;
      env.PROCESSING_URL = settings.processingUrl ?? sandboxes.processing.url;
      env.ACCOUNTS_URL = settings.accountsUrl ?? sandboxes.accounts.url;
    }
    // The workers are handed the sandboxes' URLs, so they cannot tell sandbox mode themselves.
    env.SANDBOX_MODE = String(settings.sandboxMode);
    // Every worker serves the notification listener (one shared port): all of them must verify with
    // the same secrets, so the sandbox-mode ones are generated here, once.
    const secrets = notificationSecrets(settings);
    if (secrets.issuer.length) env.ISSUER_NOTIFY_SECRET = secrets.issuer.join(',');
    if (secrets.processing.length) env.PROCESSING_NOTIFY_SECRET = secrets.processing.join(',');
    notifySecrets = secrets;
    env.ADMIN_TOKEN = resolveAdminToken(settings.adminToken, settings.dataDir).token;
    // Once for the instance: the workers (announce: false) do not repeat it.
    warnIfSecretsUnencrypted(settings, log);
  } catch (err) {
    fail(log, err);
    return;
  }

  let stopping = false;
  let announced = false;
  const ready = new Map<number, Extract<WorkerMessage, { type: 'ready' }>>();
  const fork = (): Worker => {
    const worker = cluster.fork(env);
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'failed') {
        // A configuration a worker refuses, every worker refuses: stop.
        stopping = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
        process.exitCode = 1;
      } else if (message.type === 'ready') {
        ready.set(worker.id, message);
        // The sandboxes notify the workers' shared listener once the first of them listens.
        if (ready.size === 1 && message.notifyPort !== undefined && setNotifyTarget && notifySecrets) {
          const host = settings.notificationsHost === '0.0.0.0' || settings.notificationsHost === '::' ? '127.0.0.1' : settings.notificationsHost;
          setNotifyTarget({ url: `http://${host.includes(':') ? `[${host}]` : host}:${message.notifyPort}`, issuerSecret: notifySecrets.issuer[0], processingSecret: notifySecrets.processing[0] });
        }
        if (!announced && ready.size === settings.workers) {
          announced = true;
          log.info({ port: message.port, host: settings.host, adminPort: message.adminPort, adminHost: settings.adminHost, notifyPort: message.notifyPort, database: message.database, upstreams: message.upstreams, sandboxMode: settings.sandboxMode, workers: settings.workers }, 'gateway ready');
        }
      }
    });
    worker.on('exit', (code, signal) => {
      ready.delete(worker.id);
      if (stopping) return;
      log.error({ workerId: worker.id, code, signal }, 'worker died; starting another');
      setTimeout(fork, 500).unref();
    });
    return worker;
  };
  // /admin/metrics answered by any worker adds up every worker's metrics.
  const { serveClusterMetrics } = await import('./metrics');
  serveClusterMetrics();
  // A revocation and a config reload reach every worker before the admin call answers.
  serveClusterBroadcast();
  for (let i = 0; i < settings.workers; i++) fork();

  stopOnSignal(log, async () => {
    stopping = true;
    const exits = Object.values(cluster.workers ?? {}).map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (!worker || worker.isDead()) return resolve();
          worker.once('exit', () => resolve());
          worker.disconnect();
          setTimeout(() => worker.kill('SIGKILL'), 20_000).unref();
        })
    );
    await Promise.all(exits);
    await closeSandboxes?.();
  });
  cluster.on('exit', () => {
    if (stopping && Object.keys(cluster.workers ?? {}).length === 0 && process.exitCode === 1) {
      void closeSandboxes?.().finally(() => log.flush(() => process.exit(1)));
    }
  });
}

/**
 * Process entry point (`npm start`). Exits 1 with a clear message when the configuration is
 * refused or a dependency cannot start.
 */
async function main(): Promise<void> {
  let settings: Settings;
  try {
    settings = readSettings();
  } catch (err) {
    process.stderr.write(`partner-gateway: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const log = initLogger(createLogger({ level: settings.logLevel, base: { service: 'partner-gateway', ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}) } }));
  exitLoudlyOnCrash(log);
  if (settings.workers > 1 && !settings.databaseUrl) {
    // Workers cannot share the embedded database (one PGlite connection): one process serves.
    log.warn({ workers: settings.workers }, 'embedded database: running one process (set DATABASE_URL to use WORKERS)');
    settings = { ...settings, workers: 1 };
  }
  if (settings.workers > 1 && cluster.isPrimary) await runPrimary(settings, log);
  else await runSingle(settings, log);
}

void main();
