/**
 * The processor's token messages (docs/upstreams.md section 10) as the tokens domain names them:
 * part A's contract types (contracts/upstreams.ts), the requests' inner objects by their own names.
 */
import type { TokenizationRequest as TokenizationRequestBody, VerificationRequest as VerificationRequestBody } from '../../contracts/upstreams';

export type { Token as UpstreamToken, TokenChange as UpstreamTokenChange, TokenNotification, NetworkVerdict, TokenizationAnswer, VerificationAnswer, TokenChanges } from '../../contracts/upstreams';
/** The tokenization request's `tokenization` (10.3). */
export type TokenizationRequest = TokenizationRequestBody['tokenization'];
/** The verification request's `verification` (10.4). */
export type VerificationRequest = VerificationRequestBody['verification'];
