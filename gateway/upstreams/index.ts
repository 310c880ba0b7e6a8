import type { Logger } from '../logging/logger';
import { createAccountsClient, type AccountsClient } from './accounts-client';
import { DEFAULT_MAX_SOCKETS, UpstreamHttpClient } from './http-client';
import { createIssuerClient, type IssuerClient } from './issuer-client';
import { createProcessingClient, type ProcessingClient } from './processing-client';
import type { UpstreamName } from './types';

export type { UpstreamName, CallContext } from './types';
export type * from './types';
export type { AccountsClient } from './accounts-client';
export type { IssuerClient } from './issuer-client';
export type { ProcessingClient } from './processing-client';
export type { UpstreamFailure } from './failures';
export { mapUpstreamFailure, UPSTREAM_TITLES } from './failures';
export { UpstreamHttpClient, upstreamPath, DEFAULT_MAX_SOCKETS, type UpstreamRequest } from './http-client';

/** The typed clients of the three upstreams, sharing nothing but the options. */
export interface UpstreamClients {
  issuer: IssuerClient;
  processing: ProcessingClient;
  accounts: AccountsClient;
  /** Destroys the keep-alive agents (their open sockets); later calls fail with `upstream_error`. */
  close(): void;
}

/**
 * Builds the three upstream clients once at start: one keep-alive agent per upstream with at most
 * `maxSocketsPerUpstream` sockets (default 64), a whole-call timeout of `timeoutMs`, and failures
 * thrown as GatewayErrors (see {@link mapUpstreamFailure}).
 *
 * @example
 * const clients = createUpstreamClients(services().upstreams, { timeoutMs: settings.upstreamTimeoutMs, log });
 * const card = await clients.issuer.getCard({ requestId: req.requestId, timing }, cardKey);
 * clients.close(); // at shutdown
 */
export function createUpstreamClients(
  urls: { issuer: string; processing: string; accounts: string },
  options: { timeoutMs: number; log: Logger; maxSocketsPerUpstream?: number },
): UpstreamClients {
  const maxSockets = options.maxSocketsPerUpstream ?? DEFAULT_MAX_SOCKETS;
  const http = (name: UpstreamName): UpstreamHttpClient =>
    new UpstreamHttpClient(name, urls[name], { timeoutMs: options.timeoutMs, log: options.log, maxSockets });
  const transports = { issuer: http('issuer'), processing: http('processing'), accounts: http('accounts') };
  return {
    issuer: createIssuerClient(transports.issuer),
    processing: createProcessingClient(transports.processing),
    accounts: createAccountsClient(transports.accounts),
    close() {
      for (const transport of Object.values(transports)) transport.close();
    },
  };
}
