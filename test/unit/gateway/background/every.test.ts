import { expect } from 'chai';
import { every } from '../../../../gateway/background/every';
import { captureLogger } from '../upstreams/helpers';

/** The background jobs' timer (gateway/background/every.ts). */
describe('unit: background/every', () => {
  it('never runs two passes at a time; stop() ends the timer and resolves once the pass still running has ended', async () => {
    const { log } = captureLogger();
    let started = 0;
    let finish: () => void = () => undefined;
    const stop = every(5, () => ((started += 1), new Promise<void>((resolve) => (finish = resolve))), log, 'pass failed', { immediately: true });
    // Several intervals go by while the first pass runs: none starts another.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started).to.equal(1);
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped, 'not before the running pass ended').to.equal(false);
    finish();
    await stopping;
    expect(stopped).to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(started, 'no pass after stop()').to.equal(1);
  });

  it('logs a failed pass at warn with the failure message, and runs the next one', async () => {
    const { log, lines } = captureLogger();
    let started = 0;
    const stop = every(5, async () => {
      started += 1;
      if (started === 1) throw new Error('boom');
    }, log, 'the job failed', { immediately: true });
    while (started < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await stop();
    expect(lines.filter((l) => l.msg === 'the job failed')).to.have.length(1);
    expect(lines.find((l) => l.msg === 'the job failed')).to.include({ level: 'warn' });
  });
});
