import crypto from 'node:crypto';
import type { LRUCache } from 'lru-cache';
import { boundedLru } from '../../gateway/bounded-lru';
import type { Partner, PartnerCredentials } from '../../gateway/partners/partner-store';

/** What a verified token established: the partner, the key that signed it and its claims. */
export interface VerifiedToken {
  partner: Partner;
  kid: string;
  claims: { iss: string; sub: string; iat: number; exp: number };
}

/**
 * How long a cached verification is trusted while the partner change feed is disconnected: an entry
 * whose credentials were read from PostgreSQL longer ago than this is not used, the token is
 * verified against the database again (docs/authentication.md, "Revocation and the token cache").
 */
export const FEED_DOWN_TRUST_MS = 1000;

/** How long a partner id found in no row is remembered as unknown (dropped at once when a partner with that id is created). */
export const UNKNOWN_PARTNER_TTL_MS = 10_000;

/**
 * How long a partner's credentials read from PostgreSQL (status, issuer, keys) serve the
 * verification of its other tokens, unless the partner changes first: a partner signing a fresh
 * token per request costs one read per this interval instead of one per request.
 */
export const CREDENTIALS_TTL_MS = 30_000;

/**
 * Taken before a verification reads the partner's credentials ({@link VerifiedTokenCache.snapshot}):
 * the result may be cached only if no change of that partner (and no `clear`) came in meanwhile.
 */
export interface CacheSnapshot {
  partnerId: string;
  generation: number;
  epoch: number;
  /** When the credentials were about to be read (the cache's clock, ms). */
  at: number;
}

interface Entry {
  verified: VerifiedToken;
  /** The partner's generation when the verification began: a later change of the partner invalidates it. */
  generation: number;
  epoch: number;
  /** When the credentials behind this entry were read (the cache's clock, ms). */
  readAt: number;
}

interface CredentialsEntry {
  credentials: PartnerCredentials;
  generation: number;
  epoch: number;
  readAt: number;
}

/**
 * Tokens already verified, keyed by the SHA-256 of the whole token (a changed byte is another
 * token), each kept until the token's `exp` and never longer. An ES512 verification costs about
 * 1.2 ms of CPU; partners reuse a token for its lifetime (60 s recommended), so most requests skip
 * it. A partner's entries are dropped at once when its keys or status change (`evictPartner`,
 * called in-process, in every cluster worker before the admin call answers, and on every instance
 * through PostgreSQL NOTIFY).
 *
 * A verification runs in three steps: {@link snapshot} (before reading the credentials), the read
 * and the signature check, then {@link set} with the snapshot. `set` stores nothing if the partner
 * changed (or the cache was cleared) since the snapshot: a revocation that lands between the read
 * and the store can never be hidden by a stale entry.
 *
 * While the change feed is disconnected ({@link feedDown}), notifications of other instances may be
 * missed: an entry is then used only if its credentials were read at most {@link FEED_DOWN_TRUST_MS}
 * ago.
 *
 * A partner's credentials themselves ({@link credentials}, {@link setCredentials}) are kept under the
 * same rules (a change of the partner or a `clear` drops them, a snapshot taken before the read
 * guards the store, the feed-down limit applies) and for {@link CREDENTIALS_TTL_MS} at most: a fresh
 * token then costs its signature check, not a database read as well.
 */
export class VerifiedTokenCache {
  private readonly cache: LRUCache<string, Entry>;
  private readonly generations = new Map<string, number>();
  /** Partner ids the database did not know, for {@link UNKNOWN_PARTNER_TTL_MS}. */
  private readonly unknown: LRUCache<string, true>;
  private readonly partnerCredentials: LRUCache<string, CredentialsEntry>;
  private readonly clock: () => number;
  private readonly feedDownTrustMs: number;
  private readonly credentialsTtlMs: number;
  private epoch = 0;
  /** Since when (cache clock) the change feed is disconnected; undefined while connected or unused. */
  private feedDownSince: number | undefined;
  private hits = 0;
  private misses = 0;

  /**
   * @param options.clock wall clock in ms (default `Date.now`) for every age and lifetime of the
   *   cache: tokens' `exp`, the unknown-partner and credentials TTLs, the feed-down limit (tests pass
   *   one they move)
   */
  constructor(options: { max?: number; clock?: () => number; feedDownTrustMs?: number; unknownPartnerTtlMs?: number; credentialsTtlMs?: number } = {}) {
    this.clock = options.clock ?? Date.now;
    this.cache = boundedLru<string, Entry>(options.max ?? 100_000, { ttlAutopurge: false, now: this.clock });
    this.unknown = boundedLru<string, true>(10_000, { ttl: options.unknownPartnerTtlMs ?? UNKNOWN_PARTNER_TTL_MS, ttlAutopurge: false, now: this.clock });
    this.partnerCredentials = boundedLru<string, CredentialsEntry>(10_000, { ttlAutopurge: false, now: this.clock });
    this.feedDownTrustMs = options.feedDownTrustMs ?? FEED_DOWN_TRUST_MS;
    this.credentialsTtlMs = options.credentialsTtlMs ?? CREDENTIALS_TTL_MS;
  }

  private static keyOf(token: string): string {
    return crypto.createHash('sha256').update(token).digest('base64url');
  }

  private generationOf(partnerId: string): number {
    return this.generations.get(partnerId) ?? 0;
  }

  /** Take before reading the partner's credentials; hand to {@link set} after verifying. */
  snapshot(partnerId: string): CacheSnapshot {
    return { partnerId, generation: this.generationOf(partnerId), epoch: this.epoch, at: this.clock() };
  }

  /** The verified token, if this exact token was verified and is not past its `exp`. */
  get(token: string, nowMs = this.clock()): VerifiedToken | undefined {
    const entry = this.cache.get(VerifiedTokenCache.keyOf(token));
    if (
      !entry ||
      entry.verified.claims.exp * 1000 <= nowMs ||
      entry.epoch !== this.epoch ||
      entry.generation !== this.generationOf(entry.verified.partner._id) ||
      (this.feedDownSince !== undefined && this.clock() - entry.readAt > this.feedDownTrustMs)
    ) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return entry.verified;
  }

  /**
   * Remembers a verified token until its `exp`, unless its partner changed since `since` was taken
   * (then the verification may have read credentials that are no longer current). Without `since`
   * the token counts as verified now.
   */
  set(token: string, verified: VerifiedToken, nowMs = this.clock(), since?: CacheSnapshot): void {
    const ttl = verified.claims.exp * 1000 - nowMs;
    if (ttl <= 0) return;
    const partnerId = verified.partner._id;
    const taken = since ?? this.snapshot(partnerId);
    if (taken.partnerId !== partnerId || taken.epoch !== this.epoch || taken.generation !== this.generationOf(partnerId)) return;
    this.cache.set(VerifiedTokenCache.keyOf(token), { verified, generation: taken.generation, epoch: taken.epoch, readAt: taken.at }, { ttl });
  }

  /**
   * The partner's credentials as a verification that began at `since.at` read them, with that
   * snapshot (hand it to {@link set}: the feed-down limit counts from the read); undefined when none
   * are kept, the partner changed since, they are older than {@link CREDENTIALS_TTL_MS}, or the feed
   * is down and they are older than {@link FEED_DOWN_TRUST_MS}.
   */
  credentials(partnerId: string): { credentials: PartnerCredentials; since: CacheSnapshot } | undefined {
    const entry = this.partnerCredentials.get(partnerId);
    if (!entry) return undefined;
    const age = this.clock() - entry.readAt;
    if (
      entry.epoch !== this.epoch ||
      entry.generation !== this.generationOf(partnerId) ||
      age > this.credentialsTtlMs ||
      (this.feedDownSince !== undefined && age > this.feedDownTrustMs)
    ) {
      return undefined;
    }
    return { credentials: entry.credentials, since: { partnerId, generation: entry.generation, epoch: entry.epoch, at: entry.readAt } };
  }

  /** Keeps a partner's credentials read after `since` was taken, unless the partner changed (or the cache was cleared) meanwhile. */
  setCredentials(since: CacheSnapshot, credentials: PartnerCredentials): void {
    if (since.epoch !== this.epoch || since.generation !== this.generationOf(since.partnerId)) return;
    this.partnerCredentials.set(since.partnerId, { credentials, generation: since.generation, epoch: since.epoch, readAt: since.at });
  }

  /**
   * Remembers that no partner has this id (the lookup began at `since`), unless a change of that id
   * came in meanwhile. A negative look-up is not trusted while the change feed is down.
   */
  setUnknown(since: CacheSnapshot): void {
    if (since.epoch !== this.epoch || since.generation !== this.generationOf(since.partnerId)) return;
    this.unknown.set(since.partnerId, true);
  }

  /** Whether a recent look-up found no partner with this id (and nothing about that id changed since). */
  isUnknown(partnerId: string): boolean {
    return this.feedDownSince === undefined && this.unknown.has(partnerId);
  }

  /** Forgets every token of a partner (key revoked or added, partner disabled, created or changed). */
  evictPartner(partnerId: string): void {
    this.generations.set(partnerId, this.generationOf(partnerId) + 1);
    this.unknown.delete(partnerId);
    this.partnerCredentials.delete(partnerId);
  }

  /** Forgets everything (e.g. after missing change notifications), including verifications in flight. */
  clear(): void {
    this.epoch += 1;
    this.cache.clear();
    this.unknown.clear();
    this.partnerCredentials.clear();
  }

  /** The change feed lost its connection: from now on, trust entries for {@link FEED_DOWN_TRUST_MS} after their read. */
  feedDown(): void {
    this.feedDownSince ??= this.clock();
  }

  /** The change feed listens again (call after `clear`, since notifications may have been missed). */
  feedUp(): void {
    this.feedDownSince = undefined;
  }

  /** Whether the change feed is reported disconnected. */
  feedIsDown(): boolean {
    return this.feedDownSince !== undefined;
  }

  /** Entries, hits and misses (metrics, tests). */
  stats(): { size: number; hits: number; misses: number } {
    return { size: this.cache.size, hits: this.hits, misses: this.misses };
  }
}
