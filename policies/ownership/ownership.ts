import type { RequestHandler } from 'express';
import { GatewayError } from '../../gateway/errors';
import { CARD_KEY, isObjectId } from '../../gateway/ids';
import { OWNER_LOADERS } from '../../gateway/ownership/owners';
import { services } from '../../gateway/services';
import type { OwnershipParams } from './schema';


const NOUN = { individual: 'individual account', card: 'card' } as const;

/**
 * The ownership policy: runs after es512-jwt. Sets `req.ownership` for the handler, or ends the
 * request with 400 (malformed id), 404 (unknown) or 403 (another partner's).
 */
export function ownership(params: OwnershipParams): RequestHandler {
  const { db, ownership: cache } = services();
  const kind = params.resource;
  const param = params.param ?? 'id';
  const wellFormed = kind === 'individual' ? isObjectId : (id: string) => CARD_KEY.test(id);
  const load = (id: string) => OWNER_LOADERS[kind](db, id);
  return function ownershipCheck(req, _res, next) {
    const id = req.params[param];
    if (typeof id !== 'string' || !wellFormed(id)) {
      next(
        new GatewayError('invalid_id', `The ${NOUN[kind]} id is malformed`, {
          invalidParams: [{ name: param, reason: kind === 'individual' ? 'must be a 24-character hexadecimal id' : 'must be a cardKey' }],
        })
      );
      return;
    }
    cache.get(kind, id, load).then(
      (owner) => {
        if (!owner) return next(new GatewayError('not_found', `No ${NOUN[kind]} has this id`));
        if (owner.partnerId !== req.partner?._id) return next(new GatewayError('forbidden', `The ${NOUN[kind]} belongs to another partner`));
        req.ownership = { kind, id, ...owner };
        next();
      },
      (err: unknown) => next(err)
    );
  };
}
