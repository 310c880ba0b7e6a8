import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { Client } from 'pg';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { adminCall, registerPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';

const QUICKSTART = path.resolve(__dirname, '..', '..', 'examples', 'quickstart.js');

type Json = Record<string, any>;

/** Runs the compiled example as a partner would: its own process, only the environment it documents. */
async function runQuickstart(env: Record<string, string>): Promise<{ stdout: string; summary: Json }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PARTNER_|ADMIN_)/.test(name)));
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [QUICKSTART], { env: { ...clean, ...env }, timeout: 60_000 });
  const last = stdout.trim().split('\n').pop()!;
  expect(last, `stdout:\n${stdout}\nstderr:\n${stderr}`).to.match(/^done\s+\{/);
  return { stdout, summary: JSON.parse(last.replace(/^done\s+/, '')) as Json };
}

describe('e2e: the partner quickstart (examples/quickstart.ts) against the sandbox', function () {
  this.timeout(120_000);
  let gateway: Gateway;
  let db: Client;

  before(async function () {
    gateway = await sharedGateway();
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
  });

  after(async function () {
    await db?.end();
  });

  it('registers itself (operator step), onboards, issues, locks and unlocks, decrypts the CVV and changes a limit', async function () {
    const { stdout, summary } = await runQuickstart({ PARTNER_API_URL: `${gateway.baseUrl}/api/partner`, ADMIN_URL: gateway.adminUrl, ADMIN_TOKEN: gateway.adminToken });
    const steps = stdout.split('\n').map((line) => line.split(/\s+/)[0]);
    expect(steps.filter(Boolean)).to.deep.equal(['keys', 'operator', 'me', 'onboard', 'issue', 'lock', 'unlock', 'cvv', 'limit', 'done']);
    expect(stdout).to.match(/^operator\s+\[operator's step, sandbox only\] registered partner [0-9a-f]{24}/m);
    expect(stdout).to.match(/^lock\s+LOCKED \(L1\)$/m);
    expect(stdout).to.match(/^unlock\s+ACTIVE \(00\)$/m);
    expect(stdout).to.match(/^cvv\s+decrypted the CVV with our RSA private key: \*\*\* \(3 digits\)$/m);
    expect(summary).to.deep.include({ statuses: ['ACTIVE', 'LOCKED', 'ACTIVE'], cvvDigits: 3, limit: { name: 'dailyPurchase', value: 750 } });

    // What the gateway recorded agrees with what the example printed.
    const partner = await adminCall(gateway, 'GET', `/admin/partners/${summary.partnerId}`);
    expect(partner.status).to.equal(200);
    expect(partner.body.name).to.equal('Quickstart Pay');
    const card = await db.query('SELECT partner_id, individual_id, status, status_code, type FROM cards WHERE card_key = $1', [summary.cardKey]);
    expect(card.rows[0]).to.deep.equal({ partner_id: summary.partnerId, individual_id: summary.individualId, status: 'ACTIVE', status_code: '00', type: 'virtual' });
    const audit = await db.query('SELECT operation FROM audit_log WHERE target_id = $1 AND outcome = $2 ORDER BY id', [summary.cardKey, 'success']);
    expect(audit.rows.map((r) => r.operation)).to.deep.equal(['card.issue.virtual', 'card.lock', 'card.unlock', 'card.cvv.read', 'card.limits.update']);
  });

  it('runs as an already registered partner from its key file, without the operator step', async function () {
    const partner = await registerPartner(gateway, 'quickstart-registered');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-quickstart-'));
    const keyFile = path.join(dir, 'private.pem');
    fs.writeFileSync(keyFile, partner.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    try {
      const { stdout, summary } = await runQuickstart({
        PARTNER_API_URL: `${gateway.baseUrl}/api/partner/`,
        PARTNER_ID: partner.id,
        PARTNER_ISSUER: partner.issuer,
        PARTNER_KEY_FILE: keyFile,
      });
      expect(stdout).to.not.match(/^operator/m);
      expect(stdout).to.match(new RegExp(`^identity\\s+using the registered partner ${partner.id}$`, 'm'));
      expect(summary.partnerId).to.equal(partner.id);
      expect(summary.statuses).to.deep.equal(['ACTIVE', 'LOCKED', 'ACTIVE']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails with a clear message, and exit 1, when neither an identity nor the operator token is given', async function () {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PARTNER_|ADMIN_)/.test(name)));
    const failed = await promisify(execFile)(process.execPath, [QUICKSTART], { env: { ...clean, PARTNER_API_URL: `${gateway.baseUrl}/api/partner` } }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err
    );
    expect(failed?.code).to.equal(1);
    expect(failed?.stderr).to.include('set ADMIN_TOKEN');
  });
});
