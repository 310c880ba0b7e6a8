import { expect } from 'chai';
import { classifyAddress, embeddedIPv4 } from '../../../../gateway/outbound/address-ranges';
import { checkTarget, OwnListeners, type GuardRules, type Resolver } from '../../../../gateway/outbound';
import ipaddr from 'ipaddr.js';

/** A resolver answering `addresses` for every name, counting its calls. */
function resolveTo(...addresses: string[]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

/** This host as the guard sees it in these tests: one interface address, public in the production table, private in the sandbox one. */
const own = (hostAddress: string) => {
  const listeners = new OwnListeners({ hostAddresses: () => ['127.0.0.1', '::1', hostAddress, 'fe80::1%eth0'] });
  listeners.add('partner API', 41001);
  listeners.add('admin API', 41002);
  listeners.add('upstream notifications', 41003);
  listeners.addUrl('issuer upstream', 'http://127.0.0.1:41004');
  return listeners;
};

/** Each spelling refused outside sandbox mode, and (where it says) why. */
const REFUSED_IN_PRODUCTION: { url: string; reason?: RegExp }[] = [
  // 127.0.0.1, as the URL parser reads IPv4 (decimal, octal, hex, short forms)
  { url: 'https://127.0.0.1/', reason: /non-public address: a loopback address$/ },
  { url: 'https://2130706433/' },
  { url: 'https://0x7f000001/' },
  { url: 'https://017700000001/' },
  { url: 'https://0177.0.0.1/' },
  { url: 'https://0x7f.0.0.1/' },
  { url: 'https://127.1/' },
  { url: 'https://0x7f.1/' },
  { url: 'https://127.0.0.1./' },
  { url: 'https://127.255.255.254:8443/' },
  // 10/8
  { url: 'https://10.0.0.1/', reason: /private \(RFC 1918\)/ },
  { url: 'https://167772161/' },
  { url: 'https://012.0.0.1/' },
  { url: 'https://0xa.0.0.1/' },
  { url: 'https://10.1/' },
  { url: 'https://172.16.0.1/' },
  { url: 'https://192.168.1.1/' },
  // cloud metadata
  { url: 'https://169.254.169.254/latest', reason: /link-local \(cloud metadata\) address, never allowed/ },
  { url: 'https://2852039166/latest' },
  { url: 'https://0xa9fea9fe/latest' },
  { url: 'https://0251.0376.0251.0376/latest' },
  { url: 'https://169.254.43518/latest' },
  { url: 'https://[::ffff:169.254.169.254]/latest', reason: /link-local .*\(IPv4-mapped\)/ },
  { url: 'https://[::ffff:a9fe:a9fe]/latest' },
  // IPv6 spellings of loopback and private IPv4, and IPv6's own special ranges
  { url: 'https://[::1]/', reason: /a loopback address$/ },
  { url: 'https://[::127.0.0.1]/', reason: /a loopback address \(IPv4-compatible\)/ },
  { url: 'https://[::7f00:1]/' },
  { url: 'https://[::ffff:127.0.0.1]/', reason: /a loopback address \(IPv4-mapped\)/ },
  { url: 'https://[0:0:0:0:0:ffff:7f00:1]/' },
  { url: 'https://[::ffff:a00:1]/', reason: /private .*\(IPv4-mapped\)/ },
  { url: 'https://[64:ff9b::127.0.0.1]/', reason: /loopback address \(NAT64\)/ },
  { url: 'https://[64:ff9b::a00:1]/' },
  { url: 'https://[64:ff9b:1::8.8.8.8]/', reason: /local-use NAT64.*never allowed/ },
  { url: 'https://[2002:7f00:1::1]/', reason: /loopback address \(6to4\)/ },
  { url: 'https://[2002:a00:1::]/' },
  { url: 'https://[2002::1]/', reason: /unspecified address \(6to4\), never allowed/ },
  // Teredo: public server 65.54.227.120, client 10.0.0.1 (XORed); private server 10.0.0.1, public client 8.8.8.8; client 127.0.0.1
  { url: 'https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', reason: /private .*\(Teredo client\)/ },
  { url: 'https://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/', reason: /private .*\(Teredo server\)/ },
  { url: 'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', reason: /loopback address \(Teredo client\)/ },
  { url: 'https://[fe80::1%25eth0]/' },
  { url: 'https://[fe80::1]/', reason: /link-local/ },
  { url: 'https://[fc00::1]/', reason: /unique local/ },
  { url: 'https://[fd12::1]/' },
  { url: 'https://[ff02::1]/', reason: /multicast address, never allowed/ },
  { url: 'https://[::]/', reason: /unspecified address, never allowed/ },
  { url: 'https://[fec0::1]/' },
  { url: 'https://[::ffff:0:7f00:1]/' },
  { url: 'https://[2001:db8::1]/', reason: /reserved or documentation/ },
  { url: 'https://[3fff::1]/' },
  { url: 'https://[100::1]/' },
  { url: 'https://[100:0:0:1::1]/', reason: /IETF-reserved/ },
  { url: 'https://[2001:2::1]/' },
  { url: 'https://[2001:20::1]/' },
  { url: 'https://[5f00::1]/' },
  { url: 'https://[::2]/' },
  // IPv4 special-purpose ranges
  { url: 'https://0.0.0.0/', reason: /unspecified address, never allowed/ },
  { url: 'https://0/' },
  { url: 'https://100.64.0.1/', reason: /CGNAT/ },
  { url: 'https://192.0.0.8/', reason: /reserved or documentation address, never allowed/ },
  { url: 'https://198.18.0.1/' },
  { url: 'https://192.0.2.1/' },
  { url: 'https://198.51.100.7/' },
  { url: 'https://203.0.113.9/' },
  { url: 'https://192.88.99.1/' },
  { url: 'https://240.0.0.1/' },
  { url: 'https://255.255.255.255/', reason: /broadcast/ },
  { url: 'https://224.0.0.1/', reason: /multicast/ },
  { url: 'https://192.31.196.1/' },
  { url: 'https://192.52.193.1/' },
  // names refused before any lookup
  { url: 'https://localhost/', reason: /a local name/ },
  { url: 'https://a.localhost/' },
  { url: 'https://localhost./' },
  { url: 'https://x.internal/' },
  { url: 'https://printer.local/' },
  // this gateway's own listener on its public address, and the sandboxes' control routes
  { url: 'https://93.184.216.34:41002/', reason: /own admin API listener \(port 41002\)/ },
  { url: 'https://hooks.example.com/__sandbox/reset', reason: /sandbox's control routes/ },
  // the URL rules
  { url: 'http://example.com/', reason: /^must use https$/ },
  { url: 'https://u:p@hooks.example.com/', reason: /credentials/ },
  { url: 'https://hooks.example.com/#x', reason: /fragment/ },
  { url: 'not a url', reason: /absolute URL/ },
  { url: '/relative/path' },
  { url: `https://hooks.example.com/${'a'.repeat(2048)}`, reason: /at most 2048 characters/ },
];

/** Accepted outside sandbox mode: public addresses, directly or carried (mapped, NAT64, 6to4, Teredo). */
const ACCEPTED_IN_PRODUCTION = [
  'https://8.8.8.8/hook',
  'https://[2001:4860:4860::8888]/hook',
  'https://[64:ff9b::8.8.8.8]/hook',
  'https://[2002:808:808::1]/hook',
  'https://[::ffff:8.8.8.8]/hook',
  'https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/hook',
  'https://hooks.example.com/x?y=1',
  'https://93.184.216.34/hook',
  'https://93.184.216.34:8443/not-a-listener-port',
];

/** Sandbox mode (and WEBHOOKS_ALLOW_PRIVATE): http, loopback and private allowed; link-local and the rest never; own listeners and control routes never. */
const SANDBOX: { url: string; ok: boolean; reason?: RegExp; resolvesTo?: string }[] = [
  { url: 'http://127.0.0.1:4000/hook', ok: true },
  { url: 'http://localhost:4000/hook', ok: true, resolvesTo: '127.0.0.1' },
  { url: 'http://[::1]:4000/hook', ok: true },
  { url: 'http://[::ffff:127.0.0.1]:4000/hook', ok: true },
  { url: 'http://[::127.0.0.1]:4000/hook', ok: true },
  { url: 'http://10.1.2.3/hook', ok: true },
  { url: 'http://192.168.0.1:8080/hook', ok: true },
  { url: 'http://100.64.0.1/hook', ok: true },
  { url: 'http://[fd00::1]/hook', ok: true },
  { url: 'https://hooks.example.com/hook', ok: true, resolvesTo: '93.184.216.34' },
  // an own port on an address that is not this host's
  { url: 'http://10.1.2.3:41002/hook', ok: true },
  { url: 'http://169.254.169.254/latest', ok: false, reason: /link-local/ },
  { url: 'http://[fe80::1]/', ok: false, reason: /link-local/ },
  { url: 'http://[::ffff:169.254.169.254]/', ok: false, reason: /link-local/ },
  { url: 'http://0.0.0.0:4000/', ok: false, reason: /unspecified/ },
  { url: 'http://[::]:4000/', ok: false, reason: /unspecified/ },
  { url: 'http://224.0.0.1/', ok: false },
  { url: 'http://255.255.255.255/', ok: false },
  { url: 'http://240.0.0.1/', ok: false },
  { url: 'http://192.0.2.1/', ok: false },
  { url: 'http://[64:ff9b:1::a00:1]/', ok: false },
  { url: 'ftp://127.0.0.1/', ok: false, reason: /must use http or https/ },
  // this gateway's own listeners, however the address is spelled
  { url: 'http://127.0.0.1:41001/api/partner/me', ok: false, reason: /own partner API listener/ },
  { url: 'http://127.0.0.1:41002/admin/partners', ok: false, reason: /own admin API listener/ },
  { url: 'http://localhost:41002/admin/partners', ok: false, reason: /own admin API listener/, resolvesTo: '127.0.0.1' },
  { url: 'http://127.0.0.2:41002/', ok: false, reason: /own admin API listener/ },
  { url: 'http://[::1]:41003/upstream-notifications/issuer', ok: false, reason: /own upstream notifications listener/ },
  { url: 'http://[::ffff:127.0.0.1]:41002/', ok: false, reason: /own admin API listener/ },
  { url: 'http://[::127.0.0.1]:41002/', ok: false, reason: /own admin API listener/ },
  { url: 'http://10.0.0.5:41002/', ok: false, reason: /own admin API listener/ },
  { url: 'http://127.0.0.1:41004/cards', ok: false, reason: /own issuer upstream listener/ },
  // the sandboxes' control routes, on any host and however the path is spelled
  { url: 'http://127.0.0.1:4000/__sandbox/reset', ok: false, reason: /sandbox's control routes/ },
  { url: 'http://127.0.0.1:4000/__SANDBOX/reset', ok: false },
  { url: 'http://127.0.0.1:4000/%5F%5Fsandbox/reset', ok: false },
  { url: 'http://127.0.0.1:4000//__sandbox/reset', ok: false },
  { url: 'http://127.0.0.1:4000/x/../__sandbox/faults', ok: false },
  { url: 'https://hooks.example.com/__sandbox/notify-target', ok: false, resolvesTo: '93.184.216.34' },
];

describe('unit: the guard of partner-supplied URLs (gateway/outbound)', function () {
  it(`refuses ${REFUSED_IN_PRODUCTION.length} spellings outside sandbox mode, each with its reason, none of them looked up`, async function () {
    expect(REFUSED_IN_PRODUCTION.length).to.be.at.least(40);
    const resolve = resolveTo('93.184.216.34');
    const rules: GuardRules = { allowPrivate: false, resolve, ownListeners: own('93.184.216.34') };
    const accepted: string[] = [];
    for (const { url, reason } of REFUSED_IN_PRODUCTION) {
      const check = await checkTarget(url, rules);
      if (check.ok) accepted.push(url);
      else if (reason) expect(check.reason, url).to.match(reason);
    }
    expect(accepted, 'accepted though they should be refused').to.deep.equal([]);
    // IP literals are never looked up, nor a name whose URL is refused on its own (local names, the URL rules, control routes).
    expect(resolve.calls).to.deep.equal([]);
  });

  it('accepts public addresses outside sandbox mode, also when an IPv6 address carries a public IPv4 one (mapped, NAT64, 6to4, Teredo), and connects to the address checked', async function () {
    const rules: GuardRules = { allowPrivate: false, resolve: resolveTo('93.184.216.34'), ownListeners: own('93.184.216.34') };
    const refused: string[] = [];
    for (const url of ACCEPTED_IN_PRODUCTION) {
      const check = await checkTarget(url, rules);
      if (!check.ok) refused.push(`${url}: ${check.reason}`);
    }
    expect(refused).to.deep.equal([]);
    expect(await checkTarget('https://hooks.example.com/x', rules)).to.deep.include({ ok: true, address: '93.184.216.34', family: 4 });
    expect(await checkTarget('https://[::ffff:8.8.8.8]/', rules)).to.deep.include({ ok: true, address: '::ffff:808:808' });
  });

  it('refuses a name when any of its addresses is refused (a mix of public and private answers), and one that does not resolve', async function () {
    for (const mix of [['93.184.216.34', '10.0.0.5'], ['10.0.0.5', '93.184.216.34'], ['2606:2800:220:1::1', '::1'], ['93.184.216.34', '::ffff:169.254.169.254']]) {
      const check = await checkTarget('https://mixed.example.com/', { allowPrivate: false, resolve: resolveTo(...mix) });
      expect(check.ok, mix.join(', ')).to.equal(false);
    }
    const nowhere: Resolver = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await checkTarget('https://nowhere.example.com/', { allowPrivate: false, resolve: nowhere })).to.deep.equal({ ok: false, reason: 'does not resolve' });
    expect(await checkTarget('https://empty.example.com/', { allowPrivate: false, resolve: resolveTo() })).to.deep.equal({ ok: false, reason: 'does not resolve' });
    // In sandbox mode a mix of loopback and link-local is refused too.
    expect((await checkTarget('http://mixed.example.com/', { allowPrivate: true, resolve: resolveTo('127.0.0.1', '169.254.169.254') })).ok).to.equal(false);
  });

  it('in sandbox mode allows http, loopback and private addresses; never link-local, unspecified, multicast, reserved, this gateway\'s own listeners or a sandbox control route', async function () {
    const wrong: string[] = [];
    for (const { url, ok, reason, resolvesTo } of SANDBOX) {
      const check = await checkTarget(url, { allowPrivate: true, resolve: resolveTo(resolvesTo ?? '93.184.216.34'), ownListeners: own('10.0.0.5') });
      if (check.ok !== ok) wrong.push(`${url}: ${check.ok ? 'accepted' : check.reason}`);
      else if (!check.ok && reason && !reason.test(check.reason)) wrong.push(`${url}: reason ${check.reason}`);
    }
    expect(wrong).to.deep.equal([]);
  });

  it('registers an upstream URL, the database and Redis as own listeners only when on this host, and a port only once it is known', function () {
    const listeners = new OwnListeners({ hostAddresses: () => ['10.0.0.5'] });
    listeners.addUrl('issuer upstream', 'http://127.0.0.1:4010');
    listeners.addUrl('processing upstream', 'http://localhost:4011/');
    listeners.addUrl('accounts upstream', 'http://10.0.0.5:4012');
    listeners.addUrl('remote upstream', 'https://issuer.example.com');
    listeners.addUrl('remote upstream', 'http://10.9.9.9:4013');
    // The gateway's own database and Redis on this host, their schemes' ports when none is given.
    listeners.addUrl('database', 'postgres://postgres@127.0.0.1/test');
    listeners.addUrl('Redis', 'redis://localhost:6380');
    listeners.addUrl('remote database', 'postgres://db.example.com:5433/x');
    listeners.add('admin API', 0);
    expect(listeners.list()).to.deep.equal([
      { name: 'issuer upstream', port: 4010 },
      { name: 'processing upstream', port: 4011 },
      { name: 'accounts upstream', port: 4012 },
      { name: 'database', port: 5432 },
      { name: 'Redis', port: 6380 },
    ]);
    expect(listeners.refuses('127.0.0.1', 5432)).to.match(/database/);
    expect(listeners.refuses('::ffff:10.0.0.5', 4012)).to.match(/accounts upstream/);
    expect(listeners.refuses('10.9.9.9', 4012)).to.equal(undefined);
  });

  it('classifies with ipaddr.js, judging embedded IPv4 addresses by what they carry (Teredo\'s client XORed)', function () {
    expect(classifyAddress('::7f00:1')).to.deep.equal({ kind: 'private', range: 'loopback', via: 'IPv4-compatible' });
    expect(classifyAddress('64:ff9b::8.8.8.8')).to.deep.equal({ kind: 'public' });
    expect(classifyAddress('64:ff9b:1::8.8.8.8')).to.deep.equal({ kind: 'never', range: 'localNat64' });
    expect(classifyAddress('2002:a9fe:a9fe::1')).to.deep.equal({ kind: 'never', range: 'linkLocal', via: '6to4' });
    expect(classifyAddress('100:0:0:1::1')).to.deep.equal({ kind: 'never', range: 'outsideGlobalUnicast' });
    expect(classifyAddress('fe80::1%eth0')).to.deep.equal({ kind: 'never', range: 'linkLocal' });
    expect(classifyAddress('example.com')).to.deep.equal({ kind: 'never', range: 'not an IP address' });
    const teredo = embeddedIPv4(ipaddr.IPv6.parse('2001:0:4136:e378:8000:63bf:3fff:fdd2'));
    expect(teredo.map(({ via, address }) => `${via} ${address.toString()}`)).to.deep.equal(['Teredo server 65.54.227.120', 'Teredo client 192.0.2.45']);
  });
});
