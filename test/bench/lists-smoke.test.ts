import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { SMOKE_SHAPE } from '../../bench/seed-lists';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Every route bench:lists measures, in its order (bench/list-routes.ts). */
const ROUTES = ['individuals', 'me', 'individual-cards', 'audit-logs', 'card-status-history', 'cards', 'cards-active'];

/**
 * bench/list-routes.ts `--smoke` (issue 33's bench of the list routes): it seeds both partners,
 * measures every route for each and explains the statements each route ran. Too small to judge the
 * targets: only the harness is checked.
 */
describe('bench:lists harness (smoke)', function () {
  this.timeout(120_000);

  it('seeds both partners, measures every route for each, explains its statements and writes the results file', async function () {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist', 'bench', 'list-routes.js'), '--smoke'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn' },
      maxBuffer: 10 * 1024 * 1024,
    });
    const written = /written (bench\/results\/lists-[^\s]+-smoke\.json)/.exec(stdout);
    expect(written, stdout).to.not.equal(null);
    const report = JSON.parse(fs.readFileSync(path.join(ROOT, written![1]!), 'utf8'));
    expect(report.targets).to.include({ ratio: 1.5, p95Ms: 25, judged: false });
    expect(report.seed.large.shape).to.deep.equal(SMOKE_SHAPE.large);
    expect(report.seed.small.shape).to.deep.equal(SMOKE_SHAPE.small);
    expect(report.database.url, 'the smoke drops its database').to.equal('(dropped)');
    expect(report.results.map((r: { name: string }) => r.name)).to.deep.equal(ROUTES);
    const { rounds, calls } = report.options;
    for (const route of report.results) {
      for (const size of ['small', 'large'] as const) {
        const side = route[size];
        const what = `${route.name} (${size})`;
        expect(side.calls, `${what}: every measured call answered 200`).to.equal(rounds * calls);
        expect(side.rounds, `${what}: its rounds`).to.have.length(rounds);
        expect(side.p50, `${what} p50`).to.be.above(0);
        expect(side.p99, `${what} p99 >= p95 >= p50`).to.be.at.least(side.p95);
        expect(side.p95).to.be.at.least(side.p50);
        expect(side.dbCpuUsPerCall, `${what}: database time per call`).to.be.a('number').at.least(0);
        expect(side.answer.items, `${what}: the answer lists items`).to.be.above(0);
        const explained = side.statements.filter((s: { explained: boolean }) => s.explained);
        expect(explained, `${what}: the statements the route ran, recorded in the gateway and explained`).to.not.be.empty;
        for (const s of explained) {
          expect(s.executionMs, `${what}: executor time of ${s.text}`).to.be.a('number').at.least(0);
          expect(s.buffers, `${what}: buffers of ${s.text}`).to.be.above(0);
          expect(s.rowsRead).to.be.a('number');
        }
      }
      expect(route.ratios).to.have.keys(['dbCpu', 'executor', 'rowsRead', 'buffers']);
      expect(route.ratioMet).to.be.a('boolean');
      expect(route.p95Met).to.be.a('boolean');
    }
    // What the seed put under each route (the measured individual's rows, the partner's): the answers see it.
    const answer = (name: string, size: 'small' | 'large') => report.results.find((r: { name: string }) => r.name === name)[size].answer;
    for (const size of ['small', 'large'] as const) {
      const shape = SMOKE_SHAPE[size];
      expect(answer('individuals', size).total).to.equal(shape.individuals);
      expect(answer('individual-cards', size).items).to.equal(shape.measured.activeCards);
      expect(answer('audit-logs', size).total).to.equal(shape.measured.auditEntries);
      expect(answer('card-status-history', size).total).to.equal(shape.measured.statusHistory);
      expect(answer('cards', size).total).to.equal(shape.cards);
    }
    expect(stdout).to.match(/\| individual-cards \| large \|/);
  });
});
