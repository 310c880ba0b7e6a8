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
 * full collection, so that they are promoted to the old generation (docs/performance.md, "Garbage collection under the heap cap": an
 * Express application at 200 requests/s, 7 full collections in 30 s, 3 with this as with node:http
 * alone; the gateway at 200 decisions/s, promotion per scavenge 1.2-2.2 MB -> 0.07-0.11 MB). Here the server makes them as instances of two classes that extend
 * Node's `IncomingMessage` and `ServerResponse` and inherit the application's prototypes, and those
 * classes' prototypes become the application's `request` and `response`: `expressInit`'s call then
 * changes nothing, and every request's objects share one hidden class (V8 map), as plain Node
 * objects do. (An earlier version made them with `Reflect.construct` and the application's prototype
 * as `new.target`'s: V8 gave every object a map of its own, some 80 maps a request.)
 *
 * Changes `app.request` and `app.response` (to objects that inherit from the old ones): call it once
 * per application.
 *
 * @example const server = expressServer(app, { headersTimeout: 20_000 });
 */
export function expressServer(app: Application, options: http.ServerOptions = {}): http.Server {
  // Every Express application has them (express()); the Application type leaves them out.
  const express = app as unknown as Partial<Pick<Express, 'request' | 'response'>>;
  // A handler that is not an application (no prototypes of its own): a plain server.
  if (typeof express.request !== 'object' || typeof express.response !== 'object') return http.createServer(options, app);
  class ExpressRequest extends http.IncomingMessage {}
  class ExpressResponse extends http.ServerResponse {}
  Object.setPrototypeOf(ExpressRequest.prototype, express.request);
  Object.setPrototypeOf(ExpressResponse.prototype, express.response);
  express.request = ExpressRequest.prototype as Express['request'];
  express.response = ExpressResponse.prototype as unknown as Express['response'];
  return http.createServer({ ...options, IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse }, app);
}
