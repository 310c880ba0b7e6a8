import { expect } from 'chai';
import type { ApplicableSpendControls } from '../../../../gateway/authorizations/spend-controls';
import {
  answerOf,
  decideTokenization,
  networkDecision,
  partnerTokenizationDecision,
  tokenizableCardState,
  type TokenizationCard,
  type TokenizationFacts,
  type TokenizationPartnerOutcome,
} from '../../../../gateway/tokens/decision';

/**
 * The tokenization decision's order (docs/tokens.md, "The decision"), pure: the card's state, the
 * wallet controls, the partner's endpoint (with its two rules), the network's verdict. One row per
 * case; first match wins.
 */
describe('unit: the tokenization decision (gateway/tokens/decision.ts)', function () {
  const card = (status: string, statusCode: string): TokenizationCard => ({ cardKey: 'CK1', partnerId: 'p'.repeat(24), individualId: null, tenantId: null, status, statusCode });
  const ACTIVE = card('ACTIVE', '00');
  const NONE: ApplicableSpendControls = { partner: {}, card: {} };
  const facts = (over: Partial<TokenizationFacts> & { verdict?: 'approve' | 'require_verification' | 'decline'; wallet?: 'apple_pay' | 'google_pay' | 'samsung_pay' | 'merchant' } = {}): TokenizationFacts => ({
    card: 'card' in over ? over.card : ACTIVE,
    tokenizeBeforeActivation: over.tokenizeBeforeActivation ?? false,
    controls: over.controls ?? NONE,
    request: { walletProvider: over.wallet ?? 'apple_pay', networkVerdict: { decision: over.verdict ?? 'approve' } },
  });
  const answered = (decision: 'approve' | 'decline' | 'require_verification', declineReason?: string): TokenizationPartnerOutcome => ({ kind: 'answered', decision, latencyMs: 7, ...(declineReason ? { declineReason } : {}) });
  const fault = (reason: 'timeout' | 'error' | 'disabled' | 'overloaded'): TokenizationPartnerOutcome => ({ kind: 'default', reason, latencyMs: 1500 });
  const walletControls = (scope: 'card' | 'partner', lists: Record<string, string[]>): ApplicableSpendControls => ({ partner: {}, card: {}, [scope]: lists }) as ApplicableSpendControls;

  const rows: Array<{ name: string; facts: TokenizationFacts; partner?: TokenizationPartnerOutcome; expected: Record<string, unknown> }> = [
    // Step 1: the card's state.
    { name: 'an unknown card', facts: facts({ card: undefined }), partner: answered('approve'), expected: { decision: 'decline', declineReason: 'card_inactive', decidedBy: 'card_state', rule: 'card.unknown' } },
    { name: 'a LOCKED card (L1)', facts: facts({ card: card('LOCKED', 'L1') }), partner: answered('approve'), expected: { decision: 'decline', declineReason: 'card_locked', decidedBy: 'card_state' } },
    { name: 'a TEMP_LOCKED card', facts: facts({ card: card('TEMP_LOCKED', 'T1') }), expected: { decision: 'decline', declineReason: 'card_locked', decidedBy: 'card_state' } },
    { name: 'a RESTRICTED card', facts: facts({ card: card('RESTRICTED', 'S1') }), expected: { decision: 'decline', declineReason: 'card_inactive', decidedBy: 'card_state', rule: 'card.status.RESTRICTED' } },
    { name: 'a CLOSED card', facts: facts({ card: card('CLOSED', 'S4') }), expected: { decision: 'decline', declineReason: 'card_inactive', decidedBy: 'card_state' } },
    { name: 'a physical card not yet activated (I1) without the setting', facts: facts({ card: card('LOCKED', 'I1') }), expected: { decision: 'decline', declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' } },
    { name: 'an I1 card with tokenizeBeforeActivation', facts: facts({ card: card('LOCKED', 'I1'), tokenizeBeforeActivation: true }), expected: { decision: 'approve', decidedBy: 'network' } },
    { name: 'a LOCKED card (L1) even with tokenizeBeforeActivation', facts: facts({ card: card('LOCKED', 'L1'), tokenizeBeforeActivation: true }), expected: { decision: 'decline', declineReason: 'card_locked' } },
    // Step 2: the wallet controls, card before partner; the card's state first.
    { name: "the card's blocked wallet", facts: facts({ controls: walletControls('card', { blockedWalletProviders: ['apple_pay'] }) }), partner: answered('approve'), expected: { decision: 'decline', declineReason: 'wallet_provider_blocked', decidedBy: 'spend_controls', rule: 'card.blockedWalletProviders' } },
    { name: "the partner's allow list without the wallet", facts: facts({ wallet: 'merchant', controls: walletControls('partner', { allowedWalletProviders: ['apple_pay', 'google_pay'] }) }), expected: { decision: 'decline', declineReason: 'wallet_provider_blocked', rule: 'partner.allowedWalletProviders' } },
    { name: 'an allow list with the wallet', facts: facts({ wallet: 'google_pay', controls: walletControls('partner', { allowedWalletProviders: ['google_pay'] }) }), expected: { decision: 'approve', decidedBy: 'network' } },
    { name: 'a locked card with its wallet blocked: the card first', facts: facts({ card: card('LOCKED', 'L1'), controls: walletControls('card', { blockedWalletProviders: ['apple_pay'] }) }), expected: { decidedBy: 'card_state' } },
    // Step 3: the partner's endpoint.
    { name: 'the partner approves', facts: facts(), partner: answered('approve'), expected: { decision: 'approve', decidedBy: 'partner', partnerLatencyMs: 7 } },
    { name: 'the partner asks for verification', facts: facts(), partner: answered('require_verification'), expected: { decision: 'require_verification', decidedBy: 'partner' } },
    { name: 'the partner declines, with its reason kept aside', facts: facts(), partner: answered('decline', 'new device, high risk'), expected: { decision: 'decline', declineReason: 'partner_declined', decidedBy: 'partner', partnerReason: 'new device, high risk' } },
    { name: "the partner's approve of a network decline", facts: facts({ verdict: 'decline' }), partner: answered('approve'), expected: { decision: 'require_verification', decidedBy: 'partner' } },
    { name: "the partner's decline of a network approve", facts: facts({ verdict: 'approve' }), partner: answered('decline'), expected: { decision: 'decline', declineReason: 'partner_declined' } },
    { name: 'the endpoint timed out', facts: facts(), partner: fault('timeout'), expected: { decision: 'require_verification', decidedBy: 'partner_default', rule: 'partner.timeout' } },
    { name: 'the endpoint answered unusably, the network declined', facts: facts({ verdict: 'decline' }), partner: fault('error'), expected: { decision: 'decline', declineReason: 'network_declined', decidedBy: 'partner_default', rule: 'partner.error' } },
    { name: 'the endpoint disabled by an operator', facts: facts(), partner: fault('disabled'), expected: { decision: 'require_verification', decidedBy: 'partner_default', rule: 'partner.disabled' } },
    { name: 'the partner over its cap of calls in flight', facts: facts({ verdict: 'require_verification' }), partner: fault('overloaded'), expected: { decision: 'require_verification', decidedBy: 'partner_default' } },
    // Step 4: the network's verdict, no endpoint enrolled.
    { name: 'no endpoint, the network approves', facts: facts(), expected: { decision: 'approve', decidedBy: 'network' } },
    { name: 'no endpoint, the network asks for verification', facts: facts({ verdict: 'require_verification' }), partner: { kind: 'none' }, expected: { decision: 'require_verification', decidedBy: 'network' } },
    { name: 'no endpoint, the network declines', facts: facts({ verdict: 'decline' }), expected: { decision: 'decline', declineReason: 'network_declined', decidedBy: 'network' } },
  ];
  for (const row of rows) {
    it(`${row.name} → ${JSON.stringify(row.expected)}`, function () {
      expect(decideTokenization(row.facts, row.partner)).to.deep.include(row.expected);
    });
  }

  it('tokenizableCardState: ACTIVE, or I1 with the setting; nothing else, and never an unknown card', function () {
    expect(tokenizableCardState({ statusCode: '00' }, false)).to.equal(true);
    expect(tokenizableCardState({ statusCode: 'I1' }, false)).to.equal(false);
    expect(tokenizableCardState({ statusCode: 'I1' }, true)).to.equal(true);
    for (const [status, code] of [['LOCKED', 'L1'], ['TEMP_LOCKED', 'T1'], ['RESTRICTED', 'S1'], ['CLOSED', 'S4'], ['STOLEN', 'S3']]) {
      expect(tokenizableCardState({ statusCode: code }, true), `${status} ${code}`).to.equal(false);
    }
    expect(tokenizableCardState(undefined, true)).to.equal(false);
  });

  it('the answer carries the outcome and a decline code only: never who decided, the rule, the latency or the partner\'s own reason', function () {
    const declined = partnerTokenizationDecision(answered('decline', 'my own words'), { decision: 'approve' });
    expect(answerOf(declined)).to.deep.equal({ decision: 'decline', declineReason: 'partner_declined' });
    expect(answerOf(networkDecision({ decision: 'approve' }))).to.deep.equal({ decision: 'approve' });
    expect(answerOf(partnerTokenizationDecision(fault('timeout'), { decision: 'approve' }))).to.deep.equal({ decision: 'require_verification' });
  });
});
