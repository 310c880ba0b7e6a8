import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import pino from 'pino';
import { openDecisionTrace, startTraceMonitors, tracing, writeTrace } from '../../../../gateway/authorizations/decision-trace';
import { waitFor } from '../../../support/wait';

/** A pino logger whose lines the test reads. */
function capturedLog(): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

describe('unit: the authorization decision trace (AUTHORIZATION_TRACE_FILE)', function () {
  let dir: string;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'decision-trace-'));
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is off without a file, and writes nothing', function () {
    expect(tracing()).to.equal(false);
    writeTrace({ id: 'x' });
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('appends one JSON line per record, each with the process id, all of them there once closed', async function () {
    const file = path.join(dir, 'trace.jsonl');
    const { log } = capturedLog();
    const trace = openDecisionTrace(file, log);
    expect(tracing()).to.equal(true);
    startTraceMonitors();
    for (let i = 0; i < 500; i++) writeTrace({ id: `auth_${i}`, request: i });
    await trace.close();
    expect(tracing()).to.equal(false);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { pid: number; id?: string });
    const decisions = lines.filter((l) => l.id !== undefined);
    expect(decisions.map((l) => l.id)).to.deep.equal(Array.from({ length: 500 }, (_, i) => `auth_${i}`));
    for (const line of lines) expect(line.pid).to.equal(process.pid);
    writeTrace({ id: 'after' });
    expect(fs.readFileSync(file, 'utf8')).not.to.contain('after');
  });

  it('a file that cannot be written turns the trace off with one error line: no unhandled error, no crash', async function () {
    // A directory cannot be opened for appending (EISDIR), even by root.
    const { log, lines } = capturedLog();
    const errors: unknown[] = [];
    const onUncaught = (err: unknown) => errors.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const trace = openDecisionTrace(dir, log);
      for (let i = 0; i < 10; i++) writeTrace({ id: `auth_${i}` });
      await waitFor('the trace to turn itself off', () => !tracing());
      for (let i = 0; i < 10; i++) writeTrace({ id: `late_${i}` });
      await trace.close();
      const logged = lines.filter((l) => l.msg === 'AUTHORIZATION_TRACE_FILE cannot be written: the decision trace is off');
      expect(logged).to.have.length(1);
      expect(logged[0]).to.include({ level: 50, file: dir, code: 'EISDIR' });
      expect(errors).to.deep.equal([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('drops and counts lines beyond its buffer rather than hold them, and writes the count once it catches up', async function () {
    const file = path.join(dir, 'trace.jsonl');
    const { log, lines: logged } = capturedLog();
    // A buffer of 1 KiB: one turn's 200 writes outrun the file.
    const trace = openDecisionTrace(file, log, 1024);
    for (let i = 0; i < 200; i++) writeTrace({ id: `auth_${i}`, pad: 'x'.repeat(50) });
    const dropped = trace.dropped();
    expect(dropped).to.be.greaterThan(0);
    await waitFor('the file to catch up', () => fs.existsSync(file) && fs.statSync(file).size > 0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    await waitFor('the buffer to drain', () => {
      writeTrace({ id: 'probe' });
      return fs.readFileSync(file, 'utf8').includes('"dropped"');
    });
    await trace.close();
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id?: string; dropped?: number });
    expect(lines.filter((l) => l.id?.startsWith('auth_')).length).to.equal(200 - dropped);
    // The probes may have been dropped too: every drop is counted in the file and the log, none lost.
    expect(lines.reduce((sum, l) => sum + (l.dropped ?? 0), 0)).to.equal(trace.dropped());
    expect(logged.find((l) => l.msg === 'decision trace lines were dropped: the file fell behind')).to.include({ dropped: trace.dropped() });
  });
});
