import type { OperationHandler } from './context';

const NO_STORE = { 'Cache-Control': 'no-store' } as const;

/** `GET /health-check`: liveness, no auth, always 200 `OK` as text/plain (spec 4.1). */
export function healthCheck(): OperationHandler<unknown> {
  return async function healthCheckHandler() {
    return { status: 200, headers: NO_STORE, bytes: 'OK', contentType: 'text/plain; charset=utf-8' };
  };
}
