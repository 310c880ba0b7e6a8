import http from 'node:http';
import express from 'express';
import { expect } from 'chai';
import { expressServer } from '../../../../gateway/http/express-server';
import { listenLocally } from '../../../support/in-process';

/**
 * The gateway's listeners (gateway/http/express-server.ts): requests and responses are made with
 * their Express application's prototypes, so that Express's own `Object.setPrototypeOf` in its
 * first middleware changes nothing (docs/performance.md, "Garbage collection under the heap cap"), and they behave as before.
 */
describe('unit: http/express-server (requests and responses made with the application\'s prototypes)', function () {
  function app() {
    const application = express();
    application.disable('x-powered-by');
    application.post('/echo', express.raw({ type: () => true }), (req, res) => {
      res.set('X-Seen', String(req.get('x-probe'))).status(201).json({ body: (req.body as Buffer).toString('utf8'), path: req.path, ip: req.ip });
    });
    return application;
  }

  it('gives each request and response the application\'s prototypes before the application runs', async function () {
    const application = app();
    const [request, response] = [application.request, application.response];
    const server = expressServer(application);
    // The application's prototypes now inherit from what they were (Express's methods, the app).
    expect([Object.getPrototypeOf(application.request), Object.getPrototypeOf(application.response)]).to.deep.equal([request, response]);
    const before: boolean[] = [];
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      before.push(Object.getPrototypeOf(req) === application.request, Object.getPrototypeOf(res) === application.response, req instanceof http.IncomingMessage, res instanceof http.ServerResponse);
    });
    const { url: base, close } = await listenLocally(server);
    try {
      expect((await fetch(`${base}/echo`, { method: 'POST', body: 'x' })).status).to.equal(201);
      expect(before).to.deep.equal([true, true, true, true]);
    } finally {
      await close();
    }
  });

  it('a plain server\'s responses get them only inside Express (what the listeners no longer do)', async function () {
    const application = app();
    const server = http.createServer(application);
    const before: boolean[] = [];
    server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => before.push(Object.getPrototypeOf(res) === application.response));
    const { url: base, close } = await listenLocally(server);
    try {
      await (await fetch(`${base}/echo`, { method: 'POST', body: 'x' })).arrayBuffer();
      expect(before).to.deep.equal([false]);
    } finally {
      await close();
    }
  });

  it('a handler that is not an Express application gets a plain server', async function () {
    const handler = (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'text/plain' }).end('plain');
    const server = expressServer(handler as unknown as express.Application);
    const protos: boolean[] = [];
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => protos.push(Object.getPrototypeOf(req) === http.IncomingMessage.prototype, Object.getPrototypeOf(res) === http.ServerResponse.prototype));
    const { url: base, close } = await listenLocally(server);
    try {
      const response = await fetch(`${base}/r`);
      expect(response.status).to.equal(200);
      expect(await response.text()).to.equal('plain');
      expect(protos).to.deep.equal([true, true]);
    } finally {
      await close();
    }
  });

  it('serves as a plain server does: body, status, headers, JSON, 404, keep-alive and the server options', async function () {
    const server = expressServer(app(), { headersTimeout: 7_000, requestTimeout: 9_000, keepAliveTimeout: 4_000 });
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).to.deep.equal([7_000, 9_000, 4_000]);
    const { url: base, close } = await listenLocally(server);
    try {
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${base}/echo?q=${i}`, { method: 'POST', body: `body ${i}`, headers: { 'x-probe': `p${i}` } });
        expect(response.status).to.equal(201);
        expect(response.headers.get('x-seen')).to.equal(`p${i}`);
        expect(response.headers.get('content-type')).to.match(/^application\/json/);
        expect(await response.json()).to.deep.equal({ body: `body ${i}`, path: '/echo', ip: '127.0.0.1' });
      }
      expect((await fetch(`${base}/nothing`)).status).to.equal(404);
    } finally {
      await close();
    }
  });
});
