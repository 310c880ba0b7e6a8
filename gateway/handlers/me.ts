import type { RequestHandler } from 'express';
import { asyncHandler } from '../http/async-handler';
import type { HandlerServices } from './services';

/** Most individuals listed by `/me`; the paginated individual list serves the rest. */
export const ME_INDIVIDUALS_LIMIT = 100;

/**
 * `GET /me` (spec 4.1): the authenticated partner, its B2B tenants (`activeTenantId` is the
 * first-created one, null without tenants) and a summary of its newest individuals.
 */
export function me(services: HandlerServices): RequestHandler {
  const { partners, individuals } = services;
  return asyncHandler(async function meHandler(req, res) {
    const partner = req.partner!;
    const [tenants, newest] = await Promise.all([
      partners.tenants(partner._id),
      individuals.list(partner._id, { page: 1, limit: ME_INDIVIDUALS_LIMIT }),
    ]);
    res.status(200).json({
      partner,
      activeTenantId: tenants.length > 0 ? tenants[0]._id : null,
      b2bAccounts: tenants,
      individuals: newest.data,
    });
  });
}
