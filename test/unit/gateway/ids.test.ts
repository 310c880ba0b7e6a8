import { expect } from 'chai';
import { isObjectId, newObjectId } from '../../../gateway/ids';

/** Bits that differ between two equal-length hex strings. */
function differingBits(a: string, b: string): number {
  let bits = 0;
  for (let i = 0; i < a.length; i++) {
    let x = parseInt(a[i], 16) ^ parseInt(b[i], 16);
    while (x) {
      bits += x & 1;
      x >>= 1;
    }
  }
  return bits;
}

describe('unit: ids', function () {
  it('makes unique 24-hex ids that start with the creation second', function () {
    const ids = new Set(Array.from({ length: 1000 }, () => newObjectId(Date.UTC(2026, 10, 22) )));
    expect(ids.size).to.equal(1000);
    for (const id of ids) expect(isObjectId(id)).to.equal(true);
    expect([...ids][0].slice(0, 8)).to.equal((Date.UTC(2026, 10, 22) / 1000).toString(16));
  });

  // Issue 11 item 7: ids were seconds + 5 bytes fixed per process + a counter, so one id of a
  // partner let another partner step to its neighbours. After the 4 time bytes, 8 bytes (64 bits)
  // come from the CSPRNG for every id. These bounds fail with probability below 1e-6.
  it('puts 64 fresh random bits after the time: no fixed per-process part, no counter', function () {
    const now = Date.UTC(2026, 10, 22);
    const randomParts = Array.from({ length: 1000 }, () => newObjectId(now).slice(8));
    for (const part of randomParts) expect(part).to.have.length(16);

    // The old layout: bytes 4..8 were the same in every id of the process, bytes 9..11 a counter.
    expect(new Set(randomParts.map((p) => p.slice(0, 10))).size, 'the 5 bytes after the time differ between ids').to.equal(1000);
    const counterSteps = randomParts.slice(1).filter((p, i) => parseInt(p.slice(10), 16) - parseInt(randomParts[i].slice(10), 16) === 1);
    expect(counterSteps, 'successive ids are not counter-adjacent').to.have.length(0);

    // Successive ids differ in about half of the 64 bits, never in only a few.
    const distances = randomParts.slice(1).map((p, i) => differingBits(p, randomParts[i]));
    expect(Math.min(...distances)).to.be.at.least(8);
    const mean = distances.reduce((a, b) => a + b, 0) / distances.length;
    expect(mean).to.be.within(28, 36);

    // Every one of the 64 bit positions is set in roughly half of the ids (none is fixed).
    for (let bit = 0; bit < 64; bit++) {
      const nibble = Math.floor(bit / 4);
      const set = randomParts.filter((p) => (parseInt(p[nibble], 16) >> (3 - (bit % 4))) & 1).length;
      expect(set, `bit ${bit}`).to.be.within(350, 650);
    }
  });

  it('recognises only lower-case 24-hex strings', function () {
    expect(isObjectId('6b02371b40487492a2ee0dd6')).to.equal(true);
    expect(isObjectId('6B02371B40487492A2EE0DD6')).to.equal(false);
    expect(isObjectId('6b02371b40487492a2ee0dd')).to.equal(false);
    expect(isObjectId(42)).to.equal(false);
  });
});
