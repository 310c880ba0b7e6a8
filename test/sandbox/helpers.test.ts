import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cardStatusOf, ISSUER_STATUS_CODES, UPSTREAM_ERRORS, type CardStatus, type IssuerStatusCode } from '../../sandbox';
import { maskPan } from '../../sandbox/issuer/card-store';
import { nextStatusCode, STATUS_ACTIONS } from '../../sandbox/issuer/status-codes';
import { pathMatches } from '../../sandbox/shared/faults';
import { compileEveryValidator } from '../../sandbox/shared/validation';
import { isLuhnValid, luhnCheckDigit } from '../../sandbox/shared/luhn';
import { hashSeed, seededRandom } from '../../sandbox/shared/seeded-random';

describe('sandbox helpers', () => {
  it('maps every issuer status code to its CardStatus', () => {
    const table: Array<[IssuerStatusCode, CardStatus]> = [
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
    ];
    for (const [code, status] of table) expect(cardStatusOf(code), code).to.equal(status);
    expect(ISSUER_STATUS_CODES).to.have.length(table.length);
  });

  it('compiles the request schema of every sandbox route (strict mode: a schema error fails here, not at its first request)', () => {
    // Importing ../../sandbox loaded every route module; their validators compile at first use.
    expect(compileEveryValidator()).to.be.at.least(17);
  });

  it('never lets an action leave S4 (closed)', () => {
    for (const action of STATUS_ACTIONS) expect(nextStatusCode('S4', action), action).to.equal(null);
  });

  const luhn: Array<{ digits: string; valid: boolean }> = [
    { digits: '79927398713', valid: true },
    { digits: '79927398710', valid: false },
    { digits: '4111111111111111', valid: true },
    { digits: '5555555555554444', valid: true },
    { digits: '5555555555554445', valid: false },
    { digits: '4111-1111', valid: false },
  ];
  for (const { digits, valid } of luhn) {
    it(`Luhn: ${digits} is ${valid ? 'valid' : 'invalid'}`, () => {
      expect(isLuhnValid(digits)).to.equal(valid);
    });
  }
  it('luhnCheckDigit completes a number', () => {
    expect(luhnCheckDigit('7992739871')).to.equal(3);
    expect(luhnCheckDigit('411111111111111')).to.equal(1);
  });

  it('masks a PAN as 5355 70** **** 1234', () => {
    expect(maskPan('5355701234561234')).to.equal('5355 70** **** 1234');
  });

  const paths: Array<{ pattern: string; path: string; matches: boolean }> = [
    { pattern: '/cards', path: '/cards', matches: true },
    { pattern: '/cards', path: '/cards/CK1', matches: false },
    { pattern: '/cards/*', path: '/cards/CK1/status', matches: true },
    { pattern: '/cards/*', path: '/cards', matches: false },
    { pattern: '/cards*', path: '/cards', matches: true },
    { pattern: '*', path: '/anything', matches: true },
  ];
  for (const { pattern, path, matches } of paths) {
    it(`fault path ${pattern} ${matches ? 'matches' : 'does not match'} ${path}`, () => {
      expect(pathMatches(pattern, path)).to.equal(matches);
    });
  }

  it('the seeded PRNG is deterministic per seed and spreads values over [0, 1)', () => {
    const a = seededRandom('CK0123456789ABCDEF');
    const b = seededRandom('CK0123456789ABCDEF');
    const values = Array.from({ length: 1000 }, () => a.next());
    expect(Array.from({ length: 1000 }, () => b.next())).to.deep.equal(values);
    expect(Math.min(...values)).to.be.at.least(0);
    expect(Math.max(...values)).to.be.below(1);
    expect(values.filter((v) => v < 0.5).length).to.be.within(400, 600);
    expect(hashSeed('a')).not.to.equal(hashSeed('b'));
  });
});

describe('docs/upstreams.md', () => {
  const doc = readFileSync(path.resolve(__dirname, '../../../docs/upstreams.md'), 'utf8');

  it('lists every error code of the catalog with its status', () => {
    for (const [code, status] of Object.entries(UPSTREAM_ERRORS)) {
      expect(doc, code).to.include(`| \`${code}\` | ${status} |`);
    }
  });

  it('lists every issuer status code with its CardStatus', () => {
    for (const { code, meaning, cardStatus } of ISSUER_STATUS_CODES) {
      expect(doc, code).to.include(`| \`${code}\` | ${meaning} | ${cardStatus} |`);
    }
  });
});
