import { expect } from 'chai';
import { retryDelayMs } from '../../../../gateway/webhooks/backoff';
import { newSecret, signatureHeader, signedHeaders, standardKey, standardSignature, verifySignature } from '../../../../gateway/outbound/signature';

describe('unit: webhook backoff and signature (gateway/webhooks; the URL guard: test/unit/gateway/outbound)', function () {
  it('backs off exponentially with jitter in the upper half, capped', function () {
    const options = { baseMs: 10_000, maxMs: 3_600_000 };
    expect(retryDelayMs(1, options, () => 0)).to.equal(5_000);
    expect(retryDelayMs(1, options, () => 1)).to.equal(10_000);
    expect(retryDelayMs(3, options, () => 1)).to.equal(40_000);
    expect(retryDelayMs(50, options, () => 1)).to.equal(3_600_000);
    expect(retryDelayMs(50, options, () => 0)).to.equal(1_800_000);
  });

  it('signs t.body with each secret, newest first, and verifies within the tolerance only', function () {
    const header = signatureHeader(['whsec_new', 'whsec_old'], 1_767_225_600, '{"a":1}');
    expect(header).to.match(/^t=1767225600,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, '{"a":1}', ['whsec_old'], 300, 1_767_225_600 + 299)).to.equal(true);
    expect(verifySignature(header, '{"a":1}', ['whsec_new'], 300, 1_767_225_600)).to.equal(true);
    expect(verifySignature(header, '{"a":2}', ['whsec_new'], 300, 1_767_225_600)).to.equal(false);
    expect(verifySignature(header, '{"a":1}', ['whsec_new'], 300, 1_767_225_600 + 301)).to.equal(false);
  });

  it('signs Standard Webhooks messages: the example of the specification, and one v1 per secret beside Partner-Gateway-Signature', function () {
    // The specification's example (standard base64 after whsec_): id.timestamp.body, keyed with the decoded bytes.
    expect(standardSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).to.equal('g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    // Our secrets are base64url: the key is the same 32 bytes read either way.
    const secret = newSecret();
    expect(standardKey(secret)).to.have.length(32);
    expect(standardKey(secret).equals(Buffer.from(secret.slice(6), 'base64url'))).to.equal(true);
    const headers = signedHeaders([secret, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 'evt_1', 1_767_225_600, '{"a":1}');
    expect(headers).to.have.all.keys('Partner-Gateway-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature');
    expect(headers).to.include({ 'webhook-id': 'evt_1', 'webhook-timestamp': '1767225600' });
    expect(headers['webhook-signature'].split(' ')).to.deep.equal([`v1,${standardSignature(secret, 'evt_1', 1_767_225_600, '{"a":1}')}`, `v1,${standardSignature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'evt_1', 1_767_225_600, '{"a":1}')}`]);
    expect(verifySignature(headers['Partner-Gateway-Signature'], '{"a":1}', [secret], 300, 1_767_225_600)).to.equal(true);
  });
});
