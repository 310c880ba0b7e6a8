import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { expect } from 'chai';
import { JSON_CONTENT_TYPE, replayedAnswer, writeAnswer, type HandlerAnswer } from '../../../../gateway/http/answer';

/**
 * The answer writer (gateway/http/answer.ts) writes what Express's `res.json`/`res.send`/`res.end`
 * wrote for the same answer, byte for byte: each case is answered both ways by the same
 * application, under the partner app's settings (ETags off) and Express's default (weak ETags, the
 * admin API's), for GET, HEAD, a conditional GET and POST, and the raw heads and bodies compared.
 */
describe('unit: http/answer writeAnswer writes what Express wrote', function () {
  const json = { id: 'x1', name: 'é', list: [1, 2], nothing: null };
  const page = Buffer.from('<!doctype html><title>docs</title>');
  const recorded = { status: 201, body: Buffer.from(JSON.stringify(json)), headers: { 'content-type': JSON_CONTENT_TYPE, 'cache-control': 'no-store', location: '/x/1' } };
  const cases: { name: string; express: (res: Response) => void; answer: HandlerAnswer }[] = [
    { name: 'JSON', express: (res) => void res.json(json), answer: { status: 200, body: json } },
    {
      name: 'JSON 201 with a header',
      express: (res) => {
        res.setHeader('Location', '/x/1');
        res.status(201).json(json);
      },
      answer: { status: 201, body: json, headers: { Location: '/x/1' } },
    },
    { name: '204', express: (res) => void res.status(204).end(), answer: { status: 204 } },
    {
      name: 'text',
      express: (res) => void res.status(200).type('text/plain').set('Cache-Control', 'no-store').send('OK'),
      answer: { status: 200, headers: { 'Cache-Control': 'no-store' }, bytes: 'OK', contentType: 'text/plain; charset=utf-8' },
    },
    { name: 'JSON text assembled', express: (res) => void res.type('application/json').send('{"data":[]}'), answer: { status: 200, bytes: '{"data":[]}', contentType: JSON_CONTENT_TYPE } },
    {
      name: 'a page with its ETag',
      express: (res) => {
        res.set({ 'Cache-Control': 'public, max-age=300', ETag: '"page-1"', Vary: 'Accept-Encoding' });
        res.type('text/html');
        res.send(page);
      },
      answer: { status: 200, headers: { 'Cache-Control': 'public, max-age=300', ETag: '"page-1"', Vary: 'Accept-Encoding', 'Content-Type': 'text/html; charset=utf-8' }, bytes: page },
    },
    {
      name: 'a gzip page',
      express: (res) => {
        res.set({ 'Cache-Control': 'public, max-age=300', ETag: '"page-1"', Vary: 'Accept-Encoding' });
        res.type('application/javascript');
        res.set('Content-Encoding', 'gzip').send(page);
      },
      answer: { status: 200, headers: { 'Cache-Control': 'public, max-age=300', ETag: '"page-1"', Vary: 'Accept-Encoding', 'Content-Type': 'application/javascript; charset=utf-8', 'Content-Encoding': 'gzip' }, bytes: page },
    },
    {
      name: '304 of a page',
      express: (res) => {
        res.set({ 'Cache-Control': 'public, max-age=300', ETag: '"page-1"', Vary: 'Accept-Encoding' });
        res.status(304).end();
      },
      answer: { status: 304, headers: { 'Cache-Control': 'public, max-age=300', ETag: '"page-1"', Vary: 'Accept-Encoding' } },
    },
    { name: 'sendStatus 404', express: (res) => void res.sendStatus(404), answer: { status: 404, bytes: 'Not Found', contentType: 'text/plain; charset=utf-8' } },
    {
      name: 'OPTIONS',
      express: (res) => {
        res.set('Allow', 'GET,POST');
        res.send('GET,POST');
      },
      answer: { status: 200, headers: { Allow: 'GET,POST' }, bytes: 'GET,POST', contentType: 'text/html; charset=utf-8' },
    },
    {
      name: 'a replay',
      express: (res) => void res.set(recorded.headers).set('Idempotent-Replayed', 'true').status(recorded.status).send(recorded.body),
      answer: replayedAnswer(recorded),
    },
    {
      name: 'a problem',
      express: (res) => void res.status(409).set('Cache-Control', 'no-store').type('application/problem+json').send('{"code":"conflict"}'),
      answer: { status: 409, headers: { 'Cache-Control': 'no-store' }, bytes: '{"code":"conflict"}', contentType: 'application/problem+json; charset=utf-8' },
    },
  ];

  async function serve(etag: boolean) {
    const app = express();
    app.disable('x-powered-by');
    if (!etag) app.set('etag', false);
    // As the request context does first in both apps: every answer is no-store unless it says otherwise.
    app.use((_req, res, next) => (res.setHeader('Cache-Control', 'no-store'), next()));
    cases.forEach((c, i) => {
      app.all(`/express/${i}`, (_req, res) => c.express(res));
      app.all(`/writer/${i}`, (_req, res) => writeAnswer(res, c.answer));
    });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
  }

  function request(port: number, method: string, path: string, headers: Record<string, string>): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const head = res.rawHeaders.flatMap((value, i, all) => (i % 2 === 0 && value.toLowerCase() !== 'date' ? [`${value}: ${all[i + 1]}`] : []));
          resolve(`${res.statusCode}\n${head.join('\n')}\n\n${Buffer.concat(chunks).toString('latin1')}`);
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  const requests: { method: string; headers: Record<string, string> }[] = [
    { method: 'GET', headers: {} },
    { method: 'HEAD', headers: {} },
    { method: 'GET', headers: { 'if-none-match': '*' } },
    { method: 'GET', headers: { 'if-none-match': 'W/"other", "page-1"' } },
    { method: 'POST', headers: { 'if-none-match': '*' } },
  ];

  for (const etag of [false, true]) {
    it(`answers every case as Express did, ETags ${etag ? 'on (the admin API)' : 'off (the partner app)'}`, async function () {
      const server = await serve(etag);
      try {
        let compared = 0;
        for (const [i, c] of cases.entries()) {
          for (const { method, headers } of requests) {
            const before = await request(server.port, method, `/express/${i}`, headers);
            const after = await request(server.port, method, `/writer/${i}`, headers);
            expect(after, `${c.name}, ${method} ${JSON.stringify(headers)}`).to.equal(before);
            compared += 1;
          }
        }
        expect(compared).to.equal(cases.length * requests.length);
      } finally {
        await server.close();
      }
    });
  }
});
