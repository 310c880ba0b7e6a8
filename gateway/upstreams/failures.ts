import { GatewayError, type ErrorCode } from '../errors';
import { containsCardNumber } from './card-data';
import type { UpstreamName } from '../../contracts/upstreams';

/**
 * Why an upstream call failed, as the HTTP client observed it. Never carries the upstream's body
 * or message text: those may contain card data.
 */
export type UpstreamFailure =
  /** No complete answer within the whole-call timeout (connect + response). */
  | { kind: 'timeout' }
  /** The connection failed or broke: ECONNREFUSED, ECONNRESET, socket hang up, EPIPE, ENOTFOUND... */
  | { kind: 'connection'; code?: string }
  /**
   * A 2xx whose body is not JSON (or is truncated); with `cardData`, a JSON answer carrying card
   * data where none belongs (a full PAN as `cardMask`, a plaintext reveal; docs/cards.md).
   */
  | { kind: 'malformed'; cardData?: boolean }
  /** A non-2xx answer; `errorCode` from the upstream's error body, `retryAfter` its `Retry-After` header. */
  | { kind: 'status'; status: number; errorCode?: string; retryAfter?: string };

/** How each upstream is named in a problem's `detail`. */
export const UPSTREAM_TITLES: Readonly<Record<UpstreamName, string>> = {
  issuer: 'The card issuer platform',
  processing: 'The card processing system',
  accounts: 'The account-creation service',
};

/**
 * Only codes shaped like the contract's (`EXP_DATE_MISMATCH`) are echoed to partners: an upstream
 * that put free text (or card data) into `errorCode` must not reach the problem document.
 */
const ERROR_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/** 13 digits in a row: no contract code has them; a card number (Luhn-valid or not) does. */
const LONG_NUMBER = /[0-9]{13}/;

/**
 * The upstream's `errorCode` as partners may see it (`upstreamCode` and the detail), or undefined:
 * contract-shaped, and holding neither a card number nor any run of 13 digits.
 */
export function echoableErrorCode(errorCode: string | undefined): string | undefined {
  if (errorCode === undefined || !ERROR_CODE_PATTERN.test(errorCode)) return undefined;
  if (LONG_NUMBER.test(errorCode) || containsCardNumber(errorCode)) return undefined;
  return errorCode;
}

/** Node's error codes (`ECONNREFUSED`, `UND_ERR_SOCKET`); anything else is left out of the detail. */
const CONNECTION_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,40}$/;

/** The upstream `errorCode` of a 409 answered while the first call of the same operation id still runs (docs/upstreams.md). */
export const UPSTREAM_IN_PROGRESS = 'IDEMPOTENCY_IN_PROGRESS';

/**
 * Whether an error says the operation is still running, here or at an upstream (409
 * `idempotency_in_progress`): not a final answer, and an upstream call that met it may yet be applied.
 */
export function stillInProgress(err: unknown): boolean {
  return err instanceof GatewayError && err.code === 'idempotency_in_progress';
}

/**
 * Whether a failed upstream call leaves it unknown whether the upstream applied it: no usable answer
 * came (a timeout, a connection broken or refused, an answer without an upstream code) or the
 * upstream still runs an earlier attempt of the same operation id. A refusal with its upstream
 * code is an answer: nothing was applied.
 */
export function outcomeUnknown(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return true;
  return err.code === 'upstream_timeout' || stillInProgress(err) || (err.code === 'upstream_error' && err.extensions?.upstreamCode === undefined);
}

/** `Retry-After` sent with a 502 caused by an upstream 503 when the upstream gave no usable value. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;
/** Longest upstream `Retry-After` (seconds) passed on; longer hints are capped to this. */
const MAX_RETRY_AFTER_SECONDS = 3600;

function retryAfterOf(raw: string | undefined): string {
  if (raw !== undefined && /^[0-9]{1,10}$/.test(raw.trim())) {
    return String(Math.min(Number(raw.trim()), MAX_RETRY_AFTER_SECONDS));
  }
  // An HTTP-date or garbage: use our own short hint rather than parse a clock we do not share.
  return String(DEFAULT_RETRY_AFTER_SECONDS);
}

function errorFor(
  code: ErrorCode,
  upstream: UpstreamName,
  detail: string,
  upstreamCode: string | undefined,
  options: { headers?: Record<string, string>; cause?: unknown } = {},
): GatewayError {
  const extensions: Record<string, string> = { upstream };
  if (upstreamCode !== undefined) extensions.upstreamCode = upstreamCode;
  return new GatewayError(code, detail, { extensions, headers: options.headers, cause: options.cause });
}

/**
 * Maps a failed upstream call to the GatewayError the partner sees. Pure: same input, same error.
 *
 * | failure | error |
 * |---|---|
 * | timeout | 504 `upstream_timeout` |
 * | connection, malformed | 502 `upstream_error` |
 * | status 5xx, non-2xx below 400 | 502 `upstream_error` (503 adds `Retry-After`) |
 * | status 401, 403 | 502 `upstream_error`: the gateway's own credentials were refused, not the partner's fault |
 * | status 404 `ROUTE_NOT_FOUND` | 502 `upstream_error`: the upstream does not serve the route we called (misconfigured base URL) |
 * | status 404 | 404 `not_found` |
 * | status 409 `IDEMPOTENCY_IN_PROGRESS` | 409 `idempotency_in_progress` with `Retry-After`: the upstream still runs the first call of this operation id |
 * | status 409 | 409 `conflict` |
 * | status 400, 422, any other 4xx | 422 `upstream_rejected` |
 *
 * Every error carries the problem extension members `upstream` and, when the upstream answered
 * a well-formed `errorCode` without card data ({@link echoableErrorCode}), `upstreamCode`. The `detail` names the system and that code, never
 * the upstream's message text or body.
 *
 * An upstream 503 is transient by definition, so its 502 carries `Retry-After`: the upstream's
 * own delta-seconds when it sent one (capped at 3600), else {@link DEFAULT_RETRY_AFTER_SECONDS}.
 * Other 5xx give no hint: we do not know that retrying helps.
 *
 * An upstream 409 `IDEMPOTENCY_IN_PROGRESS` says the upstream is still running an earlier call with
 * the same operation id (a retry after a gateway timeout, while the issuer still works on the first
 * call): not a final answer. It becomes the partner's own "still running" problem, 409
 * `idempotency_in_progress` with `Retry-After` (the upstream's, else 1), which the idempotency policy
 * does not store as the key's answer (the key is released, so a retry with it runs again and gets
 * the upstream's first result).
 *
 * @example mapUpstreamFailure('issuer', { kind: 'status', status: 422, errorCode: 'EXP_DATE_MISMATCH' })
 * // → 422 upstream_rejected, "The card issuer platform refused the request (EXP_DATE_MISMATCH)"
 */
export function mapUpstreamFailure(upstream: UpstreamName, failure: UpstreamFailure, options: { cause?: unknown } = {}): GatewayError {
  const system = UPSTREAM_TITLES[upstream];
  const { cause } = options;
  switch (failure.kind) {
    case 'timeout':
      return errorFor('upstream_timeout', upstream, `${system} did not answer in time`, undefined, { cause });
    case 'connection': {
      const code = failure.code !== undefined && CONNECTION_CODE_PATTERN.test(failure.code) ? ` (${failure.code})` : '';
      return errorFor('upstream_error', upstream, `${system} could not be reached${code}`, undefined, { cause });
    }
    case 'malformed':
      if (failure.cardData) return errorFor('upstream_error', upstream, `${system} answered card data where none is allowed`, undefined, { cause });
      return errorFor('upstream_error', upstream, `${system} answered with a malformed body`, undefined, { cause });
    case 'status': {
      const { status } = failure;
      const upstreamCode = echoableErrorCode(failure.errorCode);
      const reason = upstreamCode ?? `HTTP ${status}`;
      if (status >= 500 || status < 400) {
        const headers = status === 503 ? { 'Retry-After': retryAfterOf(failure.retryAfter) } : undefined;
        const verb = status === 503 ? 'is unavailable' : 'failed';
        return errorFor('upstream_error', upstream, `${system} ${verb} (${reason})`, upstreamCode, { headers, cause });
      }
      if (status === 401 || status === 403) {
        return errorFor('upstream_error', upstream, `${system} refused the gateway's credentials (${reason})`, upstreamCode, { cause });
      }
      if (status === 404 && upstreamCode === 'ROUTE_NOT_FOUND') {
        return errorFor('upstream_error', upstream, `${system} does not serve the route called (${reason})`, upstreamCode, { cause });
      }
      if (status === 404) {
        return errorFor('not_found', upstream, `${system} does not know the resource (${reason})`, upstreamCode, { cause });
      }
      if (status === 409 && upstreamCode === UPSTREAM_IN_PROGRESS) {
        return errorFor('idempotency_in_progress', upstream, `${system} is still running an earlier attempt of this operation; retry shortly with the same Idempotency-Key`, upstreamCode, {
          headers: { 'Retry-After': retryAfterOf(failure.retryAfter) },
          cause,
        });
      }
      if (status === 409) {
        return errorFor('conflict', upstream, `${system} refused the request in the resource's current state (${reason})`, upstreamCode, { cause });
      }
      return errorFor('upstream_rejected', upstream, `${system} refused the request (${reason})`, upstreamCode, { cause });
    }
  }
}
