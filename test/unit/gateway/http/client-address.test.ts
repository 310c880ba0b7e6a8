import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { clientAddressOf } from '../../../../gateway/http/client-address';
import { readSettings } from '../../../../gateway/settings';

const request = (peer: string, forwardedFor?: string) =>
  ({ socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} }) as unknown as IncomingMessage;

describe('unit: http/client-address (TRUST_PROXY)', function () {
  it('without TRUST_PROXY: the TCP peer, whatever X-Forwarded-For says', function () {
    expect(clientAddressOf(undefined)(request('10.0.0.5', '203.0.113.7'))).to.equal('10.0.0.5');
  });

  it('with TRUST_PROXY: the nearest untrusted address, only when the peer is trusted', function () {
    const of = clientAddressOf('10.0.0.0/8, loopback');
    expect(of(request('10.0.0.5', '203.0.113.7'))).to.equal('203.0.113.7');
    expect(of(request('10.0.0.5', '198.51.100.1, 203.0.113.7, 10.0.0.9'))).to.equal('203.0.113.7');
    expect(of(request('192.0.2.44', '203.0.113.7')), 'an untrusted peer is the client').to.equal('192.0.2.44');
  });

  it('refuses a TRUST_PROXY it cannot read, at boot', function () {
    expect(() => readSettings({ TRUST_PROXY: 'not an address' })).to.throw(/TRUST_PROXY must be/);
    expect(readSettings({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy).to.equal('10.0.0.0/8');
  });
});
