/**
 * Ownership as one domain module (spec section 5, docs/ownership.md): the kinds of resource whose
 * owner is checked and where each owner is read (kinds.ts), the read-through cache of owners
 * (cache.ts), and how changes invalidate it, in this process and on every instance
 * (invalidation.ts). The ownership policy (policies/ownership) runs the check on a request; the
 * handlers and reconcilers invalidate through {@link OwnershipInvalidation}.
 */
export { OWNED_KINDS, OWNED_KIND_NAMES, type OwnedKind, type OwnedKindSpec, type Owner } from './kinds';
export { OwnershipCache, type OwnershipCacheOptions } from './cache';
export { INVALIDATED_KINDS, OWNERSHIP_CHANGED_CHANNEL, announceOwnershipChange, isInvalidatedKind, type InvalidatedKind, type OwnershipInvalidation } from './invalidation';
