import type { RequestHandler } from 'express';
import { GatewayError } from '../../gateway/errors';
import { CARD_KEY, EVENT_ID, TRANSACTION_ID, WEBHOOK_ENDPOINT_ID, isObjectId } from '../../gateway/ids';
import { OWNER_LOADERS } from './owners';
import type { OwnedKind, OwnershipCache } from './ownership-cache';
import type { Database } from '../../gateway/db/database';
import type { PolicyContext } from '../policy';
import type { OwnershipParams } from './schema';

/** What the ownership policy needs of the gateway's services. */
export interface OwnershipServices {
  db: Database;
  ownership: OwnershipCache;
}

const NOUN: Record<OwnedKind, string> = { individual: 'individual account', card: 'card', client: 'individual account (clientId)', event: 'event', 'webhook-endpoint': 'webhook endpoint', transaction: 'transaction' };

/** A clientID as the account-creation upstream makes them, and the fee-check schema bounds them. */
const CLIENT_ID = /^[\x21-\x7e]{1,64}$/;

const WELL_FORMED: Record<OwnedKind, (id: string) => boolean> = {
  individual: isObjectId,
  card: (id) => CARD_KEY.test(id),
  client: (id) => CLIENT_ID.test(id),
  event: (id) => EVENT_ID.test(id),
  'webhook-endpoint': (id) => WEBHOOK_ENDPOINT_ID.test(id),
  transaction: (id) => TRANSACTION_ID.test(id),
};

const SHAPE: Record<OwnedKind, string> = {
  individual: 'must be a 24-character hexadecimal id',
  card: 'must be a cardKey',
  client: 'must be a clientId',
  event: 'must be an event id (evt_ and 24 hexadecimal characters)',
  'webhook-endpoint': 'must be a webhook endpoint id (we_ and 24 hexadecimal characters)',
  transaction: 'must be a transaction id (1 to 64 of A-Z a-z 0-9 _ -)',
};

/**
 * The ownership policy: runs after es512-jwt. Sets `req.ownership` for the handler, or ends the
 * request with 400 (malformed id), 404 (unknown) or 403 (another partner's).
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
  const wellFormed = WELL_FORMED[kind];
  const load = (id: string) => OWNER_LOADERS[kind](db, id);
  return function ownershipCheck(req, _res, next) {
    let id: unknown;
    if (inBody) {
      const body: unknown = req.body;
      id = body && typeof body === 'object' && !Array.isArray(body) && Object.prototype.hasOwnProperty.call(body, param) ? (body as Record<string, unknown>)[param] : undefined;
      if (id === undefined) return next();
    } else {
      id = req.params[param];
    }
    if (typeof id !== 'string' || !wellFormed(id)) {
      next(new GatewayError('invalid_id', `The ${NOUN[kind]} id is malformed`, { invalidParams: [{ name: param, reason: SHAPE[kind] }] }));
      return;
    }
    const ownedId = id;
    cache.get(kind, ownedId, load).then(
      (owner) => {
        if (!owner) return next(new GatewayError('not_found', `No ${NOUN[kind]} has this id`));
        if (owner.partnerId !== req.partner?._id) return next(new GatewayError('forbidden', `The ${NOUN[kind]} belongs to another partner`));
        if (!inBody) req.ownership = { kind, id: ownedId, ...owner };
        next();
      },
      (err: unknown) => next(err)
    );
  };
}
