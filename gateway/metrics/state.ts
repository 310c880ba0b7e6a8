import { Counter, Gauge } from 'prom-client';
import type { Pool } from 'pg';
import { METRIC_NAMES, registry } from './registry';

/** A cache that counts its lookups (both gateway caches do). */
export interface CountingCache {
  stats(): { size: number; hits: number; misses: number };
}

/** What `/admin/metrics` reads at each scrape; the request path never touches these gauges. */
export interface GatewayStateSources {
  /** The gateway's database: its `pg` pool's connection counts. */
  db: { pool: Pick<Pool, 'totalCount' | 'idleCount' | 'waitingCount'> & { options: { max?: number } } };
  /** The ownership cache (`cache="ownership"`). */
  ownership: CountingCache;
  /** The verified-token cache (`cache="verified_token"`). */
  tokenCache: CountingCache;
}

let sources: GatewayStateSources | undefined;

/**
 * Tells the metrics which pool and caches to read at scrape time (`db_pool_*`, `cache_*`).
 * Called once at start, after the services exist; a later call replaces the sources.
 *
 * @example trackGatewayState({ db, ownership, tokenCache });
 */
export function trackGatewayState(next: GatewayStateSources | undefined): void {
  sources = next;
}

function cachesOf(current: GatewayStateSources): [string, CountingCache][] {
  return [
    ['ownership', current.ownership],
    ['verified_token', current.tokenCache],
  ];
}

// Counters read from the caches' own monotonic counts: set at scrape, never incremented by us.
new Counter({
  name: METRIC_NAMES.cacheHits,
  help: 'Lookups answered from a cache, by cache (ownership, verified_token). Hit ratio: hits / (hits + misses).',
  labelNames: ['cache'] as const,
  registers: [registry],
  collect() {
    this.reset();
    if (sources) for (const [cache, counts] of cachesOf(sources)) this.inc({ cache }, counts.stats().hits);
  },
});

new Counter({
  name: METRIC_NAMES.cacheMisses,
  help: 'Lookups a cache could not answer (the database was read, or the token verified), by cache.',
  labelNames: ['cache'] as const,
  registers: [registry],
  collect() {
    this.reset();
    if (sources) for (const [cache, counts] of cachesOf(sources)) this.inc({ cache }, counts.stats().misses);
  },
});

new Gauge({
  name: METRIC_NAMES.cacheEntries,
  help: 'Entries held by a cache now, by cache.',
  labelNames: ['cache'] as const,
  registers: [registry],
  collect() {
    this.reset();
    if (sources) for (const [cache, counts] of cachesOf(sources)) this.set({ cache }, counts.stats().size);
  },
});

/** One pool gauge read at scrape; absent until a pool is tracked. */
function poolGauge(name: string, help: string, read: (pool: GatewayStateSources['db']['pool']) => number | undefined): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      const value = sources ? read(sources.db.pool) : undefined;
      if (value !== undefined) this.set(value);
    },
  });
}

poolGauge(METRIC_NAMES.dbPoolTotal, 'Connections the PostgreSQL pool holds now (in use and idle).', (pool) => pool.totalCount);
poolGauge(METRIC_NAMES.dbPoolIdle, 'Connections of the PostgreSQL pool idle now.', (pool) => pool.idleCount);
poolGauge(METRIC_NAMES.dbPoolWaiting, 'Queries waiting for a connection of the PostgreSQL pool now (the pool is exhausted when above 0).', (pool) => pool.waitingCount);
poolGauge(METRIC_NAMES.dbPoolMax, 'Most connections the PostgreSQL pool may open (DATABASE_POOL_MAX; 1 on the embedded database).', (pool) => pool.options.max);
