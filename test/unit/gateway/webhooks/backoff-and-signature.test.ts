import { expect } from 'chai';
import { retryDelayMs } from '../../../../gateway/webhooks/backoff';
import { signatureHeader, verifySignature } from '../../../../gateway/webhooks/signature';

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
});
