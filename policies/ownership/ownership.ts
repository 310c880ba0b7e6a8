import type { RequestHandler } from 'express';
import { GatewayError } from '../../gateway/errors';
import { OWNED_KINDS, type OwnershipCache } from '../../gateway/ownership';
import type { Database } from '../../gateway/db/database';
import type { PolicyContext } from '../policy';
import type { OwnershipParams } from './schema';

/** What the ownership policy needs of the gateway's services. */
export interface OwnershipServices {
  db: Database;
  ownership: OwnershipCache;
}

/**
 * The ownership policy: runs after es512-jwt. Sets `req.ownership` for the handler, or ends the
 * request with 400 (malformed id), 404 (unknown) or 403 (another partner's). What a kind's id looks
 * like, how a refusal names it and where its owner is read are the kind's entry in the ownership
 * module (`OWNED_KINDS`, gateway/ownership); its owners are read through the module's cache.
 *
 * With `in: body` it checks a top-level field of the JSON body the same way (a cardKey or clientId
 * a partner names in a fee check must be its own), and leaves `req.ownership` alone: the path's
 * resource, if any, stays the one the handler acts on. An absent field passes (validate decides
 * which fields are required); a present one is checked before anything reaches an upstream.
 */
export function ownership(params: OwnershipParams, { services }: PolicyContext<OwnershipServices>): RequestHandler {
  const { db, ownership: cache } = services;
  const kind = params.resource;
  const param = params.param ?? 'id';
  const inBody = params.in === 'body';
  const spec = OWNED_KINDS[kind];
  const { id: wellFormed, noun } = spec;
  const load = (id: string) => spec.load(db, id);
  return function ownershipCheck(req, _res, next) {
    let id: unknown;
    if (inBody) {
      const body: unknown = req.body;
      id = body && typeof body === 'object' && !Array.isArray(body) && Object.prototype.hasOwnProperty.call(body, param) ? (body as Record<string, unknown>)[param] : undefined;
      if (id === undefined) return next();
    } else {
      id = req.params[param];
    }
    if (typeof id !== 'string' || !wellFormed.test(id)) {
      next(new GatewayError('invalid_id', `The ${noun} id is malformed`, { invalidParams: [{ name: param, reason: spec.shape }] }));
      return;
    }
    const ownedId = id;
    cache.get(kind, ownedId, load).then(
      (owner) => {
        if (!owner) return next(new GatewayError('not_found', `No ${noun} has this id`));
        if (owner.partnerId !== req.partner?._id) return next(new GatewayError('forbidden', `The ${noun} belongs to another partner`));
        if (!inBody) req.ownership = { kind, id: ownedId, ...owner };
        next();
      },
      (err: unknown) => next(err)
    );
  };
}
