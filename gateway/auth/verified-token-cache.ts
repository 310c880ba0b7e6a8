import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Partner } from '../partners/partner-store';

/** What a verified token established: the partner, the key that signed it and its claims. */
export interface VerifiedToken {
  partner: Partner;
  kid: string;
  claims: { iss: string; sub: string; iat: number; exp: number };
}

interface Entry {
  verified: VerifiedToken;
  /** The partner's generation when the entry was stored: a later change of the partner invalidates it. */
  generation: number;
}

/**
 * Tokens already verified, keyed by the SHA-256 of the whole token (a changed byte is another
 * token), each kept until the token's `exp` and never longer. An ES512 verification costs about
 * 1.2 ms of CPU; partners reuse a token for its lifetime (60 s recommended), so most requests skip
 * it. A partner's entries are dropped at once when its keys or status change (`evictPartner`,
 * called in-process and on every instance through PostgreSQL NOTIFY).
 */
export class VerifiedTokenCache {
  private readonly cache: LRUCache<string, Entry>;
  private readonly generations = new Map<string, number>();
  private hits = 0;
  private misses = 0;

  constructor(options: { max?: number } = {}) {
    this.cache = new LRUCache<string, Entry>({ max: options.max ?? 100_000, ttlAutopurge: false });
  }

  private static keyOf(token: string): string {
    return crypto.createHash('sha256').update(token).digest('base64url');
  }

  /** The verified token, if this exact token was verified and is not past its `exp`. */
  get(token: string, nowMs = Date.now()): VerifiedToken | undefined {
    const entry = this.cache.get(VerifiedTokenCache.keyOf(token));
    if (!entry || entry.verified.claims.exp * 1000 <= nowMs || entry.generation !== (this.generations.get(entry.verified.partner._id) ?? 0)) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return entry.verified;
  }

  /** Remembers a verified token until its `exp`. */
  set(token: string, verified: VerifiedToken, nowMs = Date.now()): void {
    const ttl = verified.claims.exp * 1000 - nowMs;
    if (ttl <= 0) return;
    this.cache.set(VerifiedTokenCache.keyOf(token), { verified, generation: this.generations.get(verified.partner._id) ?? 0 }, { ttl });
  }

  /** Forgets every token of a partner (key revoked or added, partner disabled or changed). */
  evictPartner(partnerId: string): void {
    this.generations.set(partnerId, (this.generations.get(partnerId) ?? 0) + 1);
  }

  /** Forgets everything (e.g. after missing change notifications). */
  clear(): void {
    this.cache.clear();
  }

  /** Entries, hits and misses (metrics, tests). */
  stats(): { size: number; hits: number; misses: number } {
    return { size: this.cache.size, hits: this.hits, misses: this.misses };
  }
}
