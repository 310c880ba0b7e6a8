import crypto from 'node:crypto';
import { expect } from 'chai';
import { approve, decisionAnswer, decline, SignatureVerificationError, standardWebhookKey, verifyAuthorizationRequest, verifyStandardAuthorizationRequest, verifyStandardSignature, verifyStandardWebhook, verifyWebhook, type VerificationFailure, type WebhookEvent } from '../../sdk/src';

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
