import type { OperationHandler } from './context';

/** `GET /health-check`: liveness, no auth, always 200 `OK` as text/plain (spec 4.1). */
export function healthCheck(): OperationHandler<unknown> {
  return function healthCheckHandler(_facts, _req, res) {
    res.status(200).type('text/plain').set('Cache-Control', 'no-store').send('OK');
  };
}
