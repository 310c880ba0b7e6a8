import { RECORDING_RESERVE_MS, systemClock, type Clock } from '../authorizations/deadline';
import type { PartnerFault } from '../authorizations/decision';
import type { AuthorizationEndpointTarget } from '../authorizations/endpoint-store';
import type { Card } from '../cards/card-store';
import type { Database } from '../db/database';
import { claimTokenization, type TokenizationClaim } from './claim';
import type { TokenizationRequest } from './contract-stub';
import { firstTokenizationRefusal, partnerTokenizationDecision, type TokenizationDecision, type TokenizationFacts, type TokenizationPartnerOutcome } from './decision';
import { recordTokenization } from './record';

/**
 * Tokenization decisions (docs/tokens.md, "The decision"): the processor asks, for each wallet or
 * merchant that wants a token of a card, whether to make it; the gateway answers before the
 * processor's deadline, first match wins: the card's state, the wallet controls, the partner's
 * decision endpoint when enrolled for tokenizations, the network's verdict. Exactly once per
 * tokenization id across instances. This is the shell: it claims (./claim.ts), decides
 * (./decision.ts, pure) and records (./record.ts); ./decider.ts wires it.
 */

/** The partner's endpoint as the decision asks it: within `budgetMs`, for the token `tokenId`, about the card as events carry it. */
export type AskTokenization = (input: {
  partnerId: string;
  target: AuthorizationEndpointTarget;
  request: TokenizationRequest;
  tokenId: string;
  card: Card;
  budgetMs: number;
}) => Promise<TokenizationPartnerOutcome>;

export interface TokenizationDecisionDeps {
  db: Database;
  /** Asks the partner's endpoint; undefined: never asked (the network's verdict decides). */
  ask?: AskTokenization;
  now?: Clock;
}

/** What the caller learns of a decision while it is taken. */
export interface TokenizationProgress {
  /** The partner's endpoint did not answer usably: the caller logs it as the partner's fault. */
  partnerFault?: PartnerFault;
  /** This request's own transaction recorded the decision (not a repeat's read of another's). */
  recorded?: boolean;
  /** The token's `_id`. */
  tokenId?: string;
}

/**
 * Decides one tokenization by `answerBy` (epoch ms) or throws: `DecisionTooLate` when the budget ran
 * out (the caller answers 503 at once, so the processor's stand-in applies), a `validation_failed`
 * GatewayError for an id another card's decision holds, a database error as it is. The partner is
 * asked with no database transaction open, within `answerBy` less the recording's reserve.
 */
export async function decideTokenizationRequest(deps: TokenizationDecisionDeps, request: TokenizationRequest, answerBy: number, progress: TokenizationProgress = {}): Promise<TokenizationDecision> {
  const now = deps.now ?? systemClock;
  const claim = await claimTokenization(deps.db, request, answerBy, now);
  if ('decided' in claim) {
    progress.tokenId = claim.tokenId;
    return claim.decided;
  }
  progress.tokenId = claim.tokenId;
  const decision = await decideOn(deps, now, claim, request, answerBy, progress);
  const recorded = await recordTokenization({ db: deps.db, now }, claim, request, decision, answerBy);
  progress.recorded = recorded.recorded;
  progress.tokenId = recorded.tokenId;
  return recorded.decision;
}

async function decideOn(deps: TokenizationDecisionDeps, now: Clock, claim: TokenizationClaim, request: TokenizationRequest, answerBy: number, progress: TokenizationProgress): Promise<TokenizationDecision> {
  const facts: TokenizationFacts = { card: claim.card, tokenizeBeforeActivation: claim.tokenizeBeforeActivation, controls: claim.controls, request };
  const refused = firstTokenizationRefusal(facts);
  if (refused) return refused;
  let outcome: TokenizationPartnerOutcome | undefined;
  if (deps.ask && claim.card && claim.endpoint && claim.eventCard) {
    const budgetMs = Math.max(0, answerBy - now() - RECORDING_RESERVE_MS);
    outcome = await deps.ask({ partnerId: claim.card.partnerId, target: claim.endpoint, request, tokenId: claim.tokenId, card: claim.eventCard, budgetMs });
    if (outcome.kind === 'default' && outcome.reason !== 'disabled' && outcome.error !== 'secret_unavailable') {
      progress.partnerFault = { partnerId: claim.card.partnerId, reason: outcome.reason, latencyMs: outcome.latencyMs, ...(outcome.error === undefined ? {} : { error: outcome.error }) };
    }
  }
  return partnerTokenizationDecision(outcome, request.networkVerdict);
}
