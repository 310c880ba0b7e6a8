import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { Client } from 'pg';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { runDatabaseUrl } from '../support/test-database';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');
const SDK = path.join(ROOT, 'sdk');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

type Json = Record<string, any>;

/**
 * The environment of the npm commands: the caller's, without the `npm_*` variables an enclosing
 * `npm test` sets (its lifecycle, its package's config), except where its cache and registry are.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const kept = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) || kept.has(name.toLowerCase())));
}

/**
 * Packs the SDK as docs/sdk.md#install and the README build it: `npm install` at the root, then
 * `npm pack` in sdk/, lifecycle scripts and all. Its prepack (`npm run build`: `tsc -p
 * tsconfig.json`) runs the nearest `node_modules/.bin/tsc`: sdk/ has no node_modules of its own
 * there, so npm finds the root's (TypeScript 7), with the root's @types/node and jose. The same
 * here: a copy of sdk/ (without node_modules or dist) in a folder whose node_modules is the root's.
 * Nothing is fetched (`--offline`). Returns the tarball's path.
 */
async function packSdk(work: string): Promise<string> {
  const repo = path.join(work, 'repo');
  const copy = path.join(repo, 'sdk');
  fs.cpSync(SDK, copy, { recursive: true, filter: (source) => !['node_modules', 'dist'].includes(path.relative(SDK, source).split(path.sep)[0]!) });
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(repo, 'node_modules'), 'dir');
  // No dist/ in the copy: the tarball's is the one its prepack built.
  expect(fs.existsSync(path.join(copy, 'dist'))).to.equal(false);

  const { stdout } = await run(NPM, ['pack', '--offline', '--json', '--pack-destination', work], { cwd: copy, env: npmEnv() });
  // The JSON report, after anything the build printed.
  const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as { filename: string; files: { path: string }[] }[];
  const files = packed!.files.map((f) => f.path);
  expect(files).to.include.members(['package.json', 'README.md', 'openapi.json', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/api.d.ts']);
  expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), 'no TypeScript sources').to.deep.equal([]);
  return path.join(work, packed!.filename);
}

/**
 * Type-checks test/sdk/packed-sdk-consumer.ts in `project`, against the installed package's
 * typings (node_modules/@partner-gateway/sdk: package.json's exports and types, dist/*.d.ts), as
 * consumer.ts (CommonJS) and consumer.mts (an ES module): `tsc --noEmit` with module and
 * moduleResolution node16 and strict, the root's compiler, and no skipLibCheck, so the .d.ts files
 * themselves are checked too. @types/node comes from the root (a partner on Node has it).
 */
async function typeCheckConsumer(project: string): Promise<void> {
  const source = fs.readFileSync(path.join(ROOT, 'test', 'sdk', 'packed-sdk-consumer.ts'), 'utf8');
  fs.writeFileSync(path.join(project, 'consumer.ts'), source);
  fs.writeFileSync(path.join(project, 'consumer.mts'), source);
  const compilerOptions = { target: 'ES2022', lib: ['ES2022'], module: 'node16', moduleResolution: 'node16', strict: true, noEmit: true, types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')] };
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts', 'consumer.mts'] }, null, 2));
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  const { stdout } = await run(process.execPath, [tsc, '-p', path.join(project, 'tsconfig.json'), '--listFiles'], { cwd: project }).catch((err: { stdout: string; stderr: string }) => {
    throw new Error(`the consumer does not type-check against the packed SDK:\n${err.stdout}\n${err.stderr}`);
  });
  // The SDK's typings it was checked against are the installed package's, not this repository's sources.
  const checked = stdout.split('\n').map((file) => path.relative(project, file.trim()));
  const installed = path.join('node_modules', '@partner-gateway', 'sdk');
  expect(checked).to.include.members([path.join(installed, 'dist', 'index.d.ts'), path.join(installed, 'dist', 'generated', 'api.d.ts'), 'consumer.ts', 'consumer.mts']);
  expect(checked.filter((file) => file.includes(`${path.sep}sdk${path.sep}src${path.sep}`)), 'no SDK source').to.deep.equal([]);
}

describe('sdk: the packed package, installed on its own, against a gateway in sandbox mode', function () {
  this.timeout(120_000);
  let gateway: Gateway;
  let partner: TestPartner;
  let db: Client;
  let work: string;
  const seeded: string[] = [];

  before(async function () {
    gateway = await sharedGateway();
    partner = await registerPartner(gateway, 'sdk-packed');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-sdk-pack-'));
    // 150 active cards of a B2B tenant of the partner, for the script to page through.
    const tenant = await adminCall(gateway, 'POST', `/admin/partners/${partner.id}/tenants`, { name: 'Packed Fleet' });
    expect(tenant.status, JSON.stringify(tenant.body)).to.equal(201);
    const inserted = await db.query<{ card_key: string }>(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, created_at)
       SELECT 'CKPACK' || lpad(n::text, 4, '0') || substr(md5($1 || n::text), 1, 8), $1, 'b2b', $2, $2, '4921 83** **** ' || lpad(n::text, 4, '0'), 'virtual', 'ACTIVE', '00', 'EUR', 'P-BIZ', '12/2030', now() - make_interval(mins => n)
       FROM generate_series(1, 150) AS n RETURNING card_key`,
      [partner.id, tenant.body._id]
    );
    seeded.push(...inserted.rows.map((r) => r.card_key));
  });

  after(async function () {
    await db?.end();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('onboards, issues, reads the CVV and card number, encrypts a PIN, simulates an authorization, provisions the card to both wallets and lists its tokens, locks with a retry on one key, pages 150 cards and verifies a webhook', async function () {
    // The script's cardholder document number: the run's log scan looks for it.
    recordSecret('passportNumber', 'P7654321');
    const tarball = await packSdk(work);

    // An empty project that installs the tarball: only the SDK and its own dependencies.
    const project = path.join(work, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'partner-app', version: '1.0.0', private: true }));
    await run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', tarball], { cwd: project, env: npmEnv() });
    const installed = fs.readdirSync(path.join(project, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(installed.sort()).to.deep.equal(['@partner-gateway', 'jose']);
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', '@partner-gateway', 'sdk', 'package.json'), 'utf8')) as Json;
    expect(Object.keys(manifest.dependencies)).to.deep.equal(['jose']);

    // A partner's TypeScript compiles against the published typings.
    await typeCheckConsumer(project);

    // The script, compiled with the project's tests, copied alone into the project.
    fs.copyFileSync(path.join(__dirname, 'packed-sdk-script.js'), path.join(project, 'script.js'));
    const keyFile = path.join(work, 'private.pem');
    fs.writeFileSync(keyFile, partner.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const { stdout, stderr } = await run(process.execPath, ['script.js'], {
      cwd: project,
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', TMPDIR: process.env.TMPDIR ?? '', BASE_URL: `${gateway.baseUrl}/api/partner`, PARTNER_ID: partner.id, PARTNER_ISSUER: partner.issuer, PARTNER_KID: partner.kid, PARTNER_KEY_FILE: keyFile },
    }).catch((err: { stdout: string; stderr: string }) => {
      throw new Error(`the script failed:\n${err.stdout}\n${err.stderr}`);
    });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as Json;
    const context = `stdout:\n${stdout}\nstderr:\n${stderr}`;

    expect(result.partnerId, context).to.equal(partner.id);
    expect(result.cvvDigits).to.equal(3);
    expect(result.pan).to.deep.equal({ digits: 16, luhn: true, matchesMask: true });
    expect(result.pinBlock).to.deep.equal({ bytes: 256, algorithm: 'RSA-OAEP-256' });
    const reads = await db.query("SELECT operation FROM audit_log WHERE target_id = $1 AND outcome = 'success' AND operation IN ('card.cvv.read', 'card.pan.read') ORDER BY id", [result.cardKey]);
    expect(reads.rows.map((r) => r.operation)).to.deep.equal(['card.cvv.read', 'card.pan.read']);
    expect(result.authorization).to.deep.include({ status: 'PENDING', decidedBy: 'partner', asked: 1 });

    // Both wallets' payloads for the ACTIVE card, then two tokens its decision endpoint approved
    // (each request verified by both header schemes), listed by the card and paged one by one.
    expect(result.provisioning.applePay).to.deep.equal({ keys: ['activationData', 'encryptedPassData', 'ephemeralPublicKey'], activationDataBytes: 64 });
    expect(result.provisioning.googlePay.keys).to.deep.equal(['displayName', 'lastDigits', 'network', 'opaquePaymentCard', 'tokenServiceProvider']);
    expect(result.provisioning.googlePay.opaquePaymentCardBytes).to.be.within(1024, 2048);
    const [appleToken, googleToken] = result.tokens.made as { id: string }[];
    expect(result.tokens.made).to.deep.equal([
      { id: appleToken!.id, cardKey: result.cardKey, walletProvider: 'apple_pay', status: 'active', by: 'partner' },
      { id: googleToken!.id, cardKey: result.cardKey, walletProvider: 'google_pay', status: 'active', by: 'partner' },
    ]);
    expect(result.tokens.asked).to.deep.equal([
      { tokenId: appleToken!.id, walletProvider: 'apple_pay', bothSchemes: true },
      { tokenId: googleToken!.id, walletProvider: 'google_pay', bothSchemes: true },
    ]);
    expect(result.tokens.ofCard, 'newest first').to.deep.equal([googleToken!.id, appleToken!.id]);
    expect(result.tokens.listed).to.deep.equal([googleToken!.id, appleToken!.id]);
    expect(result.tokens.pages).to.have.length(2);
    expect(result.tokens.pages[0]).to.equal(`?cardKey=${result.cardKey}&limit=1`);
    expect(result.tokens.pages[1]).to.match(new RegExp(`^\\?cardKey=${result.cardKey}&limit=1&cursor=[^&]+$`));
    const stored = await db.query('SELECT id, wallet_provider FROM tokens WHERE card_key = $1 ORDER BY created_at, id', [result.cardKey]);
    expect(stored.rows).to.deep.equal([
      { id: appleToken!.id, wallet_provider: 'apple_pay' },
      { id: googleToken!.id, wallet_provider: 'google_pay' },
    ]);

    // The lock's answer was dropped once: the SDK sent it again with the same key, and the gateway replayed it.
    expect(result.lock.status).to.equal('LOCKED');
    expect(result.lock.attempts, context).to.have.length(2);
    const [first, second] = result.lock.attempts as { idempotencyKey: string; replayed: string | null }[];
    expect(first!.idempotencyKey).to.match(/^[0-9a-f-]{36}$/);
    expect(second!.idempotencyKey, 'the retry reused the key').to.equal(first!.idempotencyKey);
    expect(first!.replayed).to.equal(null);
    expect(second!.replayed).to.equal('true');
    const locks = await db.query("SELECT count(*)::int AS n FROM audit_log WHERE target_id = $1 AND operation = 'card.lock' AND outcome = 'success'", [result.cardKey]);
    expect(locks.rows[0].n, 'the card was locked once').to.equal(1);

    // 150 ACTIVE cards (the issued one is LOCKED by then), in three pages of 50: no fourth request.
    expect(result.cards).to.deep.equal({ unique: 150, active: 150, pages: ['?status=ACTIVE&limit=50', '?status=ACTIVE&limit=50&page=2', '?status=ACTIVE&limit=50&page=3'] });

    expect(result.webhook, context).to.deep.include({ type: 'card.status_changed', status: 'LOCKED' });
    expect(result.webhook.id).to.match(/^evt_/);
    expect(result.refused).to.include('bad_signature');
    expect(result.refused.filter((r: string) => r !== 'bad_signature'), 'every delivery verified').to.deep.equal([]);
    expect(seeded).to.have.length(150);

    // The README's SDK variant of "Try it" (its me.mjs), run in the same project against this gateway.
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const meScript = /cat > me\.mjs <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(readme.slice(readme.indexOf('## Try it')))?.[1];
    expect(meScript, "README.md's SDK block writes me.mjs").to.be.a('string');
    expect(meScript).to.include('http://localhost:8080/api/partner').and.to.include('../acme-keys/private.pem').and.to.include("issuer: 'https://acme.example'");
    fs.writeFileSync(
      path.join(project, 'me.mjs'),
      meScript!.replace('http://localhost:8080', gateway.baseUrl).replace('../acme-keys/private.pem', keyFile).replace("'https://acme.example'", JSON.stringify(partner.issuer))
    );
    const me = await run(process.execPath, ['me.mjs'], { cwd: project, env: { PATH: process.env.PATH ?? '', PARTNER_ID: partner.id } });
    expect(me.stdout).to.include(`_id: '${partner.id}'`).and.to.include("name: 'sdk-packed'");
  });
});
