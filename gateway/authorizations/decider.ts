import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import { recordPartnerDecision } from '../metrics';
import type { Settings } from '../settings';
import { newEndpointHints } from './card-hints';
import { systemClock, type Clock } from './deadline';
import { decideAuthorization, type DecisionChecks, type DecisionDeps, type DecisionProgress } from './decide';
import { AUTHORIZATION_POLICIES, type AuthorizationDecision, type AuthorizationRequest } from './decision';
import type { AuthorizationEndpointServices } from './index';
import { askPartner, enrolled } from './partner-endpoint';

/**
 * The authorization decider of one gateway process: the decision's parts composed once (the
 * policies of ./decision.ts, the partner's decision endpoint as a check, the card hints, the
 * clock), and what the notifications listener calls per request. A new decision kind composes its
 * own policies and checks here, beside this one.
 */

/** What the notifications listener takes: the deadline, and the decision of one request. */
export interface AuthorizationDecider {
  /** `AUTHORIZATION_DEADLINE_MS`: the processor's deadline from the request's arrival. */
  deadlineMs: number;
  decide(request: AuthorizationRequest, answerBy: number, progress: DecisionProgress): Promise<AuthorizationDecision>;
}

/**
 * The partner's decision endpoint as a check (docs/authorization-endpoint.md), as the decision's
 * claim statement read it with the card: no query here. Undefined for a partner not enrolled (no
 * endpoint, or one the partner disabled); otherwise it asks within the budget, or gives the
 * endpoint's default, and counts the answer's kind and latency.
 */
export function partnerEndpointCheck(endpoints: AuthorizationEndpointServices): NonNullable<DecisionChecks['partnerEndpoint']> {
  return async (card, { target, card: eventCard }) => {
    if (!enrolled(target)) return undefined;
    return {
      ask: async (request, budgetMs) => {
        const { id, amount, currency, type, merchant } = request;
        // The card as events carry it (no card number, CVV or PIN).
        const outcome = await askPartner(endpoints, {
          partnerId: card.partnerId,
          request: { authorization: { id, amount, currency, type, merchant }, card: eventCard },
          budgetMs,
          target,
        });
        if (outcome.kind !== 'none') recordPartnerDecision(outcome.kind === 'answered' ? 'answered' : outcome.reason, outcome.latencyMs / 1000);
        return outcome;
      },
    };
  };
}

/**
 * The gateway's authorization decider (docs/authorizations.md): the card's state and the spend
 * controls, then the partner's decision endpoint, recorded once per authorization id; the last
 * 10,000 cards' hints kept per process. `now`: the clock of budgets and caches (the real one).
 *
 * @example const authorizations = createAuthorizationDecider(services, settings, log); // → createNotificationsApp(deps, secrets, authorizations)
 */
export function createAuthorizationDecider(
  services: { db: Database; authorizationEndpoints: AuthorizationEndpointServices },
  settings: Pick<Settings, 'authorizationDeadlineMs'>,
  log: Logger,
  options: { now?: Clock } = {}
): AuthorizationDecider {
  const now = options.now ?? systemClock;
  const deps: DecisionDeps = {
    db: services.db,
    log,
    policies: AUTHORIZATION_POLICIES,
    checks: { partnerEndpoint: partnerEndpointCheck(services.authorizationEndpoints) },
    endpointHints: newEndpointHints({ now }),
    now,
  };
  return { deadlineMs: settings.authorizationDeadlineMs, decide: (request, answerBy, progress) => decideAuthorization(deps, request, answerBy, progress) };
}
