import { expect } from 'chai';
import { controlCharacterAt } from '../../../policies/validate/validate';

describe('validate policy: control characters and unpaired surrogates are refused', function () {
  const table: [string, unknown, string | undefined][] = [
    ['plain text', { reason: 'lost on the train' }, undefined],
    ['tab, line feed and carriage return are allowed', { description: 'a\tb\nc\r' }, undefined],
    ['emoji (a surrogate pair) is allowed', { nickname: 'Groceries 🛒' }, undefined],
    ['NUL', { reason: 'a\u0000b' }, 'reason'],
    ['the unit separator U+001F', { search: '0042\u001f100' }, 'search'],
    ['DEL', { nickname: 'x\u007f' }, 'nickname'],
    ['a lone high surrogate', { reason: 'O\ud800J' }, 'reason'],
    ['a lone low surrogate', { reason: '\udc00' }, 'reason'],
    ['nested in an array', [{ name: 'dailyPurchase' }, { name: 'x\u0001' }], '1.name'],
    ['in a key', { ['bad\u0000key']: 1 }, 'bad\u0000key'],
    ['a number', { value: 3 }, undefined],
  ];
  for (const [description, value, expected] of table) {
    it(description, function () {
      expect(controlCharacterAt(value)).to.equal(expected);
    });
  }
});
