import crypto from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { createNotificationsApp, type TokenizationAnswering } from '../../../../gateway/inbound/notifications-app';
import { createLogger } from '../../../../gateway/logging/logger';
import { signatureHeader } from '../../../../gateway/outbound/signature';
import { createTokenizationDecider } from '../../../../gateway/tokens/decider';
import { findToken, tokenByReference } from '../../../../gateway/tokens/store';
import { listenLocally, openServices, type InProcessServices } from '../../../support/in-process';
import { recordSecret } from '../../../support/secrets';
import { addCard, eventsOf, newPartner, newReference, upstreamToken, type PartnerFixture } from './fixtures';

/**
 * The processor's token requests on the notification listener, over real HTTP (docs/upstreams.md
 * 10.3 to 10.5): signed like every notification, answered before the deadline or 503, the bad
 * ones refused with a problem and nothing changed, the verification code in no log line.
 */
describe('unit: the listener\'s tokenization, verification and token notification routes (gateway/inbound/notifications-app.ts)', function () {
  this.timeout(30_000);
  const secret = crypto.randomBytes(32).toString('base64url');
  const lines: string[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  let services: InProcessServices;
  let partner: PartnerFixture;
  let listener: { url: string; close(): Promise<void> };
  let hanging: { url: string; close(): Promise<void> };

  const post = async (base: string, path: string, body: unknown, sign = secret): Promise<{ status: number; type: string | null; body: any }> => {
    const raw = JSON.stringify(body);
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstream-signature': signatureHeader([sign], Math.floor(Date.now() / 1000), raw), 'upstream-notification-id': (body as { id: string }).id },
      body: raw,
    });
    return { status: res.status, type: res.headers.get('content-type'), body: await res.json() };
  };
  const tokenization = (cardId: string, verdict: 'approve' | 'require_verification' | 'decline' = 'approve') => {
    const id = `tkz_${crypto.randomBytes(12).toString('hex')}`;
    return {
      id,
      type: 'tokenization.request',
      occurredAt: new Date().toISOString(),
      tokenization: {
        id,
        tokenReference: newReference(),
        cardId,
        walletProvider: 'samsung_pay',
        tokenRequestorId: '50139059239',
        last4: '7310',
        tokenExpDate: '06/2029',
        device: { type: 'phone', name: 'Galaxy', ipCountry: 'DE' },
        networkVerdict: { decision: verdict, riskScore: 1, reasons: ['DEVICE_NEW'] },
        at: new Date().toISOString(),
      },
    };
  };

  before(async function () {
    recordSecret('notifySecret', secret);
    services = await openServices();
    partner = await newPartner(services, 'listener');
    const deps = { db: services.db, clients: services.clients, log };
    const decider = createTokenizationDecider({ db: services.db, authorizationEndpoints: services.authorizationEndpoints }, { tokenizationDeadlineMs: 2000 }, log);
    listener = await listenLocally(http.createServer(createNotificationsApp(deps, { issuer: [], processing: [secret] }, undefined, decider)));
    // A decider that never answers: the listener's own deadline answers 503.
    const never: TokenizationAnswering = { deadlineMs: 1000, decide: () => new Promise(() => undefined), verify: () => new Promise(() => undefined) };
    hanging = await listenLocally(http.createServer(createNotificationsApp(deps, { issuer: [], processing: [secret] }, undefined, never)));
  });
  after(async function () {
    await listener?.close();
    await hanging?.close();
    await services?.close();
  });

  it('answers a tokenization {decision}, the same to a repeat, and 400 (a problem, nothing recorded) to a bad body or a card number in it; 401 to a bad signature', async function () {
    const cardKey = await addCard(services.db, partner);
    const body = tokenization(cardKey, 'require_verification');
    const first = await post(listener.url, '/upstream-notifications/processing/tokenizations', body);
    expect(first).to.deep.include({ status: 200, body: { decision: 'require_verification' } });
    expect((await post(listener.url, '/upstream-notifications/processing/tokenizations', body)).body).to.deep.equal({ decision: 'require_verification' });
    const held = (await tokenByReference(services.db, body.tokenization.tokenReference))!;
    expect(held.status).to.equal('pending_verification');
    const bad: Array<[string, unknown]> = [
      ['tokenization.walletProvider', { ...body, id: 'tkz_bad_1', tokenization: { ...body.tokenization, id: 'tkz_bad_1', walletProvider: 'paypal' } }],
      ['tokenization.id', { ...body, id: 'tkz_bad_2' }],
      ['tokenization.networkVerdict.decision', { ...body, id: 'tkz_bad_3', tokenization: { ...body.tokenization, id: 'tkz_bad_3', networkVerdict: { decision: 'maybe' } } }],
      ['tokenization.device.name', { ...body, id: 'tkz_bad_4', tokenization: { ...body.tokenization, id: 'tkz_bad_4', device: { type: 'phone', name: '5355709999999994' } } }],
    ];
    for (const [name, badBody] of bad) {
      const refused = await post(listener.url, '/upstream-notifications/processing/tokenizations', badBody);
      expect(refused.status, name).to.equal(400);
      expect(refused.type, name).to.match(/^application\/problem\+json/);
      expect(refused.body.invalidParams?.[0]?.name, name).to.equal(name);
    }
    const decisions = await services.db.query("SELECT 1 FROM tokenization_decisions WHERE tokenization_id LIKE 'tkz_bad_%'");
    expect(decisions.rowCount, 'a refused request claims nothing').to.equal(0);
    expect((await post(listener.url, '/upstream-notifications/processing/tokenizations', tokenization(cardKey), 'not-the-secret-' + 'x'.repeat(20))).status).to.equal(401);
  });

  it('answers a verification {verified}; the code is in no log line', async function () {
    const cardKey = await addCard(services.db, partner);
    const body = tokenization(cardKey, 'require_verification');
    expect((await post(listener.url, '/upstream-notifications/processing/tokenizations', body)).body).to.deep.equal({ decision: 'require_verification' });
    const held = (await tokenByReference(services.db, body.tokenization.tokenReference))!;
    const code = (await eventsOf(services.db, partner.partnerId, 'token.verification_code')).find((e) => e.data.token._id === held.id)!.data.code as string;
    const verification = (code: string) => {
      const id = `tvr_${crypto.randomBytes(8).toString('hex')}`;
      return { id, type: 'tokenization.verification', occurredAt: new Date().toISOString(), verification: { id, tokenReference: body.tokenization.tokenReference, code } };
    };
    const wrongCode = code === '000000' ? '000001' : '000000';
    expect((await post(listener.url, '/upstream-notifications/processing/tokenizations/verifications', verification(wrongCode))).body).to.deep.equal({ verified: false, reason: 'wrong_code', attemptsLeft: 2 });
    const right = await post(listener.url, '/upstream-notifications/processing/tokenizations/verifications', verification(code));
    expect(right).to.deep.include({ status: 200, body: { verified: true } });
    expect((await findToken(services.db, held.id))!.status).to.equal('active');
    const tooLong = await post(listener.url, '/upstream-notifications/processing/tokenizations/verifications', verification('1'.repeat(65)));
    expect(tooLong.status).to.equal(400);
    expect(lines.filter((l) => l.includes('verificationId')).length, 'the attempts were logged').to.be.at.least(2);
    for (const line of lines) {
      expect(line, 'a log line').to.not.contain(code);
      expect(line).to.not.contain(wrongCode === '000000' ? '"000000"' : '"000001"');
    }
  });

  it('applies a token.created notification once: the repeat is a duplicate', async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey, { status: 'declined', tokenizationId: `tkz_${crypto.randomBytes(6).toString('hex')}` });
    const body = { id: `ntf_${crypto.randomBytes(8).toString('hex')}`, type: 'token.created', occurredAt: new Date().toISOString(), token: t };
    expect((await post(listener.url, '/upstream-notifications/processing', body)).body).to.deep.equal({ received: true, duplicate: false, outcome: 'applied' });
    expect((await post(listener.url, '/upstream-notifications/processing', body)).body).to.deep.equal({ received: true, duplicate: true, outcome: 'duplicate' });
    const held = (await tokenByReference(services.db, t.tokenReference))!;
    expect((await eventsOf(services.db, partner.partnerId, 'token.created')).filter((e) => e.data.token._id === held.id)).to.have.length(1);
    const unknown = { ...body, id: `${body.id}_u`, token: upstreamToken('CK_NOT_HELD_ANYWHERE') };
    expect((await post(listener.url, '/upstream-notifications/processing', unknown)).body).to.deep.include({ outcome: 'unknown_card' });
  });

  it('answers 503 decision_unavailable at the deadline less its margin when no decision comes', async function () {
    const started = Date.now();
    const answer = await post(hanging.url, '/upstream-notifications/processing/tokenizations', tokenization('CK_ANY'));
    const took = Date.now() - started;
    expect(answer.status).to.equal(503);
    expect(answer.body.code).to.equal('decision_unavailable');
    // Due 1000 - 300 ms after arrival; not before, and not much after.
    expect(took).to.be.within(650, 1500);
    const verification = { id: 'tvr_hang', type: 'tokenization.verification', occurredAt: new Date().toISOString(), verification: { id: 'tvr_hang', tokenReference: 'tref_x', code: '123456' } };
    expect((await post(hanging.url, '/upstream-notifications/processing/tokenizations/verifications', verification)).status).to.equal(503);
  });
});
