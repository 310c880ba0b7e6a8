import { recordAudit } from '../audit/audit-log';
import { GatewayError } from '../errors';
import { callContext } from '../http/call-context';
import { outcomeUnknown } from '../upstreams/failures';
import { emitEvent } from '../outbox/partner-events';
import { withSpecDefaults, type IndividualCreateBody } from '../schemas/individual-create';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { BodyFacts, OperationFacts, OperationHandler, PartnerFacts } from './context';

/**
 * True when a failed accounts call may still have been applied ({@link outcomeUnknown}), except a
 * refused connection, which never reached the upstream. The pending record then stays, for a retry
 * with the same operation id or for the reconciler (which asks the upstream by that id).
 */
function mayHaveBeenApplied(err: unknown): boolean {
  const refused = err instanceof GatewayError && err.code === 'upstream_error' && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED';
  return outcomeUnknown(err) && !refused;
}

/**
 * `POST /individual/accounts` (spec 4.2), a compensating saga (docs/individuals.md):
 * 1. the user and onboarding records are written in one transaction, as `pending` (no read sees
 *    them), under the request's upstream operation id (the same for every retry of its
 *    Idempotency-Key; docs/upstreams.md);
 * 2. the account-creation upstream is called with that id as `onboardingId`, with no transaction
 *    or connection held; the upstream answers a repeat of it with the first account;
 * 3. success: one transaction completes the onboarding and writes the audit entry and the
 *    `individual.created` event → 201;
 *    a refusal: the records are deleted → 502 / 422, and nothing remains, unless an earlier
 *    attempt of the key wrote them (createPending's `state` is not `new`): that attempt may have
 *    created the account, so they stay for a retry or the reconciler;
 *    a timeout or a lost connection (the upstream may have created the account): the pending
 *    record stays → 504 / 502; a retry with the same key resumes it, else the reconciler settles it.
 * A crash between 1 and 3 leaves a pending record that a retry of the key or the reconciler settles.
 */
export function createIndividual(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & BodyFacts<IndividualCreateBody> & OperationFacts> {
  const operation = auditActionOf(build);
  const { individuals, clients, ownership, log } = services;
  return async function createIndividualHandler({ partner, body, operation: upstream }, req, res) {
    const partnerId = partner._id;
    const { onboardingId, state } = await individuals.createPending(partnerId, body, upstream.id);
    if (state === 'complete') {
      // An earlier attempt of this key was completed by the reconciler: its result is the answer.
      const done = await individuals.get(onboardingId);
      if (done) {
        return { status: 201, body: done };
      }
    }
    let account: { accountId: string; clientId: string };
    try {
      account = await clients.accounts.createAccount(callContext(req, res), {
        ...withSpecDefaults(body),
        partnerId,
        onboardingId,
      });
    } catch (err) {
      if (mayHaveBeenApplied(err)) {
        log.warn({ requestId: req.requestId, onboardingId }, 'account creation outcome unknown: pending individual left for a retry or the reconciler');
        throw err;
      }
      if (state !== 'new') {
        // An earlier attempt of this operation wrote the record and may have reached the upstream
        // (its call timed out or the process stopped): this refusal says nothing about that call.
        // The record stays for a later retry of the key or the reconciler, which asks the
        // upstream by this onboarding id; deleting it would orphan an account made meanwhile.
        log.warn({ requestId: req.requestId, onboardingId }, 'account creation refused on a retry: the pending individual of the earlier attempt is left for a retry or the reconciler');
        throw err;
      }
      await individuals.discardPending(onboardingId).catch((cleanupError: unknown) => {
        // The reconciler deletes it later; the partner still gets the upstream's failure.
        log.error({ err: cleanupError, requestId: req.requestId, onboardingId }, 'could not discard a pending individual');
      });
      throw err;
    }
    const created =
      (await individuals.complete(onboardingId, account, async (tx, individual) => {
        await recordAudit(tx, {
          partnerId,
          individualId: onboardingId,
          operation,
          targetType: 'individual',
          targetId: onboardingId,
          requestId: req.requestId,
          outcome: 'success',
          details: { clientID: account.clientId },
        });
        await emitEvent(tx, { type: 'individual.created', partnerId, requestId: req.requestId, data: { individual } });
      })) ?? (await individuals.get(onboardingId)); // completed meanwhile by the reconciler: the same account
    if (!created) throw new GatewayError('internal_error', 'The individual could not be completed; quote the requestId to support');
    ownership.invalidate('individual', onboardingId);
    // A probe of this clientId before it existed may have left a "not found" entry.
    ownership.invalidate('client', account.clientId);
    return { status: 201, body: created };
  };
}
