/**
 * The individual account as partners read it, declared once: the API's answers
 * (gateway/individuals/individual-store.ts) and the `individual.created` event's `data`
 * (gateway/outbox/partner-events.ts) use these.
 */

/** personalInfo of an individual account: identity data, document numbers masked. */
export interface PersonalInfo {
  firstName: string;
  middleName: string;
  lastName: string;
  birthDate: string;
  birthCountry: string;
  nationality: string;
  email: string;
  phone: string;
  idType: string;
  passportNumber: string;
  passportCountry: string;
  issuingDate: string;
  validityDate: string;
  taxCountry: string | null;
  taxIdNumber: string;
  fatca: string;
}

/** address of an individual account. */
export interface Address {
  address1: string;
  address2: string | null;
  buildingNumber: string;
  city: string;
  stateProvince: string | null;
  zipCode: string;
  country: string;
}

/** The individual account (spec 2.1). */
export interface IndividualAccount {
  _id: string;
  clientID: string | null;
  baasAccountClientId: number | null;
  personalInfo: PersonalInfo;
  address: Address;
  applicationStatus: string;
  dashboardStatus: string;
  createdAt: string;
  updatedAt: string;
}
