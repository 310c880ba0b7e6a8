/**
 * The gateway's one error type and its catalog. Policies and handlers call `next(err)` with a
 * `GatewayError`; the terminal handler in `gateway/http/problem.ts` is the only place that writes
 * an error response (RFC 9457 `application/problem+json`).
 */

/** One invalid field of a request, as listed in a 400 problem's `invalidParams`. */
export interface InvalidParam {
  name: string;
  reason: string;
}

/** Catalog entry: the HTTP status and the human title of each error code. */
interface CatalogEntry {
  status: number;
  title: string;
}

/**
 * Every error code the gateway can answer with. `type` URIs are derived from the code:
 * `https://partner-gateway.dev/problems/<code>` (documented in docs/errors.md).
 */
export const ERROR_CATALOG = {
  // 400
  validation_failed: { status: 400, title: 'Request validation failed' },
  malformed_json: { status: 400, title: 'Malformed JSON body' },
  // An operation that takes a body, called with none (nothing, zero bytes or only whitespace): never read as `{}`.
  body_required: { status: 400, title: 'Request body required' },
  body_too_deep: { status: 400, title: 'JSON body nested too deeply' },
  invalid_id: { status: 400, title: 'Malformed identifier' },
  // 401: every code of the ES512 JWT policy
  token_missing: { status: 401, title: 'Bearer token missing' },
  token_malformed: { status: 401, title: 'Bearer token malformed' },
  alg_not_allowed: { status: 401, title: 'Signature algorithm not allowed' },
  header_not_allowed: { status: 401, title: 'Token header parameter not allowed' },
  claim_missing: { status: 401, title: 'Required claim missing' },
  claim_invalid: { status: 401, title: 'Claim has an invalid value' },
  token_expired: { status: 401, title: 'Token expired' },
  token_not_yet_valid: { status: 401, title: 'Token not yet valid' },
  lifetime_too_long: { status: 401, title: 'Token lifetime too long' },
  // One code for "no such partner" and "issuer does not match": telling them apart would reveal which partner ids exist.
  unknown_partner: { status: 401, title: 'Unknown partner or issuer' },
  partner_disabled: { status: 401, title: 'Partner disabled' },
  key_unknown: { status: 401, title: 'No active key matches the token' },
  key_revoked: { status: 401, title: 'Signing key revoked' },
  signature_invalid: { status: 401, title: 'Signature invalid' },
  admin_unauthorized: { status: 401, title: 'Admin token missing or invalid' },
  // 403, 404, 405, 409, 413, 415
  forbidden: { status: 403, title: 'Resource not owned by the caller' },
  not_found: { status: 404, title: 'Resource not found' },
  route_not_found: { status: 404, title: 'No such route' },
  conflict: { status: 409, title: 'Conflict' },
  idempotency_key_reused: { status: 409, title: 'Idempotency key reused with a different request' },
  idempotency_in_progress: { status: 409, title: 'A request with this idempotency key is in progress' },
  invalid_transition: { status: 409, title: 'Status transition not allowed' },
  // 409: a transaction lifecycle step the processing system refuses (docs/transactions.md)
  transaction_not_pending: { status: 409, title: 'Transaction is not pending' },
  amount_exceeds_remaining: { status: 409, title: 'Amount exceeds what is left of the transaction' },
  refund_not_allowed: { status: 409, title: 'Transaction cannot be refunded' },
  refund_exceeds_settled: { status: 409, title: 'Refund exceeds the settled amount' },
  authorization_id_reused: { status: 409, title: 'Authorization id used for another card' },
  // 409: the partner's decision endpoint (docs/authorization-endpoint.md): one per partner
  authorization_endpoint_exists: { status: 409, title: 'Authorization endpoint already registered' },
  // 409: network tokens and wallets (docs/tokens.md)
  card_not_active: { status: 409, title: 'Card is not active' },
  token_transition_invalid: { status: 409, title: 'Token status transition not allowed' },
  verification_failed: { status: 409, title: 'Verification code not accepted' },
  tokenization_id_reused: { status: 409, title: 'Tokenization id used for another card' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  upstream_rejected: { status: 422, title: 'Upstream refused the request' },
  // 429: the rate-limit policy (RateLimit-Policy, RateLimit and Retry-After headers)
  rate_limited: { status: 429, title: 'Too many requests' },
  // 5xx
  internal_error: { status: 500, title: 'Internal error' },
  upstream_error: { status: 502, title: 'Upstream error' },
  database_unavailable: { status: 503, title: 'Database unavailable' },
  decision_unavailable: { status: 503, title: 'No authorization decision before the deadline' },
  upstream_timeout: { status: 504, title: 'Upstream timeout' },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** The value of an RFC 9457 extension member: a scalar, or a list of plain objects (e.g. per-worker outcomes). */
export type ProblemExtension = string | number | boolean | readonly Record<string, string | number | boolean | null>[];

/** Base URI of problem `type`s. */
export const PROBLEM_TYPE_BASE = 'https://partner-gateway.dev/problems/';

/**
 * A failure the gateway answers to the caller. `message` becomes the problem's `detail` and is
 * shown to partners: never put secrets, stack traces or upstream bodies in it.
 *
 * @example next(new GatewayError('token_expired', 'The token expired at 2026-11-22T10:00:00Z'))
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly title: string;
  readonly invalidParams?: InvalidParam[];
  /** Extra response headers (e.g. `WWW-Authenticate`, `Retry-After`). */
  readonly headers?: Record<string, string>;
  /** RFC 9457 extension members added to the problem (e.g. `upstream`, `upstreamCode`). */
  readonly extensions?: Record<string, ProblemExtension>;

  constructor(
    code: ErrorCode,
    message?: string,
    options: {
      invalidParams?: InvalidParam[];
      headers?: Record<string, string>;
      extensions?: Record<string, ProblemExtension>;
      cause?: unknown;
    } = {}
  ) {
    const entry = ERROR_CATALOG[code];
    super(message ?? entry.title, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = entry.status;
    this.title = entry.title;
    this.invalidParams = options.invalidParams;
    this.headers = options.headers;
    this.extensions = options.extensions;
  }
}
