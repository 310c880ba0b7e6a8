import { every } from '../background/every';
import { recordAudit } from '../audit/audit-log';
import type { Logger } from '../logging/logger';
import type { UpstreamClients } from '../upstreams';
import type { OwnershipInvalidation } from '../ownership';
import type { IndividualStore } from './individual-store';
import { emitEvent } from '../outbox/partner-events';

/** What one reconciliation pass did. */
export interface ReconcileResult {
  completed: string[];
  discarded: string[];
  failed: string[];
}

/**
 * Settles individual onboardings left `pending` by a process that stopped mid-creation: asks the
 * account-creation upstream whether it created the account for that onboarding; if it did, the
 * onboarding is completed (with its audit entry and `individual.created` event), otherwise it is deleted. An upstream that cannot
 * answer leaves the record for the next pass.
 */
export async function reconcilePendingIndividuals(
  deps: { individuals: IndividualStore; clients: UpstreamClients; ownership: OwnershipInvalidation; log: Logger },
  olderThanMs: number
): Promise<ReconcileResult> {
  const result: ReconcileResult = { completed: [], discarded: [], failed: [] };
  for (const pending of await deps.individuals.stalePending(olderThanMs)) {
    const requestId = `reconciler-${pending.id}`;
    try {
      const account = await deps.clients.accounts.findByOnboardingId({ requestId }, pending.id);
      if (account) {
        await deps.individuals.complete(pending.id, account, async (tx, individual) => {
          await recordAudit(tx, {
            partnerId: pending.partnerId,
            individualId: pending.id,
            operation: 'individual.create',
            targetType: 'individual',
            targetId: pending.id,
            requestId,
            outcome: 'success',
            details: { clientID: account.clientId, reconciled: true },
          });
          // Settled after the partner's request ended: the event names no request of the partner's.
          await emitEvent(tx, { type: 'individual.created', partnerId: pending.partnerId, data: { individual } });
        });
        deps.ownership.invalidate('individual', pending.id);
        deps.ownership.invalidate('client', account.clientId);
        result.completed.push(pending.id);
      } else {
        if (await deps.individuals.discardPending(pending.id, olderThanMs)) result.discarded.push(pending.id);
      }
    } catch (err) {
      deps.log.warn({ err, onboardingId: pending.id }, 'pending individual not reconciled; retrying later');
      result.failed.push(pending.id);
    }
  }
  if (result.completed.length || result.discarded.length) deps.log.info({ ...result }, 'pending individuals reconciled');
  return result;
}

/** Runs a reconciliation pass now and every `intervalMs`; returns the function that stops it. */
export function startReconciler(
  deps: Parameters<typeof reconcilePendingIndividuals>[0],
  options: { intervalMs: number; olderThanMs: number }
): () => void {
  return every(options.intervalMs, () => reconcilePendingIndividuals(deps, options.olderThanMs), deps.log, 'reconciliation pass failed', { immediately: true });
}
