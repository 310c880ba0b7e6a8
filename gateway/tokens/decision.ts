import type { ApplicableSpendControls, SpendControls } from '../authorizations/spend-controls';
import type { WalletProvider } from '../shapes/token';
import type { NetworkVerdict, TokenizationAnswer, TokenizationRequest } from './contract-stub';

/**
 * The tokenization decision itself (docs/tokens.md, "The decision"), with no I/O: the card's state,
 * the wallet controls, the partner's answer (or its absence) and the network's verdict in, a
 * decision out; first match wins. The shell around it (./decide.ts) claims the tokenization id,
 * reads these facts, asks the partner and records what this decides (./record.ts).
 */

export type TokenizationOutcome = 'approve' | 'require_verification' | 'decline';

/** The decline codes of the answer (upstreams.md 10.3). */
export const TOKENIZATION_DECLINE_REASONS = ['card_inactive', 'card_locked', 'wallet_provider_blocked', 'partner_declined', 'network_declined'] as const;
export type TokenizationDeclineReason = (typeof TOKENIZATION_DECLINE_REASONS)[number];

/** Who decided: the step, as the token's history names it (`by`). */
export type TokenizationDecidedBy = 'card_state' | 'spend_controls' | 'partner' | 'partner_default' | 'network';

/** A decision, as recorded (`tokenization_decisions.decision`) and, less its detail, answered. */
export interface TokenizationDecision {
  decision: TokenizationOutcome;
  declineReason?: TokenizationDeclineReason;
  decidedBy: TokenizationDecidedBy;
  /** Which rule decided (`card.status.LOCKED`, `card.blockedWalletProviders`, `partner.timeout`, `network.decline`…). */
  rule?: string;
  partnerLatencyMs?: number;
  /** The partner's own reason for a decline: kept in the audit entry only. */
  partnerReason?: string;
}

/** The card as the decision reads it (none: no card of this gateway has the key). */
export interface TokenizationCard {
  cardKey: string;
  partnerId: string;
  individualId: string | null;
  tenantId: string | null;
  status: string;
  statusCode: string;
}

/** What a decision is taken on, besides the partner's answer. */
export interface TokenizationFacts {
  card: TokenizationCard | undefined;
  /** The partner's setting `tokenizeBeforeActivation` (docs/tokens.md, "Decisions"). */
  tokenizeBeforeActivation: boolean;
  controls: ApplicableSpendControls;
  request: Pick<TokenizationRequest, 'walletProvider' | 'networkVerdict'>;
}

/** What the partner's decision endpoint said about a tokenization (or why it did not say it usably). */
export type TokenizationPartnerOutcome =
  | { kind: 'none' }
  | { kind: 'answered'; decision: TokenizationOutcome; declineReason?: string; latencyMs: number }
  | { kind: 'default'; reason: 'timeout' | 'error' | 'disabled' | 'overloaded'; latencyMs: number; error?: string };

const LOCKED_STATUSES = new Set(['LOCKED', 'TEMP_LOCKED']);

/** The codes after which a card's tokens are deactivated: lost, stolen, closed, fraud, mobile lost (final reports). */
const DEACTIVATING_CODES: ReadonlySet<string> = new Set(['S2', 'S3', 'S4', 'S5', 'S6']);

/** What a card's state means for its tokens: usable, held suspended (an unlock resumes them), or gone. */
export type TokenCourse = 'usable' | 'hold' | 'deactivate';

/**
 * What a card at `statusCode` means for its tokens: ACTIVE (`00`), or a physical card not activated
 * yet (`I1`) when the partner's `tokenizeBeforeActivation` allows it, keeps them usable; a final
 * report (`S2` to `S6`) deactivates them; any other code (`L1`, `T1`, `S1`, `I1` without the
 * setting) holds them suspended until the card is usable again. The one rule of the decision's
 * step 1, the provisioning routes, a partner's resume and the cascade.
 */
export function tokenCourse(statusCode: string, tokenizeBeforeActivation: boolean): TokenCourse {
  if (statusCode === '00' || (statusCode === 'I1' && tokenizeBeforeActivation)) return 'usable';
  return DEACTIVATING_CODES.has(statusCode) ? 'deactivate' : 'hold';
}

/** Whether a card in this state may be tokenized (and provisioned to a wallet): its {@link tokenCourse} is `usable`. */
export function tokenizableCardState(card: { statusCode: string } | undefined, tokenizeBeforeActivation: boolean): boolean {
  return card !== undefined && tokenCourse(card.statusCode, tokenizeBeforeActivation) === 'usable';
}

/** Step 1: the card's state; LOCKED or TEMP_LOCKED decline `card_locked`, anything else not tokenizable (an unknown card too) `card_inactive`. */
export function cardStateTokenization({ card, tokenizeBeforeActivation }: TokenizationFacts): TokenizationDecision | undefined {
  if (tokenizableCardState(card, tokenizeBeforeActivation)) return undefined;
  if (!card) return { decision: 'decline', declineReason: 'card_inactive', decidedBy: 'card_state', rule: 'card.unknown' };
  return { decision: 'decline', declineReason: LOCKED_STATUSES.has(card.status) ? 'card_locked' : 'card_inactive', decidedBy: 'card_state', rule: `card.status.${card.status}` };
}

/**
 * The wallet lists of one scope of spend controls (`allowedWalletProviders`,
 * `blockedWalletProviders`): the list that refuses `wallet`, or undefined.
 *
 * STUB (issue 35, part B): part C adds the two lists to `SpendControls` and `checkWalletControls`
 * to gateway/authorizations/spend-controls.ts; until then they are read here from the stored
 * controls as the plan names them. When C's function lands, {@link walletControlsTokenization}
 * calls it instead.
 */
function walletListCheck(controls: SpendControls, wallet: WalletProvider): string | undefined {
  const lists = controls as SpendControls & { allowedWalletProviders?: string[]; blockedWalletProviders?: string[] };
  if (lists.blockedWalletProviders?.includes(wallet)) return 'blockedWalletProviders';
  if (lists.allowedWalletProviders !== undefined && !lists.allowedWalletProviders.includes(wallet)) return 'allowedWalletProviders';
  return undefined;
}

/** Step 2: the wallet lists of the card's controls, then the partner's default ones: `wallet_provider_blocked`. */
export function walletControlsTokenization({ controls, request }: TokenizationFacts): TokenizationDecision | undefined {
  for (const scope of ['card', 'partner'] as const) {
    const failed = walletListCheck(controls[scope], request.walletProvider);
    if (failed) return { decision: 'decline', declineReason: 'wallet_provider_blocked', decidedBy: 'spend_controls', rule: `${scope}.${failed}` };
  }
  return undefined;
}

/** The steps before the partner's endpoint, in order. */
export const TOKENIZATION_POLICIES: ReadonlyArray<(facts: TokenizationFacts) => TokenizationDecision | undefined> = [cardStateTokenization, walletControlsTokenization];

/** The first refusal of the steps before the partner, or undefined when the card may be tokenized (the partner, or the network, decides). */
export function firstTokenizationRefusal(facts: TokenizationFacts): TokenizationDecision | undefined {
  for (const policy of TOKENIZATION_POLICIES) {
    const decision = policy(facts);
    if (decision) return decision;
  }
  return undefined;
}

/** Step 4: the network's verdict, when no partner endpoint is enrolled for tokenizations. */
export function networkDecision(verdict: Pick<NetworkVerdict, 'decision'>): TokenizationDecision {
  if (verdict.decision === 'decline') return { decision: 'decline', declineReason: 'network_declined', decidedBy: 'network', rule: 'network.decline' };
  return { decision: verdict.decision, decidedBy: 'network', rule: `network.${verdict.decision}` };
}

/**
 * Step 3 (and 4 when the partner is not asked): what the partner's endpoint said, under two rules:
 * the partner's `approve` of a tokenization the network declined is `require_verification` (the
 * network's verdict is never overruled without the cardholder's proof); an endpoint that did not
 * answer usably gives `require_verification`, or `network_declined` when the network declined
 * (`partner_default`: never the purchases' `defaultDecision`).
 */
export function partnerTokenizationDecision(outcome: TokenizationPartnerOutcome | undefined, verdict: Pick<NetworkVerdict, 'decision'>): TokenizationDecision {
  if (outcome === undefined || outcome.kind === 'none') return networkDecision(verdict);
  if (outcome.kind === 'default') {
    const rule = `partner.${outcome.reason}`;
    return verdict.decision === 'decline'
      ? { decision: 'decline', declineReason: 'network_declined', decidedBy: 'partner_default', rule, partnerLatencyMs: outcome.latencyMs }
      : { decision: 'require_verification', decidedBy: 'partner_default', rule, partnerLatencyMs: outcome.latencyMs };
  }
  const latency = { partnerLatencyMs: outcome.latencyMs };
  switch (outcome.decision) {
    case 'approve':
      return verdict.decision === 'decline'
        ? { decision: 'require_verification', decidedBy: 'partner', rule: 'partner.approve_over_network_decline', ...latency }
        : { decision: 'approve', decidedBy: 'partner', ...latency };
    case 'require_verification':
      return { decision: 'require_verification', decidedBy: 'partner', ...latency };
    case 'decline':
      return { decision: 'decline', declineReason: 'partner_declined', decidedBy: 'partner', ...latency, ...(outcome.declineReason ? { partnerReason: outcome.declineReason } : {}) };
  }
}

/** The whole decision on `facts`: the steps in order, then the partner's outcome (undefined: not asked), then the network's verdict. */
export function decideTokenization(facts: TokenizationFacts, partner?: TokenizationPartnerOutcome): TokenizationDecision {
  return firstTokenizationRefusal(facts) ?? partnerTokenizationDecision(partner, facts.request.networkVerdict);
}

/** The answer the processor reads (upstreams.md 10.3): the outcome and, for a decline, its code; nothing else. */
export function answerOf(decision: TokenizationDecision): TokenizationAnswer {
  return decision.decision === 'decline' ? { decision: 'decline', declineReason: decision.declineReason ?? 'card_inactive' } : { decision: decision.decision };
}

/** The token's status a decision makes. */
export function tokenStatusOf(decision: TokenizationOutcome): 'active' | 'pending_verification' | 'declined' {
  return decision === 'approve' ? 'active' : decision === 'require_verification' ? 'pending_verification' : 'declined';
}
