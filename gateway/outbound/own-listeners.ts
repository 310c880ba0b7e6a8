import os from 'node:os';
import { addressForms, hostOf } from './address-ranges';

/**
 * The ports this gateway process serves or reaches on its own host: the partner API, the admin
 * API, the upstream-notification listener, the upstreams that listen on this host (the embedded
 * sandboxes, or a cluster primary's), and its own database and Redis when they are on this host
 * (the embedded PostgreSQL's socket, a local server). No partner URL may point at one of them, in any
 * mode (docs/webhooks.md, "Allowed URLs"): a URL naming one of these ports on a loopback or
 * unspecified address, or on an address of one of this host's interfaces, is refused.
 *
 * The composition root (gateway/serve.ts) adds each listener once it knows its port (port 0 picks
 * one at listen time); the guard reads the registry at every check, so a port added later applies
 * to the next check.
 *
 * @example
 * const own = new OwnListeners();
 * own.add('admin API', 9876);
 * own.refuses('127.0.0.1', 9876); // "is this gateway's admin API listener"
 */
/** The port a URL without one means, by scheme: the web's, and the gateway's own dependencies' (PostgreSQL, Redis). */
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'postgres:': 5432, 'postgresql:': 5432, 'redis:': 6379, 'rediss:': 6379 };

export class OwnListeners {
  private readonly ports = new Map<number, string>();
  private readonly hostAddresses: () => string[];

  /** @param options.hostAddresses this host's interface addresses (default: every address of `os.networkInterfaces()`; tests give their own). */
  constructor(options: { hostAddresses?: () => string[] } = {}) {
    this.hostAddresses = options.hostAddresses ?? interfaceAddresses;
  }

  /** Registers a listener's port under a name a refusal shows (`admin API`); port 0 (not yet listening) is ignored. */
  add(name: string, port: number): void {
    if (port > 0 && !this.ports.has(port)) this.ports.set(port, name);
  }

  /**
   * Registers the port of `url` when its host is this host: `localhost`, a loopback or unspecified
   * address, or an address of one of its interfaces (an upstream URL: the embedded sandboxes listen
   * on 127.0.0.1). Any other host is not ours and is left out.
   */
  addUrl(name: string, url: string): void {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return;
    }
    const host = hostOf(parsed);
    const port = parsed.port ? Number(parsed.port) : (DEFAULT_PORTS[parsed.protocol] ?? 80);
    if (host === 'localhost' || host.endsWith('.localhost') || this.isThisHost(host)) this.add(name, port);
  }

  /** The registered listeners, by port. */
  list(): { name: string; port: number }[] {
    return [...this.ports].map(([port, name]) => ({ name, port }));
  }

  /**
   * Why `address:port` may not be called: it is one of these listeners (the port is registered and
   * the address, or an IPv4 address it carries, is loopback, unspecified or this host's); undefined
   * when it is not.
   */
  refuses(address: string, port: number): string | undefined {
    const name = this.ports.get(port);
    if (name === undefined || !this.isThisHost(address)) return undefined;
    return `is this gateway's own ${name} listener (port ${port})`;
  }

  /** Whether an address, or an IPv4 address it carries, is loopback, unspecified or one of this host's. */
  isThisHost(address: string): boolean {
    const forms = addressForms(address);
    if (forms.some((form) => form.range === 'loopback' || form.range === 'unspecified')) return true;
    if (forms.length === 0) return false;
    const own = new Set(this.hostAddresses().flatMap((a) => addressForms(a).slice(0, 1).map((form) => form.address)));
    return forms.some((form) => own.has(form.address));
  }
}

/** Every address of this host's network interfaces. */
function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}
