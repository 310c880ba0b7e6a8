import { expect } from 'chai';
import {
  DECIDED_BY,
  decide,
  partnerFaultOf,
  velocityDecline,
  type AuthorizationDecision,
  type AuthorizationRequest,
  type DecisionCard,
  type DecisionFacts,
  type DecisionToken,
  type PartnerOutcome,
} from '../../../../gateway/authorizations/decision';
import type { ApplicableSpendControls, SpendControls } from '../../../../gateway/authorizations/spend-controls';
import { DECLINE_REASON_CODES } from '../../../../gateway/upstreams/partner-transaction';

/**
 * The authorization decision as a pure function (docs/authorizations.md, "Decision order";
 * docs/spend-controls.md): card state, controls, the velocity counts read before the partner is
 * asked and the partner's answer in, a decision out. No database: every decline reason the gateway
 * decides and every `decidedBy`, each in one row of the table.
 */
describe('unit: authorizations/decision, the decision table', function () {
  const card = (status = 'ACTIVE'): DecisionCard => ({ cardKey: 'CK1', partnerId: 'p1', individualId: 'i1', tenantId: null, status });
  const request: AuthorizationRequest = {
    id: 'auth_1',
    transactionId: 'tx1',
    cardId: 'CK1',
    amount: 50,
    currency: 'EUR',
    type: 'PURCHASE',
    merchant: { name: 'Shop', mcc: '5411', city: 'Berlin', country: 'DE' },
    at: '2026-01-01T12:00:00.000Z',
  };
  const controls = (cardControls: SpendControls = {}, partner: SpendControls = {}): ApplicableSpendControls => ({ partner, card: cardControls });
  const tokenRequest: AuthorizationRequest = { ...request, token: { reference: 'tref_1', walletProvider: 'google_pay' } };
  /** An ACTIVE card read through its token in `status`. */
  const tokenCard = (status: DecisionToken['status'], suspendedBy: DecisionToken['suspendedBy'] = status === 'suspended' ? 'partner' : null): DecisionCard => ({
    ...card(),
    statusCode: '00',
    tokenizeBeforeActivation: false,
    token: { id: 'tok_0123456789abcdef01234567', status, suspendedBy, walletProvider: 'google_pay' },
  });
  const counts = (c1h: number, a1h: number) => ({ c_1h: String(c1h), a_1h: String(a1h) });
  const answered = (approved: boolean, declineReason?: string): PartnerOutcome => ({ kind: 'answered', approved, latencyMs: 40, ...(declineReason ? { declineReason } : {}) });
  const fallback = (reason: 'timeout' | 'error' | 'disabled' | 'overloaded', approved: boolean, error?: string): PartnerOutcome => ({ kind: 'default', reason, approved, latencyMs: 900, ...(error ? { error } : {}) });

  const cases: { description: string; facts: DecisionFacts; partner?: PartnerOutcome; expected: AuthorizationDecision }[] = [
    // 1. The card's own state.
    { description: 'an unknown card', facts: { card: undefined, controls: controls(), request }, expected: { approved: false, declineReason: 'card_inactive', decidedBy: 'card_state', rule: 'card.unknown' } },
    { description: 'a LOCKED card', facts: { card: card('LOCKED'), controls: controls(), request }, expected: { approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' } },
    { description: 'a TEMP_LOCKED card', facts: { card: card('TEMP_LOCKED'), controls: controls(), request }, expected: { approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.TEMP_LOCKED' } },
    { description: 'a CLOSED card', facts: { card: card('CLOSED'), controls: controls(), request }, expected: { approved: false, declineReason: 'card_inactive', decidedBy: 'card_state', rule: 'card.status.CLOSED' } },
    { description: 'a STOLEN card', facts: { card: card('STOLEN'), controls: controls(), request }, expected: { approved: false, declineReason: 'card_inactive', decidedBy: 'card_state', rule: 'card.status.STOLEN' } },
    {
      description: 'a locked card with a blocked MCC and a declining partner: the card state first',
      facts: { card: card('LOCKED'), controls: controls({ blockedMccs: ['5411'] }), request },
      partner: answered(false),
      expected: { approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' },
    },
    // 2. The spend controls.
    { description: "the card's blocked MCC", facts: { card: card(), controls: controls({ blockedMccs: ['5411'] }), request }, expected: { approved: false, declineReason: 'mcc_blocked', decidedBy: 'spend_controls', rule: 'card.blockedMccs' } },
    { description: "the partner's allow list of MCCs", facts: { card: card(), controls: controls({}, { allowedMccs: ['5812'] }), request }, expected: { approved: false, declineReason: 'mcc_blocked', decidedBy: 'spend_controls', rule: 'partner.allowedMccs' } },
    { description: 'a blocked country', facts: { card: card(), controls: controls({ blockedCountries: ['DE'] }), request }, expected: { approved: false, declineReason: 'country_blocked', decidedBy: 'spend_controls', rule: 'card.blockedCountries' } },
    { description: 'above the maximum per transaction', facts: { card: card(), controls: controls({ maxAmountPerTransaction: 49.99 }), request }, expected: { approved: false, declineReason: 'amount_exceeded', decidedBy: 'spend_controls', rule: 'card.maxAmountPerTransaction' } },
    { description: 'at the maximum per transaction: passes', facts: { card: card(), controls: controls({ maxAmountPerTransaction: 50 }), request }, expected: { approved: true, decidedBy: 'approved' } },
    {
      description: 'the velocity count read before asking the partner: over a maxCount',
      facts: { card: card(), controls: controls({ velocity: [{ window: '1h', maxCount: 3 }] }), request, velocity: counts(3, 10) },
      partner: answered(true),
      expected: { approved: false, declineReason: 'velocity_exceeded', decidedBy: 'spend_controls', rule: 'card.velocity[0].maxCount' },
    },
    {
      description: "the velocity amount read before asking the partner (as JSON text): over the partner's maxAmount",
      facts: { card: card(), controls: controls({}, { velocity: [{ window: '1h', maxAmount: 100 }] }), request, velocity: JSON.stringify(counts(1, 50.01)) },
      partner: answered(true),
      expected: { approved: false, declineReason: 'velocity_exceeded', decidedBy: 'spend_controls', rule: 'partner.velocity[0].maxAmount' },
    },
    {
      description: 'velocity rules without counts read (no partner to ask: the recording gate counts)',
      facts: { card: card(), controls: controls({ velocity: [{ window: '1h', maxCount: 1 }] }), request },
      expected: { approved: true, decidedBy: 'approved' },
    },
    {
      description: 'velocity counts within the rules: the partner decides',
      facts: { card: card(), controls: controls({ velocity: [{ window: '1h', maxCount: 3, maxAmount: 100 }] }), request, velocity: counts(2, 50) },
      partner: answered(true),
      expected: { approved: true, decidedBy: 'partner', partnerLatencyMs: 40 },
    },
    // 3. The partner's decision endpoint.
    { description: 'the partner approves', facts: { card: card(), controls: controls(), request }, partner: answered(true), expected: { approved: true, decidedBy: 'partner', partnerLatencyMs: 40 } },
    {
      description: 'the partner declines with its own reason (kept for the audit entry)',
      facts: { card: card(), controls: controls(), request },
      partner: answered(false, 'insufficient_funds'),
      expected: { approved: false, declineReason: 'partner_declined', decidedBy: 'partner', partnerLatencyMs: 40, partnerReason: 'insufficient_funds' },
    },
    { description: 'the partner declines without a reason', facts: { card: card(), controls: controls(), request }, partner: answered(false), expected: { approved: false, declineReason: 'partner_declined', decidedBy: 'partner', partnerLatencyMs: 40 } },
    {
      description: 'a timeout, default decline',
      facts: { card: card(), controls: controls(), request },
      partner: fallback('timeout', false),
      expected: { approved: false, declineReason: 'partner_timeout', decidedBy: 'partner_default', rule: 'partner.timeout', partnerLatencyMs: 900 },
    },
    {
      description: 'an error, default decline',
      facts: { card: card(), controls: controls(), request },
      partner: fallback('error', false, 'http_status'),
      expected: { approved: false, declineReason: 'partner_error', decidedBy: 'partner_default', rule: 'partner.error', partnerLatencyMs: 900 },
    },
    {
      description: 'its cap of calls in flight, default decline',
      facts: { card: card(), controls: controls(), request },
      partner: fallback('overloaded', false),
      expected: { approved: false, declineReason: 'partner_error', decidedBy: 'partner_default', rule: 'partner.overloaded', partnerLatencyMs: 900 },
    },
    {
      description: 'disabled by an operator, default decline',
      facts: { card: card(), controls: controls(), request },
      partner: fallback('disabled', false),
      expected: { approved: false, declineReason: 'partner_error', decidedBy: 'partner_default', rule: 'partner.disabled', partnerLatencyMs: 900 },
    },
    { description: 'a timeout, default approve', facts: { card: card(), controls: controls(), request }, partner: fallback('timeout', true), expected: { approved: true, decidedBy: 'partner_default', rule: 'partner.timeout', partnerLatencyMs: 900 } },
    // A purchase with a network token (docs/tokens.md, "Transactions and spend controls"): the card read through the token, then the token's state.
    { description: 'a token purchase with an active token', facts: { card: tokenCard('active'), controls: controls(), request: tokenRequest }, expected: { approved: true, decidedBy: 'approved' } },
    {
      description: 'a token purchase with a token the gateway does not hold',
      facts: { card: { ...card(), token: null }, controls: controls(), request: tokenRequest },
      expected: { approved: false, declineReason: 'token_inactive', decidedBy: 'token_state', rule: 'token.unknown' },
    },
    {
      description: 'a token the partner suspended',
      facts: { card: tokenCard('suspended', 'partner'), controls: controls(), request: tokenRequest },
      expected: { approved: false, declineReason: 'token_inactive', decidedBy: 'token_state', rule: 'token.status.suspended.partner' },
    },
    {
      description: 'a token the network suspended',
      facts: { card: tokenCard('suspended', null), controls: controls(), request: tokenRequest },
      expected: { approved: false, declineReason: 'token_inactive', decidedBy: 'token_state', rule: 'token.status.suspended.network' },
    },
    ...(['deactivated', 'declined', 'requested', 'pending_verification'] as const).map((status) => ({
      description: `a ${status} token`,
      facts: { card: tokenCard(status), controls: controls(), request: tokenRequest },
      expected: { approved: false, declineReason: 'token_inactive', decidedBy: 'token_state', rule: `token.status.${status}` } as AuthorizationDecision,
    })),
    {
      description: "a token suspended only by the card's state, on an ACTIVE card (unlocked, the processor's resumption on its way): the card judges it",
      facts: { card: tokenCard('suspended', 'card_state'), controls: controls(), request: tokenRequest },
      expected: { approved: true, decidedBy: 'approved' },
    },
    {
      description: "an active token of a card locked a moment ago (the cascade's suspension not applied yet): the card's state first",
      facts: { card: { ...tokenCard('active'), status: 'LOCKED', statusCode: 'L1' }, controls: controls(), request: tokenRequest },
      expected: { approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' },
    },
    {
      description: 'a token of a physical card not activated yet (I1), with tokenizeBeforeActivation: as if ACTIVE',
      facts: { card: { ...tokenCard('active'), status: 'LOCKED', statusCode: 'I1', tokenizeBeforeActivation: true }, controls: controls(), request: tokenRequest },
      expected: { approved: true, decidedBy: 'approved' },
    },
    {
      description: 'a token of an I1 card without the setting: card_locked',
      facts: { card: { ...tokenCard('active'), status: 'LOCKED', statusCode: 'I1', tokenizeBeforeActivation: false }, controls: controls(), request: tokenRequest },
      expected: { approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' },
    },
    {
      description: "the plastic of an I1 card with the setting: still card_locked (the setting is for its tokens' purchases)",
      facts: { card: { ...card('LOCKED'), statusCode: 'I1', tokenizeBeforeActivation: true }, controls: controls(), request },
      expected: { approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' },
    },
    {
      description: "the card's blocked wallet",
      facts: { card: tokenCard('active'), controls: controls({ blockedWalletProviders: ['google_pay'] }), request: tokenRequest },
      expected: { approved: false, declineReason: 'wallet_provider_blocked', decidedBy: 'spend_controls', rule: 'card.blockedWalletProviders' },
    },
    {
      description: "the partner's allow list of wallets, before a blocked MCC",
      facts: { card: tokenCard('active'), controls: controls({ blockedMccs: ['5411'] }, { allowedWalletProviders: ['apple_pay'] }), request: tokenRequest },
      expected: { approved: false, declineReason: 'wallet_provider_blocked', decidedBy: 'spend_controls', rule: 'partner.allowedWalletProviders' },
    },
    {
      description: 'a purchase with the card itself passes the wallet lists',
      facts: { card: card(), controls: controls({ allowedWalletProviders: ['apple_pay'], blockedWalletProviders: ['google_pay'] }), request },
      expected: { approved: true, decidedBy: 'approved' },
    },
    // 4. Otherwise approve.
    { description: 'no controls, no endpoint', facts: { card: card(), controls: controls(), request }, expected: { approved: true, decidedBy: 'approved' } },
    { description: 'an endpoint that was not asked (none)', facts: { card: card(), controls: controls(), request }, partner: { kind: 'none' }, expected: { approved: true, decidedBy: 'approved' } },
  ];

  for (const { description, facts, partner, expected } of cases) {
    it(description, function () {
      expect(decide(facts, partner)).to.deep.equal(expected);
    });
  }

  it("an approval the recording's velocity gate refuses becomes velocity_exceeded by the spend controls", function () {
    expect(velocityDecline({ declineReason: 'velocity_exceeded', rule: 'card.velocity[1].maxAmount' })).to.deep.equal({
      approved: false,
      declineReason: 'velocity_exceeded',
      decidedBy: 'spend_controls',
      rule: 'card.velocity[1].maxAmount',
    });
  });

  it('the table covers every decidedBy and every decline reason the gateway decides', function () {
    const decided = [...cases.map((c) => decide(c.facts, c.partner)), velocityDecline({ declineReason: 'velocity_exceeded', rule: 'card.velocity[0].maxCount' })];
    expect([...new Set(decided.map((d) => d.decidedBy))].sort()).to.deep.equal([...DECIDED_BY].sort());
    // The processor's own reasons (insufficient funds, expiry, its limits, fraud screening, stand-in) are never the gateway's decision.
    const processorOnly = ['insufficient_funds', 'card_expired', 'limit_exceeded', 'suspected_fraud', 'do_not_honor', 'stand_in'];
    const gatewayReasons = DECLINE_REASON_CODES.filter((code) => !processorOnly.includes(code));
    expect([...new Set(decided.flatMap((d) => (d.declineReason ? [d.declineReason] : [])))].sort()).to.deep.equal([...gatewayReasons].sort());
  });

  it("the partner's fault: a default it caused, not an operator's disable nor the gateway's own secret", function () {
    expect(partnerFaultOf('p1', fallback('timeout', false))).to.deep.equal({ partnerId: 'p1', reason: 'timeout', latencyMs: 900 });
    expect(partnerFaultOf('p1', fallback('error', true, 'connection'))).to.deep.equal({ partnerId: 'p1', reason: 'error', latencyMs: 900, error: 'connection' });
    expect(partnerFaultOf('p1', fallback('overloaded', false))).to.deep.equal({ partnerId: 'p1', reason: 'overloaded', latencyMs: 900 });
    expect(partnerFaultOf('p1', fallback('disabled', false))).to.equal(undefined);
    expect(partnerFaultOf('p1', fallback('error', false, 'secret_unavailable'))).to.equal(undefined);
    expect(partnerFaultOf('p1', answered(false))).to.equal(undefined);
    expect(partnerFaultOf('p1', { kind: 'none' })).to.equal(undefined);
  });
});
