import type { AuthorizationRequestBody } from '../../contracts/upstreams';
import type { DeclineReason } from '../upstreams/partner-transaction';
import { GatewayError } from '../errors';
import { WALLET_PROVIDERS, type TokenStatus, type TokenSuspendedBy, type WalletProvider } from '../shapes/token';
import { checkStaticControls, checkVelocityCounts, type ApplicableSpendControls, type VelocityPurchase } from './spend-controls';

/**
 * The authorization decision itself (docs/authorizations.md, "Decision order"), with no I/O: the
 * card's state, its spend controls, the velocity counts read before the partner is asked and what
 * the partner said in, a decision out. The shell around it (./decide.ts) claims the authorization
 * id, reads these facts, asks the partner and records what this decides.
 */

/**
 * The processor's authorization request (docs/upstreams.md, 6.10): `id` is what a repeat carries
 * again, `transactionId` the id its notifications carry; `token` only for a purchase made with a
 * network token (10.8), whose card the decision reads through it (its card in the gateway, which a
 * replacement moved at once).
 */
export type AuthorizationRequest = AuthorizationRequestBody['authorization'];

/** Who decided: the partner view's `authorization.decidedBy`, in the decision order. */
export const DECIDED_BY = ['card_state', 'token_state', 'spend_controls', 'partner', 'partner_default', 'approved'] as const;
export type DecidedBy = (typeof DECIDED_BY)[number];

/** A decision, as answered to the processor and recorded on the transaction. */
export interface AuthorizationDecision {
  approved: boolean;
  declineReason?: DeclineReason;
  decidedBy: DecidedBy;
  /** Which control or rule decided (`card.blockedMccs`, `velocity.1h.maxCount`, the card status). */
  rule?: string;
  partnerLatencyMs?: number;
  /** The partner's own reason for a decline: kept in the audit entry only. */
  partnerReason?: string;
}

/** The card as a decision reads it. */
export interface DecisionCard {
  cardKey: string;
  partnerId: string;
  individualId: string | null;
  tenantId: string | null;
  status: string;
  /**
   * For a purchase with a token only (read through the token): the card's status code, the
   * partner's `tokenizeBeforeActivation`, and the token as the gateway holds it (null: the gateway
   * holds no token of that reference).
   */
  statusCode?: string;
  tokenizeBeforeActivation?: boolean;
  token?: DecisionToken | null;
}

/** A token as a purchase's decision reads it (table `tokens`). */
export interface DecisionToken {
  /** The gateway's id (`tok_…`): the transaction's `tokenId`. */
  id: string;
  status: TokenStatus;
  suspendedBy: TokenSuspendedBy | null;
  walletProvider: WalletProvider;
}

/** A refusal by a control: its reason and the rule that refused. */
export interface Refusal {
  declineReason: DeclineReason;
  rule: string;
}

/** What the partner's decision endpoint said (or the endpoint's default when it did not). */
export type PartnerOutcome =
  | { kind: 'none' }
  | { kind: 'answered'; approved: boolean; declineReason?: string; latencyMs: number }
  | { kind: 'default'; reason: 'timeout' | 'error' | 'disabled' | 'overloaded'; approved: boolean; latencyMs: number; error?: string };

/** What a decision is taken on, besides the partner's answer. */
export interface DecisionFacts {
  /** Undefined: no card of this gateway has the key. */
  card: DecisionCard | undefined;
  /** The partner's default controls and the card's own (`{}` for none). */
  controls: ApplicableSpendControls;
  request: AuthorizationRequest;
  /**
   * The velocity counts read before the partner is asked (spend-controls.ts, `checkVelocityCounts`'
   * `counted`); undefined when none were read: without a partner to ask, velocity is counted only
   * by the recording's gate, which turns an approval over a limit into {@link velocityDecline}.
   */
  velocity?: Record<string, string | number> | string | null;
}

/**
 * One step of a decision order: a decision, or undefined to leave it to the next step. A new
 * decision kind (tokenization, authentication) is its own list of policies over its own facts.
 */
export type DecisionPolicy = (facts: DecisionFacts) => AuthorizationDecision | undefined;

const LOCKED_STATUSES = new Set(['LOCKED', 'TEMP_LOCKED']);

/**
 * The card's own state: an ACTIVE card passes; a locked one is `card_locked`; any other (closed,
 * restricted, lost…) `card_inactive`. A purchase with a token of a physical card not activated yet
 * (`I1`) passes when the partner's `tokenizeBeforeActivation` is on (the phone pays before the
 * plastic arrives; the plastic's own purchases stay `card_locked`).
 */
export function cardStateRefusal(card: DecisionCard | undefined): Refusal | undefined {
  if (!card) return { declineReason: 'card_inactive', rule: 'card.unknown' };
  if (card.status === 'ACTIVE') return undefined;
  if (card.token !== undefined && card.statusCode === 'I1' && card.tokenizeBeforeActivation === true) return undefined;
  return { declineReason: LOCKED_STATUSES.has(card.status) ? 'card_locked' : 'card_inactive', rule: `card.status.${card.status}` };
}

/** What the velocity rules count a purchase on this card as. */
export function velocityPurchase(card: DecisionCard, request: AuthorizationRequest): VelocityPurchase {
  return { partnerId: card.partnerId, cardKey: card.cardKey, amount: request.amount, at: new Date(request.at) };
}

/** Step 1: the card's state (an unknown card is refused here). */
export const cardStatePolicy: DecisionPolicy = ({ card }) => {
  const refusal = cardStateRefusal(card);
  return refusal && { approved: false, decidedBy: 'card_state', ...refusal };
};

/**
 * Step 1 for a purchase with a token, after the card's state: the token must be usable. An `active`
 * one passes, and so does one suspended only by the card's state (`suspendedBy: card_state`: the card,
 * which passed, judges it alone, whatever the processor still holds); any other (unknown here,
 * `requested`, `pending_verification`, `deactivated`, `declined`, suspended by the partner or the
 * network) is `token_inactive`, decided by `token_state`.
 */
export const tokenStatePolicy: DecisionPolicy = ({ card, request }) => {
  if (request.token === undefined || !card) return undefined;
  const { token } = card;
  if (!token) return { approved: false, decidedBy: 'token_state', declineReason: 'token_inactive', rule: 'token.unknown' };
  if (token.status === 'active' || (token.status === 'suspended' && token.suspendedBy === 'card_state')) return undefined;
  const by = token.status === 'suspended' ? `.${token.suspendedBy ?? 'network'}` : '';
  return { approved: false, decidedBy: 'token_state', declineReason: 'token_inactive', rule: `token.status.${token.status}${by}` };
};

/** Step 2: the spend controls that need no history (a token's wallet, merchant category, country, amount). */
export const staticControlsPolicy: DecisionPolicy = ({ controls, request }) => {
  const refusal = checkStaticControls(controls, {
    amount: request.amount,
    mcc: request.merchant.mcc,
    country: request.merchant.country,
    ...(request.token === undefined ? {} : { walletProvider: request.token.walletProvider }),
  });
  return refusal && { approved: false, decidedBy: 'spend_controls', ...refusal };
};

/** Step 2, velocity, on the counts read before the partner is asked (a purchase over a limit is not sent to the partner). */
export const velocityPolicy: DecisionPolicy = ({ card, controls, request, velocity }) => {
  if (velocity === undefined || !card) return undefined;
  const refusal = checkVelocityCounts(controls, velocity, velocityPurchase(card, request));
  return refusal && velocityDecline(refusal);
};

/** The authorization's decision order before the partner's endpoint (docs/authorizations.md): first match wins. */
export const AUTHORIZATION_POLICIES: readonly DecisionPolicy[] = [cardStatePolicy, tokenStatePolicy, staticControlsPolicy, velocityPolicy];

/** The first decision of `policies` on `facts`; undefined when each passed (the partner, or approval, decides). */
export function firstDecision(facts: DecisionFacts, policies: readonly DecisionPolicy[] = AUTHORIZATION_POLICIES): AuthorizationDecision | undefined {
  for (const policy of policies) {
    const decision = policy(facts);
    if (decision) return decision;
  }
  return undefined;
}

/** The decision once every policy passed: what the partner's endpoint said (or its default), or approved when it was not asked. */
export function partnerDecision(outcome: PartnerOutcome | undefined): AuthorizationDecision {
  if (outcome === undefined) return { approved: true, decidedBy: 'approved' };
  switch (outcome.kind) {
    case 'none':
      return { approved: true, decidedBy: 'approved' };
    case 'answered':
      return outcome.approved
        ? { approved: true, decidedBy: 'partner', partnerLatencyMs: outcome.latencyMs }
        : { approved: false, declineReason: 'partner_declined', decidedBy: 'partner', partnerLatencyMs: outcome.latencyMs, ...(outcome.declineReason ? { partnerReason: outcome.declineReason } : {}) };
    case 'default':
      return outcome.approved
        ? { approved: true, decidedBy: 'partner_default', rule: `partner.${outcome.reason}`, partnerLatencyMs: outcome.latencyMs }
        : {
            approved: false,
            declineReason: outcome.reason === 'timeout' ? 'partner_timeout' : 'partner_error',
            decidedBy: 'partner_default',
            rule: `partner.${outcome.reason}`,
            partnerLatencyMs: outcome.latencyMs,
          };
  }
}

/**
 * The whole decision: the policies in order, then the partner's answer (`partner`: undefined when
 * the card's partner has no enrolled endpoint, or the endpoint was not asked).
 *
 * @example decide({ card, controls: { partner: {}, card: { blockedMccs: ['7995'] } }, request }) // → { approved: false, declineReason: 'mcc_blocked', decidedBy: 'spend_controls', rule: 'card.blockedMccs' }
 */
export function decide(facts: DecisionFacts, partner?: PartnerOutcome, policies: readonly DecisionPolicy[] = AUTHORIZATION_POLICIES): AuthorizationDecision {
  return firstDecision(facts, policies) ?? partnerDecision(partner);
}

/** The decline the recording's velocity gate turns an approval into when a concurrent decision pushed the card over a limit. */
export function velocityDecline(refusal: Refusal): AuthorizationDecision {
  return { approved: false, decidedBy: 'spend_controls', ...refusal };
}

/** A decision's default that the partner's endpoint caused: it did not answer usably (timeout, error, its cap of calls in flight). */
export interface PartnerFault {
  partnerId: string;
  reason: 'timeout' | 'error' | 'overloaded';
  /** With reason `error`: what failed (never the answer's content). */
  error?: string;
  latencyMs: number;
}

/**
 * The partner's fault in `outcome`, if any: a default the endpoint caused, unless an operator
 * disabled the endpoint or the gateway could not read its own signing secret (logged at error where
 * it failed).
 */
export function partnerFaultOf(partnerId: string, outcome: PartnerOutcome): PartnerFault | undefined {
  if (outcome.kind !== 'default' || outcome.reason === 'disabled' || outcome.error === 'secret_unavailable') return undefined;
  return { partnerId, reason: outcome.reason, latencyMs: outcome.latencyMs, ...(outcome.error === undefined ? {} : { error: outcome.error }) };
}

/** The decision as answered and kept: without the partner's own reason (the audit entry keeps it). */
export function answeredOf(decision: AuthorizationDecision): AuthorizationDecision {
  const { partnerReason: _kept, ...answered } = decision;
  return answered;
}

/** The transaction's `authorization` field: how it was decided. */
export function authorizationOf(decision: AuthorizationDecision): { decidedBy: DecidedBy; rule?: string; partnerLatencyMs?: number } {
  return {
    decidedBy: decision.decidedBy,
    ...(decision.rule === undefined ? {} : { rule: decision.rule }),
    ...(decision.partnerLatencyMs === undefined ? {} : { partnerLatencyMs: decision.partnerLatencyMs }),
  };
}

/** 1 to 100 visible ASCII characters: the processor's token reference (docs/upstreams.md 10.1). */
const TOKEN_REFERENCE = /^[\x21-\x7e]{1,100}$/;

/**
 * The authorization request's `authorization.token` (docs/upstreams.md 10.8), checked: absent
 * (undefined) for a purchase with the card itself; else `{reference: 1 to 100 visible ASCII,
 * walletProvider: apple_pay | google_pay | samsung_pay | merchant}` and nothing else. A bad one is
 * 400 `validation_failed` naming `authorization.token`, as the request's other fields are.
 */
export function checkAuthorizationToken(value: unknown): AuthorizationRequest['token'] {
  if (value === undefined) return undefined;
  const invalid = (reason: string) =>
    new GatewayError('validation_failed', `The notification is invalid: authorization.token ${reason}`, { invalidParams: [{ name: 'authorization.token', reason }] });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('must be an object');
  const { reference, walletProvider, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw invalid('must hold reference and walletProvider only');
  if (typeof reference !== 'string' || !TOKEN_REFERENCE.test(reference)) throw invalid('reference must be 1 to 100 visible ASCII characters');
  if (typeof walletProvider !== 'string' || !(WALLET_PROVIDERS as readonly string[]).includes(walletProvider)) throw invalid(`walletProvider must be one of ${WALLET_PROVIDERS.join(', ')}`);
  return { reference, walletProvider: walletProvider as WalletProvider };
}
