import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('bench harness (smoke: about a second per scenario)', function () {
  this.timeout(300_000);

  it('runs every scenario and baseline, prints the table and writes the results file', async function () {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist', 'bench', 'run.js'), '--smoke'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn' },
      maxBuffer: 10 * 1024 * 1024,
    });
    expect(stdout).to.match(/ES512 ceiling \(one core\): \d+ verifications\/s/);
    const written = /written (bench\/results\/[^\s]+\.json)/.exec(stdout);
    expect(written, stdout).to.not.equal(null);
    const report = JSON.parse(fs.readFileSync(path.join(ROOT, written![1]), 'utf8'));
    const names = report.results.map((r: { name: string }) => r.name);
    expect(names).to.include.members(['direct', 'bare-proxy', 'eg-proxy', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6-direct', 'S6-S1', 'S1-cluster2']);
    for (const result of report.results) {
      expect(result.requests, result.name).to.be.greaterThan(0);
      expect(result.non2xx, `${result.name} answered non-2xx`).to.equal(0);
    }
    expect(report.es512CeilingPerSecond).to.be.greaterThan(0);
    expect(report.ratios).to.have.keys(['s1VsEgProxy', 's1VsBareProxy', 's2VsEs512Ceiling', 's6AddedP50Ms', 's6AddedP99Ms', 'cluster2VsOne']);
  });
});
