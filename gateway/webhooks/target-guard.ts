import dns from 'node:dns';
import net from 'node:net';

/** Resolves a host name to every address it has (dns.lookup by default; tests inject their own). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/** Never a webhook target, even with WEBHOOKS_ALLOW_PRIVATE: link-local (cloud metadata), unspecified, multicast, reserved. */
const ALWAYS_REFUSED = new net.BlockList();
ALWAYS_REFUSED.addSubnet('0.0.0.0', 8, 'ipv4');
ALWAYS_REFUSED.addSubnet('169.254.0.0', 16, 'ipv4');
ALWAYS_REFUSED.addSubnet('224.0.0.0', 4, 'ipv4');
ALWAYS_REFUSED.addSubnet('240.0.0.0', 4, 'ipv4');
ALWAYS_REFUSED.addAddress('::', 'ipv6');
ALWAYS_REFUSED.addSubnet('fe80::', 10, 'ipv6');
ALWAYS_REFUSED.addSubnet('ff00::', 8, 'ipv6');

/** Loopback and private ranges: refused unless private targets are allowed (sandbox mode, WEBHOOKS_ALLOW_PRIVATE). */
const PRIVATE = new net.BlockList();
for (const [prefix, bits] of [
  ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24],
  ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
] as const) PRIVATE.addSubnet(prefix, bits, 'ipv4');
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('64:ff9b::', 96, 'ipv6');
PRIVATE.addSubnet('100::', 64, 'ipv6');
PRIVATE.addSubnet('2001:db8::', 32, 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');

/** Why an address may not be a target, or undefined when it may. An IPv4-mapped IPv6 address is judged as its IPv4 address. */
export function refusedAddress(address: string, allowPrivate: boolean): string | undefined {
  let ip = address;
  let family: 'ipv4' | 'ipv6' = net.isIPv4(ip) ? 'ipv4' : 'ipv6';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  // The URL parser writes [::ffff:127.0.0.1] as [::ffff:7f00:1].
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (mapped) {
    ip = mapped[1];
    family = 'ipv4';
  } else if (mappedHex) {
    const [hi, lo] = [parseInt(mappedHex[1], 16), parseInt(mappedHex[2], 16)];
    ip = [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
    family = 'ipv4';
  } else if (family === 'ipv6' && /^::ffff:/i.test(ip)) {
    return 'resolves to a non-public address';
  }
  if (ALWAYS_REFUSED.check(ip, family)) return 'resolves to a link-local, metadata or reserved address';
  if (!allowPrivate && PRIVATE.check(ip, family)) return 'resolves to a non-public address';
  return undefined;
}

export type TargetCheck = { ok: true; url: URL; address: string; family: number } | { ok: false; reason: string };

/**
 * Whether `raw` may receive webhooks: https (http too when private targets are allowed), no
 * credentials or fragment, and every address its host resolves to public (loopback and private
 * also when allowed; link-local and metadata never). The address answered is the one to connect
 * to, so a name that resolves elsewhere at connection time (DNS rebinding) is never reached.
 */
export async function checkTarget(raw: string, options: { allowPrivate: boolean; resolve?: Resolver }): Promise<TargetCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (raw.length > 2048) return { ok: false, reason: 'must be at most 2048 characters' };
  if (url.protocol !== 'https:' && !(options.allowPrivate && url.protocol === 'http:')) {
    return { ok: false, reason: options.allowPrivate ? 'must use http or https' : 'must use https' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (url.hash) return { ok: false, reason: 'must not have a fragment' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) return { ok: false, reason: 'must name a host' };
  if (!options.allowPrivate && /(^|\.)(localhost|internal|local)$/i.test(host)) return { ok: false, reason: 'resolves to a non-public address' };
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch {
      return { ok: false, reason: 'does not resolve' };
    }
    if (addresses.length === 0) return { ok: false, reason: 'does not resolve' };
  }
  for (const { address } of addresses) {
    const reason = refusedAddress(address, options.allowPrivate);
    if (reason) return { ok: false, reason };
  }
  return { ok: true, url, address: addresses[0].address, family: addresses[0].family };
}
