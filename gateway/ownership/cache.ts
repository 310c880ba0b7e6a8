import type { LRUCache } from 'lru-cache';
import { boundedLru } from '../bounded-lru';
import type { OwnedKind, Owner } from './kinds';
import type { OwnershipInvalidation } from './invalidation';

/** Bounds of the ownership cache (docs/ownership.md). */
export interface OwnershipCacheOptions {
  /** Most entries kept (default 100,000). */
  max?: number;
  /** Lifetime of a found owner in ms (default 30 s): the longest another instance can serve a stale owner. */
  ttlMs?: number;
  /** Lifetime of a "no such resource" entry in ms (default 5 s). */
  negativeTtlMs?: number;
  /** The clock both lifetimes are measured on, in ms (default `performance.now()`; tests pass one they move). */
  now?: () => number;
}

const NOT_FOUND = Symbol('not found');
type Entry = Owner | typeof NOT_FOUND;

/**
 * Read-through LRU of resource owners, shared by every ownership check (one per gateway's services):
 * `get(kind, id, loader)` answers from the cache or calls the loader once (concurrent misses for the
 * same key share one load). Unknown resources are cached briefly too, so probing ids costs little.
 * Every write that changes ownership (create, replace, re-issue, delete) calls `invalidate`.
 */
export class OwnershipCache implements OwnershipInvalidation {
  private readonly cache: LRUCache<string, Entry>;
  private readonly loading = new Map<string, Promise<Owner | undefined>>();
  private readonly negativeTtlMs: number;
  private hits = 0;
  private misses = 0;

  constructor(options: OwnershipCacheOptions = {}) {
    this.negativeTtlMs = options.negativeTtlMs ?? 5_000;
    this.cache = boundedLru<string, Entry>(options.max ?? 100_000, { ttl: options.ttlMs ?? 30_000, now: options.now });
  }

  async get(kind: OwnedKind, id: string, loader: (id: string) => Promise<Owner | undefined>): Promise<Owner | undefined> {
    const key = `${kind}:${id}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.hits += 1;
      return cached === NOT_FOUND ? undefined : cached;
    }
    this.misses += 1;
    let pending = this.loading.get(key);
    if (!pending) {
      const load: Promise<Owner | undefined> = loader(id)
        .then((owner) => {
          // A load that raced with an invalidation must not store its (older) answer.
          if (this.loading.get(key) === load) {
            if (owner) this.cache.set(key, owner);
            else this.cache.set(key, NOT_FOUND, { ttl: this.negativeTtlMs });
          }
          return owner;
        })
        .finally(() => {
          if (this.loading.get(key) === load) this.loading.delete(key);
        });
      pending = load;
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Forgets what is known of one resource (its next check reads PostgreSQL). */
  invalidate(kind: OwnedKind, id: string): void {
    const key = `${kind}:${id}`;
    this.cache.delete(key);
    this.loading.delete(key);
  }

  /** Forgets everything (the ownership feed reconnected: changes may have been missed). */
  clear(): void {
    this.cache.clear();
    this.loading.clear();
  }

  /** Entries held now (for metrics and tests). */
  get size(): number {
    return this.cache.size;
  }

  /** Entries, hits and misses since start (metrics: `cache_*{cache="ownership"}`). */
  stats(): { size: number; hits: number; misses: number } {
    return { size: this.cache.size, hits: this.hits, misses: this.misses };
  }
}
