/**
 * STUB (issue 35, part B): the processor's token messages of docs/upstreams.md section 10, as part
 * A declares them in contracts/upstreams.ts (`Token`, `TokenNotification`, …). Until A's types are
 * on the branch, part B codes against these copies, field for field as the contract says; when they
 * land, this file re-exports them instead:
 *
 *   UpstreamToken = Token; TokenNotification, NetworkVerdict, TokenizationAnswer, VerificationAnswer,
 *   TokenChanges as they are; UpstreamTokenChange = TokenChange;
 *   TokenizationRequest = contracts' TokenizationRequest['tokenization'] (the body's inner object);
 *   VerificationRequest = contracts' VerificationRequest['verification'].
 */
import type { TokenDevice, TokenStatus, WalletProvider } from '../shapes/token';

/** The processor's token (upstreams.md 10.1). */
export interface UpstreamToken {
  tokenReference: string;
  cardKey: string;
  tokenizationId: string | null;
  walletProvider: WalletProvider;
  tokenRequestorId: string;
  last4: string;
  tokenExpDate: string;
  device: TokenDevice;
  status: TokenStatus;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** The change of a `token.updated` notification (10.5). */
export type UpstreamTokenChange = 'activated' | 'suspended' | 'resumed' | 'deactivated' | 'declined' | 'card_updated' | 'device_updated';

/** A token lifecycle notification (10.5). */
export type TokenNotification =
  | { id: string; type: 'token.created'; occurredAt: string; token: UpstreamToken }
  | { id: string; type: 'token.updated'; occurredAt: string; change: UpstreamTokenChange; reason?: string; token: UpstreamToken };

/** The network's risk verdict in a tokenization request (10.3). */
export interface NetworkVerdict {
  decision: 'approve' | 'require_verification' | 'decline';
  riskScore?: number;
  reasons?: string[];
}

/** The tokenization request's `tokenization` (10.3). */
export interface TokenizationRequest {
  id: string;
  tokenReference: string;
  cardId: string;
  walletProvider: WalletProvider;
  tokenRequestorId: string;
  last4: string;
  tokenExpDate: string;
  device: TokenDevice;
  networkVerdict: NetworkVerdict;
  at: string;
}

/** The gateway's answer to a tokenization request (10.3). */
export type TokenizationAnswer = { decision: 'approve' } | { decision: 'require_verification' } | { decision: 'decline'; declineReason: string };

/** The verification request's `verification` (10.4). */
export interface VerificationRequest {
  id: string;
  tokenReference: string;
  code: string;
}

/** The gateway's answer to a verification request (10.4). */
export type VerificationAnswer = { verified: true } | { verified: false; reason: 'wrong_code' | 'expired' | 'attempts_exhausted' | 'not_pending'; attemptsLeft: number };

/** The change feed's page (10.7). */
export interface TokenChanges {
  data: UpstreamToken[];
  nextCursor: string;
}
