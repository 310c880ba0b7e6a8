import type { ErrorCode, InvalidParam, Problem } from './types';

/** A code of {@link PartnerGatewayError}: a documented one, or `unexpected_response` when the answer was not a problem. */
export type PartnerGatewayErrorCode = ErrorCode | 'unexpected_response';

/**
 * A call the gateway refused: its problem (RFC 9457, docs/errors.md). The message holds the status,
 * code, detail and request id, never a request body, header or token.
 */
export class PartnerGatewayError extends Error {
  override readonly name = 'PartnerGatewayError';
  /** The HTTP status. */
  readonly status: number;
  /** The machine-readable reason. */
  readonly code: PartnerGatewayErrorCode;
  /** What happened, for a human. */
  readonly detail: string;
  /** `validation_failed`: every invalid field; empty otherwise. */
  readonly invalidParams: InvalidParam[];
  /** The gateway's request id (the problem's `requestId`, else the `X-Request-Id` header): quote it to support. */
  readonly requestId: string | undefined;
  /** Seconds the gateway asked to wait (`Retry-After`), when it sent one. */
  readonly retryAfter: number | undefined;
  /** The whole problem, when the answer was one. */
  readonly problem: Problem | undefined;

  constructor(init: { status: number; code: PartnerGatewayErrorCode; detail: string; invalidParams?: InvalidParam[]; requestId?: string; retryAfter?: number; problem?: Problem }) {
    super(`HTTP ${init.status} ${init.code}: ${init.detail}${init.requestId ? ` (requestId ${init.requestId})` : ''}`);
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.invalidParams = init.invalidParams ?? [];
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.problem = init.problem;
  }

  /** The error of a non-2xx answer whose body was read as `text`. */
  static fromAnswer(status: number, headers: Headers, text: string): PartnerGatewayError {
    const retryAfter = parseRetryAfter(headers.get('retry-after'));
    const headerRequestId = headers.get('x-request-id') ?? undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (isProblem(parsed)) {
      return new PartnerGatewayError({
        status,
        code: parsed.code,
        detail: parsed.detail ?? parsed.title ?? '',
        invalidParams: Array.isArray(parsed.invalidParams) ? parsed.invalidParams : [],
        requestId: parsed.requestId ?? headerRequestId,
        retryAfter,
        problem: parsed,
      });
    }
    // A proxy's or load balancer's answer: its body is not repeated (it may be anything).
    return new PartnerGatewayError({ status, code: 'unexpected_response', detail: `HTTP ${status} without a problem body`, requestId: headerRequestId, retryAfter });
  }
}

/** The network failed (connection refused or reset, DNS, a timeout) on the last attempt. */
export class PartnerGatewayConnectionError extends Error {
  override readonly name = 'PartnerGatewayConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && typeof (value as Problem).code === 'string' && typeof (value as Problem).status === 'number';
}

/**
 * `Retry-After` in seconds: delta-seconds or an HTTP date (RFC 9110); undefined when absent or
 * unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
