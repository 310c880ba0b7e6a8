import { systemClock, type Clock } from '../authorizations/deadline';
import type { AuthorizationEndpointServices } from '../authorizations/index';
import { askPartnerTokenization } from '../authorizations/partner-endpoint';
import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import { recordPartnerDecision } from '../metrics';
import type { Settings } from '../settings';
import type { TokenizationRequest, VerificationAnswer, VerificationRequest } from './contract-stub';
import { decideTokenizationRequest, type AskTokenization, type TokenizationProgress } from './decide';
import type { TokenizationDecision } from './decision';
import { verifyAttempt } from './verification';

/**
 * The tokenization decider of one gateway process: the decision's parts composed once (the
 * partner's decision endpoint as its step 3, the clock), and what the notifications listener calls
 * per tokenization request and per verification request (docs/upstreams.md 10.3 and 10.4).
 */
export interface TokenizationDecider {
  /** `TOKENIZATION_DEADLINE_MS`: the processor's deadline from the request's arrival. */
  deadlineMs: number;
  decide(request: TokenizationRequest, answerBy: number, progress: TokenizationProgress): Promise<TokenizationDecision>;
  /** One verification attempt, counted once per attempt id; `recorded`: this request counted it. */
  verify(request: VerificationRequest, answerBy: number): Promise<{ answer: VerificationAnswer; recorded: boolean }>;
}

/**
 * The partner's decision endpoint asked about a tokenization (`tokenization.request`), with what
 * the claim statement read: the tokenization (never a card number), the token id it will have,
 * the card as events carry it. Counts the call's result and latency with the purchases' calls.
 */
export function tokenizationAsk(endpoints: AuthorizationEndpointServices): AskTokenization {
  return async ({ partnerId, target, request, tokenId, card, budgetMs }) => {
    const outcome = await askPartnerTokenization(endpoints, {
      partnerId,
      target,
      budgetMs,
      request: {
        tokenization: {
          id: request.id,
          tokenId,
          walletProvider: request.walletProvider,
          tokenRequestorId: request.tokenRequestorId,
          device: request.device,
          networkVerdict: request.networkVerdict,
        },
        card,
      },
    });
    if (outcome.kind !== 'none') recordPartnerDecision(outcome.kind === 'answered' ? 'answered' : outcome.reason, outcome.latencyMs / 1000);
    return outcome;
  };
}

/**
 * The gateway's tokenization decider (docs/tokens.md, "The decision"): claim, decide, record, once
 * per tokenization id across instances; verification attempts once per attempt id.
 *
 * @example const tokenizations = createTokenizationDecider(services, settings, log); // → createNotificationsApp(deps, secrets, authorizations, tokenizations)
 */
export function createTokenizationDecider(
  services: { db: Database; authorizationEndpoints: AuthorizationEndpointServices },
  settings: Pick<Settings, 'tokenizationDeadlineMs'>,
  _log: Logger,
  options: { now?: Clock } = {}
): TokenizationDecider {
  const now = options.now ?? systemClock;
  const deps = { db: services.db, ask: tokenizationAsk(services.authorizationEndpoints), now };
  return {
    deadlineMs: settings.tokenizationDeadlineMs,
    decide: (request, answerBy, progress) => decideTokenizationRequest(deps, request, answerBy, progress),
    verify: (request, answerBy) => verifyAttempt({ db: services.db, now }, request, answerBy),
  };
}
