import { expect } from 'chai';
import { jsonDepth, MAX_BODY_DEPTH } from '../../../../gateway/http/body';

describe('unit: http/body jsonDepth', function () {
  const table: { value: unknown; depth: number }[] = [
    { value: 'text', depth: 0 },
    { value: null, depth: 0 },
    { value: {}, depth: 1 },
    { value: [1, 2], depth: 1 },
    { value: [[1], { a: {} }], depth: 3 },
    { value: [{ name: 'dailyPurchase', value: 1 }], depth: 2 },
  ];
  for (const row of table) {
    it(`${JSON.stringify(row.value)} → ${row.depth}`, function () {
      expect(jsonDepth(row.value)).to.equal(row.depth);
    });
  }

  it('counts 100,000 nested arrays and objects without recursion, and stops early past a limit', function () {
    const arrays = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(jsonDepth(arrays)).to.equal(100_000);
    expect(jsonDepth(arrays, MAX_BODY_DEPTH)).to.equal(MAX_BODY_DEPTH + 1);
    const objects = JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`);
    expect(jsonDepth(objects)).to.equal(100_000);
  });
});
