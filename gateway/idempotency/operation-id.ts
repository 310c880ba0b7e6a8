import type { Request } from 'express';
import { newObjectId } from '../ids';

/**
 * The upstream operation id of a partner request (docs/upstreams.md, "Operation ids"), and whether
 * an earlier attempt held its Idempotency-Key (its upstream call may have been applied).
 */
export interface UpstreamOperation {
  id: string;
  resumed: boolean;
}

/**
 * The upstream operation of a partner request (docs/upstreams.md, "Operation ids"): the one its
 * Idempotency-Key holds (the same id for every retry of that key, stored before the upstream call),
 * or, without a key, a new one for this request alone. Its id is sent as the onboarding id of an
 * account creation and as the `Idempotency-Key` header of the issuer's POSTs.
 */
export function upstreamOperationOf(req: Request): UpstreamOperation {
  req.upstreamOperation ??= { id: newObjectId(), resumed: false };
  return req.upstreamOperation;
}

/** The id of {@link upstreamOperationOf}. */
export function upstreamOperationId(req: Request): string {
  return upstreamOperationOf(req).id;
}
