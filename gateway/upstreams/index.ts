import type { Dispatcher } from 'undici';
import type { Logger } from '../logging/logger';
import { createAccountsClient, type AccountsClient } from './accounts-client';
import { MAX_SOCKETS_PER_ORIGIN, UpstreamPools } from './agents';
import { UpstreamHttpClient } from './http-client';
import { createIssuerClient, type IssuerClient } from './issuer-client';
import { createProcessingClient, type ProcessingClient } from './processing-client';
import type { UpstreamName } from '../../contracts/upstreams';

export type { CallContext } from './call-context';
export type * from '../../contracts/upstreams';
export type { AccountsClient } from './accounts-client';
export type { IssuerClient } from './issuer-client';
export type { ProcessingClient } from './processing-client';
export type { UpstreamFailure } from './failures';
export { mapUpstreamFailure, UPSTREAM_TITLES } from './failures';
export { UpstreamHttpClient, upstreamPath, MAX_ANSWER_BYTES, type UpstreamRequest } from './http-client';
export { MAX_SOCKETS_PER_ORIGIN } from './agents';

/** Base URLs of the three upstream systems (real ones, or the sandboxes started by main). */
export interface UpstreamUrls {
  issuer: string;
  processing: string;
  accounts: string;
}

/** The clients of the three upstreams, over one keep-alive pool per origin. */
export interface UpstreamClients {
  issuer: IssuerClient;
  processing: ProcessingClient;
  accounts: AccountsClient;
  /**
   * The HTTP client under each typed client: what the `upstream-proxy` policy calls for a route
   * that is one upstream call (same pool, timeout, retry rule, size cap and failure mapping).
   */
  http: Readonly<Record<UpstreamName, UpstreamHttpClient>>;
  /** Destroys the keep-alive pools (their open connections); later calls fail with `upstream_error`. */
  close(): void;
}

/**
 * Builds the upstream clients once at start: one keep-alive pool per origin with at most
 * `maxSocketsPerUpstream` sockets (default 64), shared by every caller; a whole-call timeout of
 * `timeoutMs` (a call may set its own); failures thrown as GatewayErrors (see
 * {@link mapUpstreamFailure}).
 *
 * @example
 * const clients = createUpstreamClients(upstreams, { timeoutMs: settings.upstreamTimeoutMs, log });
 * const card = await clients.issuer.getCard({ requestId: req.requestId, timing }, cardKey);
 * clients.close(); // at shutdown
 */
export function createUpstreamClients(
  urls: UpstreamUrls,
  options: { timeoutMs: number; log: Logger; maxSocketsPerUpstream?: number; /** Tests: answers for every origin (undici's `MockAgent`). */ dispatcher?: Dispatcher },
): UpstreamClients {
  const pools = new UpstreamPools(options.maxSocketsPerUpstream ?? MAX_SOCKETS_PER_ORIGIN, options.dispatcher);
  const client = (name: UpstreamName): UpstreamHttpClient =>
    new UpstreamHttpClient(name, urls[name], { timeoutMs: options.timeoutMs, log: options.log, pool: pools.poolFor(urls[name]) });
  const http = { issuer: client('issuer'), processing: client('processing'), accounts: client('accounts') };
  return {
    issuer: createIssuerClient(http.issuer),
    processing: createProcessingClient(http.processing),
    accounts: createAccountsClient(http.accounts),
    http,
    close() {
      for (const transport of Object.values(http)) transport.close();
      pools.destroy();
    },
  };
}
