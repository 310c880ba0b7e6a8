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

/** One endpoint's open deliveries (pending or in flight). */
export interface EndpointBacklog {
  endpointId: string;
  backlog: number;
}

/** How many endpoints `webhook_backlog` names at most: the largest backlogs. */
export const WEBHOOK_BACKLOG_TOP = 20;

let readBacklog: ((top: number) => Promise<{ total: number; endpoints: EndpointBacklog[] }>) | undefined;

/**
 * Tells the metrics how to read the webhook backlog at scrape time (`webhook_backlog_total`, and
 * `webhook_backlog{endpoint}` for the {@link WEBHOOK_BACKLOG_TOP} enabled endpoints with the largest
 * backlog). Called once at start; undefined stops reading.
 */
export function trackWebhookBacklog(read: typeof readBacklog): void {
  readBacklog = read;
}

// The backlog is the database's, not this process's: with cluster workers each would report the
// same value, so the primary keeps one ('max') instead of a sum. Both gauges come from one read.
let pendingRead: Promise<{ total: number; endpoints: EndpointBacklog[] } | undefined> | undefined;
function backlogOnce(): Promise<{ total: number; endpoints: EndpointBacklog[] } | undefined> {
  if (!pendingRead) {
    const read = readBacklog;
    pendingRead = (read ? read(WEBHOOK_BACKLOG_TOP).catch(() => undefined) : Promise.resolve(undefined)).finally(() => {
      pendingRead = undefined;
    });
  }
  return pendingRead;
}

new Gauge({
  name: METRIC_NAMES.webhookBacklogTotal,
  help: 'Webhook deliveries not yet finished (pending or in flight) over every endpoint, read from the database at scrape.',
  registers: [registry],
  aggregator: 'max',
  async collect() {
    const read = await backlogOnce();
    this.reset();
    if (read) this.set(read.total);
  },
});

new Gauge({
  name: METRIC_NAMES.webhookBacklog,
  help: `Webhook deliveries not yet finished, by endpoint id: only the ${WEBHOOK_BACKLOG_TOP} enabled endpoints with the largest backlog (above 0), so the series stay bounded however many endpoints partners create.`,
  labelNames: ['endpoint'] as const,
  registers: [registry],
  aggregator: 'max',
  async collect() {
    const read = await backlogOnce();
    this.reset();
    if (read) for (const { endpointId, backlog } of read.endpoints) this.set({ endpoint: endpointId }, backlog);
  },
});
