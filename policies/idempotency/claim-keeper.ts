import type { Logger } from '../../gateway/logging/logger';
import type { Database } from '../../gateway/db/database';
import { KeyClaimStore, PARTNER_KEYS, type KeyClaim, type StoredAnswer } from '../../gateway/idempotency/key-claims';

/**
 * A claim whose heartbeat is older than this is abandoned (its process is gone or cut off): it may
 * be taken over (the partners' lease). The default of `IDEMPOTENCY_STALE_AFTER_SECONDS`.
 */
export const STALE_AFTER_SECONDS = 10;

/** The holder of a claim refreshes its heartbeat this often while the request runs: five times within the lease (2 s at the default 10 s). */
export function heartbeatIntervalMs(staleAfterSeconds: number): number {
  return (staleAfterSeconds * 1000) / 5;
}

/** A claim is never held longer than this: a handler that has not answered by then is stuck (upstream calls time out far sooner). */
export const MAX_HOLD_MS = 10 * 60_000;

interface Entry {
  claim: KeyClaim;
  since: number;
  /** The outcome to record, once recording it failed (the database was unavailable): retried every tick. */
  pending?: { kind: 'complete'; response: StoredAnswer } | { kind: 'release' };
}

/**
 * The claims this process holds, kept alive while their requests run, whether or not the client
 * is still connected: every {@link heartbeatIntervalMs} one UPDATE refreshes their heartbeat, so
 * that no other request takes over a key whose handler still runs, and a key whose process died is
 * free the lease (`IDEMPOTENCY_STALE_AFTER_SECONDS`) later. An outcome that could not be recorded (database unavailable) is
 * retried on every tick: a release as soon as the database is back (so that creations resume
 * within a tick of the recovery), a completion so that retries replay it (its claim stays alive
 * meanwhile, so that nobody runs the operation again). No timer runs while nothing is held.
 */
export class ClaimKeeper {
  private readonly held = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    private readonly store: KeyClaimStore,
    private readonly log: Logger,
    private readonly intervalMs: number
  ) {}

  /** Starts keeping a claim alive (the request now runs). */
  hold(claim: KeyClaim): void {
    this.held.set(claim.claimId, { claim, since: Date.now() });
    this.timer ??= setInterval(() => void this.tick(), this.intervalMs).unref();
  }

  /**
   * Records the request's outcome: a final response is stored (retries replay it), a retryable
   * failure (5xx) releases the key (retries run again). Resolves once recorded, or once recording
   * failed and was left to the ticks (rejecting with that error).
   */
  async settle(claim: KeyClaim, outcome: { kind: 'complete'; response: StoredAnswer } | { kind: 'release' }): Promise<void> {
    try {
      await this.record(claim, outcome);
      this.drop(claim.claimId);
    } catch (err) {
      const entry = this.held.get(claim.claimId);
      if (entry) entry.pending = outcome;
      throw err;
    }
  }

  /** Number of claims held (for tests and metrics). */
  get size(): number {
    return this.held.size;
  }

  private async record(claim: KeyClaim, outcome: NonNullable<Entry['pending']>): Promise<void> {
    if (outcome.kind === 'release') return this.store.release(claim);
    if (!(await this.store.complete(claim, outcome.response))) {
      this.log.warn({ partnerId: claim.partnerId, claimId: claim.claimId }, 'idempotency claim was taken over before its response was recorded');
    }
  }

  private drop(claimId: string): void {
    this.held.delete(claimId);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = Date.now();
      for (const entry of [...this.held.values()]) {
        if (now - entry.since > MAX_HOLD_MS) {
          this.log.warn({ partnerId: entry.claim.partnerId, claimId: entry.claim.claimId }, 'idempotency claim held too long: no longer kept alive');
          this.drop(entry.claim.claimId);
        } else if (entry.pending) {
          await this.record(entry.claim, entry.pending).then(
            () => this.drop(entry.claim.claimId),
            () => undefined // still unavailable: next tick
          );
        }
      }
      // Running requests, and completions not yet recorded: nobody may take these over.
      const alive = [...this.held.values()].filter((e) => e.pending?.kind !== 'release').map((e) => e.claim);
      await this.store.heartbeat(alive).catch((err: unknown) => this.log.warn({ err }, 'idempotency heartbeat failed'));
    } finally {
      this.ticking = false;
    }
  }
}

const keepers = new WeakMap<object, ClaimKeeper>();

/**
 * The process's one keeper of claims on this database (every idempotency step of every pipeline,
 * and hot reloads, share it), heartbeating within a lease of `staleAfterSeconds`.
 */
export function claimKeeper(db: Database, log: Logger, staleAfterSeconds: number): ClaimKeeper {
  let keeper = keepers.get(db);
  if (!keeper) {
    keeper = new ClaimKeeper(new KeyClaimStore(db, PARTNER_KEYS), log, heartbeatIntervalMs(staleAfterSeconds));
    keepers.set(db, keeper);
  }
  return keeper;
}
