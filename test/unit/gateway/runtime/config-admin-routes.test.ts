import { expect } from 'chai';
import { aggregateReload, type WorkerReload } from '../../../../gateway/runtime/config-admin-routes';
import type { WorkerAnswer } from '../../../../gateway/cluster/broadcast';
import type { ConfigStatus } from '../../../../gateway/runtime/config-reloader';

const status = (hash: string, pid: number): ConfigStatus => ({ hash, loadedAt: '2026-11-22T00:00:00.000Z', path: '/app/config/gateway.config.yml', pid, watching: false, reloads: { applied: 1, rejected: 0 } });
const applied = (worker: number, hash = 'new'): WorkerAnswer => ({ worker, pid: 100 + worker, ok: true, value: { result: 'applied', hash, status: status(hash, 100 + worker) } satisfies WorkerReload });
const unchanged = (worker: number, hash = 'new'): WorkerAnswer => ({ worker, pid: 100 + worker, ok: true, value: { result: 'unchanged', hash, status: status(hash, 100 + worker) } satisfies WorkerReload });
const rejected = (worker: number): WorkerAnswer => ({
  worker,
  pid: 100 + worker,
  ok: true,
  value: { result: 'rejected', hash: 'old', stage: 'guards', reason: 'route /api/partner/me lacks the es512-jwt policy', rejectedHash: 'new', status: status('old', 100 + worker) } satisfies WorkerReload,
});
const silent = (worker: number, error: string): WorkerAnswer => ({ worker, pid: 100 + worker, ok: false, error });

describe('unit: runtime/config-admin-routes aggregateReload', function () {
  it('applied when every worker applied it (or already served it)', function () {
    const outcome = aggregateReload([applied(1), applied(2), unchanged(3)]);
    expect(outcome.ok).to.equal(true);
    if (!outcome.ok) return;
    expect(outcome.result).to.equal('applied');
    expect(outcome.status.hash).to.equal('new');
    expect(outcome.workers.map((w) => w.result)).to.deep.equal(['applied', 'applied', 'unchanged']);
  });

  it('unchanged when no worker had anything to apply', function () {
    const outcome = aggregateReload([unchanged(1), unchanged(2)]);
    expect(outcome.ok && outcome.result).to.equal('unchanged');
  });

  it('a 409 naming the worker that refused it, and the ones that applied it', function () {
    const outcome = aggregateReload([applied(1), rejected(2)]);
    expect(outcome.ok).to.equal(false);
    if (outcome.ok) return;
    expect(outcome.error.status).to.equal(409);
    expect(outcome.error.code).to.equal('conflict');
    expect(outcome.error.message).to.match(/not applied by every worker: worker 2 \(pid 102\) refused it \(guards: route \/api\/partner\/me lacks/);
    expect(outcome.error.message).to.match(/Applied by worker 1 \(pid 101\)/);
    expect(outcome.error.extensions).to.deep.include({ stage: 'guards', activeHash: 'old', rejectedHash: 'new' });
    expect(outcome.error.extensions?.refusedBy).to.deep.equal([{ worker: 2, pid: 102, result: 'rejected', hash: 'old', reason: 'guards: route /api/partner/me lacks the es512-jwt policy' }]);
  });

  it('a 409 naming a worker that did not answer (timeout, exited, still starting)', function () {
    const outcome = aggregateReload([applied(1), silent(2, 'timeout'), silent(3, 'not_ready')]);
    expect(outcome.ok).to.equal(false);
    if (outcome.ok) return;
    expect(outcome.error.message).to.match(/worker 2 \(pid 102\) did not answer \(timeout\); worker 3 \(pid 103\) did not answer \(not_ready\)/);
    expect((outcome.error.extensions?.refusedBy as unknown[]).length).to.equal(2);
  });

  it('a refusal by every worker reads as before: the reason and "the previous configuration keeps serving"', function () {
    const outcome = aggregateReload([rejected(1), rejected(2)]);
    expect(outcome.ok).to.equal(false);
    if (outcome.ok) return;
    expect(outcome.error.message).to.equal('gateway.config.yml was refused (guards): route /api/partner/me lacks the es512-jwt policy. The previous configuration keeps serving.');
  });

  it('a 409 when the workers ended up on different files (the file changed during the reload)', function () {
    const outcome = aggregateReload([applied(1, 'h1'), applied(2, 'h2')]);
    expect(outcome.ok).to.equal(false);
    if (outcome.ok) return;
    expect(outcome.error.message).to.match(/different files/);
  });
});
