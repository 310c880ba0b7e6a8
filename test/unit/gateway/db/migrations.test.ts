import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { readMigrations } from '../../../../gateway/db/migrate';

describe('unit: db migrations are read in version order, one file per version', function () {
  it('reads the shipped migrations with distinct, increasing versions', function () {
    const versions = readMigrations().map((m) => m.version);
    expect(versions.length).to.be.greaterThan(0);
    expect(new Set(versions).size).to.equal(versions.length);
    expect([...versions].sort()).to.deep.equal(versions);
  });

  it('refuses two files with one version number (the second would silently never run)', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-migrations-'));
    try {
      for (const name of ['001_first.sql', '002_one.sql', '002_other.sql']) fs.writeFileSync(path.join(dir, name), 'SELECT 1;');
      expect(() => readMigrations(dir)).to.throw(/two migrations share version 002 \(one, other\)/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
