import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's one metrics registry (not prom-client's global one, so that nothing a dependency
 * registers leaks into `/admin/metrics`). Created once when this module is first loaded, with
 * prom-client's default process metrics (`process_*`, `nodejs_*`).
 *
 * With the cluster (`WORKERS` > 1) every worker process has its own registry: see
 * `gateway/metrics/cluster.ts` for the aggregation in the primary.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Buckets (seconds) of the request and upstream latency histograms: 5 ms to 10 s. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Requests answered, by listener (`gateway` or `admin`), route and status. */
export const requestsTotal = new Counter({
  name: 'http_requests_total',
  help: 'Requests answered, by component (gateway: the partner API, admin: the admin API), route (the apiEndpoint name of gateway.config.yml, or "METHOD /pattern" of an admin route, or "unmatched") and HTTP status.',
  labelNames: ['component', 'route', 'status'] as const,
  registers: [registry],
});

/** Time from the first byte of a request to the end of its response. */
export const requestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the request to the end of its response in seconds, by component and route (as in http_requests_total).',
  labelNames: ['component', 'route'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Duration of each call to an upstream system (proxied or through the typed clients). */
export const upstreamDuration = new Histogram({
  name: 'upstream_request_duration_seconds',
  help: 'Duration of one call to an upstream system in seconds (issuer, processing, accounts), failed calls included.',
  labelNames: ['upstream'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Failed upstream calls by kind. */
export const upstreamErrors = new Counter({
  name: 'upstream_errors_total',
  help: 'Failed calls to an upstream system, by upstream and kind: timeout, connection, malformed (unusable 2xx), status_4xx, status_5xx, status_other.',
  labelNames: ['upstream', 'kind'] as const,
  registers: [registry],
});

/** 401 problems of the es512-jwt policy. */
export const jwtRefusals = new Counter({
  name: 'jwt_refusals_total',
  help: 'Partner requests refused with 401 by the es512-jwt policy, by problem code (token_missing, token_expired, signature_invalid, ...).',
  labelNames: ['code'] as const,
  registers: [registry],
});

/** Configuration reloads, applied or refused. */
export const configReloads = new Counter({
  name: 'config_reloads_total',
  help: 'Reloads of gateway.config.yml: applied, or rejected (the running configuration stays).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Rate-limit counts kept in this process's memory because Redis could not take them. */
export const rateLimitFallbackTotal = new Counter({
  name: 'rate_limit_fallback_total',
  help: "Requests whose rate-limit count was kept in this process's memory because Redis (REDIS_URL) was down, reconnecting or slower than 250 ms (each process then enforces the limit on its own).",
  registers: [registry],
});

/** 1 while this process counts in memory because Redis is unreachable. */
export const rateLimitFallbackActive = new Gauge({
  name: 'rate_limit_fallback_active',
  help: 'Processes counting rate limits in their own memory because Redis (REDIS_URL) is unreachable: 1 per process while it lasts, 0 otherwise (summed over cluster workers).',
  registers: [registry],
});

/** Webhook delivery attempts, by how they ended. */
export const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome (delivered, retrying: failed and to be retried, failed: failed and the retry window is over) and error kind (none, timeout, connection, http_status, redirect, target_refused, interrupted: the sender died before recording an outcome, secret_unavailable: the signing secret could not be read and nothing was sent).',
  labelNames: ['outcome', 'error'] as const,
  registers: [registry],
});

/** Duration of each webhook POST, from connecting to the end of the receiver's answer. */
export const webhookAttemptDuration = new Histogram({
  name: 'webhook_attempt_duration_seconds',
  help: "Duration of one webhook delivery attempt in seconds (connect, send, the receiver's answer), failed attempts included; WEBHOOKS_TIMEOUT_MS bounds it.",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Buckets (seconds) of the delivery lag: 10 ms to a day, since a lag includes retries. */
export const DELIVERY_LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400];

/** Time from an event's delivery being written (with the change) to its delivery. */
export const webhookDeliveryLag = new Histogram({
  name: 'webhook_delivery_lag_seconds',
  help: "Time from the change that wrote an event (its delivery row, in the change's transaction) to the receiver's 2xx, in seconds, retries included.",
  buckets: DELIVERY_LAG_BUCKETS,
  registers: [registry],
});

/** Authorization decisions the gateway answered the processor, by outcome and who decided. */
export const authorizationDecisions = new Counter({
  name: 'authorization_decisions_total',
  help: 'Authorization decisions answered to the card processing system, by outcome (approved, declined, unavailable: 503, the processor applies its stand-in) and decided_by (card_state, spend_controls, partner, partner_default, approved; none for unavailable). A repeat of an id already decided counts again, with the labels of the first decision.',
  labelNames: ['outcome', 'decided_by'] as const,
  registers: [registry],
});

/** The gateway's own time to decide, from the request's arrival to its answer (the partner's wait included). */
export const authorizationDecisionDuration = new Histogram({
  name: 'authorization_decision_duration_seconds',
  help: "Time from the processor's authorization request to the gateway's answer in seconds, the partner endpoint's wait included; AUTHORIZATION_DEADLINE_MS less 300 ms bounds it.",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Tokenization decisions the gateway answered the processor, by outcome and who decided (docs/tokens.md, "The decision"). */
export const tokenizationDecisions = new Counter({
  name: 'tokenization_decisions_total',
  help: 'Tokenization decisions answered to the card processing system, by outcome (approve, require_verification, decline, unavailable: 503, the processor applies its stand-in) and decided_by (card_state, spend_controls, partner, partner_default, network; none for unavailable). A repeat of an id already decided counts again, with the labels of the first decision.',
  labelNames: ['outcome', 'decided_by'] as const,
  registers: [registry],
});

/** The gateway's own time to decide a tokenization, from the request's arrival to its answer (the partner's wait included). */
export const tokenizationDecisionDuration = new Histogram({
  name: 'tokenization_decision_duration_seconds',
  help: "Time from the processor's tokenization request to the gateway's answer in seconds, the partner endpoint's wait included; TOKENIZATION_DEADLINE_MS less 300 ms bounds it.",
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Calls to partners' decision endpoints: how long they took and how they ended. */
export const partnerDecisionDuration = new Histogram({
  name: 'partner_decision_duration_seconds',
  help: "Duration of a call to a partner's decision endpoint in seconds, by result (answered, timeout, error, overloaded, disabled); the endpoint's timeoutMs and the decision's budget bound it.",
  labelNames: ['result'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** The database's clock less this process's, as last measured (the authorization decisions' commit-by fence allows for a bounded skew). */
export const databaseClockOffset = new Gauge({
  name: 'database_clock_offset_seconds',
  help: "The database's clock less this gateway process's, in seconds, measured at start and every minute over one round trip; authorization decisions need it within 0.05 s either way (docs/authorizations.md, \"Deadline\").",
  registers: [registry],
});

/** The metric names this module exports (documentation and tests). */
export const METRIC_NAMES = {
  requests: 'http_requests_total',
  requestDuration: 'http_request_duration_seconds',
  upstreamDuration: 'upstream_request_duration_seconds',
  upstreamErrors: 'upstream_errors_total',
  jwtRefusals: 'jwt_refusals_total',
  configReloads: 'config_reloads_total',
  rateLimitFallback: 'rate_limit_fallback_total',
  rateLimitFallbackActive: 'rate_limit_fallback_active',
  cacheHits: 'cache_hits_total',
  cacheMisses: 'cache_misses_total',
  cacheEntries: 'cache_entries',
  dbPoolTotal: 'db_pool_total_connections',
  dbPoolIdle: 'db_pool_idle_connections',
  dbPoolWaiting: 'db_pool_waiting_clients',
  dbPoolMax: 'db_pool_max_connections',
  webhookDeliveries: 'webhook_deliveries_total',
  webhookAttemptDuration: 'webhook_attempt_duration_seconds',
  webhookDeliveryLag: 'webhook_delivery_lag_seconds',
  webhookBacklog: 'webhook_backlog',
  webhookBacklogTotal: 'webhook_backlog_total',
  authorizationDecisions: 'authorization_decisions_total',
  authorizationDecisionDuration: 'authorization_decision_duration_seconds',
  tokenizationDecisions: 'tokenization_decisions_total',
  tokenizationDecisionDuration: 'tokenization_decision_duration_seconds',
  partnerDecisionDuration: 'partner_decision_duration_seconds',
  databaseClockOffset: 'database_clock_offset_seconds',
} as const;
