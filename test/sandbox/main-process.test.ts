import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';

const MAIN = path.resolve(__dirname, '..', '..', 'sandbox', 'main.js');

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderrLines: Record<string, unknown>[];
  stderr: string;
}

/**
 * Runs the real sandbox entry point in a child (`extra` is code run before it, in the same
 * process), waits for its ready line, calls `act` with the child, and resolves when it exits.
 */
function runSandbox(extra: string, act: (pid: number) => void): Promise<Ended> {
  const child = spawn(process.execPath, ['-e', `${extra}\nrequire(${JSON.stringify(MAIN)});`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let acted = false;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (!acted && stdout.includes('"issuer"')) {
      acted = true;
      act(child.pid!);
    }
  });
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      const stderrLines = stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, signal, stderrLines, stderr });
    });
  });
}

describe('sandbox process: never exits silently (issue 14)', function () {
  this.timeout(20_000);

  it('an uncaught exception: one JSON line on stderr with the reason and stack, exit 1', async function () {
    const ended = await runSandbox("process.on('SIGUSR2', () => setImmediate(() => { throw new Error('boom from the test'); }));", (pid) => process.kill(pid, 'SIGUSR2'));
    expect(ended.code, ended.stderr).to.equal(1);
    const line = ended.stderrLines.find((l) => l.msg === 'sandbox exiting');
    expect(line, ended.stderr).to.not.equal(undefined);
    expect(line!.reason).to.equal('boom from the test');
    expect(line!.stack).to.be.a('string').and.include('boom from the test');
    expect(line!.origin).to.equal('uncaughtException');
  });

  it('an unhandled rejection: logged with its reason, exit 1', async function () {
    const ended = await runSandbox("process.on('SIGUSR2', () => { void Promise.reject(new Error('rejected in the test')); });", (pid) => process.kill(pid, 'SIGUSR2'));
    expect(ended.code, ended.stderr).to.equal(1);
    const line = ended.stderrLines.find((l) => l.msg === 'sandbox exiting');
    expect(line?.reason, ended.stderr).to.equal('rejected in the test');
    expect(line!.origin).to.equal('unhandledRejection');
  });

  for (const signal of ['SIGHUP', 'SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: logs the signal, closes and exits 0`, async function () {
      const ended = await runSandbox('', (pid) => process.kill(pid, signal));
      expect(ended.signal, `killed by ${signal} instead of handling it`).to.equal(null);
      expect(ended.code, ended.stderr).to.equal(0);
      expect(ended.stderrLines.find((l) => l.msg === 'sandbox stopping')?.signal, ended.stderr).to.equal(signal);
      expect(ended.stderrLines.some((l) => l.msg === 'sandbox exiting')).to.equal(false);
    });
  }

  it('a server that closes while serving (not asked to stop): logged, exit 1', async function () {
    // Closes the issuer's listening server from inside the process, as a failing listener would.
    const extra = `
      const http = require('node:http');
      const listen = http.Server.prototype.listen;
      const servers = [];
      http.Server.prototype.listen = function (...args) { servers.push(this); return listen.apply(this, args); };
      process.on('SIGUSR2', () => servers[0].close());`;
    const ended = await runSandbox(extra, (pid) => process.kill(pid, 'SIGUSR2'));
    expect(ended.code, ended.stderr).to.equal(1);
    expect(String(ended.stderrLines.find((l) => l.msg === 'sandbox exiting')?.reason), ended.stderr).to.match(/server closed unexpectedly/);
  });
});
