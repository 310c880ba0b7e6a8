import { expect } from 'chai';
import { isObjectId, newObjectId } from '../../../gateway/ids';

describe('unit: ids', function () {
  it('makes unique 24-hex ids that start with the creation second', function () {
    const ids = new Set(Array.from({ length: 1000 }, () => newObjectId(Date.UTC(2026, 10, 22) )));
    expect(ids.size).to.equal(1000);
    for (const id of ids) expect(isObjectId(id)).to.equal(true);
    expect([...ids][0].slice(0, 8)).to.equal((Date.UTC(2026, 10, 22) / 1000).toString(16));
  });

  it('recognises only lower-case 24-hex strings', function () {
    expect(isObjectId('6b02371b40487492a2ee0dd6')).to.equal(true);
    expect(isObjectId('6B02371B40487492A2EE0DD6')).to.equal(false);
    expect(isObjectId('6b02371b40487492a2ee0dd')).to.equal(false);
    expect(isObjectId(42)).to.equal(false);
  });
});
