import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { api, cardBody, individualBody } from '../support/api';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { nextGatewayLogPath, recordSecret } from '../support/secrets';
import { waitFor } from '../support/wait';

const SANDBOX_MAIN = path.resolve(__dirname, '..', '..', 'sandbox', 'main.js');

/** `node dist/sandbox/main.js` as an operator runs it, its output teed into the run's log files (scanned for secrets). */
interface SandboxProcess {
  child: ChildProcess;
  urls: { issuer: string; processing: string; accounts: string };
  output(): string;
  stop(): Promise<void>;
}

async function startSandboxProcess(env: Record<string, string>): Promise<SandboxProcess> {
  const child = spawn(process.execPath, [SANDBOX_MAIN], { env: { ...process.env, ISSUER_PORT: '0', PROCESSING_PORT: '0', ACCOUNTS_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const fd = fs.openSync(nextGatewayLogPath(), 'a');
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    fs.writeSync(fd, chunk);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  child.once('close', () => fs.closeSync(fd));
  const urls = await new Promise<SandboxProcess['urls']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${output}`)), 15_000);
    const check = () => {
      const line = output.split('\n').find((l) => l.startsWith('{"issuer"'));
      if (line && output.includes(`${line}\n`)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(JSON.parse(line));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with ${code}:\n${output}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    child,
    urls,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A TCP forwarder on a port known before the gateway starts (the address an operator would give the
 * sandbox as GATEWAY_NOTIFY_URL), aimed at the gateway's notification listener once it listens.
 */
async function startForwarder(): Promise<{ port: number; aim(port: number): void; close(): Promise<void> }> {
  let targetPort: number | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (targetPort === undefined) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    aim: (port) => (targetPort = port),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A gateway with real upstream URLs (not in sandbox mode) in front of the standalone sandbox process,
 * which notifies it as the real issuer and processor would (docs/upstreams.md, section 9): configured
 * through GATEWAY_NOTIFY_URL and the secrets at start, then changed through PUT /__sandbox/notify-target.
 */
describe('e2e: a standalone sandbox (npm run sandbox) notifies a gateway that uses it as its upstreams', function () {
  this.timeout(90_000);
  const issuerSecret = crypto.randomBytes(32).toString('base64url');
  const processingSecret = crypto.randomBytes(32).toString('base64url');
  const wrongSecret = crypto.randomBytes(32).toString('base64url');
  let forwarder: Awaited<ReturnType<typeof startForwarder>>;
  let sandbox: SandboxProcess;
  let gateway: GatewayProcess;
  let partner: TestPartner;

  const newCard = async () => {
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status, JSON.stringify(individual.body)).to.equal(201);
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return { individualId: individual.body._id as string, cardKey: card.body.cardKey as string };
  };
  const eventsOf = async (type: string, match: (event: any) => boolean): Promise<any[]> => {
    const page = await api(gateway, partner, 'GET', `/events?type=${type}&limit=100`);
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    return (page.body.data as any[]).filter(match);
  };
  const issuerStatus = async (cardKey: string, statusCode: string, reason: string) => {
    const response = await fetch(`${sandbox.urls.issuer}/__sandbox/cards/${cardKey}/issuer-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ statusCode, reason }),
    });
    const body = (await response.json()) as any;
    expect(response.status, JSON.stringify(body)).to.equal(200);
    return body;
  };
  const notifyTarget = async (which: 'issuer' | 'processing', method: 'PUT' | 'DELETE' | 'GET', body?: unknown) => {
    const response = await fetch(`${sandbox.urls[which]}/__sandbox/notify-target`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, body: text ? JSON.parse(text) : null };
  };

  before(async () => {
    recordSecret('notifySecret', issuerSecret);
    recordSecret('notifySecret', processingSecret);
    recordSecret('notifySecret', wrongSecret);
    forwarder = await startForwarder();
    sandbox = await startSandboxProcess({
      GATEWAY_NOTIFY_URL: `http://127.0.0.1:${forwarder.port}`,
      ISSUER_NOTIFY_SECRET: issuerSecret,
      PROCESSING_NOTIFY_SECRET: processingSecret,
    });
    gateway = await startGatewayProcess({
      ownDatabase: true,
      env: {
        ISSUER_URL: sandbox.urls.issuer,
        PROCESSING_URL: sandbox.urls.processing,
        ACCOUNTS_URL: sandbox.urls.accounts,
        ISSUER_NOTIFY_SECRET: issuerSecret,
        PROCESSING_NOTIFY_SECRET: processingSecret,
      },
    });
    expect(gateway.notifyUrl, 'the notification listener starts with a secret set').to.be.a('string');
    forwarder.aim(Number(new URL(gateway.notifyUrl!).port));
    partner = await registerPartner(gateway, 'acme-standalone');
  });
  after(async () => {
    await gateway?.stop();
    await sandbox?.stop();
    await forwarder?.close();
  });

  it('the gateway is not in sandbox mode: its simulate routes answer 404, the sandbox is driven through its control routes', async () => {
    const { cardKey } = await newCard();
    const simulated = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/issuer-status`, { body: { status: 'FRAUD' } });
    expect(simulated.status, JSON.stringify(simulated.body)).to.equal(404);
    expect(sandbox.output()).to.include('"msg":"sandbox notifying"');
    const target = await notifyTarget('issuer', 'GET');
    expect(target.body).to.deep.equal({ sandbox: 'issuer', url: `http://127.0.0.1:${forwarder.port}`, backlog: 0 });
  });

  it('an issuer-initiated status change (GATEWAY_NOTIFY_URL) shows in the event log as card.status_changed, source issuer', async () => {
    const { cardKey } = await newCard();
    const changed = await issuerStatus(cardKey, 'S5', 'fraud team');
    expect(changed).to.deep.include({ cardKey, statusCode: 'S5', previousStatusCode: '00', notified: true });
    const events = await waitFor('card.status_changed', async () => {
      const found = await eventsOf('card.status_changed', (e) => e.data.cardKey === cardKey);
      return found.length ? found : undefined;
    }, 15_000);
    expect(events).to.have.length(1);
    expect(events[0].data).to.include({ source: 'issuer', previousStatus: 'ACTIVE', status: 'FRAUD', statusCode: 'S5', reason: 'fraud team' });
    expect(events[0]).to.not.have.property('requestId');
    const card = await api(gateway, partner, 'GET', `/cards/${cardKey}`);
    expect(card.body).to.include({ status: 'FRAUD', statusCode: 'S5' });
  });

  it('a transaction the processing sandbox records shows as transaction.created, and in the transactions list', async () => {
    const { cardKey, individualId } = await newCard();
    const response = await fetch(`${sandbox.urls.processing}/__sandbox/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cardId: cardKey, amount: 23.4, currency: 'EUR', type: 'clearing', merchant: { name: 'Standalone Bakery', mcc: '5462', country: 'DE' } }),
    });
    const recorded = (await response.json()) as any;
    expect(response.status, JSON.stringify(recorded)).to.equal(201);
    const events = await waitFor('transaction.created', async () => {
      const found = await eventsOf('transaction.created', (e) => e.data.transaction._id === recorded.id);
      return found.length ? found : undefined;
    }, 15_000);
    expect(events).to.have.length(1);
    expect(events[0].data.transaction).to.deep.include({ cardKey, amount: 23.4, currency: 'EUR', status: 'SETTLED' });
    const list = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/transactions?limit=100`);
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    expect(list.body.data).to.deep.include(events[0].data.transaction);
  });

  it('PUT /__sandbox/notify-target changes it at run time: a wrong secret is refused (401, logged without it), the right one applies the queued change once', async () => {
    const { cardKey } = await newCard();
    // Stopped: the change queues in the sandbox.
    expect((await notifyTarget('issuer', 'DELETE')).status).to.equal(204);
    expect((await issuerStatus(cardKey, 'L1', 'issuer lock')).notified).to.equal(false);
    expect((await notifyTarget('issuer', 'GET')).body).to.deep.include({ url: null, backlog: 1 });
    expect(await eventsOf('card.status_changed', (e) => e.data.cardKey === cardKey)).to.have.length(0);

    // Straight at the listener now, but with a secret the gateway does not hold: 401, logged, retried.
    const wrong = await notifyTarget('issuer', 'PUT', { url: gateway.notifyUrl, secret: wrongSecret });
    expect(wrong.status, wrong.text).to.equal(200);
    expect(wrong.text).to.not.include(wrongSecret);
    await waitFor('the failed attempt in the sandbox log', async () => (sandbox.output().includes('"msg":"notification not delivered"') ? true : undefined), 15_000);
    const failure = sandbox
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === 'notification not delivered');
    expect(failure).to.include({ sandbox: 'issuer', url: gateway.notifyUrl, status: 401 });
    expect(await eventsOf('card.status_changed', (e) => e.data.cardKey === cardKey)).to.have.length(0);

    // The right secret: the queued notification is applied, once.
    const right = await notifyTarget('issuer', 'PUT', { url: gateway.notifyUrl, secret: issuerSecret });
    expect(right.status, right.text).to.equal(200);
    expect(right.body).to.deep.include({ sandbox: 'issuer', url: gateway.notifyUrl });
    const events = await waitFor('the queued card.status_changed', async () => {
      const found = await eventsOf('card.status_changed', (e) => e.data.cardKey === cardKey);
      return found.length ? found : undefined;
    }, 15_000);
    expect(events[0].data).to.include({ source: 'issuer', status: 'LOCKED', statusCode: 'L1', reason: 'issuer lock' });
    await waitFor('an empty backlog', async () => ((await notifyTarget('issuer', 'GET')).body.backlog === 0 ? true : undefined), 15_000);
    expect(await eventsOf('card.status_changed', (e) => e.data.cardKey === cardKey)).to.have.length(1);

    // The next change goes at once.
    expect((await issuerStatus(cardKey, '00', 'issuer unlock')).notified).to.equal(true);
    expect(await eventsOf('card.status_changed', (e) => e.data.cardKey === cardKey)).to.have.length(2);
  });

  it('no secret reached the sandbox\'s output', () => {
    const output = sandbox.output();
    for (const secret of [issuerSecret, processingSecret, wrongSecret]) expect(output.includes(secret)).to.equal(false);
  });
});
