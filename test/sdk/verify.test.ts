import crypto from 'node:crypto';
import { expect } from 'chai';
import {
  approve,
  decisionAnswer,
  decline,
  SignatureVerificationError,
  standardWebhookKey,
  tokenizationAnswer,
  verifyAuthorizationRequest,
  verifyStandardAuthorizationRequest,
  verifyStandardSignature,
  verifyStandardTokenizationRequest,
  verifyStandardWebhook,
  verifyTokenizationRequest,
  verifyWebhook,
  type TokenizationDecision,
  type TokenizationRequest,
  type VerificationFailure,
  type WebhookEvent,
} from '../../sdk/src';
import { api, cardBody, individualBody } from '../support/api';
import { sharedGateway } from '../support/gateway-process';
import { registerPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { waitFor } from '../support/wait';
import { TestReceiver } from '../support/webhook-receiver';

const SECRET = `whsec_${'a'.repeat(43)}`;
const PREVIOUS = `whsec_${'b'.repeat(43)}`;
const NOW = 1_800_000_000;

const EVENT = {
  id: 'evt_6b0237a240487492a2ee0de3',
  type: 'card.status_changed',
  createdAt: '2026-11-22T10:00:00.000Z',
  partnerId: '6b0236f540487492a2ee0dc1',
  data: { cardKey: 'CK1', status: 'LOCKED', statusCode: 'L1', previousStatus: 'ACTIVE', source: 'partner', reason: null, card: { cardKey: 'CK1', status: 'LOCKED' } },
  requestId: 'r-1',
};
const REQUEST = {
  id: 'areq_65f1a2b3c4d5e6f708192a3b',
  type: 'authorization.request',
  createdAt: '2026-05-04T10:00:00.000Z',
  partnerId: '65f1a2b3c4d5e6f708192a00',
  data: { authorization: { id: 'auth_1', amount: 4200, currency: 'EUR', type: 'purchase', merchant: { name: 'Corner Shop', mcc: '5411', city: 'Lisbon', country: 'PT' } }, card: { cardKey: 'CK1', status: 'ACTIVE' } },
};

/** docs/tokens.md's `tokenization.request`. */
const TOKENIZATION: TokenizationRequest = {
  id: 'treq_6b0237a240487492a2ee0de7',
  type: 'tokenization.request',
  createdAt: '2026-12-08T10:00:00.000Z',
  partnerId: '6b0236f540487492a2ee0dc1',
  data: {
    tokenization: {
      id: 'tkz_6b0237a240487492a2ee0de4',
      tokenId: 'tok_6b0237a240487492a2ee0de6',
      walletProvider: 'apple_pay',
      tokenRequestorId: '50110030273',
      device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' },
      networkVerdict: { decision: 'approve', riskScore: 2, reasons: [] },
    },
    card: { cardKey: 'CK1', status: 'ACTIVE' } as TokenizationRequest['data']['card'],
  },
};

/** The header the gateway sends: one v1= per secret, newest first. */
function sign(raw: string, secrets: string[], t = NOW): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${crypto.createHmac('sha256', s).update(`${t}.${raw}`).digest('hex')}`)].join(',');
}

function failure(fn: () => unknown): VerificationFailure | string {
  try {
    fn();
    return 'verified';
  } catch (err) {
    if (err instanceof SignatureVerificationError) return err.reason;
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
}

describe('sdk: verifyWebhook', function () {
  const raw = JSON.stringify(EVENT);
  const at = { nowSeconds: NOW };

  it('returns the event, typed by its type, from a string or a Buffer', function () {
    const event = verifyWebhook(raw, sign(raw, [SECRET]), [SECRET], at);
    expect(event).to.deep.equal(EVENT);
    if (event.type === 'card.status_changed') {
      const typed: WebhookEvent<'card.status_changed'> = event;
      expect(typed.data.status).to.equal('LOCKED');
    } else expect.fail(`type ${event.type}`);
    expect(verifyWebhook(Buffer.from(raw), sign(raw, [SECRET]), SECRET, at).id).to.equal(EVENT.id);
  });

  it('accepts either secret during a rotation: a header with both v1= verifies with the new or the old one', function () {
    const header = sign(raw, [SECRET, PREVIOUS]);
    expect(verifyWebhook(raw, header, [SECRET], at).id).to.equal(EVENT.id);
    expect(verifyWebhook(raw, header, [PREVIOUS], at).id).to.equal(EVENT.id);
    // A receiver holding both (its configuration during the rollout) verifies a header of either.
    expect(verifyWebhook(raw, sign(raw, [PREVIOUS]), [SECRET, PREVIOUS], at).id).to.equal(EVENT.id);
  });

  it('throws for every failure, each with its reason', function () {
    const cases: [string, () => unknown, VerificationFailure][] = [
      ['no header', () => verifyWebhook(raw, undefined, [SECRET], at), 'missing_header'],
      ['an empty header', () => verifyWebhook(raw, '', [SECRET], at), 'missing_header'],
      ['no t=', () => verifyWebhook(raw, sign(raw, [SECRET]).replace(/^t=\d+,/, ''), [SECRET], at), 'malformed_header'],
      ['no v1=', () => verifyWebhook(raw, `t=${NOW}`, [SECRET], at), 'malformed_header'],
      ['two t=', () => verifyWebhook(raw, `t=${NOW},${sign(raw, [SECRET])}`, [SECRET], at), 'malformed_header'],
      ['a t that is not a number', () => verifyWebhook(raw, sign(raw, [SECRET]).replace(/^t=\d+/, 't=soon'), [SECRET], at), 'malformed_header'],
      ['a t 301 s old (a replay)', () => verifyWebhook(raw, sign(raw, [SECRET], NOW - 301), [SECRET], at), 'stale_timestamp'],
      ['a t 301 s ahead', () => verifyWebhook(raw, sign(raw, [SECRET], NOW + 301), [SECRET], at), 'stale_timestamp'],
      ['a t 61 s old with a 60 s tolerance', () => verifyWebhook(raw, sign(raw, [SECRET], NOW - 61), [SECRET], { ...at, toleranceSeconds: 60 }), 'stale_timestamp'],
      ['another secret', () => verifyWebhook(raw, sign(raw, [PREVIOUS]), [SECRET], at), 'bad_signature'],
      ['a changed body', () => verifyWebhook(raw.replace('LOCKED', 'ACTIVE'), sign(raw, [SECRET]), [SECRET], at), 'bad_signature'],
      ['a re-serialized body', () => verifyWebhook(JSON.stringify(EVENT, null, 2), sign(raw, [SECRET]), [SECRET], at), 'bad_signature'],
      ['the signature of another t', () => verifyWebhook(raw, sign(raw, [SECRET], NOW - 1).replace(/^t=\d+/, `t=${NOW}`), [SECRET], at), 'bad_signature'],
      ['a signed body that is not an event', () => verifyWebhook('{"hello":1}', sign('{"hello":1}', [SECRET]), [SECRET], at), 'malformed_body'],
      ['a signed body that is not JSON', () => verifyWebhook('hello', sign('hello', [SECRET]), [SECRET], at), 'malformed_body'],
      ['a signed body whose data is not an object', () => verifyWebhook('{"id":"evt_1","type":"card.created","data":null}', sign('{"id":"evt_1","type":"card.created","data":null}', [SECRET]), [SECRET], at), 'malformed_body'],
      ['a signed event of a type this SDK does not know (an authorization.request here)', () => verifyWebhook(JSON.stringify(REQUEST), sign(JSON.stringify(REQUEST), [SECRET]), [SECRET], at), 'unknown_event_type'],
    ];
    for (const [description, fn, reason] of cases) expect(failure(fn), description).to.equal(reason);
    // An unknown type's error carries the verified event, for the receiver to acknowledge.
    let unknown: unknown;
    try {
      verifyWebhook(JSON.stringify(REQUEST), sign(JSON.stringify(REQUEST), [SECRET]), [SECRET], at);
    } catch (err) {
      unknown = err;
    }
    expect((unknown as { event?: unknown }).event).to.deep.include({ id: REQUEST.id, type: 'authorization.request' });
    // The boundary itself verifies.
    expect(verifyWebhook(raw, sign(raw, [SECRET], NOW - 300), [SECRET], at).id).to.equal(EVENT.id);
  });

  it('refuses a parsed body and an empty secret list with a TypeError that says what to pass', function () {
    expect(failure(() => verifyWebhook(EVENT as never, sign(raw, [SECRET]), [SECRET], at))).to.match(/TypeError: pass the raw body/);
    expect(failure(() => verifyWebhook(raw, sign(raw, [SECRET]), [], at))).to.match(/TypeError: give at least one signing secret/);
    expect(failure(() => verifyWebhook(raw, sign(raw, [SECRET]), [''], at))).to.match(/TypeError/);
  });

  it('uses the clock by default', function () {
    const t = Math.floor(Date.now() / 1000);
    expect(verifyWebhook(raw, sign(raw, [SECRET], t), [SECRET]).id).to.equal(EVENT.id);
    expect(failure(() => verifyWebhook(raw, sign(raw, [SECRET], t - 3600), [SECRET]))).to.equal('stale_timestamp');
  });
});

describe('sdk: verifyAuthorizationRequest and the decision answer', function () {
  const raw = JSON.stringify(REQUEST);
  const at = { nowSeconds: NOW };

  it('returns the request; refuses what verifyWebhook refuses, and a signed body that is not an authorization.request', function () {
    expect(verifyAuthorizationRequest(raw, sign(raw, [SECRET, PREVIOUS]), [PREVIOUS], at)).to.deep.equal(REQUEST);
    expect(failure(() => verifyAuthorizationRequest(raw, undefined, [SECRET], at))).to.equal('missing_header');
    expect(failure(() => verifyAuthorizationRequest(raw, sign(raw, [SECRET], NOW - 400), [SECRET], at))).to.equal('stale_timestamp');
    expect(failure(() => verifyAuthorizationRequest(raw, sign(raw, [PREVIOUS]), [SECRET], at))).to.equal('bad_signature');
    const event = JSON.stringify(EVENT);
    expect(failure(() => verifyAuthorizationRequest(event, sign(event, [SECRET]), [SECRET], at))).to.equal('malformed_body');
  });

  it('builds the answer: 200, JSON, {approved: true} or {approved: false, declineReason}; a reason over 200 characters is refused', function () {
    expect(decisionAnswer(approve())).to.deep.equal({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"approved":true}' });
    expect(JSON.parse(decisionAnswer(decline('insufficient_balance')).body)).to.deep.equal({ approved: false, declineReason: 'insufficient_balance' });
    expect(JSON.parse(decisionAnswer(decline()).body)).to.deep.equal({ approved: false });
    expect(JSON.parse(decisionAnswer({ approved: false, declineReason: 'x' }).body)).to.deep.equal({ approved: false, declineReason: 'x' });
    expect(() => decline('x'.repeat(201))).to.throw(RangeError);
    expect(() => decisionAnswer({ approved: false, declineReason: 'x'.repeat(201) })).to.throw(RangeError);
  });
});

describe('sdk: Standard Webhooks verification (verifyStandardWebhook, verifyStandardAuthorizationRequest)', function () {
  /** The gateway's Standard Webhooks headers for `raw`: one v1, per secret, keyed with the bytes after whsec_ (gateway/outbound/signature.ts). */
  const standard = (raw: string, secrets: string[], id = EVENT.id, t = NOW) => ({
    'webhook-id': id,
    'webhook-timestamp': String(t),
    'webhook-signature': secrets.map((s) => `v1,${crypto.createHmac('sha256', Buffer.from(s.slice(6), 'base64url')).update(`${id}.${t}.${raw}`).digest('base64')}`).join(' '),
  });
  const raw = JSON.stringify(EVENT);
  const options = { nowSeconds: NOW };

  it('returns the event from Node headers, a Fetch Headers or headers of any case; either secret verifies during a rotation', function () {
    const fresh = `whsec_${crypto.randomBytes(32).toString('base64url')}`;
    const headers = standard(raw, [fresh, PREVIOUS]);
    expect(verifyStandardWebhook(raw, headers, [fresh], options)).to.deep.equal(EVENT);
    expect(verifyStandardWebhook(Buffer.from(raw), new Headers(headers), PREVIOUS, options)).to.deep.equal(EVENT);
    expect(verifyStandardWebhook(raw, { 'Webhook-Id': headers['webhook-id'], 'Webhook-Timestamp': headers['webhook-timestamp'], 'Webhook-Signature': headers['webhook-signature'] }, [fresh], options)).to.deep.equal(EVENT);
    // The same secret in standard base64 (as a Standard Webhooks library takes it) reads the same key.
    const standardForm = `whsec_${Buffer.from(fresh.slice(6), 'base64url').toString('base64')}`;
    expect(standardWebhookKey(standardForm).equals(standardWebhookKey(fresh))).to.equal(true);
    expect(verifyStandardSignature(raw, headers, [standardForm], options)).to.deep.equal({ id: EVENT.id, timestamp: NOW });
  });

  it('throws for every failure, each with its reason', function () {
    const headers = standard(raw, [SECRET]);
    expect(failure(() => verifyStandardWebhook(raw, { ...headers, 'webhook-signature': undefined } as never, [SECRET], options))).to.equal('missing_header');
    expect(failure(() => verifyStandardWebhook(raw, { ...headers, 'webhook-timestamp': 'soon' }, [SECRET], options))).to.equal('malformed_header');
    expect(failure(() => verifyStandardWebhook(raw, { ...headers, 'webhook-signature': 'v2,abc' }, [SECRET], options))).to.equal('malformed_header');
    expect(failure(() => verifyStandardWebhook(raw, headers, [SECRET], { nowSeconds: NOW + 301 }))).to.equal('stale_timestamp');
    expect(failure(() => verifyStandardWebhook(raw, headers, [PREVIOUS], options))).to.equal('bad_signature');
    expect(failure(() => verifyStandardWebhook(`${raw} `, headers, [SECRET], options))).to.equal('bad_signature');
    // Another id signs another message: the id is part of what is signed.
    expect(failure(() => verifyStandardWebhook(raw, { ...headers, 'webhook-id': 'evt_other' }, [SECRET], options))).to.equal('bad_signature');
    const request = JSON.stringify(REQUEST);
    expect(verifyStandardAuthorizationRequest(request, standard(request, [SECRET], REQUEST.id), [SECRET], options)).to.deep.equal(REQUEST);
    expect(failure(() => verifyStandardAuthorizationRequest(raw, headers, [SECRET], options))).to.equal('malformed_body');
  });
});

/** The gateway's Standard Webhooks headers for `raw`: one v1, per secret, keyed with the bytes after whsec_ (gateway/outbound/signature.ts). */
function standardHeaders(raw: string, secrets: string[], id: string, t = NOW): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(t),
    'webhook-signature': secrets.map((s) => `v1,${crypto.createHmac('sha256', Buffer.from(s.slice(6), 'base64url')).update(`${id}.${t}.${raw}`).digest('base64')}`).join(' '),
  };
}

describe('sdk: verifyTokenizationRequest, verifyStandardTokenizationRequest and the tokenization answer', function () {
  const raw = JSON.stringify(TOKENIZATION);
  const at = { nowSeconds: NOW };

  it('returns the request by either header scheme, from a string or a Buffer; either secret verifies during a rotation', function () {
    const request = verifyTokenizationRequest(raw, sign(raw, [SECRET, PREVIOUS]), [PREVIOUS], at);
    expect(request).to.deep.equal(TOKENIZATION);
    const verdict: 'approve' | 'require_verification' | 'decline' = request.data.tokenization.networkVerdict.decision;
    expect(verdict).to.equal('approve');
    expect(verifyTokenizationRequest(Buffer.from(raw), sign(raw, [SECRET]), SECRET, at)).to.deep.equal(TOKENIZATION);
    const headers = standardHeaders(raw, [SECRET, PREVIOUS], TOKENIZATION.id);
    expect(verifyStandardTokenizationRequest(raw, headers, [PREVIOUS], at)).to.deep.equal(TOKENIZATION);
    expect(verifyStandardTokenizationRequest(Buffer.from(raw), new Headers(headers), SECRET, at)).to.deep.equal(TOKENIZATION);
  });

  it('throws for every failure by either scheme, each with its reason: a missing or malformed header, a bad signature, a stale time, a body of another type or shape', function () {
    const authorization = JSON.stringify(REQUEST);
    const withoutVerdict = JSON.stringify({ ...TOKENIZATION, data: { ...TOKENIZATION.data, tokenization: { ...TOKENIZATION.data.tokenization, networkVerdict: undefined } } });
    const std = (body: string, secrets = [SECRET], t = NOW) => standardHeaders(body, secrets, TOKENIZATION.id, t);
    const cases: [string, () => unknown, VerificationFailure][] = [
      ['no header', () => verifyTokenizationRequest(raw, undefined, [SECRET], at), 'missing_header'],
      ['no v1=', () => verifyTokenizationRequest(raw, `t=${NOW}`, [SECRET], at), 'malformed_header'],
      ['another secret', () => verifyTokenizationRequest(raw, sign(raw, [PREVIOUS]), [SECRET], at), 'bad_signature'],
      ['a changed body', () => verifyTokenizationRequest(raw.replace('"approve"', '"decline"'), sign(raw, [SECRET]), [SECRET], at), 'bad_signature'],
      ['a t 301 s old (a replay)', () => verifyTokenizationRequest(raw, sign(raw, [SECRET], NOW - 301), [SECRET], at), 'stale_timestamp'],
      ['a signed authorization.request', () => verifyTokenizationRequest(authorization, sign(authorization, [SECRET]), [SECRET], at), 'malformed_body'],
      ['a signed webhook event', () => verifyTokenizationRequest(JSON.stringify(EVENT), sign(JSON.stringify(EVENT), [SECRET]), [SECRET], at), 'malformed_body'],
      ['a signed tokenization.request without its network verdict', () => verifyTokenizationRequest(withoutVerdict, sign(withoutVerdict, [SECRET]), [SECRET], at), 'malformed_body'],
      ['a signed body that is not JSON', () => verifyTokenizationRequest('treq', sign('treq', [SECRET]), [SECRET], at), 'malformed_body'],
      ['standard: no webhook-signature', () => verifyStandardTokenizationRequest(raw, { ...std(raw), 'webhook-signature': undefined } as never, [SECRET], at), 'missing_header'],
      ['standard: a timestamp that is not a number', () => verifyStandardTokenizationRequest(raw, { ...std(raw), 'webhook-timestamp': 'soon' }, [SECRET], at), 'malformed_header'],
      ['standard: another secret', () => verifyStandardTokenizationRequest(raw, std(raw, [PREVIOUS]), [SECRET], at), 'bad_signature'],
      ['standard: another id', () => verifyStandardTokenizationRequest(raw, { ...std(raw), 'webhook-id': 'treq_other' }, [SECRET], at), 'bad_signature'],
      ['standard: a timestamp 301 s ahead', () => verifyStandardTokenizationRequest(raw, std(raw, [SECRET], NOW + 301), [SECRET], at), 'stale_timestamp'],
      ['standard: a signed authorization.request', () => verifyStandardTokenizationRequest(authorization, std(authorization), [SECRET], at), 'malformed_body'],
    ];
    for (const [description, fn, reason] of cases) expect(failure(fn), description).to.equal(reason);
  });

  it('the type is checked both ways: the authorization verifiers refuse a signed tokenization.request, and a webhook receiver does not take it for an event', function () {
    expect(failure(() => verifyAuthorizationRequest(raw, sign(raw, [SECRET]), [SECRET], at))).to.equal('malformed_body');
    expect(failure(() => verifyStandardAuthorizationRequest(raw, standardHeaders(raw, [SECRET], TOKENIZATION.id), [SECRET], at))).to.equal('malformed_body');
    expect(failure(() => verifyWebhook(raw, sign(raw, [SECRET]), [SECRET], at))).to.equal('unknown_event_type');
    // The signature verifies for each: only the body's type refuses it.
    expect(verifyStandardSignature(raw, standardHeaders(raw, [SECRET], TOKENIZATION.id), [SECRET], at)).to.deep.equal({ id: TOKENIZATION.id, timestamp: NOW });
  });

  it('builds the answer: 200, JSON, {decision} with a declineReason on a decline only; another decision or a reason over 200 characters is refused', function () {
    const body = (decision: TokenizationDecision) => JSON.parse(tokenizationAnswer(decision).body);
    expect(tokenizationAnswer({ decision: 'approve' })).to.deep.equal({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"decision":"approve"}' });
    expect(body({ decision: 'require_verification' })).to.deep.equal({ decision: 'require_verification' });
    expect(body({ decision: 'decline' })).to.deep.equal({ decision: 'decline' });
    expect(body({ decision: 'decline', declineReason: 'device_unknown' })).to.deep.equal({ decision: 'decline', declineReason: 'device_unknown' });
    expect(body({ decision: 'decline', declineReason: 'x'.repeat(200) }).declineReason).to.have.length(200);
    // @ts-expect-error a reason goes with a decline only
    const approvedWithReason: TokenizationDecision = { decision: 'approve', declineReason: 'x' };
    // From JavaScript: the reason of an approval is not sent (the gateway would ignore it).
    expect(body(approvedWithReason)).to.deep.equal({ decision: 'approve' });
    expect(() => tokenizationAnswer({ decision: 'decline', declineReason: 'x'.repeat(201) })).to.throw(RangeError);
    expect(() => tokenizationAnswer({ decision: 'decline', declineReason: 42 as never })).to.throw(RangeError);
    // A purchase's answer is not a tokenization's.
    expect(() => tokenizationAnswer({ approved: true } as never)).to.throw(RangeError);
    expect(() => tokenizationAnswer({ decision: 'verify' } as never)).to.throw(RangeError);
  });
});

describe('sdk: a tokenization.request the gateway sent, verified by both schemes and answered with tokenizationAnswer', function () {
  this.timeout(30_000);
  let receiver: TestReceiver;

  after(async function () {
    await receiver?.close();
  });

  it("the shared gateway's request to an endpoint enrolled for tokenizations verifies by both headers and is refused as an authorization.request; the answer made by tokenizationAnswer decides the token", async function () {
    const gateway = await sharedGateway();
    const partner = await registerPartner(gateway, 'sdk-verify-tokenization');
    receiver = await new TestReceiver().up();
    receiver.behaviour = { kind: 'respond', status: 200, body: tokenizationAnswer({ decision: 'require_verification' }).body };
    const endpoint = await api(gateway, partner, 'POST', '/authorization-endpoint', { body: { url: receiver.url, timeoutMs: 1500, requestTypes: ['authorization.request', 'tokenization.request'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
    const secret = endpoint.body.secret as string;
    recordSecret('webhookSecret', secret);
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);

    const token = await api(gateway, partner, 'POST', `/simulate/cards/${card.body.cardKey}/tokenizations`, { body: { walletProvider: 'google_pay', device: { type: 'watch', name: 'Ada’s watch', ipCountry: 'PT' } } });
    expect(token.status, JSON.stringify(token.body)).to.equal(201);
    // The network approved; the answer asked for the code, and the gateway read it as such.
    expect(token.body.status).to.equal('pending_verification');
    expect(token.body.history[0]).to.deep.include({ status: 'pending_verification', by: 'partner' });

    const got = await waitFor('the tokenization request', () => receiver.received.find((r) => r.event.type === 'tokenization.request'));
    const request = verifyTokenizationRequest(got.raw, got.headers['partner-gateway-signature'], [secret]);
    expect(verifyStandardTokenizationRequest(got.raw, got.headers, [secret])).to.deep.equal(request);
    expect(request).to.deep.equal(got.event);
    // The hand-written type has exactly the members the gateway sends.
    expect(Object.keys(request).sort()).to.deep.equal(['createdAt', 'data', 'id', 'partnerId', 'type']);
    expect(Object.keys(request.data).sort()).to.deep.equal(['card', 'tokenization']);
    expect(Object.keys(request.data.tokenization).sort()).to.deep.equal(['device', 'id', 'networkVerdict', 'tokenId', 'tokenRequestorId', 'walletProvider']);
    expect(request).to.deep.include({ type: 'tokenization.request', partnerId: partner.id });
    expect(request.id).to.match(/^treq_[0-9a-f]{24}$/).and.equal(got.headers['webhook-id']);
    expect(request.data.tokenization).to.deep.include({ tokenId: token.body._id, walletProvider: 'google_pay', device: { type: 'watch', name: 'Ada’s watch', ipCountry: 'PT' } });
    expect(request.data.tokenization.networkVerdict.decision).to.equal('approve');
    expect(request.data.card).to.deep.include({ cardKey: card.body.cardKey, status: 'ACTIVE' });
    expect(failure(() => verifyAuthorizationRequest(got.raw, got.headers['partner-gateway-signature'], [secret]))).to.equal('malformed_body');
    expect(failure(() => verifyStandardAuthorizationRequest(got.raw, got.headers, [secret]))).to.equal('malformed_body');
    expect(failure(() => verifyTokenizationRequest(got.raw.replace(/}$/, ' }'), got.headers['partner-gateway-signature'], [secret]))).to.equal('bad_signature');
  });
});
