import { expect } from 'chai';
import { CARD_STATUSES, cardStatusOf, STATUS_CODES } from '../../../../gateway/cards/card-status';

describe('unit: cards/card-status cardStatusOf', function () {
  const table: [string, string | undefined][] = [
    ['00', 'ACTIVE'],
    ['I1', 'LOCKED'],
    ['L1', 'LOCKED'],
    ['T1', 'TEMP_LOCKED'],
    ['S1', 'RESTRICTED'],
    ['S2', 'LOST'],
    ['S3', 'STOLEN'],
    ['S4', 'CLOSED'],
    ['S5', 'FRAUD'],
    ['S6', 'MOBILE_LOST'],
    ['99', undefined],
    ['', undefined],
    ['l1', undefined],
    ['toString', undefined],
    ['__proto__', undefined],
  ];
  for (const [code, status] of table) {
    it(`${JSON.stringify(code)} → ${status ?? 'unknown'}`, function () {
      expect(cardStatusOf(code)).to.equal(status);
    });
  }

  it('maps every code to a CardStatus of the spec, and every CardStatus has a code', function () {
    for (const status of Object.values(STATUS_CODES)) expect(CARD_STATUSES).to.include(status);
    for (const status of CARD_STATUSES) expect(Object.values(STATUS_CODES)).to.include(status);
  });
});
