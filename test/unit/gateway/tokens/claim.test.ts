import crypto from 'node:crypto';
import { expect } from 'chai';
import { DecisionTooLate } from '../../../../gateway/authorizations/deadline';
import { AuthorizationEndpointStore } from '../../../../gateway/authorizations/endpoint-store';
import { PartnerCallState, type PartnerEndpointDeps } from '../../../../gateway/authorizations/partner-endpoint';
import { Database } from '../../../../gateway/db/database';
import { GatewayError } from '../../../../gateway/errors';
import { createLogger } from '../../../../gateway/logging/logger';
import { createOutbound } from '../../../../gateway/outbound';
import { claimTokenization } from '../../../../gateway/tokens/claim';
import type { TokenizationRequest } from '../../../../gateway/tokens/contract-stub';
import { decideTokenizationRequest, type AskTokenization, type TokenizationProgress } from '../../../../gateway/tokens/decide';
import { createTokenizationDecider, type TokenizationDecider } from '../../../../gateway/tokens/decider';
import { recordTokenization } from '../../../../gateway/tokens/record';
import { findToken } from '../../../../gateway/tokens/store';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { recordSecret } from '../../../support/secrets';
import { runDatabaseUrl } from '../../../support/test-database';
import { TestReceiver } from '../../../support/webhook-receiver';
import { addCard, auditOf, eventsOf, newPartner, newReference, type PartnerFixture } from './fixtures';

/**
 * The tokenization decision's exactly-once (docs/plans/issue-35.md, "Exactly once") on real
 * PostgreSQL, with the partner's endpoint a real local HTTP receiver: repeats across two
 * "instances" (two pools, two deciders) give one decision, one call, one token, one token.created;
 * a dead holder's claim is taken over and its late recording fenced out; a recording whose COMMIT
 * comes past its commit-by instant on the database's clock rolls back whole.
 */
describe('unit: the tokenization claim, decision and recording (gateway/tokens/claim.ts, decide.ts, record.ts)', function () {
  this.timeout(60_000);
  const silent = createLogger({ level: 'silent' });
  let services: InProcessServices;
  let second: Database;
  let partner: PartnerFixture;
  let endpointsA: PartnerEndpointDeps;
  let endpointsB: PartnerEndpointDeps;
  let instanceA: TokenizationDecider;
  let instanceB: TokenizationDecider;
  let receiver: TestReceiver;

  const request = (cardId: string, over: Partial<TokenizationRequest> = {}): TokenizationRequest => ({
    id: `tkz_${crypto.randomBytes(12).toString('hex')}`,
    tokenReference: newReference(),
    cardId,
    walletProvider: 'apple_pay',
    tokenRequestorId: '50110030273',
    last4: '4821',
    tokenExpDate: '11/2029',
    device: { type: 'phone', name: 'Sandbox device', ipCountry: 'DE' },
    networkVerdict: { decision: 'approve', riskScore: 2, reasons: [] },
    at: new Date().toISOString(),
    ...over,
  });
  const answerBy = () => Date.now() + 2000 - 300;
  const tokensOfTokenization = async (id: string) => (await services.db.query<{ id: string; status: string }>('SELECT id, status FROM tokens WHERE tokenization_id = $1', [id])).rows;
  const decisionRow = async (id: string) =>
    (await services.db.query<{ state: string; token_id: string; decision: any }>('SELECT state, token_id, decision FROM tokenization_decisions WHERE tokenization_id = $1', [id])).rows[0];

  before(async function () {
    services = await openServices();
    second = new Database(runDatabaseUrl(), { max: 4, log: silent });
    partner = await newPartner(services, 'claim');
    receiver = await new TestReceiver().up();
    const deps = (db: Database): PartnerEndpointDeps => ({
      endpoints: new AuthorizationEndpointStore(db, { secretOverlapSeconds: 86400 }),
      outbound: createOutbound({ allowPrivate: true }),
      calls: new PartnerCallState(),
      log: silent,
    });
    endpointsA = deps(services.db);
    endpointsB = deps(second);
    const created = (await endpointsA.endpoints.create(partner.partnerId, { url: receiver.url, timeoutMs: 1000, requestTypes: ['authorization.request', 'tokenization.request'] }))!;
    recordSecret('webhookSecret', created.secret);
    expect(created.requestTypes).to.deep.equal(['authorization.request', 'tokenization.request']);
    instanceA = createTokenizationDecider({ db: services.db, authorizationEndpoints: endpointsA }, { tokenizationDeadlineMs: 2000 }, silent);
    instanceB = createTokenizationDecider({ db: second, authorizationEndpoints: endpointsB }, { tokenizationDeadlineMs: 2000 }, silent);
  });
  after(async function () {
    await receiver?.close();
    endpointsA?.outbound.close();
    endpointsB?.outbound.close();
    await second?.close();
    await services?.close();
  });

  it('a tokenization request repeated 10 times at once across two instances: one decision, one partner call, one token, one token.created, every answer the same', async function () {
    const cardKey = await addCard(services.db, partner);
    receiver.received.length = 0;
    // The partner takes a while, so that the repeats arrive while the first holds the claim.
    receiver.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ decision: 'approve' }), delayMs: 150 };
    const req = request(cardKey);
    const progresses: TokenizationProgress[] = [];
    const decisions = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        const progress: TokenizationProgress = {};
        progresses.push(progress);
        return (i % 2 === 0 ? instanceA : instanceB).decide(req, answerBy(), progress);
      })
    );
    expect(decisions.map((d) => d.decision)).to.deep.equal(Array(10).fill('approve'));
    expect(decisions.every((d) => d.decidedBy === 'partner')).to.equal(true);
    expect(progresses.filter((p) => p.recorded)).to.have.length(1);
    expect(new Set(progresses.map((p) => p.tokenId)).size).to.equal(1);
    expect(receiver.received, 'one call to the partner').to.have.length(1);
    const sent = receiver.received[0]!;
    expect(sent.headers['partner-gateway-event-type']).to.equal('tokenization.request');
    expect(sent.event).to.deep.include({ type: 'tokenization.request', partnerId: partner.partnerId });
    expect(sent.event.id).to.match(/^treq_[0-9a-f]{24}$/);
    expect(sent.event.data.tokenization).to.deep.equal({
      id: req.id,
      tokenId: progresses[0]!.tokenId,
      walletProvider: 'apple_pay',
      tokenRequestorId: '50110030273',
      device: req.device,
      networkVerdict: req.networkVerdict,
    });
    expect(sent.event.data.card).to.include({ cardKey, status: 'ACTIVE', cardMask: '5355 70** **** 0001' });
    expect(sent.raw).to.not.match(/"(pan|cardNumber|cvv|pin|tokenReference|last4)"/i);
    const tokens = await tokensOfTokenization(req.id);
    expect(tokens).to.deep.equal([{ id: progresses[0]!.tokenId, status: 'active' }]);
    expect((await decisionRow(req.id))!.state).to.equal('decided');
    const created = (await eventsOf(services.db, partner.partnerId, 'token.created')).filter((e) => e.data.token._id === tokens[0]!.id);
    expect(created).to.have.length(1);
    expect(created[0]!.data.token.history).to.deep.equal([{ status: 'active', at: created[0]!.data.token.history[0].at, by: 'partner' }]);
    // The event's token is the stored one, to the millisecond (the recording states the row's times itself).
    expect(created[0]!.data.token).to.deep.equal(await findToken(services.db, tokens[0]!.id));
    const audit = (await auditOf(services.db, partner.partnerId, 'card.token.decided')).filter((a) => a.details.tokenizationId === req.id);
    expect(audit).to.have.length(1);
    expect(audit[0]!.details).to.include({ decision: 'approve', decidedBy: 'partner', tokenId: tokens[0]!.id, networkVerdict: 'approve' });
    // A later repeat (the processor's retry) answers the same from the decision row, asking nobody.
    expect(await instanceB.decide(req, answerBy(), {})).to.deep.include({ decision: 'approve', decidedBy: 'partner' });
    expect(receiver.received).to.have.length(1);
  });

  it("the partner's decline is recorded as a declined token with its reason in the audit entry only; require_verification makes a pending token and the code's event, the code nowhere else", async function () {
    const cardKey = await addCard(services.db, partner);
    receiver.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ decision: 'decline', declineReason: 'not this device' }) };
    const declined = request(cardKey);
    expect(await instanceA.decide(declined, answerBy(), {})).to.deep.include({ decision: 'decline', declineReason: 'partner_declined', decidedBy: 'partner' });
    const [declinedToken] = await tokensOfTokenization(declined.id);
    expect(declinedToken!.status).to.equal('declined');
    const token = (await findToken(services.db, declinedToken!.id))!;
    expect(token.history[0]).to.deep.include({ status: 'declined', by: 'partner', reason: 'partner_declined' });
    expect(JSON.stringify(token)).to.not.contain('not this device');
    expect((await auditOf(services.db, partner.partnerId, 'card.token.decided')).find((a) => a.details.tokenizationId === declined.id)!.details).to.include({ partnerReason: 'not this device' });

    receiver.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ decision: 'require_verification' }) };
    const verify = request(cardKey);
    expect(await instanceA.decide(verify, answerBy(), {})).to.deep.include({ decision: 'require_verification', decidedBy: 'partner' });
    const [pending] = await tokensOfTokenization(verify.id);
    expect(pending!.status).to.equal('pending_verification');
    const codes = (await eventsOf(services.db, partner.partnerId, 'token.verification_code')).filter((e) => e.data.token._id === pending!.id);
    expect(codes).to.have.length(1);
    // token.created first, then the code, both with the stored token.
    const both = (await eventsOf(services.db, partner.partnerId)).filter((e) => e.data?.token?._id === pending!.id).map((e) => e.type);
    expect(both).to.deep.equal(['token.created', 'token.verification_code']);
    expect(codes[0]!.data.token).to.deep.equal(await findToken(services.db, pending!.id));
    const { code, expiresAt } = codes[0]!.data;
    expect(code).to.match(/^[0-9]{6}$/);
    expect(Date.parse(expiresAt) - Date.now()).to.be.within(9 * 60_000, 10 * 60_000 + 1000);
    const row = (await services.db.query<{ row: string }>('SELECT t::text AS row FROM tokens t WHERE id = $1', [pending!.id])).rows[0]!.row;
    expect(row).to.not.contain(code);
    const held = (await services.db.query<{ verification: Record<string, unknown> }>('SELECT verification FROM tokens WHERE id = $1', [pending!.id])).rows[0]!.verification;
    expect(held).to.have.all.keys('hash', 'expiresAt', 'attemptsLeft');
    expect(held).to.include({ attemptsLeft: 3, expiresAt });
    expect(held.hash).to.match(/^[0-9a-f]{64}$/);
    const stored = (await services.db.query<{ row: string }>("SELECT string_agg(a::text, ' ') AS row FROM audit_log a WHERE partner_id = $1", [partner.partnerId])).rows[0]!.row;
    expect(stored).to.not.contain(`"${code}"`);
    expect(JSON.stringify(await decisionRow(verify.id))).to.not.contain(code);
  });

  it('an endpoint not enrolled for tokenizations is not asked: the network decides; a disabled or timing-out one gives require_verification', async function () {
    const other = await newPartner(services, 'not-enrolled');
    const r = await new TestReceiver().up();
    try {
      r.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ approved: true }) };
      recordSecret('webhookSecret', (await endpointsA.endpoints.create(other.partnerId, { url: r.url }))!.secret);
      const cardKey = await addCard(services.db, other);
      expect(await instanceA.decide(request(cardKey, { networkVerdict: { decision: 'require_verification' } }), answerBy(), {})).to.deep.include({ decision: 'require_verification', decidedBy: 'network' });
      expect(r.received, 'not asked').to.have.length(0);
      // Enrolled, it answers an authorization's shape: not a usable tokenization answer.
      await endpointsA.endpoints.update(other.partnerId, { requestTypes: ['authorization.request', 'tokenization.request'] }, 'partner');
      const progress: TokenizationProgress = {};
      expect(await instanceA.decide(request(cardKey), answerBy(), progress)).to.deep.include({ decision: 'require_verification', decidedBy: 'partner_default', rule: 'partner.error' });
      expect(progress.partnerFault).to.include({ partnerId: other.partnerId, reason: 'error', error: 'invalid_answer' });
      expect(r.received).to.have.length(1);
      r.behaviour = { kind: 'hang' };
      expect(await instanceA.decide(request(cardKey, { networkVerdict: { decision: 'decline' } }), answerBy(), {})).to.deep.include({ decision: 'decline', declineReason: 'network_declined', decidedBy: 'partner_default', rule: 'partner.timeout' });
    } finally {
      await r.close();
    }
  });

  it('the card\'s state and the wallet controls are read with the claim: a locked card and a blocked wallet are declined without asking the partner', async function () {
    receiver.received.length = 0;
    const locked = await addCard(services.db, partner, 'LOCKED', 'L1');
    expect(await instanceA.decide(request(locked), answerBy(), {})).to.deep.include({ decision: 'decline', declineReason: 'card_locked', decidedBy: 'card_state' });
    const notActivated = await addCard(services.db, partner, 'LOCKED', 'I1', 'physical');
    expect(await instanceA.decide(request(notActivated, { walletProvider: 'google_pay' }), answerBy(), {})).to.deep.include({ decision: 'decline', declineReason: 'card_locked' });
    const blocked = await addCard(services.db, partner);
    await services.db.query('INSERT INTO spend_controls (partner_id, card_key, controls) VALUES ($1, $2, $3::jsonb)', [partner.partnerId, blocked, JSON.stringify({ blockedWalletProviders: ['merchant'] })]);
    expect(await instanceA.decide(request(blocked, { walletProvider: 'merchant' }), answerBy(), {})).to.deep.include({ decision: 'decline', declineReason: 'wallet_provider_blocked', rule: 'card.blockedWalletProviders' });
    expect(await instanceA.decide(request('CK_NOBODY_HOLDS'), answerBy(), {})).to.deep.include({ decision: 'decline', declineReason: 'card_inactive', rule: 'card.unknown' });
    expect(receiver.received).to.have.length(0);
  });

  it('a lock committed while the partner is asked turns an approval into card_locked at the recording (the card read again under its share lock)', async function () {
    const cardKey = await addCard(services.db, partner);
    const ask: AskTokenization = async () => {
      await services.db.query("UPDATE cards SET status = 'LOCKED', status_code = 'L1' WHERE card_key = $1", [cardKey]);
      return { kind: 'answered', decision: 'approve', latencyMs: 1 };
    };
    const req = request(cardKey);
    // The real claim's read finds the endpoint; this ask stands in for the partner and locks the card meanwhile.
    const decision = await decideTokenizationRequest({ db: services.db, ask }, req, answerBy());
    expect(decision).to.deep.include({ decision: 'decline', declineReason: 'card_locked', decidedBy: 'card_state' });
    expect(await tokensOfTokenization(req.id)).to.deep.equal([{ id: (await decisionRow(req.id))!.token_id, status: 'declined' }]);
  });

  it("a dead holder's claim is taken over after its lease (the token id kept), and the old holder's late recording is fenced out", async function () {
    const cardKey = await addCard(services.db, partner);
    const req = request(cardKey);
    // The holder's answer was due 400 ms ago: its lease (due + 300 ms) is over.
    const dead = await claimTokenization(services.db, req, Date.now() - 400, Date.now);
    expect(dead).to.have.property('token');
    receiver.behaviour = { kind: 'respond', status: 200, body: JSON.stringify({ decision: 'approve' }) };
    const progress: TokenizationProgress = {};
    expect(await instanceB.decide(req, answerBy(), progress)).to.deep.include({ decision: 'approve' });
    expect(progress.tokenId).to.equal((dead as { tokenId: string }).tokenId);
    let refused: unknown;
    try {
      await recordTokenization({ db: services.db, now: Date.now }, dead as Exclude<typeof dead, { decided: unknown }>, req, { decision: 'decline', declineReason: 'partner_declined', decidedBy: 'partner' }, answerBy());
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(DecisionTooLate);
    expect((refused as DecisionTooLate).byDatabase).to.equal(true);
    expect(await tokensOfTokenization(req.id)).to.deep.equal([{ id: progress.tokenId, status: 'active' }]);
    expect((await decisionRow(req.id))!.decision).to.include({ decision: 'approve' });
  });

  it("a recording whose COMMIT comes past its commit-by instant on the database's clock rolls back whole: no decision, no token, no event", async function () {
    const cardKey = await addCard(services.db, partner);
    const req = request(cardKey);
    // The gateway's clock 3 s behind the database's: it believes 1.7 s are left; the database's
    // clock says the commit-by instant has passed, which only the deferred check at COMMIT sees.
    const behind = () => Date.now() - 3000;
    const ask: AskTokenization = async () => ({ kind: 'none' });
    const events = (await eventsOf(services.db, partner.partnerId)).length;
    let refused: unknown;
    try {
      await decideTokenizationRequest({ db: services.db, ask, now: behind }, req, behind() + 1700);
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(DecisionTooLate);
    expect((refused as DecisionTooLate).byDatabase).to.equal(true);
    expect((await decisionRow(req.id))!.state, 'the claim stays undecided').to.equal('deciding');
    expect(await tokensOfTokenization(req.id)).to.deep.equal([]);
    expect(await eventsOf(services.db, partner.partnerId)).to.have.length(events);
  });

  it("a repeat naming another card than the id's decision is refused (400); while that claim is deciding, 503", async function () {
    const cardKey = await addCard(services.db, partner);
    const otherCard = await addCard(services.db, partner);
    const req = request(cardKey);
    const holding = await claimTokenization(services.db, req, answerBy(), Date.now);
    expect(holding).to.have.property('token');
    let early: unknown;
    try {
      await instanceA.decide({ ...req, cardId: otherCard }, answerBy(), {});
    } catch (err) {
      early = err;
    }
    expect(early).to.be.instanceOf(DecisionTooLate);
    await services.db.query("UPDATE tokenization_decisions SET state = 'decided', decision = '{\"decision\":\"approve\",\"decidedBy\":\"network\"}', commit_by = now() + interval '1 minute' WHERE tokenization_id = $1", [req.id]);
    let late: unknown;
    try {
      await instanceA.decide({ ...req, cardId: otherCard }, answerBy(), {});
    } catch (err) {
      late = err;
    }
    expect(late).to.be.instanceOf(GatewayError);
    expect((late as GatewayError).code).to.equal('validation_failed');
    expect((late as GatewayError).invalidParams?.[0]?.name).to.equal('tokenization.id');
  });
});
