import dns from 'node:dns';
import net from 'node:net';
import { classifyAddress, describeClass, hostOf, sameAddress } from './address-ranges';
import type { OwnListeners } from './own-listeners';

/** Resolves a host name to every address it has (dns.lookup by default; tests inject their own). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/** What the guard allows: the gateway's mode, and what it refuses in every mode. */
export interface GuardRules {
  /** http and loopback or private addresses too (sandbox mode, `WEBHOOKS_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
  /** This gateway's own listeners (never a target); none when omitted. */
  ownListeners?: OwnListeners;
  resolve?: Resolver;
}

/** A URL the guard allowed, and the one address to connect to. */
export interface VettedTarget {
  url: URL;
  address: string;
  family: number;
}

export type TargetCheck = ({ ok: true } & VettedTarget) | { ok: false; reason: string };

/** The longest URL a partner may register. */
export const MAX_URL_LENGTH = 2048;

/** The path prefix of the sandboxes' control routes (sandbox/shared/sandbox-app.ts mounts them there). */
const SANDBOX_CONTROL_PREFIX = '/__sandbox';

/**
 * Why an address may not be called, or undefined when it may: public addresses always; loopback,
 * private, CGNAT and unique local ones only with `allowPrivate`; every other special-purpose range
 * never (gateway/outbound/address-ranges.ts). An IPv6 address that carries an IPv4 address
 * (mapped, compatible, NAT64, 6to4, Teredo) is judged by the address it carries.
 */
export function refusedAddress(address: string, allowPrivate: boolean): string | undefined {
  const judged = classifyAddress(address);
  if (judged.kind === 'public') return undefined;
  if (judged.kind === 'never') return `resolves to ${describeClass(judged)}, never allowed`;
  if (!allowPrivate) return `resolves to a non-public address: ${describeClass(judged)}`;
  return undefined;
}

/** Whether a URL's path addresses the sandboxes' control routes (`/__sandbox...`; decoded, any case, repeated slashes as one, as a router reads it). */
function addressesSandboxControl(pathname: string): boolean {
  let path = pathname;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    // A malformed escape: judged as written.
  }
  return path.replace(/[/\\]+/g, '/').toLowerCase().startsWith(SANDBOX_CONTROL_PREFIX);
}

/**
 * Whether `raw` may be called: the one guard of every partner-supplied URL (webhook endpoints, the
 * decision endpoint; docs/webhooks.md, "Allowed URLs"). An absolute https URL (http too when
 * private targets are allowed) of at most {@link MAX_URL_LENGTH} characters, with no credentials or
 * fragment, whose path is not a sandbox control route, and every address its host resolves to
 * allowed ({@link refusedAddress}) and none of them one of this gateway's own listeners at the URL's
 * port. Outside `allowPrivate`, `localhost`, `*.localhost`, `*.internal` and `*.local` names are
 * refused before any lookup. The address answered is the one to connect to (the first resolved), so
 * a name that resolves elsewhere at connection time (DNS rebinding) is never reached.
 *
 * @example await checkTarget('https://[::127.0.0.1]/', { allowPrivate: false }) // { ok: false, reason: 'resolves to a non-public address: a loopback address (IPv4-compatible)' }
 */
export async function checkTarget(raw: string, rules: GuardRules): Promise<TargetCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` };
  if (url.protocol !== 'https:' && !(rules.allowPrivate && url.protocol === 'http:')) {
    return { ok: false, reason: rules.allowPrivate ? 'must use http or https' : 'must use https' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (url.hash) return { ok: false, reason: 'must not have a fragment' };
  if (addressesSandboxControl(url.pathname)) return { ok: false, reason: `must not address a sandbox's control routes (${SANDBOX_CONTROL_PREFIX}...)` };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) return { ok: false, reason: 'must name a host' };
  if (!rules.allowPrivate && /(^|\.)(localhost|internal|local)$/.test(hostOf(url))) return { ok: false, reason: 'resolves to a non-public address: a local name' };
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await (rules.resolve ?? systemResolver)(host);
    } catch {
      return { ok: false, reason: 'does not resolve' };
    }
    if (addresses.length === 0) return { ok: false, reason: 'does not resolve' };
  }
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  for (const { address } of addresses) {
    const reason = refusedAddress(address, rules.allowPrivate) ?? rules.ownListeners?.refuses(address, port);
    if (reason) return { ok: false, reason };
  }
  return { ok: true, url, address: addresses[0].address, family: addresses[0].family };
}

/**
 * Why a connected socket may not carry the request, checked before anything is sent on it: its
 * remote end must be the address the guard vetted for `target`, and pass the guard again (the
 * address rules and the own listeners, at the port actually connected to).
 */
export function refusedConnection(remote: { address?: string; port?: number }, target: VettedTarget, rules: GuardRules): string | undefined {
  if (!remote.address || !remote.port) return 'the connection has no remote address';
  if (!sameAddress(remote.address, target.address)) return 'connected to another address than the one vetted';
  return refusedAddress(remote.address, rules.allowPrivate) ?? rules.ownListeners?.refuses(remote.address, remote.port);
}
