import fs from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';
import type { Logger } from '../logging/logger';
import { ConfigRefusedError } from '../boot/config-guards';
import { buildCandidate, readConfigSource, type ConfigCandidate, type RejectionStage } from './config-candidate';
import type { GatewayServices } from '../../policies';
import type { GatewayRuntime } from './gateway-runtime';

/** Quiet time after the last file event before the file is read (editors write in several steps). */
export const CONFIG_WATCH_DEBOUNCE_MS = 250;

/** What started a reload. */
export type ReloadTrigger = 'watch' | 'admin';

/** The last refused candidate. */
export interface ConfigRejection {
  at: string;
  stage: RejectionStage;
  reason: string;
  /** SHA-256 of the refused file; null when it could not be read. */
  hash: string | null;
}

/** What `GET /admin/config` reports: always the configuration that serves, never a refused one. */
export interface ConfigStatus {
  /** SHA-256 (hex) of the bytes of gateway.config.yml that serve. */
  hash: string;
  /** When that configuration started serving (ISO-8601). */
  loadedAt: string;
  path: string;
  /** The process that answered: with WORKERS > 1 each worker reloads on its own. */
  pid: number;
  /** Whether the file is watched (CONFIG_WATCH and a working watcher). */
  watching: boolean;
  /** Reloads since start (the boot load is not counted). */
  reloads: { applied: number; rejected: number };
  lastRejection?: ConfigRejection;
}

/** The result of one reload attempt. */
export type ReloadOutcome =
  | { result: 'applied' | 'unchanged'; status: ConfigStatus }
  | { result: 'rejected'; rejection: ConfigRejection; status: ConfigStatus };

/** What the reloader needs from the gateway. */
export interface ConfigReloaderOptions {
  runtime: GatewayRuntime;
  /** The gateway's services: every candidate's pipelines are built with them, as the boot's were. */
  services: GatewayServices;
  log: Logger;
  /** The configuration serving at start (checked by `loadAndCheck`, built by `buildInitialConfig`). */
  initial: ConfigCandidate;
  /** Swaps the partner app's pipelines (`PartnerApp.setPipelines`). */
  apply(router: RequestHandler): void;
  debounceMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * Called after each reload that changed the counters (applied or rejected; not `unchanged`, not a
   * watched file already refused), e.g. to count reloads in metrics. Must not throw.
   */
  onOutcome?(outcome: ReloadOutcome, trigger: ReloadTrigger): void;
}

/**
 * Safe hot reload of gateway.config.yml. A reload reads the file once, builds a candidate
 * ({@link buildCandidate}: YAML, express-gateway's schema, the boot guards, the pipelines) and only
 * when every step succeeded swaps the partner app's handler; anything else is logged at error level
 * and the previous configuration keeps serving. Reloads run one at a time.
 *
 * In-flight requests keep the pipelines they started on: the partner app hands each request the handler
 * current at its start, and nothing of an old handler is closed (its policies' shared resources,
 * such as the upstream pools, caches and rate-limit counts, are the gateway's services, which every
 * candidate is built with).
 *
 * @example
 * const reloader = new ConfigReloader({ runtime, services, log, initial, apply: (r) => partnerApp.setPipelines(r) });
 * reloader.watch();
 */
export class ConfigReloader {
  private active: { hash: string; loadedAt: string; path: string };
  private readonly counts = { applied: 0, rejected: 0 };
  private lastRejection?: ConfigRejection;
  private queue: Promise<unknown> = Promise.resolve();
  private watcher?: fs.FSWatcher;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: ConfigReloaderOptions) {
    const { source } = options.initial;
    this.active = { hash: source.hash, loadedAt: new Date().toISOString(), path: source.path };
    // The boot's load is this one (express-gateway's loader never reads gateway.config.yml).
    this.warnUnknownVariables(options.initial);
  }

  /** The serving configuration's hash and load time, the reload counters and the last rejection. */
  status(): ConfigStatus {
    return {
      ...this.active,
      pid: process.pid,
      watching: this.watcher !== undefined,
      reloads: { ...this.counts },
      ...(this.lastRejection ? { lastRejection: { ...this.lastRejection } } : {}),
    };
  }

  /**
   * Reads gateway.config.yml and applies it if it changed and passes every check. Never throws;
   * waits for a reload already running.
   */
  reload(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const run = this.queue.then(() => this.attempt(trigger));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Watches the folder of gateway.config.yml (not the file: editors and ConfigMap updates replace
   * it by rename, which a watch on the file itself would not survive) and reloads after
   * {@link CONFIG_WATCH_DEBOUNCE_MS} of quiet. Returns false when the watcher could not start
   * (logged; `POST /admin/config/reload` still works).
   */
  watch(): boolean {
    if (this.watcher || this.closed) return this.watcher !== undefined;
    const { log } = this.options;
    const dir = path.dirname(this.active.path);
    const base = path.basename(this.active.path);
    try {
      this.watcher = fs.watch(dir, { persistent: false }, (_event, filename) => {
        // `..data` and friends: Kubernetes swaps a ConfigMap's files by renaming a symlink.
        const name = filename?.toString();
        if (!name || name === base || name.startsWith('..')) this.scheduleCheck();
      });
    } catch (err) {
      log.error({ err, dir }, 'cannot watch the gateway config folder: hot reload by file watching is off (POST /admin/config/reload still works)');
      return false;
    }
    this.watcher.on('error', (err) => {
      log.error({ err, dir }, 'the gateway config watcher failed: hot reload by file watching is off (POST /admin/config/reload still works)');
      this.watcher?.close();
      this.watcher = undefined;
    });
    log.info({ path: this.active.path, debounceMs: this.debounceMs }, 'watching the gateway config');
    // A change between the boot read and now raised no event: look once.
    this.scheduleCheck();
    return true;
  }

  /** Stops watching (shutdown). A reload already running finishes. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
  }

  private get debounceMs(): number {
    return this.options.debounceMs ?? CONFIG_WATCH_DEBOUNCE_MS;
  }

  private scheduleCheck(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload('watch'), this.debounceMs);
    this.timer.unref();
  }

  private async attempt(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const { log, runtime, services, env } = this.options;
    let hash: string | null = null;
    let candidate: ConfigCandidate;
    try {
      const source = readConfigSource(this.active.path);
      hash = source.hash;
      if (source.hash === this.active.hash) {
        log.debug({ trigger, hash }, 'gateway config unchanged');
        return { result: 'unchanged', status: this.status() };
      }
      // A watched file refused once is refused again (same bytes, same checks): one error line is enough.
      if (trigger === 'watch' && this.lastRejection && source.hash === this.lastRejection.hash) {
        log.debug({ trigger, hash }, 'gateway config already rejected');
        return { result: 'rejected', rejection: this.lastRejection, status: this.status() };
      }
      candidate = await buildCandidate(source, runtime, services, env);
    } catch (err) {
      return this.reject(trigger, err, hash);
    }

    const { source } = candidate;
    this.options.apply(candidate.router);
    const previousHash = this.active.hash;
    this.active = { hash: source.hash, loadedAt: new Date().toISOString(), path: source.path };
    this.counts.applied += 1;
    log.info({ trigger, hash: source.hash, previousHash, path: source.path, pipelines: candidate.model.pipelines.size }, 'gateway config reloaded');
    this.warnUnknownVariables(candidate);
    return this.reported({ result: 'applied', status: this.status() }, trigger);
  }

  private reject(trigger: ReloadTrigger, err: unknown, hash: string | null): ReloadOutcome {
    const at = new Date().toISOString();
    const rejection: ConfigRejection =
      err instanceof ConfigRefusedError
        ? { at, stage: err.stage, reason: err.reason, hash }
        : { at, stage: 'pipelines', reason: `unexpected error: ${(err as Error).message}`, hash };
    this.lastRejection = rejection;
    this.counts.rejected += 1;
    this.options.log.error(
      { trigger, path: this.active.path, hash, activeHash: this.active.hash, stage: rejection.stage, reason: rejection.reason, ...(err instanceof ConfigRefusedError ? {} : { err }) },
      'gateway config rejected: the previous config keeps serving'
    );
    return this.reported({ result: 'rejected', rejection, status: this.status() }, trigger);
  }

  private reported(outcome: ReloadOutcome, trigger: ReloadTrigger): ReloadOutcome {
    try {
      this.options.onOutcome?.(outcome, trigger);
    } catch (err) {
      this.options.log.warn({ err }, 'config reload outcome hook failed');
    }
    return outcome;
  }

  private warnUnknownVariables(candidate: ConfigCandidate): void {
    if (candidate.unknownVariables.length === 0) return;
    this.options.log.warn({ variables: [...new Set(candidate.unknownVariables)], hash: candidate.source.hash }, 'gateway config names unknown variables: replaced by null');
  }
}
