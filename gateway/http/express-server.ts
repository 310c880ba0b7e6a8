import http from 'node:http';
import type { Application, Express } from 'express';

/**
 * An HTTP server for an Express application whose requests and responses are made with the
 * application's own prototypes (`app.request`, `app.response`) from the start.
 *
 * Express gives every request and response its application's prototypes in its first middleware
 * (`expressInit`: `Object.setPrototypeOf(req, app.request)`, the same for `res`). Changing the
 * prototype of a live `ServerResponse` makes V8 allocate more for it (about 6.6 KB a request), and
 * keeps each response's objects alive through the young generation's collections until the next
 * full collection, so that they are promoted to the old generation (docs/performance.md, "Run O": an
 * Express application at 200 requests/s, 7 full collections in 30 s, 1 with this; the gateway's
 * promotion per scavenge halved). Made with those prototypes, the objects already have them and
 * `expressInit`'s call changes nothing. The objects are Node's own `IncomingMessage` and
 * `ServerResponse` (their constructors run unchanged), with Express's methods, as before.
 *
 * @example const server = expressServer(app, { headersTimeout: 20_000 });
 */
export function expressServer(app: Application, options: http.ServerOptions = {}): http.Server {
  // Every Express application has them (express()); the Application type leaves them out.
  const { request, response } = app as unknown as Partial<Pick<Express, 'request' | 'response'>>;
  // A handler that is not an application (no prototypes of its own): a plain server.
  if (typeof request !== 'object' || typeof response !== 'object') return http.createServer(options, app);
  return http.createServer({ ...options, IncomingMessage: madeWith(http.IncomingMessage, request), ServerResponse: madeWith(http.ServerResponse, response) }, app);
}

/**
 * A constructor that runs `base` and gives the object `prototype` (which must inherit from
 * `base.prototype`, as Express's `app.request` and `app.response` do from Node's).
 */
function madeWith<T extends typeof http.IncomingMessage | typeof http.ServerResponse>(base: T, prototype: object): T {
  function Made(...args: unknown[]): object {
    return Reflect.construct(base, args, Made) as object;
  }
  Made.prototype = prototype;
  return Made as unknown as T;
}
