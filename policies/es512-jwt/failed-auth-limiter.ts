import type { LRUCache } from 'lru-cache';
import { boundedLru } from '../../gateway/bounded-lru';

/** Limits on failed token verifications (docs/authentication.md, "Throttling failed authentication"). */
export interface FailedAuthLimits {
  /** Failed verifications allowed per client address and window (`AUTH_FAILURES_PER_ADDRESS_PER_MINUTE`). */
  perAddress: number;
  /** Failed verifications allowed per claimed partner (`sub`) and window (`AUTH_FAILURES_PER_PARTNER_PER_MINUTE`). */
  perPartner: number;
  /** Length of the window in ms (60 s). */
  windowMs: number;
  /**
   * How long an address that verified a token of a partner stays exempt from that partner's limit
   * (10 min): forged tokens naming a partner do not lock the partner itself out.
   */
  trustedAddressMs: number;
}

export const DEFAULT_FAILED_AUTH_LIMITS: FailedAuthLimits = { perAddress: 60, perPartner: 30, windowMs: 60_000, trustedAddressMs: 600_000 };

/** The limits from the settings (`AUTH_FAILURES_PER_ADDRESS_PER_MINUTE`, `AUTH_FAILURES_PER_PARTNER_PER_MINUTE`). */
export function failedAuthLimitsFrom(settings: { authFailuresPerAddressPerMinute: number; authFailuresPerPartnerPerMinute: number }): FailedAuthLimits {
  return { ...DEFAULT_FAILED_AUTH_LIMITS, perAddress: settings.authFailuresPerAddressPerMinute, perPartner: settings.authFailuresPerPartnerPerMinute };
}

/** Why a verification is not attempted: which count is over its limit, and for how long. */
export interface Throttled {
  scope: 'address' | 'partner';
  limit: number;
  retryAfterSeconds: number;
}

interface Window {
  count: number;
  resetAt: number;
}

/**
 * Counts failed token verifications (those that reached the partner lookup: unknown partner,
 * disabled partner, unknown or revoked key, bad signature) per client address and per claimed
 * partner in fixed windows, in this process. {@link check} runs before the partner lookup and the
 * ES512 verification: over either limit the request is answered 429 without them.
 *
 * The partner count does not apply to an address that verified a token of that partner within
 * `trustedAddressMs`, so that forged tokens sent from elsewhere in a partner's name do not lock the
 * partner out; that address still has its own address count. Every map is a bounded LRU.
 */
export class FailedAuthLimiter {
  private readonly byAddress: LRUCache<string, Window>;
  private readonly byPartner: LRUCache<string, Window>;
  private readonly trusted: LRUCache<string, true>;
  private throttledCount = 0;
  private readonly now: () => number;

  /**
   * @param options.max most addresses and partners counted (default 50,000 each)
   * @param options.now clock in ms (default `Date.now`) of the windows and of the trusted addresses' lifetime (tests pass one they move)
   */
  constructor(readonly limits: FailedAuthLimits = DEFAULT_FAILED_AUTH_LIMITS, options: { max?: number; now?: () => number } = {}) {
    const max = options.max ?? 50_000;
    this.now = options.now ?? Date.now;
    this.byAddress = boundedLru<string, Window>(max);
    this.byPartner = boundedLru<string, Window>(max);
    this.trusted = boundedLru<string, true>(max, { ttl: limits.trustedAddressMs, ttlAutopurge: false, now: this.now });
  }

  private static trustKey(address: string, partnerId: string): string {
    return `${partnerId} ${address}`;
  }

  private over(map: LRUCache<string, Window>, key: string, limit: number, nowMs: number): number | undefined {
    const window = map.get(key);
    if (!window || window.resetAt <= nowMs || window.count < limit) return undefined;
    return Math.max(1, Math.ceil((window.resetAt - nowMs) / 1000));
  }

  /** Undefined when a verification may be attempted; otherwise which limit is reached and until when. */
  check(address: string, partnerId: string, nowMs = this.now()): Throttled | undefined {
    const { perAddress, perPartner } = this.limits;
    const byAddress = this.over(this.byAddress, address, perAddress, nowMs);
    if (byAddress !== undefined) return this.throttled({ scope: 'address', limit: perAddress, retryAfterSeconds: byAddress });
    if (this.trusted.has(FailedAuthLimiter.trustKey(address, partnerId))) return undefined;
    const byPartner = this.over(this.byPartner, partnerId, perPartner, nowMs);
    if (byPartner !== undefined) return this.throttled({ scope: 'partner', limit: perPartner, retryAfterSeconds: byPartner });
    return undefined;
  }

  private throttled(result: Throttled): Throttled {
    this.throttledCount += 1;
    return result;
  }

  private count(map: LRUCache<string, Window>, key: string, nowMs: number): number {
    let window = map.get(key);
    if (!window || window.resetAt <= nowMs) {
      window = { count: 0, resetAt: nowMs + this.limits.windowMs };
      map.set(key, window);
    }
    window.count += 1;
    return window.count;
  }

  /**
   * Counts one failed verification. Returns the scopes whose limit this failure reached (for one
   * log line per window and key, not one per refused request).
   */
  failed(address: string, partnerId: string, nowMs = this.now()): ('address' | 'partner')[] {
    const reached: ('address' | 'partner')[] = [];
    if (this.count(this.byAddress, address, nowMs) === this.limits.perAddress) reached.push('address');
    if (this.count(this.byPartner, partnerId, nowMs) === this.limits.perPartner) reached.push('partner');
    return reached;
  }

  /** A token of this partner verified from this address: the address is exempt from the partner's count for a while. */
  succeeded(address: string, partnerId: string): void {
    this.trusted.set(FailedAuthLimiter.trustKey(address, partnerId), true);
  }

  /** Requests answered 429 so far (tests, diagnostics). */
  stats(): { throttled: number } {
    return { throttled: this.throttledCount };
  }
}
