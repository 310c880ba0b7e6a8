import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { waitFor } from '../../../support/wait';

const LOGGER = path.resolve(__dirname, '../../../../gateway/logging/logger.js');

/** Runs `body` in a child process with `log` (the gateway's logger on stdout); its stdout as it arrives. */
function child(body: string) {
  const proc = spawn(process.execPath, ['-e', `const log = require(${JSON.stringify(LOGGER)}).createLogger({ level: 'info' });\n${body}`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
  return { proc, out: () => out, exited };
}

const lines = (text: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; n?: number });

/**
 * The process logger's stdout (gateway/logging/logger.ts, coalescedStdout; docs/logging.md): a
 * turn's lines are written together, and none is held back: an idle process's line appears, and an
 * exit right after logging loses nothing.
 */
describe('unit: logging/coalescedStdout', function () {
  this.timeout(20_000);

  it('writes a line of an idle process without waiting for another line', async () => {
    const c = child(`log.info('alone'); setInterval(() => {}, 1000);`);
    try {
      await waitFor('the line on stdout', () => lines(c.out()).some((l) => l.msg === 'alone'), 10_000);
    } finally {
      c.proc.kill('SIGKILL');
    }
  });

  it('writes every line, in order, when the process exits in the turn that logged them', async () => {
    const c = child(`for (let n = 0; n < 2000; n++) log.info({ n }, 'line'); process.exit(0);`);
    expect(await c.exited).to.equal(0);
    const got = lines(c.out());
    expect(got).to.have.length(2000);
    expect(got.map((l) => l.n)).to.deep.equal([...Array(2000).keys()]);
  });

  it('writes the lines logged while an earlier write is in flight (a burst, then idle)', async () => {
    const c = child(`for (let n = 0; n < 300; n++) log.info({ n }, 'burst'); setImmediate(() => log.info('after')); setInterval(() => {}, 1000);`);
    try {
      await waitFor('every line on stdout', () => lines(c.out()).length === 301, 10_000);
      expect(lines(c.out()).at(-1)!.msg).to.equal('after');
    } finally {
      c.proc.kill('SIGKILL');
    }
  });
});
