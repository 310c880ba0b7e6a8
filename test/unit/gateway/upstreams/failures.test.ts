import { expect } from 'chai';
import { GatewayError } from '../../../../gateway/errors';
import { mapUpstreamFailure, type UpstreamFailure } from '../../../../gateway/upstreams/failures';
import type { UpstreamName } from '../../../../gateway/upstreams';

interface Case {
  upstream: UpstreamName;
  failure: UpstreamFailure;
  status: number;
  code: string;
  detail: string;
  upstreamCode?: string;
  headers?: Record<string, string>;
}

const cases: Case[] = [
  { upstream: 'issuer', failure: { kind: 'timeout' }, status: 504, code: 'upstream_timeout', detail: 'The card issuer platform did not answer in time' },
  { upstream: 'accounts', failure: { kind: 'connection', code: 'ECONNREFUSED' }, status: 502, code: 'upstream_error', detail: 'The account-creation service could not be reached (ECONNREFUSED)' },
  { upstream: 'processing', failure: { kind: 'connection', code: 'ECONNRESET' }, status: 502, code: 'upstream_error', detail: 'The card processing system could not be reached (ECONNRESET)' },
  { upstream: 'issuer', failure: { kind: 'connection', code: 'EPIPE' }, status: 502, code: 'upstream_error', detail: 'The card issuer platform could not be reached (EPIPE)' },
  { upstream: 'issuer', failure: { kind: 'connection', code: 'ENOTFOUND' }, status: 502, code: 'upstream_error', detail: 'The card issuer platform could not be reached (ENOTFOUND)' },
  { upstream: 'issuer', failure: { kind: 'connection' }, status: 502, code: 'upstream_error', detail: 'The card issuer platform could not be reached' },
  { upstream: 'issuer', failure: { kind: 'connection', code: 'socket hang up' }, status: 502, code: 'upstream_error', detail: 'The card issuer platform could not be reached' },
  { upstream: 'processing', failure: { kind: 'malformed' }, status: 502, code: 'upstream_error', detail: 'The card processing system answered with a malformed body' },
  { upstream: 'accounts', failure: { kind: 'status', status: 500, errorCode: 'ACCOUNT_CREATION_FAILED' }, status: 502, code: 'upstream_error', detail: 'The account-creation service failed (ACCOUNT_CREATION_FAILED)', upstreamCode: 'ACCOUNT_CREATION_FAILED' },
  { upstream: 'issuer', failure: { kind: 'status', status: 500, errorCode: 'OPERATION_NOT_SUPPORTED' }, status: 502, code: 'upstream_error', detail: 'The card issuer platform failed (OPERATION_NOT_SUPPORTED)', upstreamCode: 'OPERATION_NOT_SUPPORTED' },
  { upstream: 'issuer', failure: { kind: 'status', status: 502 }, status: 502, code: 'upstream_error', detail: 'The card issuer platform failed (HTTP 502)' },
  // A card number (or any 13-digit run) in errorCode is never echoed: no upstreamCode, the detail names the HTTP status.
  { upstream: 'issuer', failure: { kind: 'status', status: 422, errorCode: 'PAN_5355709999999995' }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (HTTP 422)' },
  { upstream: 'issuer', failure: { kind: 'status', status: 500, errorCode: 'PAN_5355709999999994' }, status: 502, code: 'upstream_error', detail: 'The card issuer platform failed (HTTP 500)' },
  { upstream: 'processing', failure: { kind: 'status', status: 404, errorCode: 'X4111111111111' }, status: 404, code: 'not_found', detail: 'The card processing system does not know the resource (HTTP 404)' },
  { upstream: 'issuer', failure: { kind: 'malformed', cardData: true }, status: 502, code: 'upstream_error', detail: 'The card issuer platform answered card data where none is allowed' },
  { upstream: 'issuer', failure: { kind: 'status', status: 504, errorCode: 'SANDBOX_TIMEOUT' }, status: 502, code: 'upstream_error', detail: 'The card issuer platform failed (SANDBOX_TIMEOUT)', upstreamCode: 'SANDBOX_TIMEOUT' },
  { upstream: 'accounts', failure: { kind: 'status', status: 503, errorCode: 'SERVICE_UNAVAILABLE' }, status: 502, code: 'upstream_error', detail: 'The account-creation service is unavailable (SERVICE_UNAVAILABLE)', upstreamCode: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' } },
  { upstream: 'accounts', failure: { kind: 'status', status: 503, retryAfter: '30' }, status: 502, code: 'upstream_error', detail: 'The account-creation service is unavailable (HTTP 503)', headers: { 'Retry-After': '30' } },
  { upstream: 'accounts', failure: { kind: 'status', status: 503, retryAfter: '999999' }, status: 502, code: 'upstream_error', detail: 'The account-creation service is unavailable (HTTP 503)', headers: { 'Retry-After': '3600' } },
  { upstream: 'accounts', failure: { kind: 'status', status: 503, retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' }, status: 502, code: 'upstream_error', detail: 'The account-creation service is unavailable (HTTP 503)', headers: { 'Retry-After': '1' } },
  { upstream: 'issuer', failure: { kind: 'status', status: 400, errorCode: 'VALIDATION_ERROR' }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (VALIDATION_ERROR)', upstreamCode: 'VALIDATION_ERROR' },
  { upstream: 'issuer', failure: { kind: 'status', status: 400, errorCode: 'INVALID_SECURITY_KEY' }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (INVALID_SECURITY_KEY)', upstreamCode: 'INVALID_SECURITY_KEY' },
  { upstream: 'issuer', failure: { kind: 'status', status: 422, errorCode: 'EXP_DATE_MISMATCH' }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (EXP_DATE_MISMATCH)', upstreamCode: 'EXP_DATE_MISMATCH' },
  { upstream: 'accounts', failure: { kind: 'status', status: 422, errorCode: 'ACCOUNT_REJECTED' }, status: 422, code: 'upstream_rejected', detail: 'The account-creation service refused the request (ACCOUNT_REJECTED)', upstreamCode: 'ACCOUNT_REJECTED' },
  { upstream: 'issuer', failure: { kind: 'status', status: 413, errorCode: 'PAYLOAD_TOO_LARGE' }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (PAYLOAD_TOO_LARGE)', upstreamCode: 'PAYLOAD_TOO_LARGE' },
  { upstream: 'issuer', failure: { kind: 'status', status: 429 }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (HTTP 429)' },
  { upstream: 'issuer', failure: { kind: 'status', status: 404, errorCode: 'CARD_NOT_FOUND' }, status: 404, code: 'not_found', detail: 'The card issuer platform does not know the resource (CARD_NOT_FOUND)', upstreamCode: 'CARD_NOT_FOUND' },
  { upstream: 'issuer', failure: { kind: 'status', status: 404, errorCode: 'UNKNOWN_LIMIT' }, status: 404, code: 'not_found', detail: 'The card issuer platform does not know the resource (UNKNOWN_LIMIT)', upstreamCode: 'UNKNOWN_LIMIT' },
  { upstream: 'accounts', failure: { kind: 'status', status: 404 }, status: 404, code: 'not_found', detail: 'The account-creation service does not know the resource (HTTP 404)' },
  { upstream: 'processing', failure: { kind: 'status', status: 404, errorCode: 'ROUTE_NOT_FOUND' }, status: 502, code: 'upstream_error', detail: 'The card processing system does not serve the route called (ROUTE_NOT_FOUND)', upstreamCode: 'ROUTE_NOT_FOUND' },
  { upstream: 'issuer', failure: { kind: 'status', status: 409, errorCode: 'CARD_CLOSED' }, status: 409, code: 'conflict', detail: "The card issuer platform refused the request in the resource's current state (CARD_CLOSED)", upstreamCode: 'CARD_CLOSED' },
  { upstream: 'accounts', failure: { kind: 'status', status: 409, errorCode: 'DUPLICATE_ONBOARDING' }, status: 409, code: 'conflict', detail: "The account-creation service refused the request in the resource's current state (DUPLICATE_ONBOARDING)", upstreamCode: 'DUPLICATE_ONBOARDING' },
  // The issuer still runs an earlier call of the same operation id: the partner's own "still running", never a final conflict.
  { upstream: 'issuer', failure: { kind: 'status', status: 409, errorCode: 'IDEMPOTENCY_IN_PROGRESS' }, status: 409, code: 'idempotency_in_progress', detail: 'The card issuer platform is still running an earlier attempt of this operation; retry shortly with the same Idempotency-Key', upstreamCode: 'IDEMPOTENCY_IN_PROGRESS', headers: { 'Retry-After': '1' } },
  { upstream: 'issuer', failure: { kind: 'status', status: 409, errorCode: 'IDEMPOTENCY_IN_PROGRESS', retryAfter: '5' }, status: 409, code: 'idempotency_in_progress', detail: 'The card issuer platform is still running an earlier attempt of this operation; retry shortly with the same Idempotency-Key', upstreamCode: 'IDEMPOTENCY_IN_PROGRESS', headers: { 'Retry-After': '5' } },
  { upstream: 'issuer', failure: { kind: 'status', status: 409, errorCode: 'IDEMPOTENCY_KEY_REUSED' }, status: 409, code: 'conflict', detail: "The card issuer platform refused the request in the resource's current state (IDEMPOTENCY_KEY_REUSED)", upstreamCode: 'IDEMPOTENCY_KEY_REUSED' },
  { upstream: 'issuer', failure: { kind: 'status', status: 401 }, status: 502, code: 'upstream_error', detail: "The card issuer platform refused the gateway's credentials (HTTP 401)" },
  { upstream: 'processing', failure: { kind: 'status', status: 403, errorCode: 'FORBIDDEN' }, status: 502, code: 'upstream_error', detail: "The card processing system refused the gateway's credentials (FORBIDDEN)", upstreamCode: 'FORBIDDEN' },
  { upstream: 'issuer', failure: { kind: 'status', status: 302 }, status: 502, code: 'upstream_error', detail: 'The card issuer platform failed (HTTP 302)' },
  // An errorCode that is not shaped like a code (free text, card data) is never echoed.
  { upstream: 'issuer', failure: { kind: 'status', status: 422, errorCode: 'PAN 5355701234567890 refused' }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (HTTP 422)' },
  { upstream: 'issuer', failure: { kind: 'status', status: 400, errorCode: 'lower_case' }, status: 422, code: 'upstream_rejected', detail: 'The card issuer platform refused the request (HTTP 400)' },
];

describe('unit: upstreams/mapUpstreamFailure', () => {
  for (const c of cases) {
    const label = c.failure.kind === 'status' ? `status ${c.failure.status} ${c.failure.errorCode ?? ''}`.trim() : `${c.failure.kind} ${'code' in c.failure ? (c.failure.code ?? '') : ''}`.trim();
    it(`${c.upstream} ${label} → ${c.status} ${c.code}`, () => {
      const error = mapUpstreamFailure(c.upstream, c.failure);
      expect(error).to.be.instanceOf(GatewayError);
      expect(error.status).to.equal(c.status);
      expect(error.code).to.equal(c.code);
      expect(error.message).to.equal(c.detail);
      expect(error.extensions).to.deep.equal(c.upstreamCode === undefined ? { upstream: c.upstream } : { upstream: c.upstream, upstreamCode: c.upstreamCode });
      expect(error.headers).to.deep.equal(c.headers);
    });
  }

  it('is pure: the same failure maps to equal errors', () => {
    const failure: UpstreamFailure = { kind: 'status', status: 409, errorCode: 'INVALID_STATUS_TRANSITION' };
    const [a, b] = [mapUpstreamFailure('issuer', failure), mapUpstreamFailure('issuer', failure)];
    expect({ ...a, message: a.message }).to.deep.equal({ ...b, message: b.message });
    expect(failure).to.deep.equal({ kind: 'status', status: 409, errorCode: 'INVALID_STATUS_TRANSITION' });
  });

  it('keeps a low-level cause for the logs only', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const error = mapUpstreamFailure('issuer', { kind: 'connection', code: 'ECONNREFUSED' }, { cause });
    expect(error.cause).to.equal(cause);
    expect(error.message).not.to.include('127.0.0.1');
  });
});
