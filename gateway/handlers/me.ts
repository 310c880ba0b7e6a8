import type { OperationHandler, PartnerFacts } from './context';
import type { HandlerServices } from './services';

/** Most individuals listed by `/me`; the paginated individual list serves the rest. */
export const ME_INDIVIDUALS_LIMIT = 100;

/**
 * `GET /me` (spec 4.1): the authenticated partner, its B2B tenants (`activeTenantId` is the
 * first-created one, null without tenants) and a summary of its newest individuals.
 */
export function me(services: HandlerServices): OperationHandler<PartnerFacts> {
  const { partners, individuals } = services;
  return async function meHandler({ partner }) {
    const [tenants, newest] = await Promise.all([
      partners.tenants(partner._id),
      // The newest page only: `/me` answers no count, so it reads none.
      individuals.page(partner._id, { page: 1, limit: ME_INDIVIDUALS_LIMIT }),
    ]);
    return {
      status: 200,
      body: {
        partner,
        activeTenantId: tenants.length > 0 ? tenants[0]._id : null,
        b2bAccounts: tenants,
        individuals: newest,
      },
    };
  };
}
