import express, { type Application, type RequestHandler } from 'express';
import type { Logger } from '../logging/logger';
import { jsonBody } from './body';
import { notFound, problemHandler } from './problem';
import { requestContext } from './request-context';

/** The partner-facing application and the hook to swap its pipelines (hot reload). */
export interface PartnerApp {
  app: Application;
  setPipelines(pipelines: RequestHandler): void;
}

/**
 * The partner-facing Express application: request context, headers every answer carries and the
 * access log, JSON body (64 KB; whether a body was received at all is recorded),
 * the pipelines of gateway.config.yml (built by gateway/runtime), then the 404 and problem handlers.
 */
export function createPartnerApp(pipelines: RequestHandler, log: Logger): PartnerApp {
  let current = pipelines;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Request id, nosniff, Cache-Control: no-store, the access log.
  app.use(requestContext(log, 'gateway'));
  // Records whether each request carried a body: the validate policy refuses a body-taking
  // operation's request without one (400 body_required), where body-parser hands `{}` for both.
  app.use(jsonBody({ recordReceived: true }));
  app.use(function runPipelines(req, res, next) {
    current(req, res, next);
  });
  app.use(notFound());
  app.use(problemHandler(log));
  return {
    app,
    setPipelines(next) {
      current = next;
    },
  };
}
