import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createOutbound, OwnListeners, TargetRefusedError, type Resolver, type VettedTarget } from '../../../../gateway/outbound';
import { sendWebhook } from '../../../../gateway/webhooks/sender';
import { waitFor } from '../../../support/wait';

/** A loopback HTTP(S) server that counts TCP connections, the bytes they carried and the requests it answered (200). */
async function countingServer(options: { host?: string; tls?: { key: string; cert: string } } = {}) {
  const counts = { connections: 0, bytes: 0, requests: 0, handshakes: 0, localAddresses: [] as string[] };
  const handler: http.RequestListener = (req, res) => {
    counts.requests++;
    counts.localAddresses.push(req.socket.localAddress ?? '');
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  };
  const server: http.Server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  // Counted at the TCP level, before any TLS or HTTP parsing.
  server.on('connection', (socket: net.Socket) => {
    counts.connections++;
    socket.on('data', (chunk: Buffer) => (counts.bytes += chunk.length));
  });
  server.on('secureConnection', () => counts.handshakes++);
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A vetted target as the guard answers it (tests make some by hand: a vetting gone stale). */
const vetted = (url: string, address: string): VettedTarget => ({ url: new URL(url), address, family: net.isIP(address) });

/** A request on `agent`, resolving with its status or the error it failed with. */
function request(target: VettedTarget, agent: http.Agent, extra: https.RequestOptions = {}): Promise<{ status?: number; error?: Error }> {
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = client.request(target.url, { method: 'POST', agent, ...extra }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
    });
    req.on('error', (error) => resolve({ error }));
    req.end('{}');
  });
}

describe('unit: the outbound transport checks the address it connects to (gateway/outbound/pinned-agents.ts)', function () {
  this.timeout(20_000);

  it('DNS rebinding: a name public at registration and loopback at delivery is refused at delivery, and the loopback listener is never connected to', async function () {
    const server = await countingServer();
    const answers = ['93.184.216.34', '127.0.0.1'];
    let lookups = 0;
    const resolve: Resolver = async () => [{ address: answers[Math.min(lookups++, answers.length - 1)], family: 4 }];
    const outbound = createOutbound({ allowPrivate: false, resolve });
    try {
      const url = `https://rebind.example.com:${server.port}/hook`;
      expect(await outbound.check(url), 'at registration').to.deep.include({ ok: true, address: '93.184.216.34' });
      const atDelivery = await outbound.check(url);
      expect(atDelivery, 'at delivery').to.deep.include({ ok: false });
      expect(atDelivery.ok === false && atDelivery.reason).to.match(/loopback/);
      expect(server.counts).to.include({ connections: 0, bytes: 0, requests: 0 });
    } finally {
      outbound.close();
      await server.close();
    }
  });

  it('a connection whose remote end the guard refuses is destroyed before a byte is sent: the request fails with target_refused (a stale vetting, an own listener added since)', async function () {
    const server = await countingServer();
    const own = new OwnListeners();
    const production = createOutbound({ allowPrivate: false });
    const sandbox = createOutbound({ allowPrivate: true, ownListeners: own });
    try {
      // Vetted for loopback, but the production guard refuses loopback: connected, checked, destroyed.
      const stale = vetted(`http://hooks.example.com:${server.port}/hook`, '127.0.0.1');
      const refused = await request(stale, production.agent(stale));
      expect(refused.error).to.be.instanceOf(TargetRefusedError);
      expect((refused.error as TargetRefusedError).reason).to.match(/non-public address: a loopback address/);
      expect(await sendWebhook(stale, production.agent(stale), '{}', {}, 2000)).to.include({ error: 'target_refused' });
      // In sandbox mode the same connection carries the request...
      const local = vetted(`http://127.0.0.1:${server.port}/hook`, '127.0.0.1');
      expect(await sendWebhook(local, sandbox.agent(local), '{}', {}, 2000)).to.include({ status: 200 });
      expect(server.counts.requests).to.equal(1);
      const bytesSoFar = server.counts.bytes;
      // ...until its port is one of this gateway's own listeners: a new connection is refused (the idle one is dropped first).
      own.add('admin API', server.port);
      sandbox.close();
      const again = await sendWebhook(local, sandbox.agent(local), '{}', {}, 2000);
      expect(again).to.include({ error: 'target_refused' });
      expect(server.counts.requests).to.equal(1);
      expect(server.counts.bytes, 'bytes after the refusals').to.equal(bytesSoFar);
      // Four TCP connections reached the server (accepted in its own time): three refused before writing, one that carried the request.
      await waitFor('the four connections accepted', () => server.counts.connections === 4);
      expect(server.counts.bytes).to.equal(bytesSoFar);
    } finally {
      production.close();
      sandbox.close();
      await server.close();
    }
  });

  it('connects to the vetted address, never to what the URL\'s name resolves to, and reuses a kept-alive connection only for that address', async function () {
    const server = await countingServer({ host: '0.0.0.0' });
    const outbound = createOutbound({ allowPrivate: true });
    try {
      for (const address of ['127.0.0.2', '127.0.0.2', '127.0.0.3']) {
        const target = vetted(`http://localhost:${server.port}/hook`, address);
        expect(await request(target, outbound.agent(target))).to.deep.equal({ status: 200 });
      }
      expect(server.counts.localAddresses).to.deep.equal(['127.0.0.2', '127.0.0.2', '127.0.0.3']);
      expect(server.counts.connections, 'the second request reused the first connection').to.equal(2);
    } finally {
      outbound.close();
      await server.close();
    }
  });

  it('https: TLS runs on the checked connection and still checks the certificate against the URL\'s host name; a refused connection never starts a handshake', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pinned-tls-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=hooks.test', '-addext', 'subjectAltName=DNS:hooks.test', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    } catch {
      fs.rmSync(dir, { recursive: true, force: true });
      this.skip();
    }
    const tls = { key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
    fs.rmSync(dir, { recursive: true, force: true });
    const server = await countingServer({ tls });
    const sandbox = createOutbound({ allowPrivate: true });
    const production = createOutbound({ allowPrivate: false });
    try {
      const target = vetted(`https://hooks.test:${server.port}/hook`, '127.0.0.1');
      expect(await request(target, sandbox.agent(target), { ca: tls.cert })).to.deep.equal({ status: 200 });
      const otherName = vetted(`https://other.test:${server.port}/hook`, '127.0.0.1');
      const mismatch = await request(otherName, sandbox.agent(otherName), { ca: tls.cert });
      expect((mismatch.error as NodeJS.ErrnoException | undefined)?.code).to.equal('ERR_TLS_CERT_ALTNAME_INVALID');
      const handshakes = server.counts.handshakes;
      const refused = await request(target, production.agent(target), { ca: tls.cert });
      expect(refused.error).to.be.instanceOf(TargetRefusedError);
      expect(server.counts.handshakes).to.equal(handshakes);
      expect(server.counts.requests).to.equal(1);
    } finally {
      sandbox.close();
      production.close();
      await server.close();
    }
  });
});
