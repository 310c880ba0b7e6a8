/**
 * The shape of an idempotency key's claim, shared by the partners' keys (policies/idempotency) and
 * the operators' (admin-keys.ts), which live in tables of their own.
 */

/** A claim of a key held by this request: the row's `claim_id` makes it its holder's alone. */
export interface KeyClaim {
  key: string;
  claimId: string;
  /**
   * The upstream operation id of the operation (24 hex): the same for every claim of the key, so a
   * takeover or a retry after a 5xx carries the id of the first attempt.
   */
  operationId: string;
  /** True when an earlier attempt of the same request held this key (the upstream may have applied it). */
  resumed: boolean;
}

/** What claiming a key found: a claim, the first answer to replay, another request's key, or one still running. */
export type KeyClaimOutcome<C extends KeyClaim, R> =
  | { outcome: 'claimed'; claim: C }
  | { outcome: 'replay'; response: R }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };
