import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { changedYaml, type Yaml } from '../support/config-files';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, sandboxControl, sandboxUrls } from '../support/api';
import { limitConcurrency } from '../support/concurrency';
import { startGatewayProcess, type GatewayProcess, type StartOptions } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { ATTACK_CONTRADICTION, PUBLIC_ROUTE_ATTACKS } from '../support/public-route-attacks';
import { rsaKeyPair } from '../support/keys';
import { waitFor } from '../support/wait';

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', 'config');


const sha256 = (text: string | Buffer) => crypto.createHash('sha256').update(text).digest('hex');

/** A temporary copy of the shipped config folder. */
function configCopy(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-reload-'));
  fs.cpSync(SHIPPED_CONFIG, dir, { recursive: true });
  return dir;
}

/** A gateway.config.yml text with `change` applied. */
const changedConfig = changedYaml;

/** The copy's current gateway.config.yml. */
const currentConfig = (dir: string) => fs.readFileSync(path.join(dir, 'gateway.config.yml'), 'utf8');

/** Writes gateway.config.yml in place, or as an editor that saves by rename does. */
function writeConfig(dir: string, text: string, how: 'in-place' | 'rename' = 'in-place'): string {
  const file = path.join(dir, 'gateway.config.yml');
  if (how === 'rename') {
    const temp = path.join(dir, `.gateway.config.yml.${process.pid}.swp`);
    fs.writeFileSync(temp, text);
    fs.renameSync(temp, file);
  } else {
    fs.writeFileSync(file, text);
  }
  return sha256(text);
}

async function configStatus(gateway: GatewayProcess): Promise<any> {
  const response = await adminCall(gateway, 'GET', '/admin/config');
  expect(response.status).to.equal(200);
  return response.body;
}

/** Waits until the gateway reports `hash` as the configuration that serves. */
function untilServing(gateway: GatewayProcess, hash: string): Promise<any> {
  return waitFor(`config ${hash.slice(0, 12)} to serve`, async () => {
    const status = await configStatus(gateway);
    return status.hash === hash ? status : undefined;
  });
}

/** Waits for the error line of the rejection of `hash`. */
function untilRejected(gateway: GatewayProcess, hash: string): Promise<Record<string, unknown>> {
  return waitFor(`rejection of ${hash.slice(0, 12)}`, () =>
    gateway.logLines().find((l) => l.level === 'error' && l.msg === 'gateway config rejected: the previous config keeps serving' && l.hash === hash)
  );
}

/** An upstream in front of the issuer sandbox that can hold requests until released. */
interface HoldingUpstream {
  url: string;
  received(): number;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

async function startHoldingUpstream(target: string): Promise<HoldingUpstream> {
  let received = 0;
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  const server = http.createServer((req, res) => {
    received += 1;
    gate
      .then(async () => {
        const upstream = await fetch(`${target}${req.url}`, { method: req.method });
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => open(),
    close: () =>
      new Promise((resolve) => {
        open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('e2e: hot reload of gateway.config.yml', function () {
  this.timeout(60_000);

  /**
   * The four gateways of this file (two of them clusters) start from the file's first hook, two at
   * a time in the order their tests run, instead of each in its own describe's before hook: the
   * later ones boot while the earlier tests run. Each describe awaits its own gateway (a failed
   * start fails that describe's hook) and stops it when done; the file's after hook stops whatever
   * is left (a describe left out by --grep) and removes the config copies.
   */
  const boots: { options: () => StartOptions; gateway?: Promise<GatewayProcess> }[] = [];
  const configDirs: string[] = [];
  function prestarted(options: () => StartOptions): () => Promise<GatewayProcess> {
    const boot: (typeof boots)[number] = { options };
    boots.push(boot);
    return () => {
      if (!boot.gateway) throw new Error('the gateway was not started: the file\'s before hook did not run');
      return boot.gateway;
    };
  }
  function newConfigCopy(): string {
    const dir = configCopy();
    configDirs.push(dir);
    return dir;
  }

  let sandboxes: Sandboxes;
  let issuer: HoldingUpstream;

  before(async function () {
    sandboxes = await startSandboxes();
    issuer = await startHoldingUpstream(sandboxes.issuer.url);
    const limit = limitConcurrency(2);
    for (const boot of boots) boot.gateway = limit(() => startGatewayProcess(boot.options()));
  });

  after(async function () {
    for (const boot of boots) await boot.gateway?.then((gateway) => gateway.stop(), () => undefined);
    await issuer?.close();
    await sandboxes?.close();
    for (const dir of configDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('watching the file (CONFIG_WATCH default)', function () {
    let configDir: string;
    let gateway: GatewayProcess;
    let partner: TestPartner;
    let shippedText: string;
    /** The text of the configuration that serves (the file on disk may hold a refused one). */
    let servingText: string;

    const started = prestarted(() => {
      configDir = newConfigCopy();
      return {
        configDir,
        env: {
          ISSUER_URL: issuer.url,
          PROCESSING_URL: sandboxes.processing.url,
          ACCOUNTS_URL: sandboxes.accounts.url,
          UPSTREAM_TIMEOUT_MS: '20000',
          // The traffic during the swap must not meet the rate limit of the shipped config.
          RATE_LIMIT_READS_PER_MINUTE: '100000',
          RATE_LIMIT_PUBLIC_PER_MINUTE: '100000',
        },
      };
    });

    before(async function () {
      gateway = await started();
      shippedText = currentConfig(configDir);
      servingText = shippedText;
      partner = await registerPartner(gateway);
    });

    after(async function () {
      await gateway?.stop();
    });

    it('reports the configuration that serves, behind the admin token', async function () {
      const status = await configStatus(gateway);
      expect(status).to.include({ hash: sha256(shippedText), path: path.join(configDir, 'gateway.config.yml'), watching: true });
      expect(status.reloads).to.deep.equal({ applied: 0, rejected: 0 });
      expect(new Date(status.loadedAt).toISOString()).to.equal(status.loadedAt);
      expect(status).to.not.have.property('lastRejection');

      const anonymous = await fetch(`${gateway.adminUrl}/admin/config`);
      expect(anonymous.status).to.equal(401);
    });

    it('applies a changed chain without a restart; requests in flight finish on the router they started with', async function () {
      const before = await configStatus(gateway);
      expect((await api(gateway, partner, 'GET', '/pin-encryption-key')).status).to.equal(200);

      // Requests held by the issuer: in flight through the old pipeline when the new one arrives.
      issuer.hold();
      const receivedBefore = issuer.received();
      const inFlight = Array.from({ length: 6 }, () => api(gateway, partner, 'GET', '/pin-encryption-key'));
      await waitFor('the held requests to reach the issuer', () => (issuer.received() >= receivedBefore + 6 ? true : undefined));

      // Traffic on an unchanged route during the swap: nothing is dropped.
      let swapping = true;
      const traffic: number[] = [];
      const loops = Array.from({ length: 3 }, async () => {
        while (swapping) traffic.push((await api(gateway, partner, 'GET', '/me')).status);
      });

      // The new chain validates a query the route did not check before; saved by rename, as editors do.
      const newText = changedConfig(servingText, (c) =>
        c.pipelines['get-pin-encryption-key'].policies.splice(1, 0, { validate: [{ action: { query: 'delivery-methods-query' } }] })
      );
      const newHash = writeConfig(configDir, newText, 'rename');
      const after = await untilServing(gateway, newHash);
      servingText = newText;
      swapping = false;
      await Promise.all(loops);

      expect(after.reloads).to.deep.equal({ applied: before.reloads.applied + 1, rejected: before.reloads.rejected });
      expect(after.loadedAt > before.loadedAt).to.equal(true);
      expect(traffic.length).to.be.greaterThan(0);
      expect(new Set(traffic)).to.deep.equal(new Set([200]));

      const fresh = await api(gateway, partner, 'GET', '/pin-encryption-key');
      expect(fresh.status).to.equal(400);
      expect(fresh.body.code).to.equal('validation_failed');
      expect(issuer.received(), 'the refused request never reached the issuer').to.equal(receivedBefore + 6);

      issuer.release();
      const finished = await Promise.all(inFlight);
      expect(finished.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);

      expect(gateway.child.exitCode).to.equal(null);
      expect(gateway.logLines().filter((l) => l.msg === 'gateway ready')).to.have.length(1);
      const applied = gateway.logLines().find((l) => l.msg === 'gateway config reloaded' && l.hash === newHash);
      expect(applied).to.include({ level: 'info', trigger: 'watch', previousHash: before.hash });
    });

    it('puts the public health check behind the JWT policy when the file says so (written in place)', async function () {
      expect((await api(gateway, null, 'GET', '/health-check')).status).to.equal(200);
      const text = changedConfig(servingText, (c) =>
        c.pipelines['health-check'].policies.unshift({ 'es512-jwt': [{ action: { clockSkewSeconds: 30, maxLifetimeSeconds: 300 } }] })
      );
      await untilServing(gateway, writeConfig(configDir, text));
      servingText = text;
      const anonymous = await api(gateway, null, 'GET', '/health-check');
      expect(anonymous.status).to.equal(401);
      expect(anonymous.body.code).to.equal('token_missing');
      expect((await api(gateway, partner, 'GET', '/health-check')).status).to.equal(200);
    });

    interface RejectionCase {
      description: string;
      /** The refused file, made from the text that serves. */
      text: (serving: string) => string;
      stage: string;
      reason: RegExp;
    }
    const rejections: RejectionCase[] = [
      {
        description: 'invalid YAML',
        text: (serving) => `${serving}\npipelines: [unclosed\n`,
        stage: 'yaml',
        reason: /^invalid YAML at line \d+, column \d+: /,
      },
      {
        description: "a config express-gateway's schema refuses",
        text: (serving) => changedConfig(serving, (c) => (c.apiEndpoints = 'everything')),
        stage: 'schema',
        reason: /express-gateway's gateway\.config schema refuses it: .*apiEndpoints/,
      },
      {
        description: 'a pipeline naming an unknown policy',
        text: (serving) =>
          changedConfig(serving, (c) => {
            c.policies.push('rate-limiter-9000');
            c.pipelines.me.policies.splice(1, 0, { 'rate-limiter-9000': [{ action: {} }] });
          }),
        stage: 'guards',
        reason: /pipeline "me", policy "rate-limiter-9000": unknown policy/,
      },
      {
        description: 'a partner route without the JWT policy (a guard refusal)',
        text: (serving) => changedConfig(serving, (c) => c.pipelines.me.policies.shift()),
        stage: 'guards',
        reason: /route \/api\/partner\/me \(pipeline "me"\) lacks the es512-jwt policy/,
      },
      {
        description: "a pipeline contradicting its operation's catalog entry (the PAN read without sensitive-data)",
        text: (serving) =>
          changedConfig(serving, (c) => (c.pipelines['get-card-pan'].policies = c.pipelines['get-card-pan'].policies.filter((step: Record<string, unknown>) => !('sensitive-data' in step)))),
        stage: 'guards',
        reason: /pipeline "get-card-pan", operation "get-card-pan": returns or carries card data, a PIN or a 3DS answer, but the pipeline runs no unconditional sensitive-data step/,
      },
    ];

    for (const testCase of rejections) {
      it(`rejects ${testCase.description}: error log, the previous config keeps serving`, async function () {
        const before = await configStatus(gateway);
        const hash = writeConfig(configDir, testCase.text(servingText));

        const line = await untilRejected(gateway, hash);
        expect(line).to.include({ stage: testCase.stage, activeHash: before.hash, trigger: 'watch' });
        expect(String(line.reason)).to.match(testCase.reason);

        const after = await configStatus(gateway);
        expect(after).to.include({ hash: before.hash, loadedAt: before.loadedAt });
        expect(after.reloads).to.deep.equal({ applied: before.reloads.applied, rejected: before.reloads.rejected + 1 });
        expect(after.lastRejection).to.include({ hash, stage: testCase.stage });
        expect(after.lastRejection.reason).to.match(testCase.reason);

        // The previous configuration's behaviour: /me authenticates and answers; the health check
        // still wants a token (the change of the test above); the changed pin route still validates.
        const anonymous = await api(gateway, null, 'GET', '/me');
        expect(anonymous.status).to.equal(401);
        expect(anonymous.body.code).to.equal('token_missing');
        expect((await api(gateway, partner, 'GET', '/me')).status).to.equal(200);
        expect((await api(gateway, null, 'GET', '/health-check')).status).to.equal(401);
        expect((await api(gateway, partner, 'GET', '/pin-encryption-key')).status).to.equal(400);
      });
    }

    it('applies a valid file again after rejections, and keeps reporting the last rejection', async function () {
      const before = await configStatus(gateway);
      const hash = writeConfig(configDir, shippedText, 'rename');
      const after = await untilServing(gateway, hash);
      expect(hash).to.equal(sha256(shippedText));
      expect(after.reloads).to.deep.equal({ applied: before.reloads.applied + 1, rejected: before.reloads.rejected });
      expect(after.lastRejection).to.deep.equal(before.lastRejection);
      expect((await api(gateway, null, 'GET', '/health-check')).status).to.equal(200);
      expect((await api(gateway, partner, 'GET', '/pin-encryption-key')).status).to.equal(200);
    });
  });

  describe('POST /admin/config/reload (CONFIG_WATCH=false)', function () {
    let configDir: string;
    let gateway: GatewayProcess;

    const started = prestarted(() => {
      configDir = newConfigCopy();
      return { configDir, env: { CONFIG_WATCH: 'false' } };
    });

    before(async function () {
      gateway = await started();
    });

    after(async function () {
      await gateway?.stop();
    });

    it('does not watch; an explicit reload applies, then reports unchanged', async function () {
      const before = await configStatus(gateway);
      expect(before.watching).to.equal(false);
      expect(gateway.logLines().some((l) => l.msg === 'watching the gateway config')).to.equal(false);

      const hash = writeConfig(configDir, changedConfig(currentConfig(configDir), (c) => c.pipelines['health-check'].policies.unshift({ 'es512-jwt': [{ action: {} }] })));
      const applied = await adminCall(gateway, 'POST', '/admin/config/reload');
      expect(applied.status).to.equal(200);
      expect(applied.body).to.include({ result: 'applied', hash });
      expect(applied.body.reloads).to.deep.equal({ applied: 1, rejected: 0 });
      expect((await api(gateway, null, 'GET', '/health-check')).status).to.equal(401);

      const again = await adminCall(gateway, 'POST', '/admin/config/reload');
      expect(again.status).to.equal(200);
      expect(again.body).to.include({ result: 'unchanged', hash, loadedAt: applied.body.loadedAt });
      await waitFor('two admin change lines', () => (gateway.logLines().filter((l) => l.msg === 'admin change' && l.operation === 'config.reload').length === 2 ? true : undefined));
    });

    it('answers 409 naming the reason when the file is refused; the previous config keeps serving', async function () {
      const before = await configStatus(gateway);
      const hash = writeConfig(configDir, changedConfig(currentConfig(configDir), (c) => c.pipelines.me.policies.shift()));
      const refused = await adminCall(gateway, 'POST', '/admin/config/reload');
      expect(refused.status).to.equal(409);
      expect(refused.body).to.include({ code: 'conflict', stage: 'guards', activeHash: before.hash, rejectedHash: hash });
      expect(refused.body.detail).to.match(/lacks the es512-jwt policy.*The previous configuration keeps serving/);

      const after = await configStatus(gateway);
      expect(after).to.include({ hash: before.hash, loadedAt: before.loadedAt });
      expect(after.lastRejection).to.include({ hash, stage: 'guards' });
      expect((await api(gateway, null, 'GET', '/me')).status).to.equal(401);
      await waitFor('the error line', () => gateway.logLines().find((l) => l.level === 'error' && l.hash === hash && l.trigger === 'admin'));

      expect((await fetch(`${gateway.adminUrl}/admin/config/reload`, { method: 'POST' })).status).to.equal(401);
    });

    // The two configs an outside review reloaded: each made a public route answer a card secret
    // without a token. Both are refused; the previous config keeps serving; no secret comes out.
    for (const attack of PUBLIC_ROUTE_ATTACKS) {
      it(`refuses a public route turned into a card-secret read: ${attack.description}`, async function () {
        // A real card on the issuer sandbox, its PAN and CVV (recorded for the run's log scan), and
        // the attacker's own RSA key to receive them.
        const { issuer } = sandboxUrls(gateway);
        const expDate = `12/${new Date().getUTCFullYear() + 3}`;
        const card = await sandboxControl(issuer, 'POST', '/cards', { type: 'virtual', clientCode: '48213377', expDate, currency: 'EUR', productCode: 'P-STD' });
        expect(card.cardKey).to.be.a('string');
        const secrets = await sandboxControl(issuer, 'GET', `/__sandbox/cards/${card.cardKey}/secrets`);
        const { publicKey, privateKey } = rsaKeyPair();
        const securityKey = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

        const before = await configStatus(gateway);
        const hash = writeConfig(configDir, changedConfig(fs.readFileSync(path.join(SHIPPED_CONFIG, 'gateway.config.yml'), 'utf8'), (c) => attack.change(c, card.cardKey)));
        const refused = await adminCall(gateway, 'POST', '/admin/config/reload');
        expect(refused.status, JSON.stringify(refused.body)).to.equal(409);
        expect(refused.body).to.include({ code: 'conflict', stage: 'guards', activeHash: before.hash, rejectedHash: hash });
        expect(refused.body.detail).to.match(/public-route-shape/);
        expect(refused.body.detail).to.match(ATTACK_CONTRADICTION);
        expect(refused.body.detail).to.match(/lacks the es512-jwt policy/);
        const after = await configStatus(gateway);
        expect(after).to.include({ hash: before.hash, loadedAt: before.loadedAt });

        // The attack request, without a token: no card secret in any form.
        const query = `?expDate=${encodeURIComponent(expDate)}&securityKey=${encodeURIComponent(securityKey)}`;
        const response = await api(gateway, null, attack.request.method, `${attack.request.path}${query}`);
        const leaked = response.body && typeof response.body === 'object' ? response.body[attack.secretField] : undefined;
        if (typeof leaked === 'string') {
          const clear = crypto.privateDecrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(leaked, 'base64')).toString('utf8');
          expect.fail(`the attack request got the card's ${attack.secretField === 'cvv' ? 'CVV' : 'PAN'} (${clear === secrets[attack.secretField] ? 'the real one' : 'a value'})`);
        }
        expect(JSON.stringify(response.body)).to.not.include(secrets.cardNumber);
        if (attack.request.method === 'GET') {
          // The previous config: the public OpenAPI document.
          expect(response.status).to.equal(200);
          expect(response.body.openapi).to.match(/^3\.1/);
        } else {
          expect(response.status).to.equal(404);
        }
      });
    }
  });

  describe('cluster (WORKERS=2)', function () {
    let configDir: string;
    let gateway: GatewayProcess;

    const started = prestarted(() => {
      configDir = newConfigCopy();
      return { configDir, env: { WORKERS: '2' }, timeoutMs: 45_000 };
    });

    before(async function () {
      gateway = await started();
    });

    after(async function () {
      await gateway?.stop();
    });

    /** GET /admin/config on a new connection each time, so that both workers answer. */
    function statusOnNewConnection(): Promise<any> {
      return new Promise((resolve, reject) => {
        const req = http.get(`${gateway.adminUrl}/admin/config`, { agent: false, headers: { authorization: `Bearer ${gateway.adminToken}` } }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve(JSON.parse(body)));
        });
        req.on('error', reject);
      });
    }

    it('each worker reloads on its own, and every worker reports the same hash for the same file', async function () {
      const shippedHash = sha256(fs.readFileSync(path.join(configDir, 'gateway.config.yml')));
      const seen = new Map<number, string>();
      await waitFor('both workers to answer', async () => {
        const status = await statusOnNewConnection();
        seen.set(status.pid, status.hash);
        return seen.size >= 2 ? true : undefined;
      });
      expect(new Set(seen.values())).to.deep.equal(new Set([shippedHash]));

      const hash = writeConfig(configDir, changedConfig(currentConfig(configDir), (c) => c.pipelines['health-check'].policies.unshift({ 'es512-jwt': [{ action: {} }] })));
      const reloaded = new Set<number>();
      await waitFor('both workers to serve the new config', async () => {
        const status = await statusOnNewConnection();
        if (status.hash === hash) reloaded.add(status.pid);
        return reloaded.size >= 2 ? true : undefined;
      });
      expect(reloaded).to.deep.equal(new Set(seen.keys()));
    });
  });

  describe('cluster (WORKERS=2, CONFIG_WATCH=false): POST /admin/config/reload reaches every worker', function () {
    let configDir: string;
    let gateway: GatewayProcess;
    let partner: TestPartner;

    const started = prestarted(() => {
      configDir = newConfigCopy();
      return { configDir, env: { WORKERS: '2', CONFIG_WATCH: 'false' }, timeoutMs: 45_000 };
    });

    before(async function () {
      gateway = await started();
      partner = await registerPartner(gateway, 'cluster-reload');
    });

    after(async function () {
      await gateway?.stop();
    });

    /** The RateLimit-Policy header of GET /api/partner/me on a new connection (so that requests spread over the workers). */
    function rateLimitPolicyOfMe(token: string): Promise<string> {
      return new Promise((resolve, reject) => {
        const req = http.get(`${gateway.baseUrl}/api/partner/me`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['ratelimit-policy'])));
        });
        req.on('error', reject);
      });
    }

    it('answers applied only once every worker applied it, naming each; then every request sees the new pipeline', async function () {
      const token = await partner.token({ ttlSeconds: 300 });
      const before = new Set<string>();
      for (let i = 0; i < 10; i++) before.add(await rateLimitPolicyOfMe(token));
      expect([...before]).to.deep.equal(['"me";q=600;w=60']);

      const hash = writeConfig(
        configDir,
        changedConfig(currentConfig(configDir), (c) => {
          const step = c.pipelines.me.policies.find((p: Yaml) => p['rate-limit']);
          step['rate-limit'] = [{ action: { limit: 599, windowSeconds: 60 } }];
        })
      );
      const reloaded = await adminCall(gateway, 'POST', '/admin/config/reload');
      expect(reloaded.status, JSON.stringify(reloaded.body)).to.equal(200);
      expect(reloaded.body).to.include({ result: 'applied', hash });

      const after = new Set<string>();
      for (let i = 0; i < 20; i++) after.add(await rateLimitPolicyOfMe(token));
      expect([...after], 'every worker serves the new pipeline').to.deep.equal(['"me";q=599;w=60']);
      expect(reloaded.body.workers?.map((w: { result: string; hash: string }) => `${w.result} ${w.hash}`)).to.deep.equal([`applied ${hash}`, `applied ${hash}`]);
      expect(new Set(reloaded.body.workers.map((w: { pid: number }) => w.pid)).size).to.equal(2);
    });
  });
});

