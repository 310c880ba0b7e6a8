import crypto from 'node:crypto';
import { expect } from 'chai';
import { createLogger } from '../../../../gateway/logging/logger';
import type { TokenizationRequest } from '../../../../gateway/tokens/contract-stub';
import { createTokenizationDecider, type TokenizationDecider } from '../../../../gateway/tokens/decider';
import { findToken, tokenByReference } from '../../../../gateway/tokens/store';
import { codeHash, judgeAttempt, newVerification, scrubExpiredCodes, verifyAttempt, VERIFICATION_TTL_MS } from '../../../../gateway/tokens/verification';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { addCard, eventsOf, newPartner, newReference, type PartnerFixture } from './fixtures';

/**
 * The verification code (docs/tokens.md, "The verification code"; upstreams.md 10.4) on real
 * PostgreSQL: made by a require_verification decision, delivered in its event only, judged against
 * its keyed hash, 3 attempts, 10 minutes, each attempt id counted once, scrubbed from the event
 * once expired.
 */
describe('unit: verification codes (gateway/tokens/verification.ts)', function () {
  this.timeout(30_000);
  const silent = createLogger({ level: 'silent' });
  let services: InProcessServices;
  let partner: PartnerFixture;
  let decider: TokenizationDecider;
  const answerBy = () => Date.now() + 1700;

  before(async function () {
    services = await openServices();
    partner = await newPartner(services, 'verify');
    // No decision endpoint: the network's require_verification decides.
    decider = createTokenizationDecider({ db: services.db, authorizationEndpoints: services.authorizationEndpoints }, { tokenizationDeadlineMs: 2000 }, silent);
  });
  after(async function () {
    await services?.close();
  });

  /** A token waiting for its code: its reference, id and the code from its event. */
  const pendingToken = async (): Promise<{ reference: string; tokenId: string; code: string; expiresAt: string }> => {
    const cardKey = await addCard(services.db, partner);
    const request: TokenizationRequest = {
      id: `tkz_${crypto.randomBytes(12).toString('hex')}`,
      tokenReference: newReference(),
      cardId: cardKey,
      walletProvider: 'google_pay',
      tokenRequestorId: '50120834693',
      last4: '1881',
      tokenExpDate: '01/2030',
      device: { type: 'watch' },
      networkVerdict: { decision: 'require_verification' },
      at: new Date().toISOString(),
    };
    const progress: { tokenId?: string } = {};
    expect(await decider.decide(request, answerBy(), progress)).to.deep.include({ decision: 'require_verification', decidedBy: 'network' });
    const event = (await eventsOf(services.db, partner.partnerId, 'token.verification_code')).find((e) => e.data.token._id === progress.tokenId)!;
    return { reference: request.tokenReference, tokenId: progress.tokenId!, code: event.data.code, expiresAt: event.data.expiresAt };
  };
  const attempt = (reference: string, code: string, id = `tvr_${crypto.randomBytes(8).toString('hex')}`, now = Date.now) =>
    verifyAttempt({ db: services.db, now }, { id, tokenReference: reference, code }, now() + 1700);
  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('judges a code against its keyed hash: right, wrong (an attempt counted down), the last wrong one, expired, not pending; another length or a letter is a wrong code', function () {
    const key = crypto.randomBytes(32);
    const { code, state } = newVerification(key, 'tok_a', Date.now());
    expect(code).to.match(/^[0-9]{6}$/);
    expect(state).to.deep.include({ attemptsLeft: 3, hash: codeHash(key, 'tok_a', code) });
    expect(JSON.stringify(state)).to.not.contain(code);
    const row = { id: 'tok_a', status: 'pending_verification' as const, verification: state };
    expect(judgeAttempt(key, row, code, Date.now())).to.deep.equal({ answer: { verified: true }, next: { kind: 'active' } });
    expect(judgeAttempt(key, row, wrong(code), Date.now())).to.deep.equal({ answer: { verified: false, reason: 'wrong_code', attemptsLeft: 2 }, next: { kind: 'attempt', attemptsLeft: 2 } });
    for (const typo of [`${code}0`, 'abcdef', code.slice(1), 'x']) expect(judgeAttempt(key, row, typo, Date.now()).answer, typo).to.deep.include({ verified: false, reason: 'wrong_code' });
    expect(judgeAttempt(key, { ...row, verification: { ...state, attemptsLeft: 1 } }, wrong(code), Date.now())).to.deep.equal({
      answer: { verified: false, reason: 'wrong_code', attemptsLeft: 0 },
      next: { kind: 'declined', reason: 'verification_failed' },
    });
    expect(judgeAttempt(key, row, code, Date.now() + VERIFICATION_TTL_MS + 1)).to.deep.equal({ answer: { verified: false, reason: 'expired', attemptsLeft: 0 }, next: { kind: 'declined', reason: 'verification_expired' } });
    expect(judgeAttempt(key, { ...row, status: 'active', verification: null }, code, Date.now()).answer).to.deep.equal({ verified: false, reason: 'not_pending', attemptsLeft: 0 });
    // Bound to the token: the same code for another token's hash is wrong.
    expect(judgeAttempt(key, { ...row, id: 'tok_b' }, code, Date.now()).answer).to.deep.include({ verified: false });
  });

  it('the right code activates the token (by verification), with one token.updated activated, and clears its hash', async function () {
    const { reference, tokenId, code } = await pendingToken();
    expect(await attempt(reference, code)).to.deep.equal({ answer: { verified: true }, recorded: true });
    const token = (await findToken(services.db, tokenId))!;
    expect(token.status).to.equal('active');
    expect(token.history.at(-1)).to.include({ status: 'active', by: 'verification' });
    const updates = (await eventsOf(services.db, partner.partnerId, 'token.updated')).filter((e) => e.data.token._id === tokenId);
    expect(updates.map((e) => [e.data.previousStatus, e.data.change])).to.deep.equal([['pending_verification', 'activated']]);
    expect((await services.db.query('SELECT verification FROM tokens WHERE id = $1', [tokenId])).rows[0].verification).to.equal(null);
    // The code again (another attempt id): the token is not pending any more.
    expect((await attempt(reference, code)).answer).to.deep.equal({ verified: false, reason: 'not_pending', attemptsLeft: 0 });
  });

  it('three wrong codes decline the token (verification_failed); a repeated attempt id counts once, also when the repeats arrive together', async function () {
    const { reference, tokenId, code } = await pendingToken();
    const bad = wrong(code);
    const repeated = await Promise.all([1, 2, 3, 4, 5].map(() => attempt(reference, bad, 'tvr_same_attempt_1' + tokenId)));
    expect(repeated.map((r) => r.answer)).to.deep.equal(Array(5).fill({ verified: false, reason: 'wrong_code', attemptsLeft: 2 }));
    expect(repeated.filter((r) => r.recorded)).to.have.length(1);
    expect((await attempt(reference, bad)).answer).to.deep.equal({ verified: false, reason: 'wrong_code', attemptsLeft: 1 });
    expect((await attempt(reference, bad)).answer).to.deep.equal({ verified: false, reason: 'wrong_code', attemptsLeft: 0 });
    const token = (await findToken(services.db, tokenId))!;
    expect(token.status).to.equal('declined');
    expect(token.history.at(-1)).to.include({ status: 'declined', by: 'verification', reason: 'verification_failed' });
    // The right code after that: too late.
    expect((await attempt(reference, code)).answer).to.deep.equal({ verified: false, reason: 'not_pending', attemptsLeft: 0 });
  });

  it('a code used after expiresAt (the clock moved 11 minutes on) declines the token (verification_expired)', async function () {
    const { reference, tokenId, code } = await pendingToken();
    const later = () => Date.now() + 11 * 60_000;
    expect((await attempt(reference, code, undefined, later)).answer).to.deep.equal({ verified: false, reason: 'expired', attemptsLeft: 0 });
    const token = (await findToken(services.db, tokenId))!;
    expect(token.status).to.equal('declined');
    expect(token.history.at(-1)).to.include({ reason: 'verification_expired' });
  });

  it('an attempt for a token the gateway does not hold is not_pending, and counted once', async function () {
    const reference = newReference();
    expect((await attempt(reference, '123456', 'tvr_unknown_token_' + reference)).answer).to.deep.equal({ verified: false, reason: 'not_pending', attemptsLeft: 0 });
    expect(await tokenByReference(services.db, reference)).to.equal(undefined);
  });

  it('the retention pass replaces an expired code by null in its event, and nothing else of the envelope; a code still valid stays', async function () {
    const { tokenId, code, expiresAt } = await pendingToken();
    const payload = async () =>
      (await services.db.query<{ payload: string }>("SELECT payload FROM partner_events WHERE type = 'token.verification_code' AND payload LIKE $1", [`%${tokenId}%`])).rows[0]!.payload;
    const before = await payload();
    expect(JSON.parse(before).data.code).to.equal(code);
    await scrubExpiredCodes(services.db, Date.now());
    expect(await payload(), 'not expired yet').to.equal(before);
    expect(await scrubExpiredCodes(services.db, Date.parse(expiresAt) + 60_000)).to.be.at.least(1);
    const after = await payload();
    expect(after).to.not.contain(code);
    expect(after).to.equal(before.replace(`"code":"${code}"`, '"code":null'));
    await scrubExpiredCodes(services.db, Date.parse(expiresAt) + 60_000);
    expect(await payload(), 'scrubbed once').to.equal(after);
  });
});
