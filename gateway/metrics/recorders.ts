import type { Request } from 'express';
import type { Counter, Histogram } from 'prom-client';
import { ERROR_CATALOG } from '../errors';
import { authorizationDecisionDuration, authorizationDecisions, partnerDecisionDuration, tokenizationDecisionDuration, tokenizationDecisions, configReloads, jwtRefusals, requestDuration, requestsTotal, upstreamDuration, upstreamErrors, webhookAttemptDuration, webhookDeliveries, webhookDeliveryLag } from './registry';

// Every recorder keeps the prom-client children it made (one per label combination, made on
// first use), so a request costs a few Map lookups and no label objects.

/** Label of a request's route: never the raw URL (it holds ids and, on some routes, keys). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The `route` label of a request: the apiEndpoint name of gateway.config.yml (`get-card`) for a
 * partner request a pipeline served; `METHOD /pattern` (`GET /admin/partners/:id`) for an Express
 * route such as the admin API's; `unmatched` for anything else (404s, refusals before routing).
 * The label set is bounded by the configuration and the code, whatever partners send.
 */
export function routeLabel(req: Request): string {
  const endpoint = req.apiEndpointName;
  if (typeof endpoint === 'string') return endpoint;
  const pattern: unknown = req.route?.path;
  return typeof pattern === 'string' ? `${req.method} ${pattern}` : UNMATCHED_ROUTE;
}

/** Records finished requests of one listener; made once per listener (see {@link requestMetrics}). */
export interface RequestMetrics {
  /** Counts one finished request and observes its duration in seconds. */
  record(req: Request, status: number, seconds: number): void;
}

interface RouteSeries {
  duration: Histogram.Internal<'component' | 'route'>;
  byStatus: Map<number, Counter.Internal>;
}

/**
 * The request recorder of a listener (`component` as in the access log: `gateway` or `admin`).
 * Call once when the middleware is built; call `record` when a response finishes.
 *
 * @example
 * const metrics = requestMetrics('gateway');
 * res.on('finish', () => metrics.record(req, res.statusCode, seconds));
 */
export function requestMetrics(component: string): RequestMetrics {
  const routes = new Map<string, RouteSeries>();
  return {
    record(req, status, seconds) {
      const route = routeLabel(req);
      let series = routes.get(route);
      if (series === undefined) {
        series = { duration: requestDuration.labels(component, route), byStatus: new Map() };
        routes.set(route, series);
      }
      let counter = series.byStatus.get(status);
      if (counter === undefined) {
        counter = requestsTotal.labels(component, route, String(status));
        series.byStatus.set(status, counter);
      }
      counter.inc();
      series.duration.observe(seconds);
    },
  };
}

/** How a failed upstream call is counted in `upstream_errors_total`. */
export type UpstreamErrorKind = 'timeout' | 'connection' | 'malformed' | 'status_4xx' | 'status_5xx' | 'status_other';

/**
 * The error kind of an upstream call, or undefined for a success. `failure` is the
 * `UpstreamFailure` kind when the caller already classified the call; a call that ended with a
 * non-2xx status and no failure kind (the proxy settles before it maps the status) is a status
 * failure too. Pure: table-tested.
 */
export function upstreamErrorKind(failure: string | undefined, status: number | null | undefined): UpstreamErrorKind | undefined {
  if (failure === 'timeout' || failure === 'connection' || failure === 'malformed') return failure;
  if (failure === undefined && (status === null || status === undefined || (status >= 200 && status <= 299))) return undefined;
  if (typeof status === 'number' && status >= 400 && status <= 499) return 'status_4xx';
  if (typeof status === 'number' && status >= 500 && status <= 599) return 'status_5xx';
  return 'status_other';
}

interface UpstreamSeries {
  duration: Histogram.Internal<'upstream'>;
  errors: Map<UpstreamErrorKind, Counter.Internal>;
}
const upstreamSeries = new Map<string, UpstreamSeries>();

/**
 * Records one upstream call: its duration, and an error when it failed (see
 * {@link upstreamErrorKind}). Called where the call's latency is already measured: the typed
 * upstream client and the proxy policy's `settle`.
 *
 * @example recordUpstreamCall('issuer', 0.042, failure?.kind, status)
 */
export function recordUpstreamCall(upstream: string, seconds: number, failure?: string, status?: number | null): void {
  let series = upstreamSeries.get(upstream);
  if (series === undefined) {
    series = { duration: upstreamDuration.labels(upstream), errors: new Map() };
    upstreamSeries.set(upstream, series);
  }
  series.duration.observe(seconds);
  const kind = upstreamErrorKind(failure, status);
  if (kind === undefined) return;
  let counter = series.errors.get(kind);
  if (counter === undefined) {
    counter = upstreamErrors.labels(upstream, kind);
    series.errors.set(kind, counter);
  }
  counter.inc();
}

/** A child counter exposed as 0 before its first event (prom-client only shows a series once touched). */
function exposed(counter: Counter.Internal): Counter.Internal {
  counter.inc(0);
  return counter;
}

/** The 401 codes of the es512-jwt policy: every 401 of the catalog but the admin API's. */
export const JWT_REFUSAL_CODES: readonly string[] = Object.entries(ERROR_CATALOG)
  .filter(([code, entry]) => entry.status === 401 && code !== 'admin_unauthorized')
  .map(([code]) => code);

// Made up front: every code shows as 0 from the first scrape, so rate() and alerts work at once.
const jwtRefusalCounters = new Map<string, Counter.Internal>(JWT_REFUSAL_CODES.map((code) => [code, exposed(jwtRefusals.labels(code))]));

/**
 * Counts a problem the gateway answered when it is a JWT refusal (a 401 with a token code);
 * any other code is ignored. Called by the one problem writer.
 */
export function recordAuthRefusal(code: string): void {
  jwtRefusalCounters.get(code)?.inc();
}

/** Outcome of a configuration reload. */
export type ConfigReloadOutcome = 'applied' | 'rejected';

const configReloadCounters: Record<ConfigReloadOutcome, Counter.Internal> = {
  applied: exposed(configReloads.labels('applied')),
  rejected: exposed(configReloads.labels('rejected')),
};

/**
 * Counts one reload of gateway.config.yml in `config_reloads_total{outcome}`: `applied` when the
 * new pipelines replaced the old ones, `rejected` when the boot guards refused the new file and
 * the running configuration stayed.
 *
 * @example recordConfigReload(problems.length === 0 ? 'applied' : 'rejected')
 */
export function recordConfigReload(outcome: ConfigReloadOutcome): void {
  configReloadCounters[outcome].inc();
}

/** How a webhook delivery attempt ended (the `outcome` of its attempt row). */
export type WebhookAttemptOutcome = 'delivered' | 'retrying' | 'failed';

const webhookDeliveryCounters = new Map<string, Counter.Internal>();

/**
 * Records one webhook delivery attempt: `webhook_deliveries_total{outcome, error}` (error `none`
 * when delivered), the attempt's duration, and for a delivery the lag since its event was written.
 * The labels are bounded by the attempt table's CHECKs: never a partner, endpoint or URL.
 *
 * @example recordWebhookAttempt('retrying', 'timeout', { seconds: 10 })
 */
export function recordWebhookAttempt(outcome: WebhookAttemptOutcome, error: string | null, timing: { seconds?: number; lagSeconds?: number } = {}): void {
  const key = `${outcome} ${error ?? 'none'}`;
  let counter = webhookDeliveryCounters.get(key);
  if (counter === undefined) {
    counter = webhookDeliveries.labels(outcome, error ?? 'none');
    webhookDeliveryCounters.set(key, counter);
  }
  counter.inc();
  if (timing.seconds !== undefined) webhookAttemptDuration.observe(timing.seconds);
  if (timing.lagSeconds !== undefined) webhookDeliveryLag.observe(timing.lagSeconds);
}

/** Counts an authorization decision answered to the processor (`unavailable`: the 503 that lets its stand-in apply) and observes its duration. */
export function recordAuthorizationDecision(outcome: 'approved' | 'declined' | 'unavailable', decidedBy: string, seconds: number): void {
  authorizationDecisions.labels(outcome, decidedBy).inc();
  authorizationDecisionDuration.observe(seconds);
}

/** Counts one tokenization decision answered (or 503, `unavailable`) and observes its time in the gateway. */
export function recordTokenizationDecision(outcome: 'approve' | 'require_verification' | 'decline' | 'unavailable', decidedBy: string, seconds: number): void {
  tokenizationDecisions.labels(outcome, decidedBy).inc();
  tokenizationDecisionDuration.observe(seconds);
}

/** Observes one call to a partner's decision endpoint, by result (`answered`, `timeout`, `error`, `overloaded`, `disabled`). */
export function recordPartnerDecision(result: string, seconds: number): void {
  partnerDecisionDuration.labels(result).observe(seconds);
}
