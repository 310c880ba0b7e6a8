import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { AUTHORIZATION_DECISION, createOutbound, OwnListeners, WEBHOOK_DELIVERY, type AnswerRules, type Outbound, type PostResult, type Resolver, type VettedTarget } from '../../../../gateway/outbound';
import { sendWebhook } from '../../../../gateway/webhooks/sender';
import { waitFor } from '../../../support/wait';

/**
 * A loopback HTTP(S) server that counts TCP connections, the bytes they carried and the requests it
 * got; it answers 200 `ok`, or as `answer` says (`destroy`: the socket is destroyed unanswered).
 */
async function countingServer(options: { host?: string; tls?: { key: string; cert: string }; answer?: (req: http.IncomingMessage, res: http.ServerResponse, nthOnSocket: number) => 'destroy' | void } = {}) {
  const counts = { connections: 0, bytes: 0, requests: 0, handshakes: 0, localAddresses: [] as string[] };
  const perSocket = new WeakMap<net.Socket, number>();
  const handler: http.RequestListener = (req, res) => {
    counts.requests++;
    counts.localAddresses.push(req.socket.localAddress ?? '');
    const nth = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, nth);
    req.resume();
    req.on('end', () => {
      if (!options.answer) return res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (options.answer(req, res, nth) === 'destroy') req.socket.destroy();
    });
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

/** One signed POST of `{}` through `outbound`, read as `rules` say. */
function request(outbound: Outbound, target: VettedTarget, rules: AnswerRules = WEBHOOK_DELIVERY, timeoutMs = 2000): Promise<PostResult> {
  return outbound.send(target, { rules, id: 'evt_test', body: '{}', secrets: ['whsec_' + 'a'.repeat(43)], timeoutMs });
}

describe('unit: the outbound transport checks the address it connects to (gateway/outbound/transport.ts)', function () {
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
    const message = { eventId: 'evt_test', type: 'card.status_changed', payload: '{}', secrets: ['whsec_' + 'a'.repeat(43)] };
    try {
      // Vetted for loopback, but the production guard refuses loopback: connected, checked, destroyed.
      const stale = vetted(`http://hooks.example.com:${server.port}/hook`, '127.0.0.1');
      const refused = await request(production, stale);
      expect(refused).to.include({ kind: 'failed', error: 'target_refused' });
      expect(refused.kind === 'failed' && refused.reason).to.match(/non-public address: a loopback address/);
      expect(await sendWebhook(production, stale, message, 2000)).to.include({ error: 'target_refused' });
      // In sandbox mode the same connection carries the request...
      const local = vetted(`http://127.0.0.1:${server.port}/hook`, '127.0.0.1');
      expect(await sendWebhook(sandbox, local, message, 2000)).to.include({ status: 200 });
      expect(server.counts.requests).to.equal(1);
      const bytesSoFar = server.counts.bytes;
      // ...until its port is one of this gateway's own listeners: a new connection is refused (the idle one is dropped first).
      own.add('admin API', server.port);
      sandbox.close();
      const again = await sendWebhook(sandbox, local, message, 2000);
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
        expect(await request(outbound, target)).to.include({ kind: 'answer', status: 200 });
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
    const sandbox = createOutbound({ allowPrivate: true }, { ca: tls.cert });
    const production = createOutbound({ allowPrivate: false }, { ca: tls.cert });
    const untrusting = createOutbound({ allowPrivate: true });
    try {
      const target = vetted(`https://hooks.test:${server.port}/hook`, '127.0.0.1');
      expect(await request(sandbox, target)).to.include({ kind: 'answer', status: 200 });
      const otherName = vetted(`https://other.test:${server.port}/hook`, '127.0.0.1');
      expect(await request(sandbox, otherName)).to.include({ kind: 'failed', error: 'connection', code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      // A certificate of a CA the transport does not trust is refused too.
      expect(await request(untrusting, target)).to.include({ kind: 'failed', error: 'connection' });
      const handshakes = server.counts.handshakes;
      const refused = await request(production, target);
      expect(refused).to.include({ kind: 'failed', error: 'target_refused' });
      expect(server.counts.handshakes).to.equal(handshakes);
      expect(server.counts.requests).to.equal(1);
    } finally {
      sandbox.close();
      production.close();
      untrusting.close();
      await server.close();
    }
  });
  it('a reused connection the receiver had closed is retried once on a new connection; a new connection that fails is not retried', async function () {
    // Every second request on a connection finds it closed (the receiver dropped it unanswered).
    const server = await countingServer({ answer: (_req, res, nth) => (nth === 2 ? 'destroy' : void res.writeHead(200).end('ok')) });
    const outbound = createOutbound({ allowPrivate: true });
    try {
      const target = vetted(`http://127.0.0.1:${server.port}/hook`, '127.0.0.1');
      expect(await request(outbound, target)).to.include({ kind: 'answer', status: 200 });
      expect(await request(outbound, target), 'retried on a new connection').to.include({ kind: 'answer', status: 200 });
      expect(server.counts).to.include({ requests: 3, connections: 2 });
    } finally {
      outbound.close();
      await server.close();
    }
    const failing = await countingServer({ answer: () => 'destroy' });
    const fresh = createOutbound({ allowPrivate: true });
    try {
      const target = vetted(`http://127.0.0.1:${failing.port}/hook`, '127.0.0.1');
      expect(await request(fresh, target)).to.include({ kind: 'failed', error: 'connection' });
      expect(failing.counts).to.include({ requests: 1, connections: 1 });
    } finally {
      fresh.close();
      await failing.close();
    }
  });

  it('reads the answer up to its kind\'s cap (declared or streamed), never follows a redirect, and under readBody success ends a non-2xx at its head', async function () {
    let answer: (res: http.ServerResponse) => void = (res) => res.writeHead(200).end('ok');
    const server = await countingServer({ answer: (_req, res) => answer(res) });
    const outbound = createOutbound({ allowPrivate: true });
    try {
      const target = vetted(`http://127.0.0.1:${server.port}/hook`, '127.0.0.1');
      answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(5000));
      expect(await request(outbound, target, AUTHORIZATION_DECISION)).to.include({ kind: 'too_large', status: 200 });
      const within = await request(outbound, target, WEBHOOK_DELIVERY);
      expect(within).to.include({ kind: 'answer', status: 200 });
      expect(within.kind === 'answer' && within.body.length).to.equal(5000);
      // Streamed without a Content-Length, past the 64 KiB of a webhook answer: cut at the cap, not read to its end.
      answer = (res) => {
        res.writeHead(200);
        const timer = setInterval(() => res.write('y'.repeat(1024)), 2);
        res.on('close', () => clearInterval(timer));
      };
      const started = Date.now();
      expect(await request(outbound, target, WEBHOOK_DELIVERY, 5000)).to.include({ kind: 'too_large', status: 200 });
      expect(Date.now() - started).to.be.below(4000);
      // A delivery counts by its status: an answer over the cap is still delivered.
      const delivered = await sendWebhook(outbound, target, { eventId: 'evt_test', type: 'card.updated', payload: '{}', secrets: ['whsec_' + 'a'.repeat(43)] }, 5000);
      expect(delivered).to.include({ status: 200 }).and.not.have.property('error');
      answer = (res) => res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      expect(await request(outbound, target)).to.include({ kind: 'answer', status: 307 });
      expect(await sendWebhook(outbound, target, { eventId: 'evt_test', type: 'card.updated', payload: '{}', secrets: ['whsec_' + 'a'.repeat(43)] }, 2000)).to.include({ status: 307, error: 'redirect' });
      // A 500 whose body never ends: under readBody success the status is the answer, at once.
      answer = (res) => res.writeHead(500).write('partial');
      expect(await request(outbound, target, AUTHORIZATION_DECISION, 1000)).to.include({ kind: 'answer', status: 500 });
      expect(await request(outbound, target, WEBHOOK_DELIVERY, 300)).to.include({ kind: 'failed', error: 'timeout' });
    } finally {
      outbound.close();
      await server.close();
    }
  });

  it('one timeout covers connecting, the answer\'s head and its body', async function () {
    let answer: (res: http.ServerResponse) => void = () => undefined;
    const server = await countingServer({ answer: (_req, res) => answer(res) });
    const outbound = createOutbound({ allowPrivate: true });
    try {
      const target = vetted(`http://127.0.0.1:${server.port}/hook`, '127.0.0.1');
      for (const [what, behave] of [
        ['no head', () => undefined],
        ['a body that never ends', (res: http.ServerResponse) => res.writeHead(200).write('{')],
      ] as const) {
        answer = behave;
        const started = Date.now();
        expect(await request(outbound, target, WEBHOOK_DELIVERY, 300), what).to.include({ kind: 'failed', error: 'timeout' });
        expect(Date.now() - started, what).to.be.within(250, 1500);
      }
      // A documentation address nothing answers (TEST-NET-1): the connection attempt is cut by the timeout (or fails at once without a route).
      const blackHole = vetted('http://192.0.2.1:9/hook', '192.0.2.1');
      const started = Date.now();
      const connecting = await request(outbound, blackHole, WEBHOOK_DELIVERY, 300);
      expect(connecting.kind === 'failed' && connecting.error).to.be.oneOf(['timeout', 'connection']);
      expect(Date.now() - started).to.be.below(1500);
    } finally {
      outbound.close();
      await server.close();
    }
  });
});
