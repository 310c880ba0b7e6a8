import type * as Undici from 'undici';

/**
 * undici's `Client`, `Pool` and `buildConnector`, the only parts of it the gateway runs, required
 * from their own modules. undici's index also loads its fetch, WebSocket, EventSource, cookies,
 * cache stores and mocks (and with them Node's own bundled undici): about 90 ms of CPU at every
 * start, for code the gateway never calls.
 *
 * The index adds the request API (`request`, `stream`, `pipeline`, `connect`, `upgrade`) to
 * `Dispatcher.prototype`; it is added here the same way, so a `Client` or `Pool` from this module
 * is the one `require('undici')` gives (same classes, same methods). A later `require('undici')`
 * (tests' MockAgent) assigns the same functions again. test/unit/gateway/upstreams/undici-core.test.ts
 * checks both against undici's index, so an undici upgrade that moves these files fails there.
 */
const Dispatcher = require('undici/lib/dispatcher/dispatcher') as typeof Undici.Dispatcher;
Object.assign(Dispatcher.prototype, require('undici/lib/api') as object);

export const Client = require('undici/lib/dispatcher/client') as typeof Undici.Client;
export const Pool = require('undici/lib/dispatcher/pool') as typeof Undici.Pool;
export const buildConnector = require('undici/lib/core/connect') as typeof Undici.buildConnector;
