/**
 * Prometheus metrics of the gateway (docs/operations.md lists them and what to alert on): one
 * registry per process, small recorders for the request path, gauges read at scrape time, and the
 * `/admin/metrics` route of the admin API.
 */
export { registry, METRIC_NAMES, LATENCY_BUCKETS, rateLimitFallbackTotal, rateLimitFallbackActive, databaseClockOffset } from './registry';
export { recordAuthorizationDecision, recordPartnerDecision, recordTokenizationDecision } from './recorders';
export {
  requestMetrics,
  routeLabel,
  recordUpstreamCall,
  upstreamErrorKind,
  recordAuthRefusal,
  recordConfigReload,
  recordWebhookAttempt,
  type WebhookAttemptOutcome,
  JWT_REFUSAL_CODES,
  UNMATCHED_ROUTE,
  type RequestMetrics,
  type UpstreamErrorKind,
  type ConfigReloadOutcome,
} from './recorders';
export { trackGatewayState, trackWebhookBacklog, WEBHOOK_BACKLOG_TOP, type GatewayStateSources, type CountingCache, type EndpointBacklog } from './state';
export { metricsRoute, collectMetrics, METRICS_PATH } from './route';
export { serveClusterMetrics } from './cluster';
