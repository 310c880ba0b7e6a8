import crypto from 'node:crypto';
import { expect } from 'chai';
import { cardDataIn, containsCardNumber, identifierIsCardNumber, isMaskedCardNumber, looksLikeRsaCiphertext, rsaModulusBytes } from '../../../../gateway/upstreams/card-data';
import { rsaKeyPair } from '../../../support/keys';

describe('unit: upstreams/card-data', function () {
  describe('containsCardNumber', function () {
    const table: { text: string; expected: boolean; why: string }[] = [
      { text: '5355709999999994', expected: true, why: 'a Luhn-valid 16-digit PAN' },
      { text: '4111111111112', expected: false, why: '13 digits failing Luhn' },
      { text: '5355709999999995', expected: true, why: '16 digits failing Luhn but holding a Luhn-valid 13 to 15 digit run' },
      { text: 'PAN_5355709999999994', expected: true, why: 'inside a code' },
      { text: 'card 5355 7099 9999 9994 refused', expected: true, why: 'grouped by spaces' },
      { text: '5355-7099-9999-9994', expected: true, why: 'grouped by hyphens' },
      { text: '4111111111119', expected: true, why: '13 digits, Luhn-valid' },
      { text: '4111111111111111111', expected: true, why: '19 digits' },
      { text: 'x1234567890123456789012345678901234567890123456789012345678901234567890', expected: true, why: 'a run over 64 digits' },
      { text: '411111111111', expected: false, why: '12 digits' },
      { text: '2026-03-01T10:15:00.000Z', expected: false, why: 'a timestamp' },
      { text: '+447700900123', expected: false, why: 'a phone number' },
      { text: '5355 70** **** 1234', expected: false, why: 'a masked PAN' },
      { text: '5355  7099 9999 9994', expected: false, why: 'two spaces end a run (4 + 12 digits)' },
      { text: '', expected: false, why: 'empty' },
    ];
    for (const row of table) {
      it(`${row.why}: ${row.expected}`, function () {
        expect(containsCardNumber(row.text)).to.equal(row.expected);
      });
    }
  });

  it('identifierIsCardNumber: only an identifier that is a card number by itself', function () {
    expect(identifierIsCardNumber('5355709999999994')).to.equal(true);
    expect(identifierIsCardNumber('tx-5355709999999994')).to.equal(true);
    expect(identifierIsCardNumber('CK5355709999999994')).to.equal(false);
    expect(identifierIsCardNumber('65f1c0de4111111111111abc')).to.equal(false);
    expect(identifierIsCardNumber('48213377')).to.equal(false);
  });

  describe('isMaskedCardNumber', function () {
    const table: [string, boolean][] = [
      ['5355 70** **** 1234', true],
      ['535570******1234', true],
      ['************1234', true],
      ['5355-70XX-XXXX-1234', true],
      ['4111 11•• •••• 1111', true],
      ['5355709999999994', false],
      ['5355 7099 9999 9994', false],
      ['5355 709* **** 1234', false],
      ['5355 70** **** *12345', false],
      ['5355 70** 1234', false],
      ['', false],
      ['n/a', false],
    ];
    for (const [text, expected] of table) {
      it(`"${text}" → ${expected}`, function () {
        expect(isMaskedCardNumber(text)).to.equal(expected);
      });
    }
  });

  it('looksLikeRsaCiphertext: base64 of exactly the key size; never a plaintext CVV or PAN', function () {
    const { publicKey } = rsaKeyPair();
    const securityKey = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    expect(rsaModulusBytes(securityKey)).to.equal(256);
    expect(rsaModulusBytes('not a key')).to.equal(undefined);
    const ciphertext = crypto.publicEncrypt({ key: publicKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('123')).toString('base64');
    expect(looksLikeRsaCiphertext(ciphertext, 256)).to.equal(true);
    expect(looksLikeRsaCiphertext(Buffer.from(ciphertext, 'base64').toString('base64url'), 256)).to.equal(true);
    expect(looksLikeRsaCiphertext(ciphertext)).to.equal(true);
    expect(looksLikeRsaCiphertext(ciphertext, 384)).to.equal(false);
    for (const plain of ['123', '5355709999999994', '5355 7099 9999 9994', crypto.randomBytes(16).toString('base64'), '']) {
      expect(looksLikeRsaCiphertext(plain), plain).to.equal(false);
    }
  });

  describe('cardDataIn', function () {
    const card = { cardKey: 'CK5355709999999994', cardMask: '5355 70** **** 1234', statusCode: '00', currency: 'EUR', expDate: '12/2031', createdAt: '2026-03-01T10:15:00.000Z' };
    const table: { answer: unknown; expected: string | undefined; why: string }[] = [
      { answer: card, expected: undefined, why: 'an honest card (its cardKey holds digits by chance)' },
      { answer: { ...card, cardNumber: '5355709999999994', cvv: '123' }, expected: undefined, why: 'the reveal members are left to their transforms' },
      { answer: { ...card, cardMask: '5355709999999994' }, expected: 'cardMask is not a masked card number', why: 'a full PAN as cardMask' },
      { answer: { ...card, cardMask: 42 }, expected: 'cardMask is not a masked card number', why: 'a cardMask that is not a string' },
      { answer: { data: [{ merchant: { name: 'Shop 5355 7099 9999 9994' } }] }, expected: 'data.0.merchant.name holds a card number', why: 'deep in an array' },
      { answer: [{ name: 'dailyPurchase', value: 5355709999999994 }], expected: '0.value holds a card number', why: 'a number' },
      { answer: { id: '5355709999999994' }, expected: 'id holds a card number', why: 'an identifier that is a PAN' },
      { answer: { ['5355709999999994']: 1 }, expected: 'a member name of answer holds a card number', why: 'a member name' },
      { answer: { cardMask: null, amount: 12.5 }, expected: undefined, why: 'a null cardMask (unknown card)' },
      { answer: { tokenReference: 'tref_5355709999999994abcdef12' }, expected: undefined, why: "a network token's reference whose hexadecimal holds a Luhn-valid digit run by chance" },
      { answer: { token: { reference: 'DWSPMC0005355709999999994abc' } }, expected: undefined, why: 'a token reference as a network writes it (letters and digits in one run)' },
      { answer: { tokenReference: '5355709999999994' }, expected: 'tokenReference holds a card number', why: 'a token reference that is a PAN' },
    ];
    for (const row of table) {
      it(`${row.why}`, function () {
        expect(cardDataIn(row.answer)).to.equal(row.expected);
      });
    }

    it('walks 100,000 levels without recursion', function () {
      let deep: unknown = { name: '5355709999999994' };
      for (let i = 0; i < 100_000; i++) deep = [deep];
      expect(cardDataIn(deep)).to.match(/holds a card number$/);
    });
  });
});
