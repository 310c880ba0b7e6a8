import type { RequestHandler } from 'express';
import { recordAudit } from '../audit/audit-log';
import { GatewayError } from '../errors';
import { asyncHandler, callContext } from '../http/async-handler';
import type { IndividualCreateBody } from '../schemas/individual-create';
import { services } from '../services';

/**
 * `POST /individual/accounts` (spec 4.2), a compensating saga (docs/individuals.md):
 * 1. the user and onboarding records are written in one transaction, as `pending` (no read sees them);
 * 2. the account-creation upstream is called, with no transaction or connection held;
 * 3. success: one transaction completes the onboarding and writes the audit entry → 201;
 *    failure or timeout: the records are deleted → 502 / 504 / 422, and nothing remains.
 * A crash between 1 and 3 leaves a pending record that the reconciler settles.
 */
export function createIndividual(): RequestHandler {
  const { individuals, clients, ownership, log } = services();
  return asyncHandler(async function createIndividualHandler(req, res) {
    const partnerId = req.partner!._id;
    const body = req.body as IndividualCreateBody;
    const { onboardingId } = await individuals.createPending(partnerId, body);
    let account: { accountId: string; clientId: string };
    try {
      account = await clients.accounts.createAccount(callContext(req, res), {
        ...body,
        taxIdNumber: body.taxIdNumber ?? body.passportNumber,
        partnerId,
        onboardingId,
      });
    } catch (err) {
      await individuals.discardPending(onboardingId).catch((cleanupError: unknown) => {
        // The reconciler deletes it later; the partner still gets the upstream's failure.
        log.error({ err: cleanupError, requestId: req.requestId, onboardingId }, 'could not discard a pending individual');
      });
      throw err;
    }
    const created = await individuals.complete(onboardingId, account, (tx) =>
      recordAudit(tx, {
        partnerId,
        individualId: onboardingId,
        operation: 'individual.create',
        targetType: 'individual',
        targetId: onboardingId,
        requestId: req.requestId,
        outcome: 'success',
        details: { clientID: account.clientId },
      })
    );
    if (!created) throw new GatewayError('internal_error', 'The individual could not be completed; quote the requestId to support');
    ownership.invalidate('individual', onboardingId);
    // A probe of this clientId before it existed may have left a "not found" entry.
    ownership.invalidate('client', account.clientId);
    res.status(201).json(created);
  });
}
