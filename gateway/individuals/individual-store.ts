import type { Database, Queryable } from '../db/database';
import { newObjectId } from '../ids';
import { offsetOf, type PageRequest } from '../db/paging';
import { withSpecDefaults, type IndividualCreateBody } from '../schemas/individual-create';
import type { Address, IndividualAccount, PersonalInfo } from '../shapes/individual';

export type { Address, IndividualAccount, PersonalInfo } from '../shapes/individual';

/** The individual account summary (list and `/me`). */
export interface IndividualSummary {
  _id: string;
  clientID: string | null;
  firstName: string;
  lastName: string;
  applicationStatus: string;
  dashboardStatus: string;
  createdAt: string;
}

interface OnboardingRow {
  id: string;
  client_id: string | null;
  baas_account_client_id: string | null;
  personal_info: PersonalInfo;
  address: Address;
  application_status: string;
  dashboard_status: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, client_id, baas_account_client_id, personal_info, address, application_status, dashboard_status, created_at, updated_at';

/** Masks a document number for responses: only the last 4 characters stay (`*****4567`). */
export function maskDocumentNumber(value: string): string {
  const visible = value.length <= 4 ? 0 : 4;
  return `${'*'.repeat(value.length - visible)}${value.slice(value.length - visible)}`;
}

function toAccount(row: OnboardingRow): IndividualAccount {
  return {
    _id: row.id,
    clientID: row.client_id,
    baasAccountClientId: row.baas_account_client_id === null ? null : Number(row.baas_account_client_id),
    personalInfo: {
      ...row.personal_info,
      passportNumber: maskDocumentNumber(row.personal_info.passportNumber),
      taxIdNumber: maskDocumentNumber(row.personal_info.taxIdNumber),
    },
    address: row.address,
    applicationStatus: row.application_status,
    dashboardStatus: row.dashboard_status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function toSummary(row: OnboardingRow): IndividualSummary {
  return {
    _id: row.id,
    clientID: row.client_id,
    firstName: row.personal_info.firstName,
    lastName: row.personal_info.lastName,
    applicationStatus: row.application_status,
    dashboardStatus: row.dashboard_status,
    createdAt: row.created_at.toISOString(),
  };
}

/** Splits a validated create body into the stored personalInfo and address. */
export function splitIndividual(created: IndividualCreateBody): { personalInfo: PersonalInfo; address: Address } {
  const body = withSpecDefaults(created);
  return {
    personalInfo: {
      firstName: body.firstName,
      middleName: body.middleName,
      lastName: body.lastName,
      birthDate: body.birthDate,
      birthCountry: body.birthCountry,
      nationality: body.nationality,
      email: body.email,
      phone: body.phone,
      idType: body.idType,
      passportNumber: body.passportNumber,
      passportCountry: body.passportCountry,
      issuingDate: body.issuingDate,
      validityDate: body.validityDate,
      taxCountry: body.taxCountry ?? null,
      taxIdNumber: body.taxIdNumber,
      fatca: body.fatca,
    },
    address: {
      address1: body.address1,
      address2: body.address2 ?? null,
      buildingNumber: body.buildingNumber,
      city: body.city,
      stateProvince: body.stateProvince ?? null,
      zipCode: body.zipCode,
      country: body.country,
    },
  };
}

/**
 * Individuals in PostgreSQL. Creation is a compensating saga (docs/individuals.md): the user and
 * onboarding records are written together as `pending` (invisible to every read), the upstream is
 * called with no transaction open, then one transaction completes them with the audit entry, or
 * one deletes them.
 */
export class IndividualStore {
  constructor(private readonly db: Database) {}

  /**
   * Writes the user and the pending onboarding in one transaction, under `onboardingId` (the
   * request's upstream operation id, docs/upstreams.md). When an earlier attempt of the same
   * operation (same Idempotency-Key) already wrote it, nothing is written: `state` says what that
   * attempt left, `pending` (its attempt time is refreshed, so the reconciler leaves it to this
   * retry) or `complete` (the reconciler finished it).
   */
  async createPending(
    partnerId: string,
    body: IndividualCreateBody,
    onboardingId: string = newObjectId()
  ): Promise<{ onboardingId: string; userId: string; state: 'new' | 'pending' | 'complete' }> {
    const { personalInfo, address } = splitIndividual(body);
    return this.db.transaction(async (tx) => {
      // updated_at of a pending onboarding is its last attempt; a complete one keeps its own.
      const earlier = await tx.query<{ provisioning: 'pending' | 'complete'; user_id: string }>(
        `UPDATE individual_onboardings SET updated_at = CASE WHEN provisioning = 'pending' THEN now() ELSE updated_at END
          WHERE id = $1 AND partner_id = $2 RETURNING provisioning, user_id`,
        [onboardingId, partnerId]
      );
      if (earlier.rowCount) return { onboardingId, userId: earlier.rows[0].user_id, state: earlier.rows[0].provisioning };
      const userId = newObjectId();
      await tx.query(
        `INSERT INTO users (id, partner_id, email, first_name, middle_name, last_name, phone) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [userId, partnerId, body.email, body.firstName, body.middleName, body.lastName, body.phone]
      );
      await tx.query(
        `INSERT INTO individual_onboardings (id, partner_id, user_id, baas_account_client_id, personal_info, address, application_status, dashboard_status, provisioning)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, 'PENDING', 'ACTIVE', 'pending')`,
        [onboardingId, partnerId, userId, body.baasAccountClientId ?? null, JSON.stringify(personalInfo), JSON.stringify(address)]
      );
      return { onboardingId, userId, state: 'new' as const };
    });
  }

  /**
   * Marks a pending onboarding complete with its upstream account, and runs `alsoInTransaction`
   * (the audit entry and the `individual.created` event) in the same transaction with the account
   * as the API answers it. Returns the account, or undefined when the onboarding is no longer
   * pending (a reconciler already settled it).
   */
  async complete(
    onboardingId: string,
    account: { accountId: string; clientId: string },
    alsoInTransaction: (tx: Queryable, created: IndividualAccount) => Promise<void>
  ): Promise<IndividualAccount | undefined> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<OnboardingRow>(
        `UPDATE individual_onboardings
            SET provisioning = 'complete', application_status = 'APPROVED', client_id = $2, account_id = $3, updated_at = now()
          WHERE id = $1 AND provisioning = 'pending'
          RETURNING ${COLUMNS}`,
        [onboardingId, account.clientId, account.accountId]
      );
      if (rows.rowCount === 0) return undefined;
      const created = toAccount(rows.rows[0]);
      await alsoInTransaction(tx, created);
      return created;
    });
  }

  /** Deletes a pending onboarding and its user (compensation). Returns whether anything was deleted. */
  async discardPending(onboardingId: string, olderThanMs?: number): Promise<boolean> {
    // With olderThanMs (the reconciler): only while still stale, so that a retry that took the
    // record up meanwhile (it refreshes updated_at) keeps it.
    const deleted = await this.db.query(
      `DELETE FROM users WHERE id = (SELECT user_id FROM individual_onboardings WHERE id = $1 AND provisioning = 'pending'
                                       AND ($2::float8 IS NULL OR updated_at < now() - make_interval(secs => $2::float8)))`,
      [onboardingId, olderThanMs === undefined ? null : olderThanMs / 1000]
    );
    return (deleted.rowCount ?? 0) > 0;
  }

  /**
   * Pending onboardings whose last attempt (`updated_at`: creation, or a retry of the same
   * operation) is older than `olderThanMs`: left by a crash or an upstream timeout mid-creation.
   */
  async stalePending(olderThanMs: number): Promise<{ id: string; partnerId: string }[]> {
    const rows = await this.db.query<{ id: string; partner_id: string }>(
      `SELECT id, partner_id FROM individual_onboardings
        WHERE provisioning = 'pending' AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT 100`,
      [olderThanMs / 1000]
    );
    return rows.rows.map((r) => ({ id: r.id, partnerId: r.partner_id }));
  }

  async get(id: string): Promise<IndividualAccount | undefined> {
    const rows = await this.db.query<OnboardingRow>(`SELECT ${COLUMNS} FROM individual_onboardings WHERE id = $1 AND provisioning = 'complete'`, [id]);
    return rows.rowCount ? toAccount(rows.rows[0]) : undefined;
  }

  /** The individual's clientID (the issuer's clientCode and the processor's account id). */
  async clientId(id: string): Promise<string | undefined> {
    const rows = await this.db.query<{ client_id: string | null }>("SELECT client_id FROM individual_onboardings WHERE id = $1 AND provisioning = 'complete'", [id]);
    return rows.rows[0]?.client_id ?? undefined;
  }

  /**
   * A page of the partner's individuals, newest first, and how many it has in all: exact, read from
   * the partner's counter (migration 025: kept by triggers in the transaction of every change it
   * counts), not counted over its individuals, so the call costs the same at any number of them.
   */
  async list(partnerId: string, page: PageRequest): Promise<{ count: number; data: IndividualSummary[] }> {
    const [count, data] = await Promise.all([
      this.db.query<{ n: string }>('SELECT coalesce(sum(n), 0) AS n FROM partner_individual_counts WHERE partner_id = $1', [partnerId]),
      this.page(partnerId, page),
    ]);
    return { count: Number(count.rows[0].n), data };
  }

  /** A page of the partner's individuals, newest first, without their number (`/me`). */
  async page(partnerId: string, page: PageRequest): Promise<IndividualSummary[]> {
    const rows = await this.db.query<OnboardingRow>(
      `SELECT ${COLUMNS} FROM individual_onboardings WHERE partner_id = $1 AND provisioning = 'complete'
        ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [partnerId, page.limit, offsetOf(page)]
    );
    return rows.rows.map(toSummary);
  }
}
