import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { recordSecret } from '../support/secrets';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The first ```sh block under the README's "## Try it" heading, exactly as a newcomer would paste it. */
export function readmeTryItBlock(readme: string): string {
  const section = readme.slice(readme.indexOf('## Try it'));
  const match = /```sh\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README.md has no ```sh block under "## Try it"');
  return match[1];
}

/**
 * Runs the README's "Try it" block with bash, as one paste, against a started gateway: the block is
 * taken from README.md at run time, so the two cannot drift. The only changes are those a newcomer's
 * machine makes for them: the gateway's address (this run's port instead of localhost:8080), and the
 * admin port and data directory the CLI reads from the environment (ADMIN_PORT, DATA_DIR), where the
 * admin token is the file the gateway writes when ADMIN_TOKEN is unset.
 */
describe('e2e: the README\'s "Try it" block runs as written', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let workDir: string;
  let dataDir: string;

  before(async function () {
    gateway = await sharedGateway();
    // A working directory of its own (the block writes ./acme-keys), with the project's package.json
    // and build beside it, as in a clone.
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-readme-'));
    for (const entry of ['package.json', 'scripts', 'dist', 'node_modules', 'tsconfig.json', 'package-lock.json']) {
      fs.symlinkSync(path.join(ROOT, entry), path.join(workDir, entry));
    }
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-readme-data-'));
    fs.writeFileSync(path.join(dataDir, 'admin-token'), `${gateway.adminToken}\n`, { mode: 0o600 });
  });

  after(function () {
    for (const dir of [workDir, dataDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints OK, registers Acme Pay and answers /me for it', async function () {
    const block = readmeTryItBlock(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    expect(block).to.include('localhost:8080');
    const address = new URL(gateway.baseUrl).host;
    const script = `set -euo pipefail\n${block.split('localhost:8080').join(address)}`;
    const env: NodeJS.ProcessEnv = { ...process.env, ADMIN_PORT: new URL(gateway.adminUrl).port, DATA_DIR: dataDir };
    delete env.ADMIN_TOKEN;
    const { stdout } = await run('bash', ['-c', script], { cwd: workDir, env });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).to.equal('OK');
    // keygen prints where it wrote the keys, then /me answers the partner registered by the block.
    const me = JSON.parse(lines[lines.length - 1]) as { partner: { _id: string; name: string; issuer: string } };
    expect(me.partner).to.include({ name: 'Acme Pay', issuer: 'https://acme.example' });
    expect(me.partner._id).to.match(/^[0-9a-f]{24}$/);
    expect(fs.existsSync(path.join(workDir, 'acme-keys', 'private.pem'))).to.equal(true);
  });

  it('the CLIs print their usage with --help, and their answers end with a newline', async function () {
    for (const cli of ['partners', 'token']) {
      const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist', 'scripts', `${cli}.js`), '--help']);
      expect(stdout, cli).to.match(new RegExp(`^usage: npm run -s ${cli} -- `));
      expect(stdout.endsWith('\n'), cli).to.equal(true);
    }
    const keys = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-readme-keys-'));
    const { stdout: keygen } = await run(process.execPath, [path.join(ROOT, 'dist', 'scripts', 'partners.js'), 'keygen', '--out', keys]);
    expect(keygen.endsWith('}\n')).to.equal(true);
    const { stdout: token } = await run(process.execPath, [
      path.join(ROOT, 'dist', 'scripts', 'token.js'),
      ...['--partner', 'a'.repeat(24), '--issuer', 'https://acme.example', '--key', path.join(keys, 'private.pem')],
    ]);
    recordSecret('jwt', token.trim());
    expect(token).to.match(/^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
    fs.rmSync(keys, { recursive: true, force: true });
  });
});
