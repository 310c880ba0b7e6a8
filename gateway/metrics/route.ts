import type { Router } from 'express';
import { clusterAggregation, metricsFromPrimary } from './cluster';
import { METRICS_PATH } from './paths';
import { registry } from './registry';

export { METRICS_PATH };

/**
 * The Prometheus text of this process (or, in a cluster worker whose primary serves aggregation,
 * of every worker, summed).
 */
export function collectMetrics(): Promise<string> {
  return clusterAggregation() ? metricsFromPrimary() : registry.metrics();
}

/**
 * Mounts `GET /admin/metrics` (Prometheus text format 0.0.4) on the admin API. Mount it after the
 * admin token check, like every admin route; a failure goes to the app's problem writer.
 *
 * @example metricsRoute(app); // in createAdminApi, before app.use(notFound())
 */
export function metricsRoute(app: Router): void {
  app.get(METRICS_PATH, function serveMetrics(_req, res, next) {
    collectMetrics().then(
      (text) => {
        // end(), not send(): send() would rewrite the content type's parameters and hash the body for an ETag.
        res.status(200).set('Content-Type', registry.contentType).set('Cache-Control', 'no-store').end(text);
      },
      (err: unknown) => next(err)
    );
  });
}
