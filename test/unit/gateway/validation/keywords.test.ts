import { expect } from 'chai';
import { expDateNotPast, isCountryCode } from '../../../../gateway/validation/keywords';
import { bodyAjv } from '../../../../gateway/validation/ajv';
import { individualCreate } from '../../../../gateway/schemas/individual-create';

describe('unit: validation keywords', function () {
  it('accepts real upper-case ISO 3166-1 alpha-2 codes only', function () {
    for (const code of ['DE', 'GB', 'US', 'FR', 'JP', 'AQ', 'BQ']) expect(isCountryCode(code), code).to.equal(true);
    for (const code of ['XX', 'XK', 'UK', 'EU', 'de', 'D', 'DEU', '', 42]) expect(isCountryCode(code), String(code)).to.equal(false);
  });

  it('treats an expiry month as valid through its end', function () {
    const now = new Date(Date.UTC(2026, 10, 22));
    expect(expDateNotPast('11/2026', now)).to.equal(true);
    expect(expDateNotPast('10/2026', now)).to.equal(false);
    expect(expDateNotPast('01/2027', now)).to.equal(true);
    expect(expDateNotPast('12/2025', now)).to.equal(false);
  });

  it('checks leap years in dates', function () {
    const validate = bodyAjv.getSchema(individualCreate.$id) ?? bodyAjv.compile(individualCreate);
    const base = {
      firstName: 'A', middleName: 'Bb', lastName: 'C', country: 'DE', city: 'Berlin', zipCode: '10115', buildingNumber: '1',
      idType: 'PASSPORT', address1: 'Str 1', passportNumber: 'X1', issuingDate: '2020-01-01', validityDate: '2030-01-01',
      passportCountry: 'DE', birthCountry: 'DE', nationality: 'DE', phone: '+491511234567', email: 'a@b.de',
    };
    expect(validate({ ...base, birthDate: '2000-02-29' })).to.equal(true);
    expect(validate({ ...base, birthDate: '1900-02-29' })).to.equal(false);
    expect(validate({ ...base, birthDate: '2001-02-29' })).to.equal(false);
  });
});
