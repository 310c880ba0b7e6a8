import type { FromSchema } from 'json-schema-to-ts';
import { ID_TYPES } from '../../contracts/upstreams';
import { COUNTRY, DATE, type JsonSchema } from './common';

/** Identity document types (spec 2.2), the accounts upstream's (contracts/upstreams.ts). */
export { ID_TYPES };

const text = (max: number, min = 1) => ({ type: 'string', minLength: min, maxLength: max }) as const;

/**
 * Create-individual request body, exactly per spec 2.2, plus the decisions in docs/individuals.md:
 * every country field is checked against ISO 3166-1, dates are real calendar dates, birth and
 * issuing dates are not in the future, validityDate is not before issuingDate, phone is E.164,
 * fatca is T or F (default F). `taxIdNumber` defaults to `passportNumber` ({@link withSpecDefaults}).
 */
export const individualCreate = {
  $id: 'https://partner-gateway.dev/schemas/individual-create.json',
  type: 'object',
  additionalProperties: false,
  required: [
    'firstName', 'middleName', 'lastName', 'country', 'city', 'zipCode', 'buildingNumber', 'idType', 'address1',
    'passportNumber', 'issuingDate', 'validityDate', 'passportCountry', 'birthCountry', 'birthDate', 'nationality', 'phone', 'email',
  ],
  properties: {
    baasAccountClientId: { type: 'integer', minimum: 1, maximum: 9_007_199_254_740_991, description: 'Account/program under which the individual is created' },
    firstName: text(200),
    middleName: text(200, 2),
    lastName: text(200),
    country: COUNTRY,
    city: text(100),
    stateProvince: text(100),
    zipCode: text(20),
    buildingNumber: text(100),
    idType: { type: 'string', enum: ID_TYPES },
    address1: text(200),
    address2: text(200),
    passportNumber: text(40),
    issuingDate: { ...DATE, 'x-not-future': true },
    validityDate: DATE,
    passportCountry: COUNTRY,
    taxCountry: COUNTRY,
    taxIdNumber: text(40),
    birthCountry: COUNTRY,
    birthDate: { ...DATE, 'x-not-future': true },
    nationality: COUNTRY,
    fatca: { type: 'string', enum: ['T', 'F'], default: 'F', description: 'FATCA indicator: T (US person) or F' },
    phone: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +4915112345678' },
    email: { type: 'string', format: 'email', maxLength: 254 },
  },
  'x-date-order': ['issuingDate', 'validityDate'],
} as const satisfies JsonSchema;

/** The validated create-individual body (`fatca` is there: the validator fills its default in). */
export type IndividualCreateBody = FromSchema<typeof individualCreate>;

/**
 * The create body with the spec's default that a schema cannot fill in: `taxIdNumber` defaults to
 * the passport number (spec 2.2). The one place that says so: what the gateway stores and what it
 * sends to the account-creation upstream both come from here.
 */
export function withSpecDefaults(body: IndividualCreateBody): IndividualCreateBody & { taxIdNumber: string } {
  return { ...body, taxIdNumber: body.taxIdNumber ?? body.passportNumber };
}
