import type { Request } from 'express';
import { newObjectId } from '../ids';

/**
 * The upstream operation id of a partner request (docs/upstreams.md, "Operation ids"): the one its
 * Idempotency-Key holds (the same for every retry of that key, stored before the upstream call),
 * or, without a key, a new one for this request alone. Sent as the onboarding id of an account
 * creation and as the `Idempotency-Key` header of the issuer's POSTs.
 */
export function upstreamOperationId(req: Request): string {
  req.upstreamOperation ??= { id: newObjectId(), resumed: false };
  return req.upstreamOperation.id;
}
