import { newObjectId } from '../ids';
import type { Logger } from '../logging/logger';
import { AUTHORIZATION_DECISION, checkWithin, type Outbound, type PostResult } from '../outbound';
import { SecretUnavailableError } from '../outbound/secret-rows';
import type { EventCard } from '../outbox/partner-events';
import type { TokenDevice, WalletProvider } from '../shapes/token';
import type { AuthorizationEndpointStore, AuthorizationEndpointTarget, EndpointRequestType } from './endpoint-store';
import { PartnerCallState, type PartnerCallError, type PartnerDecision } from './partner-call-state';

export { MAX_IN_FLIGHT_PER_PARTNER, PartnerCallState, type PartnerCallError, type PartnerCallHealth, type PartnerDecision } from './partner-call-state';

/**
 * The partner's decision endpoint, asked during an authorization (docs/authorization-endpoint.md),
 * and, once enrolled for them, during a tokenization (docs/tokens.md, "The decision"):
 * one signed POST of an `authorization.request` (or `tokenization.request`) through the gateway's outbound transport
 * (gateway/outbound), with a timeout of min(the endpoint's `timeoutMs`, the caller's budget), a
 * keep-alive connection, no redirect followed, at most {@link MAX_ANSWER_BYTES} of the answer read,
 * and no database transaction held while it waits. Whatever goes wrong gives the endpoint's default
 * decision; nothing here throws for the partner's behaviour.
 */

/** The answer is read up to this size; past it the call stops reading and the default decision applies. */
export const MAX_ANSWER_BYTES = AUTHORIZATION_DECISION.maxAnswerBytes;
/** The longest `declineReason` a partner may answer (a longer one makes the answer invalid: default decision). */
export const MAX_DECLINE_REASON_LENGTH = 200;

/** The merchant of an authorization, as the processor tells it. */
export interface AuthorizationMerchant {
  name: string;
  mcc: string;
  city?: string | null;
  country: string;
}

/** What the partner is asked about: the authorization and the card as events carry it (never a card number, CVV or PIN). */
export interface AuthorizationRequestData {
  authorization: { id: string; amount: number; currency: string; type: string; merchant: AuthorizationMerchant };
  card: EventCard;
}

/**
 * What the partner is asked about a tokenization (docs/tokens.md, "Your decision endpoint and
 * `tokenization.request`"): the tokenization (the processor's id, the `_id` the token will have,
 * the wallet, the device and the network's verdict) and the card as events carry it. Never the
 * card's number, the CVV, the PIN or the token's number.
 */
export interface TokenizationRequestData {
  tokenization: {
    id: string;
    tokenId: string;
    walletProvider: WalletProvider;
    tokenRequestorId: string;
    device: TokenDevice;
    networkVerdict: { decision: 'approve' | 'require_verification' | 'decline'; riskScore?: number; reasons?: string[] };
  };
  card: EventCard;
}

/** What the partner answered about a tokenization, or what applied instead (`default`: the decision's rules take it from there). */
export type TokenizationPartnerDecision =
  | { kind: 'answered'; decision: 'approve' | 'decline' | 'require_verification'; declineReason?: string; latencyMs: number }
  | { kind: 'default'; reason: 'timeout' | 'error' | 'disabled' | 'overloaded'; latencyMs: number; error?: PartnerCallError }
  | { kind: 'none' };

/** What {@link askPartner} uses. */
export interface PartnerEndpointDeps {
  endpoints: AuthorizationEndpointStore;
  /**
   * The gateway's guard and transport of partner URLs (gateway/outbound): the URL is checked at
   * each call, and the connection goes only to the address vetted, checked again once connected.
   */
  outbound: Outbound;
  calls: PartnerCallState;
  log?: Logger;
}

/** The body sent: an `authorization.request`, in the envelope of partner events. */
export interface AuthorizationRequestEnvelope {
  id: string;
  type: 'authorization.request';
  createdAt: string;
  partnerId: string;
  data: AuthorizationRequestData;
}

/** The id of one request to the partner: `areq_` and an object id (a new one per call). */
export function newAuthorizationRequestId(): string {
  return `areq_${newObjectId()}`;
}

/**
 * Whether a partner with this endpoint (or none) is asked about a request of `type`: an endpoint
 * enrolled for the type (`requestTypes`), enabled or disabled by an operator (its default decision
 * then applies); one the partner disabled itself is not enrolled.
 */
export function enrolled(target: AuthorizationEndpointTarget | undefined, type: EndpointRequestType = 'authorization.request'): target is AuthorizationEndpointTarget {
  return target !== undefined && target.requestTypes.includes(type) && !(target.status === 'disabled' && target.disabledBy !== 'operator');
}

/**
 * Asks the partner's decision endpoint about one authorization. Never throws for the partner's
 * behaviour, and answers within `budgetMs` of the call's start plus the endpoint's lookup: a
 * database failure of that lookup throws (the caller's database error).
 *
 * - no endpoint, or the partner disabled it: `{kind: 'none'}`;
 * - an operator disabled it (admin API): its default decision, reason `disabled`;
 * - the partner's cap of calls in flight in this process is reached: its default, `overloaded`, at once;
 * - otherwise one signed POST; a 2xx `{approved: true}` or `{approved: false, declineReason?}` is
 *   `answered`; a timeout (min(timeoutMs, what is left of `budgetMs`)) is `timeout`; a connection
 *   failure, a non-2xx, a redirect (not followed), an answer of another shape or over 4 KiB, a URL
 *   the target guard now refuses or a secret that cannot be read is `error`.
 *
 * @example
 * const decision = await askPartner(services.authorizations, { partnerId, request: { authorization, card }, budgetMs: 1500 });
 */
export async function askPartner(
  deps: PartnerEndpointDeps,
  input: { partnerId: string; request: AuthorizationRequestData; budgetMs: number; target?: AuthorizationEndpointTarget }
): Promise<PartnerDecision> {
  const asked = await askEndpoint(deps, {
    partnerId: input.partnerId,
    budgetMs: input.budgetMs,
    target: input.target,
    type: 'authorization.request',
    id: newAuthorizationRequestId(),
    data: { authorization: input.request.authorization, card: input.request.card },
    parse: (text) => {
      const parsed = parseAnswer(text);
      return parsed.kind === 'answer' ? { kind: 'answer', answer: parsed } : { kind: 'error', error: parsed.kind === 'error' ? parsed.error : 'invalid_answer' };
    },
  });
  if (asked.kind === 'none') return asked;
  const decision: PartnerDecision =
    asked.kind === 'answered'
      ? { kind: 'answered', approved: asked.answer.approved, ...(asked.answer.declineReason === undefined ? {} : { declineReason: asked.answer.declineReason }), latencyMs: asked.latencyMs }
      : { kind: 'default', reason: asked.reason, approved: asked.target.defaultDecision === 'approve', latencyMs: asked.latencyMs, ...(asked.error === undefined ? {} : { error: asked.error }) };
  // A default is logged once per decision by the authorization's answer, as the partner's fault and
  // rate-limited per partner (gateway/authorizations/partner-faults.ts); the health counts it here.
  deps.calls.record(input.partnerId, decision);
  return decision;
}

type CallOutcome = { kind: 'answer'; approved: boolean; declineReason?: string } | { kind: 'timeout' } | { kind: 'error'; error: PartnerCallError };

/** What asking the endpoint came to, before the request type's own rules read it. */
type EndpointOutcome<A> =
  | { kind: 'none' }
  | { kind: 'answered'; answer: A; latencyMs: number; target: AuthorizationEndpointTarget }
  | { kind: 'default'; reason: 'timeout' | 'error' | 'disabled' | 'overloaded'; error?: PartnerCallError; latencyMs: number; target: AuthorizationEndpointTarget };

/**
 * The steps every request type shares: the endpoint (read unless the caller read it already);
 * `none` when it is not enrolled for `type`; `default` at once when an operator disabled it or the
 * partner's cap of calls in flight in this process is reached; else one signed POST within
 * min(the endpoint's `timeoutMs`, what is left of `budgetMs` since this call began), its answer read
 * by `parse`. The latency is the POST's.
 */
async function askEndpoint<A>(
  deps: PartnerEndpointDeps,
  input: {
    partnerId: string;
    budgetMs: number;
    target?: AuthorizationEndpointTarget;
    type: EndpointRequestType;
    id: string;
    data: unknown;
    parse: (text: string) => { kind: 'answer'; answer: A } | { kind: 'error'; error: PartnerCallError };
  }
): Promise<EndpointOutcome<A>> {
  const started = process.hrtime.bigint();
  const since = (from: bigint) => Number((process.hrtime.bigint() - from) / 1_000_000n);
  const target = input.target ?? (await deps.endpoints.target(input.partnerId));
  if (!enrolled(target, input.type)) return { kind: 'none' };
  if (target.status === 'disabled') return { kind: 'default', reason: 'disabled', latencyMs: 0, target };
  if (!deps.calls.acquire(input.partnerId)) return { kind: 'default', reason: 'overloaded', latencyMs: 0, target };
  try {
    const callStarted = process.hrtime.bigint();
    const envelope = { id: input.id, type: input.type, createdAt: new Date().toISOString(), partnerId: input.partnerId, data: input.data };
    const sent = await sendSigned(deps, target, input.partnerId, envelope, Math.min(target.timeoutMs, input.budgetMs - since(started)), input.parse);
    const latencyMs = since(callStarted);
    if (sent.kind === 'answer') return { kind: 'answered', answer: sent.answer, latencyMs, target };
    return sent.kind === 'timeout' ? { kind: 'default', reason: 'timeout', latencyMs, target } : { kind: 'default', reason: 'error', error: sent.error, latencyMs, target };
  } finally {
    deps.calls.release(input.partnerId);
  }
}

/** What one signed call came to: the parsed answer, or why there is none. */
type SentOutcome<A> = { kind: 'answer'; answer: A } | { kind: 'timeout' } | { kind: 'error'; error: PartnerCallError };

/**
 * One signed POST of `envelope` to the endpoint, within `timeoutMs`: the URL guard at the call, the
 * secrets opened (never sent unsigned), the answer read under the decision's cap and given to
 * `parse` (a 2xx only). Never throws for the partner's behaviour.
 */
async function sendSigned<A>(
  deps: PartnerEndpointDeps,
  target: AuthorizationEndpointTarget,
  partnerId: string,
  envelope: { id: string; type: EndpointRequestType; createdAt: string; partnerId: string; data: unknown },
  timeoutMs: number,
  parse: (text: string) => { kind: 'answer'; answer: A } | { kind: 'error'; error: PartnerCallError }
): Promise<SentOutcome<A>> {
  if (timeoutMs <= 0) return { kind: 'timeout' };
  let secrets: string[];
  try {
    secrets = deps.endpoints.openSecrets(target);
  } catch (err) {
    if (!(err instanceof SecretUnavailableError)) throw err;
    // Never sent unsigned, nor signed with fewer secrets than the partner may hold.
    deps.log?.error({ partnerId, endpointId: target.id, secretId: err.secretId, keyId: err.keyId, reason: err.reason }, 'partner decision endpoint not asked: a signing secret cannot be read');
    return { kind: 'error', error: 'secret_unavailable' };
  }
  // The guard at each call (its DNS lookup counts in the timeout): https to public addresses
  // (sandbox mode, WEBHOOKS_ALLOW_PRIVATE: http and loopback too), never this gateway's own listeners.
  const deadline = Date.now() + timeoutMs;
  const checked = await checkWithin(deps.outbound, target.url, timeoutMs);
  if (checked === 'timeout') return { kind: 'timeout' };
  if (!checked.ok) return { kind: 'error', error: 'target_refused' };
  // Signed with every live secret; `webhook-id` is the request's id. A kept-alive connection the
  // partner's server had closed is retried once by the transport, within the same deadline.
  const result = await deps.outbound.send(checked, {
    rules: AUTHORIZATION_DECISION,
    id: envelope.id,
    body: JSON.stringify(envelope),
    secrets,
    headers: { 'Partner-Gateway-Event-Id': envelope.id, 'Partner-Gateway-Event-Type': envelope.type },
    timeoutMs: Math.max(1, deadline - Date.now()),
  });
  return sentOutcome(result, parse);
}

/** What the transport's result means for the decision: a 2xx answer of the documented shape, or why not. */
function sentOutcome<A>(result: PostResult, parse: (text: string) => { kind: 'answer'; answer: A } | { kind: 'error'; error: PartnerCallError }): SentOutcome<A> {
  if (result.kind === 'failed') return result.error === 'timeout' ? { kind: 'timeout' } : { kind: 'error', error: result.error };
  if (result.status >= 300 && result.status < 400) return { kind: 'error', error: 'redirect' };
  if (result.status < 200 || result.status >= 300) return { kind: 'error', error: 'http_status' };
  if (result.kind === 'too_large') return { kind: 'error', error: 'answer_too_large' };
  return parse(result.body.toString('utf8'));
}

/** `{approved: true}` or `{approved: false, declineReason?}` (other members are ignored); anything else is invalid. */
export function parseAnswer(text: string): CallOutcome {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { kind: 'error', error: 'invalid_answer' };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { kind: 'error', error: 'invalid_answer' };
  const { approved, declineReason } = answer as { approved?: unknown; declineReason?: unknown };
  if (typeof approved !== 'boolean') return { kind: 'error', error: 'invalid_answer' };
  if (approved) return { kind: 'answer', approved: true };
  if (declineReason === undefined || declineReason === null) return { kind: 'answer', approved: false };
  if (typeof declineReason !== 'string' || declineReason.length > MAX_DECLINE_REASON_LENGTH) return { kind: 'error', error: 'invalid_answer' };
  return { kind: 'answer', approved: false, declineReason };
}

/** The id of one tokenization request to the partner: `treq_` and an object id (a new one per call). */
export function newTokenizationRequestId(): string {
  return `treq_${newObjectId()}`;
}

/**
 * `{decision: "approve" | "decline" | "require_verification", declineReason?}` (other members are
 * ignored; `declineReason` at most 200 characters, read with a decline only); anything else,
 * including an authorization's `{approved}`, is invalid.
 */
export function parseTokenizationAnswer(text: string): { kind: 'answer'; answer: { decision: 'approve' | 'decline' | 'require_verification'; declineReason?: string } } | { kind: 'error'; error: PartnerCallError } {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { kind: 'error', error: 'invalid_answer' };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { kind: 'error', error: 'invalid_answer' };
  const { decision, declineReason } = answer as { decision?: unknown; declineReason?: unknown };
  if (decision !== 'approve' && decision !== 'decline' && decision !== 'require_verification') return { kind: 'error', error: 'invalid_answer' };
  if (decision !== 'decline' || declineReason === undefined || declineReason === null) return { kind: 'answer', answer: { decision } };
  if (typeof declineReason !== 'string' || declineReason.length > MAX_DECLINE_REASON_LENGTH) return { kind: 'error', error: 'invalid_answer' };
  return { kind: 'answer', answer: { decision, declineReason } };
}

/**
 * Asks the partner's decision endpoint about one tokenization (`tokenization.request`): the same
 * signing, URL guard, transport, timeout (min(`timeoutMs`, what is left of `budgetMs`)), cap of
 * calls in flight per partner and health as {@link askPartner}. `none` for an endpoint not enrolled
 * for tokenizations (or disabled by its partner); `default` (with its reason) for one an operator
 * disabled, a full cap, a timeout or an unusable answer: the tokenization's rules decide then
 * (gateway/tokens/decision.ts), never the purchases' `defaultDecision`.
 */
export async function askPartnerTokenization(
  deps: PartnerEndpointDeps,
  input: { partnerId: string; request: TokenizationRequestData; budgetMs: number; target?: AuthorizationEndpointTarget }
): Promise<TokenizationPartnerDecision> {
  const asked = await askEndpoint(deps, {
    partnerId: input.partnerId,
    budgetMs: input.budgetMs,
    target: input.target,
    type: 'tokenization.request',
    id: newTokenizationRequestId(),
    data: { tokenization: input.request.tokenization, card: input.request.card },
    parse: parseTokenizationAnswer,
  });
  if (asked.kind === 'none') return asked;
  const decision: TokenizationPartnerDecision =
    asked.kind === 'answered'
      ? { kind: 'answered', ...asked.answer, latencyMs: asked.latencyMs }
      : { kind: 'default', reason: asked.reason, latencyMs: asked.latencyMs, ...(asked.error === undefined ? {} : { error: asked.error }) };
  // The health counts it as a purchase's call: an answer other than decline as approved.
  deps.calls.record(
    input.partnerId,
    decision.kind === 'answered'
      ? { kind: 'answered', approved: decision.decision !== 'decline', latencyMs: decision.latencyMs }
      : { kind: 'default', reason: decision.reason, approved: false, latencyMs: decision.latencyMs, ...(decision.error === undefined ? {} : { error: decision.error }) }
  );
  return decision;
}
