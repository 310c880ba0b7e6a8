import type { Queryable } from '../db/database';
import type { OwnedKind } from './kinds';

/**
 * The kinds whose owner a change of the gateway can move or create (an individual's onboarding
 * completing, a card issued, replaced or re-issued): the only ones domain code invalidates. An
 * event, a webhook endpoint or a transaction never changes owner.
 */
export const INVALIDATED_KINDS = ['individual', 'card', 'client'] as const satisfies readonly OwnedKind[];
export type InvalidatedKind = (typeof INVALIDATED_KINDS)[number];

/** Whether a kind (read from a notification) is one whose owner changes. */
export function isInvalidatedKind(kind: string): kind is InvalidatedKind {
  return (INVALIDATED_KINDS as readonly string[]).includes(kind);
}

/**
 * What domain code does to the ownership cache: forget the owner of an individual, card or client
 * it changed, in this process (other instances hear of it through {@link OWNERSHIP_CHANGED_CHANNEL}).
 * The cache implements it; handlers and reconcilers take only this interface.
 */
export interface OwnershipInvalidation {
  invalidate(kind: InvalidatedKind, id: string): void;
}

/** Channel on which ownership changes (replace, re-issue) are announced to every instance. */
export const OWNERSHIP_CHANGED_CHANNEL = 'ownership_changed';

/** Announces, on commit of `tx`, that the owner of `card:<key>` changed (gateway/partners/change-feed.ts). */
export async function announceOwnershipChange(tx: Queryable, cardKeys: string[]): Promise<void> {
  for (const key of cardKeys) await tx.query('SELECT pg_notify($1, $2)', [OWNERSHIP_CHANGED_CHANNEL, `card:${key}`]);
}
