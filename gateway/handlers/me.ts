import type { RequestHandler } from 'express';
import { services } from '../services';

/** Most individuals listed by `/me`; the paginated individual list serves the rest. */
export const ME_INDIVIDUALS_LIMIT = 100;

interface IndividualSummaryRow {
  id: string;
  client_id: string | null;
  personal_info: { firstName?: string; lastName?: string };
  application_status: string;
  dashboard_status: string;
  created_at: Date;
}

/**
 * `GET /me` (spec 4.1): the authenticated partner, its B2B tenants (`activeTenantId` is the
 * first-created one, null without tenants) and a summary of its newest individuals.
 */
export function me(): RequestHandler {
  const { partners, db } = services();
  return async function meHandler(req, res, next) {
    try {
      const partner = req.partner!;
      const [tenants, individuals] = await Promise.all([
        partners.tenants(partner._id),
        db.query<IndividualSummaryRow>(
          `SELECT id, client_id, personal_info, application_status, dashboard_status, created_at
             FROM individual_onboardings WHERE partner_id = $1
            ORDER BY created_at DESC, id DESC LIMIT ${ME_INDIVIDUALS_LIMIT}`,
          [partner._id]
        ),
      ]);
      res.status(200).json({
        partner,
        activeTenantId: tenants.length > 0 ? tenants[0]._id : null,
        b2bAccounts: tenants,
        individuals: individuals.rows.map((row) => ({
          _id: row.id,
          clientID: row.client_id,
          firstName: row.personal_info.firstName ?? null,
          lastName: row.personal_info.lastName ?? null,
          applicationStatus: row.application_status,
          dashboardStatus: row.dashboard_status,
          createdAt: row.created_at.toISOString(),
        })),
      });
    } catch (err) {
      next(err);
    }
  };
}
