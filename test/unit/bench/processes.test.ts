import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { isRunning, startNode } from '../../../bench/processes';

describe('bench/processes startNode: a child that dies after it was ready', function () {
  this.timeout(20_000);
  let dir: string;
  let exitCode: typeof process.exitCode;
  const written: string[] = [];
  let write: typeof process.stderr.write;

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-startnode-'));
    exitCode = process.exitCode;
    write = process.stderr.write;
    written.length = 0;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
  });
  afterEach(function () {
    process.stderr.write = write;
    process.exitCode = exitCode;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is reported with its script, code, signal and stderr tail, and fails the run', async function () {
    const script = path.join(dir, 'dies.js');
    // The handler first: the ready line may be answered at once.
    fs.writeFileSync(script, "process.on('SIGUSR2', () => process.exit(3)); process.stderr.write('out of luck\\n'); setInterval(() => {}, 1000); console.log(JSON.stringify({ port: 1 }));");
    const proc = await startNode(script, {}, (l) => l.port === 1);
    const exited = new Promise((resolve) => proc.child.once('close', resolve));
    proc.child.kill('SIGUSR2');
    await exited;
    expect(isRunning(proc.child)).to.equal(false);
    expect(proc.unexpectedExit).to.match(/dies\.js exited unexpectedly \(code 3, signal null\): out of luck/);
    expect(written.join('')).to.include('exited unexpectedly');
    expect(process.exitCode).to.equal(1);
  });

  it('a child stopped through stop() is not reported', async function () {
    const script = path.join(dir, 'stops.js');
    fs.writeFileSync(script, 'console.log(JSON.stringify({ port: 2 })); setInterval(() => {}, 1000);');
    const proc = await startNode(script, {}, (l) => l.port === 2);
    await proc.stop();
    expect(proc.unexpectedExit).to.equal(undefined);
    expect(process.exitCode).to.equal(exitCode);
  });
});

describe('bench/processes startNode: stdoutFile', function () {
  this.timeout(20_000);

  it("appends the child's stdout after its ready line to the file", async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-startnode-'));
    try {
      const script = path.join(dir, 'talks.js');
      fs.writeFileSync(script, "process.on('SIGUSR2', () => console.log('after ready')); setInterval(() => {}, 1000); console.log(JSON.stringify({ port: 3 }));");
      const file = path.join(dir, 'out.log');
      const proc = await startNode(script, {}, (l) => l.port === 3, undefined, file);
      proc.child.kill('SIGUSR2');
      while (!(fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('after ready'))) await new Promise((resolve) => setImmediate(resolve));
      await proc.stop();
      expect(fs.readFileSync(file, 'utf8')).to.equal('after ready\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
