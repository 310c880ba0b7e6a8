import { expect } from 'chai';
import { DEFAULT_FAILED_AUTH_LIMITS, FailedAuthLimiter, failedAuthLimitsFrom } from '../../../policies/es512-jwt/failed-auth-limiter';
import { readSettings } from '../../../gateway/settings';

describe('unit: auth/failed-auth-limiter', function () {
  const now = 1_800_000_000_000;
  const limits = { perAddress: 5, perPartner: 3, windowMs: 60_000, trustedAddressMs: 600_000 };

  it('refuses a claimed partner after its limit of failures, from any address, until the window ends', function () {
    const limiter = new FailedAuthLimiter(limits);
    for (let i = 0; i < 3; i++) {
      expect(limiter.check('10.0.0.1', 'p1', now)).to.equal(undefined);
      limiter.failed('10.0.0.1', 'p1', now);
    }
    expect(limiter.check('10.0.0.1', 'p1', now + 1000)).to.deep.equal({ scope: 'partner', limit: 3, retryAfterSeconds: 59 });
    expect(limiter.check('10.0.0.9', 'p1', now + 1000)?.scope).to.equal('partner');
    expect(limiter.check('10.0.0.1', 'p2', now + 1000), 'another partner').to.equal(undefined);
    expect(limiter.check('10.0.0.1', 'p1', now + 60_000), 'next window').to.equal(undefined);
    expect(limiter.stats().throttled).to.equal(2);
  });

  it('refuses an address after its limit of failures, whichever partner it names', function () {
    const limiter = new FailedAuthLimiter(limits);
    for (let i = 0; i < 5; i++) limiter.failed('10.0.0.2', `p${i}`, now);
    expect(limiter.check('10.0.0.2', 'p9', now)).to.include({ scope: 'address', limit: 5 });
    expect(limiter.check('10.0.0.3', 'p9', now)).to.equal(undefined);
  });

  it('exempts an address that verified a token of the partner from that partner\'s count, not from its own', function () {
    const limiter = new FailedAuthLimiter(limits);
    limiter.succeeded('10.0.0.7', 'p1');
    for (let i = 0; i < 3; i++) limiter.failed('10.6.6.6', 'p1', now);
    expect(limiter.check('10.6.6.6', 'p1', now)?.scope).to.equal('partner');
    expect(limiter.check('10.0.0.7', 'p1', now)).to.equal(undefined);
    for (let i = 0; i < 5; i++) limiter.failed('10.0.0.7', 'p1', now);
    expect(limiter.check('10.0.0.7', 'p1', now)?.scope).to.equal('address');
  });

  it('ends an address\'s exemption trustedAddressMs after its last verified token, on the limiter\'s clock', function () {
    let clock = 1_000;
    const limiter = new FailedAuthLimiter(limits, { now: () => clock });
    limiter.succeeded('10.0.0.8', 'p2');
    for (let i = 0; i < 3; i++) limiter.failed('10.6.6.7', 'p2');
    clock += limits.trustedAddressMs;
    // The partner's window (60 s) ended long ago: count it full again, at the clock's time.
    for (let i = 0; i < 3; i++) limiter.failed('10.6.6.8', 'p2');
    expect(limiter.check('10.0.0.8', 'p2'), 'trusted exactly trustedAddressMs ago').to.equal(undefined);
    clock += 1;
    expect(limiter.check('10.0.0.8', 'p2')?.scope, 'the exemption ended').to.equal('partner');
  });

  it('reports the failure that reaches a limit once, for one log line per window', function () {
    const limiter = new FailedAuthLimiter(limits);
    const reached = Array.from({ length: 7 }, () => limiter.failed('10.0.0.1', 'p1', now));
    expect(reached).to.deep.equal([[], [], ['partner'], [], ['address'], [], []]);
  });

  it('reads AUTH_FAILURES_PER_ADDRESS_PER_MINUTE and AUTH_FAILURES_PER_PARTNER_PER_MINUTE, refusing bad values', function () {
    expect(failedAuthLimitsFrom(readSettings({}))).to.deep.equal(DEFAULT_FAILED_AUTH_LIMITS);
    expect(DEFAULT_FAILED_AUTH_LIMITS).to.include({ perAddress: 60, perPartner: 30, windowMs: 60_000 });
    expect(failedAuthLimitsFrom(readSettings({ AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: '100', AUTH_FAILURES_PER_PARTNER_PER_MINUTE: '7' }))).to.include({ perAddress: 100, perPartner: 7 });
    expect(() => readSettings({ AUTH_FAILURES_PER_PARTNER_PER_MINUTE: '0' })).to.throw(/AUTH_FAILURES_PER_PARTNER_PER_MINUTE must be an integer/);
    expect(() => readSettings({ AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: 'many' })).to.throw(/AUTH_FAILURES_PER_ADDRESS_PER_MINUTE/);
  });

});
