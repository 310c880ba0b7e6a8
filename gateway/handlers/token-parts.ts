/**
 * STUB (issue 35, part D): part C's `changeTokenStatus` (gateway/tokens/operations.ts), as that part
 * declares it, until part C is on this branch: then the handler imports it from there and this file
 * goes. The stub answers 502 `upstream_error` and writes nothing.
 */
import { GatewayError } from '../errors';
import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Token } from '../shapes/token';
import type { CallContext, ProcessingClient } from '../upstreams';

/** Part C (gateway/tokens/operations.ts): a partner's suspend, resume or deactivate of a token (docs/tokens.md, the routes' table). */
export interface TokenStatusOrder {
  tokenId: string;
  partnerId: string;
  action: 'suspend' | 'resume' | 'deactivate';
  reason?: string;
  /** The processor's `Idempotency-Key`: the request's upstream operation id. */
  operationId: string;
  /** The audit entry's operation (`token.suspend`…). */
  operation: string;
  requestId: string;
  ctx: CallContext;
}
export interface TokenOperationDeps {
  db: Database;
  processing: ProcessingClient;
  log: Logger;
}
/** Part C's `changeTokenStatus(deps, order)`: the token after the change, and the outbox messages it queued, to deliver after the commit. */
export async function changeTokenStatus(_deps: TokenOperationDeps, _order: TokenStatusOrder): Promise<{ token: Token; queued: string[] }> {
  throw new GatewayError('upstream_error', 'Token status changes are not available yet', { extensions: { upstream: 'processing' } });
}

