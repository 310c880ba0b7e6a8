import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { sharedGateway, type Gateway } from '../support/gateway-process';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('e2e: operator CLI (npm run partners) and token script (npm run token)', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let env: NodeJS.ProcessEnv;
  const keysDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-cli-'));

  before(async function () {
    gateway = await sharedGateway();
    env = { ...process.env, ADMIN_PORT: new URL(gateway.adminUrl).port, ADMIN_TOKEN: gateway.adminToken };
  });

  const partners = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist/scripts/partners.js'), ...args], { env });
    return JSON.parse(stdout) as Record<string, any>;
  };

  it('walks a partner through keygen, add, token, /me, rotation, revocation, disable and tenants', async function () {
    const generated = await partners('keygen', '--out', keysDir);
    expect(fs.readFileSync(generated.publicKey, 'utf8')).to.match(/BEGIN PUBLIC KEY/);
    expect(fs.statSync(generated.privateKey).mode & 0o777).to.equal(0o600);

    const added = await partners('add', '--name', 'Cli Corp', '--issuer', 'https://cli.example', '--public-key', generated.publicKey);
    expect(added._id).to.match(/^[0-9a-f]{24}$/);

    // The npm script itself, as the README shows it.
    const { stdout: token } = await run('npm', ['run', '-s', 'token', '--', '--partner', added._id, '--issuer', 'https://cli.example', '--key', generated.privateKey, '--ttl', '60'], {
      cwd: ROOT,
      env,
    });
    expect(token.trim()).to.match(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    const me = await fetch(`${gateway.baseUrl}/api/partner/me`, { headers: { authorization: `Bearer ${token.trim()}` } });
    expect(me.status).to.equal(200);

    const second = await partners('keygen', '--out', path.join(keysDir, 'second'));
    const key = await partners('add-key', added._id, '--public-key', second.publicKey, '--kid', 'cli-2');
    expect(key).to.include({ kid: 'cli-2', status: 'active' });
    const revoked = await partners('revoke-key', added._id, added.keys[0].kid);
    expect(revoked.status).to.equal('revoked');
    const refused = await fetch(`${gateway.baseUrl}/api/partner/me`, { headers: { authorization: `Bearer ${token.trim()}` } });
    expect(refused.status).to.equal(401);
    // A key id may start with `-` (one thumbprint in 64 does): it is an argument, not an option.
    const third = await partners('keygen', '--out', path.join(keysDir, 'third'));
    expect(await partners('add-key', added._id, '--public-key', third.publicKey, '--kid=-dash-kid')).to.include({ kid: '-dash-kid', status: 'active' });
    expect((await partners('revoke-key', added._id, '-dash-kid')).status).to.equal('revoked');

    expect((await partners('disable', added._id)).status).to.equal('disabled');
    expect((await partners('enable', added._id)).status).to.equal('active');
    const tenant = await partners('add-tenant', added._id, '--name', 'Cli Payroll');
    const shown = await partners('show', added._id);
    expect(shown.b2bAccounts.map((t: { _id: string }) => t._id)).to.deep.equal([tenant._id]);
    const listed = await partners('list');
    expect(listed.data.map((p: { _id: string }) => p._id)).to.include(added._id);
  });

  it('exits 2 with usage on a missing argument and 1 with the problem detail on a refused call', async function () {
    const usage = await run(process.execPath, [path.join(ROOT, 'dist/scripts/partners.js'), 'add', '--name', 'x'], { env }).catch((e: { code: number; stderr: string }) => e);
    expect((usage as { code: number }).code).to.equal(2);
    expect((usage as { stderr: string }).stderr).to.match(/missing --issuer/);
    const refused = await run(process.execPath, [path.join(ROOT, 'dist/scripts/partners.js'), 'disable', 'ffffffffffffffffffffffff'], { env }).catch(
      (e: { code: number; stderr: string }) => e
    );
    expect((refused as { code: number }).code).to.equal(1);
    expect((refused as { stderr: string }).stderr).to.match(/404/);
  });
});
