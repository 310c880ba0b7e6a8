/**
 * @partner-gateway/sdk: a typed client of the Partner Gateway's Partner Card-Management API, and
 * the verification of what the gateway sends you. docs/sdk.md describes every part.
 */
export { PartnerGateway, OPERATION_METHODS, DEFAULT_BASE_URL, SDK_VERSION, type PartnerGatewayOptions, type RequestOptions, type WriteOptions, type LogRecord, type NetworkTokens, type SignerMethodsOnTokens } from './client';
export { PartnerGatewayError, PartnerGatewayConnectionError, parseRetryAfter, type PartnerGatewayErrorCode } from './errors';
export { PartnerTokens, derToP1363, type KeyStoreSigner, type PartnerPrivateKey, type TokenOptions } from './token';
export { Paginated, type PagingKind } from './pagination';
export { isRetryable, retryDelayMs, type RetryOptions, type AttemptOutcome } from './retry';
export { encryptPin, oneOffRevealKey, type OneOffKey } from './card-data';
export {
  verifyWebhook,
  verifyAuthorizationRequest,
  verifyTokenizationRequest,
  verifySignature,
  verifyStandardWebhook,
  verifyStandardAuthorizationRequest,
  verifyStandardTokenizationRequest,
  verifyStandardSignature,
  standardWebhookKey,
  approve,
  decline,
  decisionAnswer,
  tokenizationAnswer,
  SignatureVerificationError,
  SIGNATURE_HEADER,
  STANDARD_WEBHOOK_HEADERS,
  type VerificationFailure,
  type UnknownWebhookEvent,
  type VerifyOptions,
  type RequestHeaders,
  type StandardSignature,
  type DecisionAnswer,
} from './verify';
export { OPERATIONS, WEBHOOK_EVENT_TYPES, DOCUMENT_SHA256 } from './generated/operations';
export type * from './types';
