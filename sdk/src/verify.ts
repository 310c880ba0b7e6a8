/**
 * Verifying what the gateway sends you: webhook deliveries (docs/webhooks.md), and the
 * `authorization.request` and `tokenization.request` of your decision endpoint
 * (docs/authorization-endpoint.md, docs/tokens.md). Each carries two signatures made with the same
 * secrets, one per live secret during a rotation; verify either:
 * - `Partner-Gateway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`
 *   ({@link verifyWebhook}, {@link verifyAuthorizationRequest}, {@link verifyTokenizationRequest});
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64
 *   HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")>`, the key being the 32 bytes the secret
 *   encodes after `whsec_` ({@link verifyStandardWebhook}, {@link verifyStandardAuthorizationRequest},
 *   {@link verifyStandardTokenizationRequest}).
 *
 * Verify the raw bytes as received: a parsed and re-serialized body no longer matches (with
 * Express, `express.raw({type: 'application/json'})` on the route, not `express.json()`).
 */
import crypto from 'node:crypto';
import { WEBHOOK_EVENT_TYPES } from './generated/operations';
import type { AuthorizationDecision, AuthorizationRequest, TokenizationDecision, TokenizationRequest, WebhookEvent } from './types';

/** The header both carry. */
export const SIGNATURE_HEADER = 'partner-gateway-signature';

/** The Standard Webhooks headers both carry too. */
export const STANDARD_WEBHOOK_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

/** Why a delivery was refused. */
export type VerificationFailure = 'missing_header' | 'malformed_header' | 'stale_timestamp' | 'bad_signature' | 'malformed_body' | 'unknown_event_type';

/** A verified event of a type this version of the SDK does not know (the gateway added one since). */
export interface UnknownWebhookEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** A delivery that must not be trusted: answer it 400 and do not act on it. */
export class SignatureVerificationError extends Error {
  override readonly name = 'SignatureVerificationError';
  constructor(
    readonly reason: VerificationFailure,
    message: string,
    /**
     * With `unknown_event_type` only: the event, whose signature verified. Acknowledge it (2xx) and
     * ignore it, or upgrade the SDK: a 4xx makes the gateway retry it for days.
     */
    readonly event?: UnknownWebhookEvent
  ) {
    super(message);
  }
}

/** Options of a verification. */
export interface VerifyOptions {
  /** How far `t` may be from now, in seconds, either way; default 300. */
  toleranceSeconds?: number;
  /** Now, in unix seconds (tests). */
  nowSeconds?: number;
}

type RawBody = string | Uint8Array;
type HeaderValue = string | readonly string[] | null | undefined;

/**
 * Checks the signature of `rawBody` against any of `secrets` and returns its `t`; throws a
 * {@link SignatureVerificationError} otherwise.
 */
export function verifySignature(rawBody: RawBody, signatureHeader: HeaderValue, secrets: string | readonly string[], options: VerifyOptions = {}): number {
  const body = rawBodyBytes(rawBody);
  const keys = signingSecrets(secrets);
  const header = Array.isArray(signatureHeader) ? signatureHeader.join(',') : (signatureHeader as string | null | undefined);
  if (header === undefined || header === null || header.trim() === '') throw new SignatureVerificationError('missing_header', 'no Partner-Gateway-Signature header');
  const parts = header.split(',').map((part) => part.trim());
  const times = parts.filter((part) => part.startsWith('t='));
  const t = times.length === 1 && /^\d{1,12}$/.test(times[0]!.slice(2)) ? Number(times[0]!.slice(2)) : undefined;
  const given = parts.filter((part) => part.startsWith('v1=') && /^[0-9a-f]{64}$/i.test(part.slice(3))).map((part) => Buffer.from(part.slice(3), 'hex'));
  if (t === undefined || given.length === 0) throw new SignatureVerificationError('malformed_header', 'Partner-Gateway-Signature needs one t= and at least one v1=');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > tolerance) throw new SignatureVerificationError('stale_timestamp', `the signature's t is ${now - t} s away from now (tolerance ${tolerance} s)`);
  const signed = Buffer.concat([Buffer.from(`${t}.`), body]);
  const matches = keys.some((secret) => {
    const expected = crypto.createHmac('sha256', secret).update(signed).digest();
    // Every v1 is compared (no early exit on the first): the time does not say which one matched.
    return given.map((value) => crypto.timingSafeEqual(value, expected)).includes(true);
  });
  if (!matches) throw new SignatureVerificationError('bad_signature', 'no v1= signature matches the body with any of the secrets');
  return t;
}

/**
 * Verifies a webhook delivery and returns its event, typed by its `type`; throws a
 * {@link SignatureVerificationError} for a missing or malformed header, a `t` more than
 * `toleranceSeconds` away (a replay), a signature no secret makes, or a body that is not an event
 * (answer those 400), and `unknown_event_type`, with the verified `event`, for an event of a type
 * added to the gateway after this SDK (answer it 2xx, or the gateway retries it).
 * During a rotation pass both secrets: either verifies.
 *
 * @example
 * const event = verifyWebhook(rawBody, req.headers['partner-gateway-signature'], [process.env.WEBHOOK_SECRET!]);
 * if (event.type === 'card.status_changed') console.log(event.data.card.status);
 */
export function verifyWebhook(rawBody: RawBody, signatureHeader: HeaderValue, secrets: string | readonly string[], options: VerifyOptions = {}): WebhookEvent {
  verifySignature(rawBody, signatureHeader, secrets, options);
  return webhookEventOf(rawBody);
}

/** The event a verified body carries; throws `malformed_body` or `unknown_event_type` as {@link verifyWebhook} says. */
function webhookEventOf(rawBody: RawBody): WebhookEvent {
  const event = parseJson(rawBody) as { id?: unknown; type?: unknown; data?: unknown } | undefined;
  if (!event || typeof event !== 'object' || typeof event.id !== 'string' || typeof event.type !== 'string' || typeof event.data !== 'object' || event.data === null) {
    throw new SignatureVerificationError('malformed_body', 'the signed body is not an event');
  }
  if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event.type)) {
    throw new SignatureVerificationError('unknown_event_type', `a verified event of a type this SDK does not know (${event.type}): acknowledge it and ignore it`, event as UnknownWebhookEvent);
  }
  return event as unknown as WebhookEvent;
}

/**
 * Verifies an `authorization.request` POSTed to your decision endpoint and returns it; throws as
 * {@link verifyWebhook} does, and `malformed_body` for a signed body of another type (a
 * `tokenization.request`: verify that with {@link verifyTokenizationRequest}). Answer quickly: past
 * your endpoint's `timeoutMs` the gateway applies your `defaultDecision`.
 */
export function verifyAuthorizationRequest(rawBody: RawBody, signatureHeader: HeaderValue, secrets: string | readonly string[], options: VerifyOptions = {}): AuthorizationRequest {
  verifySignature(rawBody, signatureHeader, secrets, options);
  return authorizationRequestOf(rawBody);
}

/** The `authorization.request` a verified body carries; throws `malformed_body` otherwise. */
function authorizationRequestOf(rawBody: RawBody): AuthorizationRequest {
  const request = parseJson(rawBody) as Partial<AuthorizationRequest> | undefined;
  if (!request || request.type !== 'authorization.request' || typeof request.id !== 'string' || typeof request.data?.authorization?.amount !== 'number') {
    throw new SignatureVerificationError('malformed_body', 'the signed body is not an authorization.request');
  }
  return request as AuthorizationRequest;
}

/**
 * Verifies a `tokenization.request` POSTed to your decision endpoint (once enrolled for it:
 * docs/tokens.md) and returns it; throws as {@link verifyWebhook} does, and `malformed_body` for a
 * signed body of another type (an `authorization.request`: verify that with
 * {@link verifyAuthorizationRequest}). Answer with {@link tokenizationAnswer} within your endpoint's
 * `timeoutMs`: past it the tokenization gets `require_verification` (or the network's decline).
 *
 * @example
 * const request = verifyTokenizationRequest(rawBody, req.headers['partner-gateway-signature'], [process.env.AUTHORIZATION_SECRET!]);
 * const answer = tokenizationAnswer(request.data.tokenization.networkVerdict.decision === 'decline' ? { decision: 'decline' } : { decision: 'approve' });
 */
export function verifyTokenizationRequest(rawBody: RawBody, signatureHeader: HeaderValue, secrets: string | readonly string[], options: VerifyOptions = {}): TokenizationRequest {
  verifySignature(rawBody, signatureHeader, secrets, options);
  return tokenizationRequestOf(rawBody);
}

/** The `tokenization.request` a verified body carries; throws `malformed_body` otherwise. */
function tokenizationRequestOf(rawBody: RawBody): TokenizationRequest {
  const request = parseJson(rawBody) as Partial<TokenizationRequest> | undefined;
  const tokenization = request?.data?.tokenization;
  if (
    !request ||
    request.type !== 'tokenization.request' ||
    typeof request.id !== 'string' ||
    typeof tokenization?.id !== 'string' ||
    typeof tokenization.tokenId !== 'string' ||
    typeof tokenization.walletProvider !== 'string' ||
    typeof tokenization.networkVerdict?.decision !== 'string'
  ) {
    throw new SignatureVerificationError('malformed_body', 'the signed body is not a tokenization.request');
  }
  return request as TokenizationRequest;
}

/** The request's headers: Node's `req.headers` (lower-case names), any record of them, or a Fetch `Headers`. */
export type RequestHeaders = Record<string, HeaderValue> | { get(name: string): string | null };

/** What a Standard Webhooks signature verified: the message's id (the same on every retry: deduplicate on it) and its timestamp. */
export interface StandardSignature {
  id: string;
  timestamp: number;
}

/**
 * The Standard Webhooks key of a secret: the bytes its text after `whsec_` encodes (the gateway's
 * secrets are `whsec_` and the base64url of 32 bytes; standard base64 is read too).
 */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * Checks the Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
 * of `rawBody` against any of `secrets` (as the gateway gave them: `whsec_…`) and returns the
 * message's id and timestamp; throws a {@link SignatureVerificationError} otherwise (a missing or
 * malformed header, a timestamp more than `toleranceSeconds` away, no `v1,` signature matching).
 */
export function verifyStandardSignature(rawBody: RawBody, headers: RequestHeaders, secrets: string | readonly string[], options: VerifyOptions = {}): StandardSignature {
  const body = rawBodyBytes(rawBody);
  const keys = signingSecrets(secrets);
  const id = headerOf(headers, STANDARD_WEBHOOK_HEADERS.id);
  const timestampText = headerOf(headers, STANDARD_WEBHOOK_HEADERS.timestamp);
  const signatures = headerOf(headers, STANDARD_WEBHOOK_HEADERS.signature);
  if (!id || !timestampText || !signatures) throw new SignatureVerificationError('missing_header', 'a webhook-id, webhook-timestamp or webhook-signature header is missing');
  const given = signatures
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'))
    .filter((value) => value.length === 32);
  if (!/^\d{1,12}$/.test(timestampText) || given.length === 0) throw new SignatureVerificationError('malformed_header', 'webhook-timestamp must be unix seconds and webhook-signature hold at least one v1,<base64>');
  const timestamp = Number(timestampText);
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) throw new SignatureVerificationError('stale_timestamp', `webhook-timestamp is ${now - timestamp} s away from now (tolerance ${tolerance} s)`);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  const matches = keys.some((secret) => {
    const expected = crypto.createHmac('sha256', standardWebhookKey(secret)).update(signed).digest();
    return given.map((value) => crypto.timingSafeEqual(value, expected)).includes(true);
  });
  if (!matches) throw new SignatureVerificationError('bad_signature', 'no v1, signature of webhook-signature matches the body with any of the secrets');
  return { id, timestamp };
}

/**
 * {@link verifyWebhook} by the Standard Webhooks headers: verifies a delivery and returns its event.
 *
 * @example
 * const event = verifyStandardWebhook(rawBody, req.headers, [process.env.WEBHOOK_SECRET!]);
 */
export function verifyStandardWebhook(rawBody: RawBody, headers: RequestHeaders, secrets: string | readonly string[], options: VerifyOptions = {}): WebhookEvent {
  verifyStandardSignature(rawBody, headers, secrets, options);
  return webhookEventOf(rawBody);
}

/** {@link verifyAuthorizationRequest} by the Standard Webhooks headers. */
export function verifyStandardAuthorizationRequest(rawBody: RawBody, headers: RequestHeaders, secrets: string | readonly string[], options: VerifyOptions = {}): AuthorizationRequest {
  verifyStandardSignature(rawBody, headers, secrets, options);
  return authorizationRequestOf(rawBody);
}

/** {@link verifyTokenizationRequest} by the Standard Webhooks headers. */
export function verifyStandardTokenizationRequest(rawBody: RawBody, headers: RequestHeaders, secrets: string | readonly string[], options: VerifyOptions = {}): TokenizationRequest {
  verifyStandardSignature(rawBody, headers, secrets, options);
  return tokenizationRequestOf(rawBody);
}

/** The answer of a decision endpoint: send `status`, `headers` and `body` as they are. */
export interface DecisionAnswer {
  status: 200;
  headers: { 'content-type': 'application/json' };
  body: string;
}

/** Approve the purchase. */
export function approve(): AuthorizationDecision {
  return { approved: true };
}

/** Decline the purchase, with an optional reason of at most 200 characters (kept in the decision's audit entry). */
export function decline(declineReason?: string): AuthorizationDecision {
  if (declineReason !== undefined && (typeof declineReason !== 'string' || declineReason.length > 200)) throw new RangeError('declineReason is a string of at most 200 characters');
  return declineReason === undefined ? { approved: false } : { approved: false, declineReason };
}

/**
 * The HTTP answer of a decision: a 200 with `{"approved": true}` or `{"approved": false, "declineReason"}`
 * (anything else makes the gateway apply your default decision).
 */
export function decisionAnswer(decision: AuthorizationDecision): DecisionAnswer {
  const body = decision.approved ? { approved: true } : decline(decision.declineReason);
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

const TOKENIZATION_OUTCOMES: readonly string[] = ['approve', 'require_verification', 'decline'];

/**
 * The HTTP answer of a tokenization decision: a 200 with `{"decision": "approve"}`,
 * `{"decision": "require_verification"}` or `{"decision": "decline", "declineReason"?}` (anything
 * else makes the gateway give the tokenization `require_verification`, or the network's decline).
 * Throws a `RangeError` for another decision or a `declineReason` over 200 characters; a
 * `declineReason` is sent with a decline only.
 *
 * @example
 * const answer = tokenizationAnswer({ decision: 'require_verification' });
 * res.writeHead(answer.status, answer.headers).end(answer.body);
 */
export function tokenizationAnswer(decision: TokenizationDecision): DecisionAnswer {
  if (!TOKENIZATION_OUTCOMES.includes(decision?.decision)) throw new RangeError('decision is approve, require_verification or decline');
  let body: TokenizationDecision = { decision: decision.decision };
  if (decision.decision === 'decline' && decision.declineReason !== undefined) {
    if (typeof decision.declineReason !== 'string' || decision.declineReason.length > 200) throw new RangeError('declineReason is a string of at most 200 characters');
    body = { decision: 'decline', declineReason: decision.declineReason };
  }
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function signingSecrets(secrets: string | readonly string[]): string[] {
  const keys = (typeof secrets === 'string' ? [secrets] : [...secrets]).filter((secret) => typeof secret === 'string' && secret.length > 0);
  if (keys.length === 0) throw new TypeError('give at least one signing secret (two during a rotation)');
  return keys;
}

/** One header's value (repeated ones joined by a space), by its name in any case. */
function headerOf(headers: RequestHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, HeaderValue>;
  const key = name in record ? name : Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : value.join(' ');
}

function rawBodyBytes(rawBody: RawBody): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError('pass the raw body (a string or Buffer as received), not a parsed object: re-serializing changes the bytes that were signed');
}

function parseJson(rawBody: RawBody): unknown {
  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'));
  } catch {
    return undefined;
  }
}
