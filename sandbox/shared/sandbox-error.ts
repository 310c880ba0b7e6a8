/** One problem with a request field, as reported in `details` of a 400 answer. */
export interface ErrorDetail {
  /** JSON pointer into the request (`/lastName`), or the query parameter name (`?expDate`). */
  path: string;
  message: string;
}

/** The upstream error envelope every sandbox answers with on a 4xx/5xx. */
export interface UpstreamErrorBody {
  errorCode: string;
  message: string;
  details?: ErrorDetail[];
}

/**
 * The one error type of the sandboxes: route handlers throw it, and the terminal
 * error handler of {@link createSandboxApp} turns it into `{ errorCode, message }`.
 */
export class SandboxError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'SandboxError';
  }

  /** The JSON body written for this error. */
  toBody(): UpstreamErrorBody {
    const body: UpstreamErrorBody = { errorCode: this.errorCode, message: this.message };
    if (this.details && this.details.length > 0) body.details = this.details;
    return body;
  }
}

/**
 * The catalog of upstream error codes and the status each is answered with (docs/upstreams.md).
 * `SANDBOX_FAULT` is missing on purpose: an injected fault answers the status it was given.
 */
export const UPSTREAM_ERRORS = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  INVALID_EXP_DATE: 400,
  INVALID_EMBOSS_NAME: 400,
  INVALID_SECURITY_KEY: 400,
  INVALID_PIN_BLOCK: 400,
  INVALID_LIMIT_VALUE: 400,
  LIMIT_NAME_MISMATCH: 400,
  ROUTE_NOT_FOUND: 404,
  CARD_NOT_FOUND: 404,
  ACCOUNT_NOT_FOUND: 404,
  UNKNOWN_LIMIT: 404,
  TRANSACTION_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  CARD_CLOSED: 409,
  INVALID_STATUS_TRANSITION: 409,
  AUTHORIZATION_ID_REUSED: 409,
  TRANSACTION_NOT_PENDING: 409,
  AMOUNT_EXCEEDS_AUTHORIZED: 409,
  AMOUNT_EXCEEDS_REMAINING: 409,
  REFUND_NOT_ALLOWED: 409,
  REFUND_EXCEEDS_SETTLED: 409,
  NOTHING_TO_RESEND: 409,
  CARD_NOT_TOKENIZABLE: 409,
  TOKEN_TRANSITION_INVALID: 409,
  TOKENIZATION_ID_REUSED: 409,
  NOT_PENDING_VERIFICATION: 409,
  NOT_PHYSICAL: 409,
  DUPLICATE_ONBOARDING: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  PAYLOAD_TOO_LARGE: 413,
  EXP_DATE_MISMATCH: 422,
  ACCOUNT_REJECTED: 422,
  INTERNAL_ERROR: 500,
  ACCOUNT_CREATION_FAILED: 500,
  OPERATION_NOT_SUPPORTED: 500,
  SERVICE_UNAVAILABLE: 503,
  SANDBOX_TIMEOUT: 504,
} as const;

export type UpstreamErrorCode = keyof typeof UPSTREAM_ERRORS;

/**
 * A {@link SandboxError} for a catalog code, with the catalog's status.
 *
 * @example throw upstreamError('CARD_NOT_FOUND', `No card with cardKey ${cardKey}`);
 */
export function upstreamError(code: UpstreamErrorCode, message: string, details?: ErrorDetail[]): SandboxError {
  return new SandboxError(UPSTREAM_ERRORS[code], code, message, details);
}
