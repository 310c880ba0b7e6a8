import { expect } from 'chai';
import type { Card } from '../../../gateway/cards/card-store';
import { applyTransform, RESPONSE_TRANSFORM_TABLE, UnusableAnswerError } from '../../../policies/proxy/transforms';
import { RESPONSE_TRANSFORMS, type ResponseTransformName } from '../../../policies/proxy/schema';

const PAN = '5355700000001234';
/** A stand-in RSA-2048 OAEP ciphertext: base64 of 256 bytes (the reveal transforms check the size). */
const CIPHERTEXT = Buffer.alloc(256, 0xa7).toString('base64');
const LIMIT = { name: 'dailyPurchase', value: 2000, currency: 'EUR', used: 120.5, available: 1879.5 };
const METHOD = { id: 'de-dp-standard', type: 'postal', carrier: 'Deutsche Post', name: 'Standard letter', estimatedDays: 3, fee: 1.5, currency: 'EUR' };

const STORED: Card = {
  cardKey: 'CK0123456789ABCDEF',
  cardMask: '5355 70** **** 1234',
  type: 'virtual',
  status: 'ACTIVE',
  statusCode: '00',
  currency: 'EUR',
  ownerType: 'individual',
  ownerId: '65f1c0de0123456789abcdef',
  createdAt: '2026-03-01T10:15:00.000Z',
  productCode: 'P-STD',
  holderClientCode: '48213377',
  expDate: '12/2030',
  embossedName: 'ADA',
  nickname: 'travel',
  threeDsPhone: null,
};

interface Case {
  description: string;
  transform: ResponseTransformName;
  answer: unknown;
  expected?: unknown;
  unusable?: true;
}

const cases: Case[] = [
  // card-status (2.4)
  { description: 'status 00 is ACTIVE; extra fields dropped', transform: 'card-status', answer: { cardKey: 'CK1', statusCode: '00', pan: PAN }, expected: { cardKey: 'CK1', status: 'ACTIVE', statusCode: '00' } },
  { description: 'I1 is LOCKED', transform: 'card-status', answer: { cardKey: 'CK1', statusCode: 'I1' }, expected: { cardKey: 'CK1', status: 'LOCKED', statusCode: 'I1' } },
  { description: 'S6 is MOBILE_LOST', transform: 'card-status', answer: { cardKey: 'CK1', statusCode: 'S6' }, expected: { cardKey: 'CK1', status: 'MOBILE_LOST', statusCode: 'S6' } },
  { description: 'an unknown status code', transform: 'card-status', answer: { cardKey: 'CK1', statusCode: 'Z9' }, unusable: true },
  { description: 'a prototype key as status code', transform: 'card-status', answer: { cardKey: 'CK1', statusCode: 'constructor' }, unusable: true },
  { description: 'no cardKey', transform: 'card-status', answer: { statusCode: '00' }, unusable: true },
  { description: 'an array', transform: 'card-status', answer: [], unusable: true },
  // card-details (2.3)
  {
    description: 'our record with the issuer\'s fresh status, mask, expiry and emboss name; PAN and CVV dropped',
    transform: 'card-details',
    answer: { ...STORED, statusCode: 'L1', cardMask: '5355 70** **** 9999', expDate: '01/2031', embossedName: 'ADA-L', cardNumber: PAN, cvv: '123', holderClientCode: 'other', nickname: 'issuer-nick' },
    expected: { ...STORED, status: 'LOCKED', statusCode: 'L1', cardMask: '5355 70** **** 9999', expDate: '01/2031', embossedName: 'ADA-L' },
  },
  { description: 'an empty emboss name is null', transform: 'card-details', answer: { statusCode: '00', embossedName: '' }, expected: { ...STORED, embossedName: null } },
  { description: 'only statusCode present: the rest is ours', transform: 'card-details', answer: { statusCode: 'S4' }, expected: { ...STORED, status: 'CLOSED', statusCode: 'S4' } },
  { description: 'non-string overlay fields are ignored', transform: 'card-details', answer: { statusCode: '00', cardMask: 5, expDate: null }, expected: STORED },
  { description: 'a card without a status code', transform: 'card-details', answer: { cardKey: 'CK1' }, unusable: true },
  { description: 'a card with an unknown status code', transform: 'card-details', answer: { statusCode: 'XX' }, unusable: true },
  { description: 'a card whose cardMask is a full PAN', transform: 'card-details', answer: { statusCode: '00', cardMask: '5355709999999994' }, unusable: true },
  { description: 'a card whose emboss name holds a grouped PAN', transform: 'card-details', answer: { statusCode: '00', embossedName: '5355 7099 9999 9994' }, unusable: true },
  { description: 'card-status: a cardKey holding digits by chance passes', transform: 'card-status', answer: { cardKey: 'CK5355709999999994', statusCode: '00' }, expected: { cardKey: 'CK5355709999999994', status: 'ACTIVE', statusCode: '00' } },
  { description: 'card-status: a cardKey that is a PAN', transform: 'card-status', answer: { cardKey: '5355709999999994', statusCode: '00' }, unusable: true },
  { description: 'limit: a currency holding a PAN', transform: 'limit', answer: { ...LIMIT, currency: 'PAN_5355709999999994' }, unusable: true },
  { description: 'limit: a 16-digit Luhn-valid value', transform: 'limit', answer: { ...LIMIT, value: 5355709999999994 }, unusable: true },
  // cvv / card-number
  { description: 'cvv ciphertext only', transform: 'cvv', answer: { cvv: CIPHERTEXT, cardNumber: 'x' }, expected: { cvv: CIPHERTEXT } },
  { description: 'cvv in plaintext', transform: 'cvv', answer: { cvv: '123' }, unusable: true },
  { description: 'cvv: base64 of 16 bytes', transform: 'cvv', answer: { cvv: 'QUJDREVGR0hJSktMTU5PUA==' }, unusable: true },
  { description: 'cvv not a string', transform: 'cvv', answer: { cvv: 123 }, unusable: true },
  { description: 'cardNumber ciphertext only', transform: 'card-number', answer: { cardNumber: CIPHERTEXT, cvv: 'y' }, expected: { cardNumber: CIPHERTEXT } },
  { description: 'cardNumber in plaintext', transform: 'card-number', answer: { cardNumber: '5355709999999994' }, unusable: true },
  { description: 'cardNumber missing', transform: 'card-number', answer: {}, unusable: true },
  // limits (2.5)
  { description: 'limits: documented fields of each', transform: 'limits', answer: [{ ...LIMIT, secret: 1 }, LIMIT], expected: [LIMIT, LIMIT] },
  { description: 'limits: not an array', transform: 'limits', answer: { data: [LIMIT] }, unusable: true },
  { description: 'limits: an item lacks available', transform: 'limits', answer: [{ ...LIMIT, available: undefined }], unusable: true },
  { description: 'limit: documented fields', transform: 'limit', answer: { ...LIMIT, extra: 'x' }, expected: LIMIT },
  { description: 'limit: value as a string', transform: 'limit', answer: { ...LIMIT, value: '2000' }, unusable: true },
  { description: 'limit-available', transform: 'limit-available', answer: { available: 0, name: 'x' }, expected: { available: 0 } },
  { description: 'limit-available: not finite', transform: 'limit-available', answer: { available: null }, unusable: true },
  // pin-encryption-key
  {
    description: 'pin key',
    transform: 'pin-encryption-key',
    answer: { keyId: 'pin-0123456789abcdef', algorithm: 'RSA-OAEP-256', publicKey: '-----BEGIN PUBLIC KEY-----', privateKey: 'never' },
    expected: { keyId: 'pin-0123456789abcdef', algorithm: 'RSA-OAEP-256', publicKey: '-----BEGIN PUBLIC KEY-----' },
  },
  { description: 'pin key without publicKey', transform: 'pin-encryption-key', answer: { keyId: 'k', algorithm: 'a' }, unusable: true },
  // fee (2.6)
  {
    description: 'fee result',
    transform: 'fee',
    answer: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R002', fee: 5, currency: 'EUR', cardKey: 'CK1' },
    expected: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Consumer Debit', ProductType: 'R002', fee: 5, currency: 'EUR' },
  },
  { description: 'fee without a number', transform: 'fee', answer: { OperationType: 'A', CustomerType: 'B', ProductType: 'C', fee: '5', currency: 'EUR' }, unusable: true },
  // delivery-methods (4.4)
  {
    description: 'delivery methods wrapped in data, documented fields of each method',
    transform: 'delivery-methods',
    answer: { success: true, country: 'DE', deliveryMethods: [{ ...METHOD, internalRef: 'x' }], requestedBy: 'y' },
    expected: { data: { success: true, country: 'DE', deliveryMethods: [METHOD] } },
  },
  { description: 'no delivery methods', transform: 'delivery-methods', answer: { success: true, country: 'KP', deliveryMethods: [] }, expected: { data: { success: true, country: 'KP', deliveryMethods: [] } } },
  { description: 'delivery methods not an array', transform: 'delivery-methods', answer: { success: true, country: 'DE', deliveryMethods: {} }, unusable: true },
  { description: 'a delivery method without an id', transform: 'delivery-methods', answer: { success: true, country: 'DE', deliveryMethods: [{ ...METHOD, id: undefined }] }, unusable: true },
  { description: 'a null answer', transform: 'delivery-methods', answer: null, unusable: true },
];

describe('upstream-proxy: response transforms (table)', function () {
  it('has a transform for every name the policy schema allows', function () {
    expect(Object.keys(RESPONSE_TRANSFORM_TABLE).sort()).to.deep.equal([...RESPONSE_TRANSFORMS].sort());
    expect(RESPONSE_TRANSFORM_TABLE['card-details'].needsStoredCard).to.equal(true);
    for (const name of RESPONSE_TRANSFORMS.filter((n) => n !== 'card-details')) expect(RESPONSE_TRANSFORM_TABLE[name].needsStoredCard, name).to.equal(false);
  });

  for (const testCase of cases) {
    it(`${testCase.transform}: ${testCase.description}`, function () {
      const context = testCase.transform === 'card-details' ? { storedCard: { ...STORED } } : {};
      if (testCase.unusable) {
        expect(() => applyTransform(testCase.transform, testCase.answer, context)).to.throw(UnusableAnswerError);
        return;
      }
      const result = applyTransform(testCase.transform, testCase.answer, context);
      expect(result).to.deep.equal(testCase.expected);
      expect(JSON.stringify(result)).to.not.include(PAN);
    });
  }

  it('names the field, never the value, in an unusable answer', function () {
    try {
      applyTransform('cvv', { cvv: { secret: PAN } }, {});
      expect.fail('should throw');
    } catch (err) {
      expect((err as Error).message).to.include('cvv').and.not.include(PAN);
    }
  });

  it('does not change the stored card it is given', function () {
    const stored = { ...STORED };
    applyTransform('card-details', { statusCode: 'S2', cardMask: '5355 70** **** 9999' }, { storedCard: stored });
    expect(stored).to.deep.equal(STORED);
  });
});
