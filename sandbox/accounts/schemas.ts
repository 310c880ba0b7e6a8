const text = (minLength: number, maxLength: number) => ({ type: 'string', minLength, maxLength }) as const;
const countryCode = { type: 'string', pattern: '^[A-Za-z]{2}$' } as const;

import { ID_TYPES } from '../../contracts/upstreams';

/** The identity document types of spec 2.2 (contracts/upstreams.ts). */
export { ID_TYPES };

/** `POST /accounts`: the individual as the gateway forwards it; unknown fields are kept, not refused. */
export const createAccountSchema = {
  $id: 'accounts-create-account',
  type: 'object',
  required: [
    'partnerId',
    'onboardingId',
    'firstName',
    'middleName',
    'lastName',
    'country',
    'birthDate',
    'email',
    'phone',
    'idType',
    'passportNumber',
  ],
  properties: {
    partnerId: text(1, 64),
    onboardingId: text(1, 64),
    baasAccountClientId: {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', pattern: '^[0-9]{1,18}$' },
      ],
    },
    firstName: text(1, 200),
    middleName: text(2, 200),
    lastName: text(1, 200),
    country: countryCode,
    birthDate: { type: 'string', format: 'date' },
    email: { type: 'string', format: 'email', maxLength: 254 },
    phone: text(4, 32),
    idType: { type: 'string', enum: ID_TYPES },
    passportNumber: text(1, 40),
    city: text(1, 100),
    stateProvince: text(0, 100),
    zipCode: text(1, 20),
    buildingNumber: text(1, 100),
    address1: text(1, 200),
    address2: text(0, 200),
    issuingDate: { type: 'string', format: 'date' },
    validityDate: { type: 'string', format: 'date' },
    passportCountry: countryCode,
    taxCountry: { type: 'string', maxLength: 2 },
    taxIdNumber: text(0, 64),
    birthCountry: countryCode,
    nationality: countryCode,
    fatca: { type: 'string', maxLength: 8 },
  },
} as const;
