import ipaddr from 'ipaddr.js';

/**
 * What an IP address is to a partner-supplied URL (docs/webhooks.md, "Allowed URLs"):
 * - `public`: reachable on the internet; allowed in every mode;
 * - `private`: loopback, RFC 1918, shared (CGNAT) or unique local: allowed only where private
 *   targets are (sandbox mode, `WEBHOOKS_ALLOW_PRIVATE`);
 * - `never`: every other special-purpose range of IANA's IPv4 and IPv6 registries (link-local and
 *   cloud metadata, unspecified, broadcast, multicast, documentation, benchmarking, reserved...)
 *   and IPv6 outside 2000::/3; refused in every mode.
 *
 * `range` names what it is (ipaddr.js's range name, or one of {@link EXTRA_RANGES}); `via` says
 * which IPv4-embedding form of IPv6 carried the address judged (`6to4`, `teredo server`...).
 */
export type AddressClass = { kind: 'public' } | { kind: 'private' | 'never'; range: string; via?: string };

/** An IPv4 address carried inside an IPv6 one, and the form that carries it. */
export interface EmbeddedIPv4 {
  via: 'IPv4-mapped' | 'IPv4-compatible' | 'NAT64' | '6to4' | 'Teredo server' | 'Teredo client';
  address: ipaddr.IPv4;
}

const PUBLIC: AddressClass = { kind: 'public' };

/** The ranges of ipaddr.js that may be reached where private targets are allowed. */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal']);

/** IANA's global unicast space: every IPv6 address outside it is reserved by the IETF or not yet allocated. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** RFC 6052's well-known NAT64 prefix (globally reachable, judged by the IPv4 address it carries). */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * Special-purpose ranges that ipaddr.js 2.5's `range()` reports as `unicast` or does not single out,
 * checked here: `64:ff9b:1::/48` (RFC 8215 local-use NAT64: ipaddr.js names it `rfc6052` with the
 * well-known /96, but IANA marks it not globally reachable, and the IPv4 address it carries is the
 * operator's choice, so it is refused whole), and the IPv6 space outside 2000::/3 (RFC 9780's dummy
 * prefix `100:0:0:1::/64` and every other unallocated or IETF-reserved block: nothing there is a
 * public host).
 */
export const EXTRA_RANGES = {
  localNat64: ipaddr.parseCIDR('64:ff9b:1::/48'),
  outsideGlobalUnicast: GLOBAL_UNICAST,
} as const;

/**
 * The IPv4 addresses an IPv6 address carries, judged in its place: IPv4-mapped (`::ffff:0:0/96`),
 * IPv4-compatible (`::/96`, deprecated), NAT64 (`64:ff9b::/96`), 6to4 (`2002::/16`, the address in
 * bits 16 to 47) and Teredo (`2001::/32`: the server in bits 32 to 63, the client in the last 32
 * bits XORed with ones). Empty for any other address.
 *
 * @example embeddedIPv4(ipaddr.IPv6.parse('2002:7f00:1::1')) // [{ via: '6to4', address: 127.0.0.1 }]
 */
export function embeddedIPv4(ip: ipaddr.IPv6): EmbeddedIPv4[] {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = ip.range();
  if (range === 'ipv4Mapped') return [{ via: 'IPv4-mapped', address: v4(p[6], p[7]) }];
  if (range === 'rfc6052' && ip.match(NAT64_WELL_KNOWN)) return [{ via: 'NAT64', address: v4(p[6], p[7]) }];
  if (range === '6to4') return [{ via: '6to4', address: v4(p[1], p[2]) }];
  if (range === 'teredo') {
    return [
      { via: 'Teredo server', address: v4(p[2], p[3]) },
      { via: 'Teredo client', address: v4(p[6] ^ 0xffff, p[7] ^ 0xffff) },
    ];
  }
  // `::` and `::1` are ranges of their own (unspecified, loopback); the rest of ::/96 is reported as unicast.
  if (range === 'unicast' && p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) {
    return [{ via: 'IPv4-compatible', address: v4(p[6], p[7]) }];
  }
  return [];
}

function classifyIPv4(ip: ipaddr.IPv4): AddressClass {
  const range = ip.range();
  if (range === 'unicast') return PUBLIC;
  return { kind: PRIVATE_RANGES.has(range) ? 'private' : 'never', range };
}

/**
 * The class of one IP address (docs/webhooks.md, "Allowed URLs"). An IPv6 address that carries an
 * IPv4 address ({@link embeddedIPv4}) is judged by what it carries: public only when every address
 * it carries is public, else the worst of them (`never` over `private`), named with `via`. Anything
 * that is not an IP address is `never`.
 *
 * @example classifyAddress('::7f00:1') // { kind: 'private', range: 'loopback', via: 'IPv4-compatible' }
 * @example classifyAddress('64:ff9b::8.8.8.8') // { kind: 'public' }
 */
export function classifyAddress(text: string): AddressClass {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(text);
  } catch {
    return { kind: 'never', range: 'not an IP address' };
  }
  if (ip.kind() === 'ipv4') return classifyIPv4(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded.length > 0) {
    let worst: AddressClass = PUBLIC;
    for (const { via, address } of embedded) {
      const judged = classifyIPv4(address);
      if (judged.kind === 'never' || (judged.kind === 'private' && worst.kind === 'public')) worst = { ...judged, via };
      if (worst.kind === 'never') break;
    }
    return worst;
  }
  if (v6.match(EXTRA_RANGES.localNat64)) return { kind: 'never', range: 'localNat64' };
  const range = v6.range();
  if (range !== 'unicast') return { kind: PRIVATE_RANGES.has(range) ? 'private' : 'never', range };
  if (!v6.match(EXTRA_RANGES.outsideGlobalUnicast)) return { kind: 'never', range: 'outsideGlobalUnicast' };
  return PUBLIC;
}

/** What a range is, in a refusal's reason. */
const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private (RFC 1918)',
  carrierGradeNat: 'shared (CGNAT, RFC 6598)',
  uniqueLocal: 'unique local (fc00::/7)',
  linkLocal: 'link-local (cloud metadata)',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  reserved: 'reserved or documentation',
  benchmarking: 'benchmarking',
  localNat64: 'local-use NAT64 (64:ff9b:1::/48)',
  outsideGlobalUnicast: 'IETF-reserved (outside 2000::/3)',
  'not an IP address': 'invalid',
};

/** A short description of a refused class for a refusal's reason, e.g. `a loopback address (IPv4-compatible)`. */
export function describeClass(judged: Exclude<AddressClass, { kind: 'public' }>): string {
  const name = RANGE_NAMES[judged.range] ?? `special-purpose (${judged.range})`;
  return `a ${name} address${judged.via ? ` (${judged.via})` : ''}`;
}

/**
 * Whether two address strings name the same address (`::ffff:7f00:1` and `::ffff:127.0.0.1` do;
 * an IPv4 address and its IPv4-mapped form do not: a socket reports the family it used).
 */
export function sameAddress(a: string, b: string): boolean {
  try {
    const x = ipaddr.parse(a);
    const y = ipaddr.parse(b);
    return x.kind() === y.kind() && x.toNormalizedString() === y.toNormalizedString();
  } catch {
    return false;
  }
}

/** An IPv6 address without its zone (`fe80::1%eth0` → `fe80::1`); a slice, not `/%.*$/` (quadratic backtracking). */
function withoutZone(address: string): string {
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}

/**
 * The address itself and every IPv4 address it carries, normalised (zone dropped): what an own
 * listener's check compares with this host's addresses.
 */
export function addressForms(text: string): { address: string; range: string }[] {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(text);
  } catch {
    return [];
  }
  if (ip.kind() === 'ipv4') return [{ address: ip.toString(), range: ip.range() }];
  const v6 = ip as ipaddr.IPv6;
  return [{ address: withoutZone(v6.toNormalizedString()), range: v6.range() }, ...embeddedIPv4(v6).map(({ address }) => ({ address: address.toString(), range: address.range() }))];
}

/**
 * A URL's host name as a resolver reads it: without its brackets (an IPv6 literal) and its trailing
 * dots (`localhost.` is `localhost`), in lower case. A loop rather than `/\.+$/`, whose backtracking
 * is quadratic on a long run of dots not at the end (test/unit/gateway/regex-linearity.test.ts).
 *
 * @example hostOf(new URL('http://LocalHost.../x')) // 'localhost'
 */
export function hostOf(url: URL): string {
  const host = url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname;
  let end = host.length;
  while (end > 0 && host.charCodeAt(end - 1) === 0x2e) end--;
  return host.slice(0, end).toLowerCase();
}
