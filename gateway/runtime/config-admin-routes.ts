import type { Application } from 'express';
import { GatewayError } from '../errors';
import type { Logger } from '../logging/logger';
import type { ConfigReloader } from './config-reloader';

/**
 * The admin routes of the gateway configuration, mounted behind the admin token by
 * `createAdminApi({ extraRoutes })`:
 *
 * - `GET /admin/config`: hash and load time of the configuration that serves, reload counters,
 *   the last rejection;
 * - `POST /admin/config/reload`: reads gateway.config.yml now (for operators who do not rely on
 *   file watching); 200 `{result: "applied" | "unchanged", ...status}`, or a 409 `conflict`
 *   problem naming the reason when the file is refused (the previous configuration keeps serving).
 */
export function configAdminRoutes(reloader: ConfigReloader, log: Logger): (app: Application) => void {
  return (app) => {
    app.get('/admin/config', (_req, res) => {
      res.json(reloader.status());
    });
    app.post('/admin/config/reload', (req, res, next) => {
      reloader
        .reload('admin')
        .then((outcome) => {
          log.info({ requestId: req.requestId, operation: 'config.reload', result: outcome.result, hash: outcome.status.hash }, 'admin change');
          if (outcome.result === 'rejected') {
            const { rejection, status } = outcome;
            throw new GatewayError('conflict', `gateway.config.yml was refused (${rejection.stage}): ${rejection.reason}. The previous configuration keeps serving.`, {
              extensions: { stage: rejection.stage, activeHash: status.hash, ...(rejection.hash ? { rejectedHash: rejection.hash } : {}) },
            });
          }
          res.json({ result: outcome.result, ...outcome.status });
        })
        .catch(next);
    });
  };
}
