import { expect } from 'chai';
import { checkTarget, type Resolver } from '../../../../gateway/webhooks/target-guard';
import { retryDelayMs } from '../../../../gateway/webhooks/backoff';
import { signatureHeader, verifySignature } from '../../../../gateway/webhooks/signature';

const resolveTo = (...addresses: string[]): Resolver => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('unit: webhook target guard, backoff and signature (gateway/webhooks)', function () {
  const production = { allowPrivate: false, resolve: resolveTo('93.184.216.34') };

  it('refuses, outside sandbox mode, http and every loopback, private, link-local and metadata address', async function () {
    for (const url of [
      'http://example.com/',
      'https://127.0.0.1/',
      'https://localhost/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://10.1.2.3/',
      'https://172.16.0.1/',
      'https://192.168.0.1/',
      'https://100.64.0.1/',
      'https://169.254.169.254/latest',
      'https://0.0.0.0/',
      'https://[fd00::1]/',
      'https://[fe80::1]/',
      'https://u:p@hooks.example.com/',
      'https://hooks.example.com/#x',
      'not a url',
    ]) {
      expect((await checkTarget(url, production)).ok, url).to.equal(false);
    }
  });

  it('accepts https to a public address, and connects to the address it checked', async function () {
    const check = await checkTarget('https://hooks.example.com/x', production);
    expect(check).to.deep.include({ ok: true, address: '93.184.216.34' });
  });

  it('refuses a name when any of its addresses is private (public at registration is checked again at delivery)', async function () {
    expect(await checkTarget('https://rebind.example.com/', { allowPrivate: false, resolve: resolveTo('93.184.216.34', '10.0.0.5') })).to.deep.include({ ok: false });
    expect(await checkTarget('https://nowhere.example.com/', { allowPrivate: false, resolve: async () => { throw new Error('ENOTFOUND'); } })).to.deep.equal({ ok: false, reason: 'does not resolve' });
  });

  it('allows http and loopback when private targets are allowed, never link-local or metadata', async function () {
    expect((await checkTarget('http://127.0.0.1:4000/hook', { allowPrivate: true })).ok).to.equal(true);
    expect((await checkTarget('http://localhost:4000/hook', { allowPrivate: true, resolve: resolveTo('127.0.0.1') })).ok).to.equal(true);
    expect((await checkTarget('http://169.254.169.254/latest', { allowPrivate: true })).ok).to.equal(false);
    expect((await checkTarget('ftp://127.0.0.1/', { allowPrivate: true })).ok).to.equal(false);
  });

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
