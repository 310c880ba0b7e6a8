/**
 * STUB (issue 35, part D): what the token handlers call in the other parts, as docs/plans/issue-35.md
 * declares it, until each part is on the branch. Every export here goes when its part lands, its
 * importers importing the real one instead:
 *
 * - part A: the processing client's token methods (gateway/upstreams/processing-client.ts) and
 *   their contract types (contracts/upstreams.ts);
 * - part C: `changeTokenStatus` (gateway/tokens/operations.ts).
 *
 * A stubbed call that is not there yet answers 502 `upstream_error`: nothing is written.
 */
import { GatewayError } from '../errors';
import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Token } from '../shapes/token';
import type { CallContext, ProcessingClient } from '../upstreams';
import type { Transaction } from '../../contracts/upstreams';
import type { UpstreamToken } from '../tokens/contract-stub';

/** Part A (contracts/upstreams.ts 10.2). */
export interface ApplePayProvisioningRequest {
  cardKey: string;
  certificates: string[];
  nonce: string;
  nonceSignature: string;
}
export interface ApplePayProvisioningResult {
  activationData: string;
  encryptedPassData: string;
  ephemeralPublicKey: string;
}
export interface GooglePayProvisioningRequest {
  cardKey: string;
  walletAccountId: string;
  deviceId: string;
}
export interface GooglePayProvisioningResult {
  opaquePaymentCard: string;
  network: string;
  tokenServiceProvider: string;
  displayName: string;
  lastDigits: string;
}
/** Part A (10.9). */
export interface SimulatedTokenization {
  cardId: string;
  walletProvider: Token['walletProvider'];
  device?: Token['device'];
  networkVerdict?: 'approve' | 'require_verification' | 'decline';
  tokenizationId?: string;
}
export interface SimulatedTokenizationResult {
  token: UpstreamToken;
  decision: { decision: string; declineReason?: string };
}
export interface SimulatedVerificationResult {
  verified: boolean;
  reason?: string;
  attemptsLeft?: number;
  token: UpstreamToken;
}
export interface SimulatedTokenAuthorization {
  tokenReference: string;
  amount: number;
  currency?: string;
  type?: 'PURCHASE' | 'WITHDRAWAL';
  merchant?: { name?: string; mcc?: string; city?: string; country?: string };
  authorizationId?: string;
}

/** The processing client's token methods, as part A's row of the plan names them. */
export interface ProcessingTokenCalls {
  provisionApplePay(ctx: CallContext, body: ApplePayProvisioningRequest): Promise<ApplePayProvisioningResult>;
  provisionGooglePay(ctx: CallContext, body: GooglePayProvisioningRequest): Promise<GooglePayProvisioningResult>;
  simulateTokenization(ctx: CallContext, body: SimulatedTokenization, operationId?: string): Promise<SimulatedTokenizationResult>;
  simulateVerification(ctx: CallContext, reference: string, body: { code: string }): Promise<SimulatedVerificationResult>;
}

/** The processing client with its token methods (part A's), or a 502 for a method not there yet. */
export function processingTokens(processing: ProcessingClient): ProcessingTokenCalls {
  const methods = processing as unknown as Partial<ProcessingTokenCalls>;
  const missing = (name: string) => () => Promise.reject(new GatewayError('upstream_error', `The processing client has no ${name} yet`, { extensions: { upstream: 'processing' } }));
  return {
    provisionApplePay: methods.provisionApplePay?.bind(processing) ?? missing('provisionApplePay'),
    provisionGooglePay: methods.provisionGooglePay?.bind(processing) ?? missing('provisionGooglePay'),
    simulateTokenization: methods.simulateTokenization?.bind(processing) ?? missing('simulateTokenization'),
    simulateVerification: methods.simulateVerification?.bind(processing) ?? missing('simulateVerification'),
  };
}

/** `simulateAuthorization` with a token (part A: `SimulatedAuthorization.tokenReference`, `cardId` optional). */
export function simulateTokenAuthorization(processing: ProcessingClient, ctx: CallContext, body: SimulatedTokenAuthorization, operationId?: string): Promise<Transaction> {
  return processing.simulateAuthorization(ctx, body as unknown as Parameters<ProcessingClient['simulateAuthorization']>[1], operationId);
}

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

