import { expect } from 'chai';
import { ADDRESS, CARD, INDIVIDUAL_ACCOUNT, PERSONAL_INFO } from '../../../../gateway/schemas/responses';
import { CARD_STATUSES, type Card } from '../../../../gateway/shapes/card';
import type { Address, IndividualAccount, PersonalInfo } from '../../../../gateway/shapes/individual';

/**
 * gateway/shapes/ declares the card and the individual account partners read; the OpenAPI
 * document states them with the response schemas of gateway/schemas/responses.ts. Each sample
 * below is typed by a shape, so it has every field of it and no other (the compiler refuses a
 * missing or an extra one); the tests hold that the schema lists exactly those fields, all
 * required: a field added to one and not the other fails here.
 */

const card: Required<Card> = {
  cardKey: 'CK0000000000000001',
  cardMask: '5355 70** **** 1234',
  type: 'virtual',
  status: 'ACTIVE',
  statusCode: '00',
  currency: 'EUR',
  ownerType: 'individual',
  ownerId: '0123456789abcdef01234567',
  createdAt: '2026-12-07T00:00:00.000Z',
  productCode: 'P1',
  holderClientCode: '12345678',
  expDate: '12/2030',
  embossedName: null,
  nickname: null,
  threeDsPhone: null,
};

const personalInfo: Required<PersonalInfo> = {
  firstName: 'Ada',
  middleName: 'Bo',
  lastName: 'Lovelace',
  birthDate: '1990-01-01',
  birthCountry: 'DE',
  nationality: 'DE',
  email: 'ada@example.com',
  phone: '+4915112345678',
  idType: 'PASSPORT',
  passportNumber: '****1234',
  passportCountry: 'DE',
  issuingDate: '2020-01-01',
  validityDate: '2030-01-01',
  taxCountry: null,
  taxIdNumber: '****1234',
  fatca: 'F',
};

const address: Required<Address> = { address1: 'Street 1', address2: null, buildingNumber: '1', city: 'Berlin', stateProvince: null, zipCode: '10115', country: 'DE' };

const individual: Required<IndividualAccount> = {
  _id: '0123456789abcdef01234567',
  clientID: '12345678',
  baasAccountClientId: null,
  personalInfo,
  address,
  applicationStatus: 'APPROVED',
  dashboardStatus: 'ACTIVE',
  createdAt: '2026-12-07T00:00:00.000Z',
  updatedAt: '2026-12-07T00:00:00.000Z',
};

function fieldsOf(schema: unknown): { properties: string[]; required: string[] } {
  const { properties, required } = schema as { properties: Record<string, unknown>; required: string[] };
  return { properties: Object.keys(properties).sort(), required: [...required].sort() };
}

describe('unit: gateway/shapes and the response schemas state the same fields', () => {
  for (const [name, sample, schema] of [
    ['Card', card, CARD],
    ['IndividualAccount', individual, INDIVIDUAL_ACCOUNT],
    ['PersonalInfo', personalInfo, PERSONAL_INFO],
    ['Address', address, ADDRESS],
  ] as const) {
    it(`${name}: every field of the shape is in the schema, required, and the schema has no other`, () => {
      const fields = Object.keys(sample).sort();
      expect(fieldsOf(schema)).to.deep.equal({ properties: fields, required: fields });
    });
  }

  it("the card's status is one of CARD_STATUSES in the schema too", () => {
    const status = (CARD as { properties: { status: { enum: readonly string[] } } }).properties.status;
    expect(status.enum).to.deep.equal([...CARD_STATUSES]);
  });
});
