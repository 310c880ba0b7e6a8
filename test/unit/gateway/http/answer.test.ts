import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { expect } from 'chai';
import { answeredThroughHook, awaitsAnswer, beforeAnswer, endAnswer, type Answer } from '../../../../gateway/http/answer';

/** The answer hook (gateway/http/answer.ts): run once, before the bytes leave, by the gateway's answer writers. */
describe('unit: http/answer (the answer hook)', function () {
  async function serve(handler: express.RequestHandler) {
    const app = express();
    app.all('/x', handler);
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`,
      close: () => new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    };
  }

  it('holds the bytes until the hook has run, hands it the status and exact bytes, and runs it once', async function () {
    const seen: Answer[] = [];
    const order: string[] = [];
    const server = await serve((_req, res) => {
      beforeAnswer(res, async (answer) => {
        seen.push(answer);
        await new Promise((resolve) => setImmediate(resolve));
        order.push('hook done');
      });
      res.on('finish', () => order.push('sent'));
      expect(awaitsAnswer(res)).to.equal(true);
      res.statusCode = 202;
      endAnswer(res, 'é');
      expect(awaitsAnswer(res)).to.equal(false);
      expect(answeredThroughHook(res)).to.equal(true);
    });
    try {
      const response = await fetch(server.url);
      expect(response.status).to.equal(202);
      expect(await response.text()).to.equal('é');
      expect(seen).to.deep.equal([{ status: 202, body: Buffer.from('é', 'utf8') }]);
      expect(order).to.deep.equal(['hook done', 'sent']);
    } finally {
      await server.close();
    }
  });

  it('still answers when the hook fails, answers at once without one, and writes no body for HEAD', async function () {
    const server = await serve((req, res) => {
      if (req.headers['x-hook']) beforeAnswer(res, async () => Promise.reject(new Error('store down')));
      expect(answeredThroughHook(res)).to.equal(false);
      endAnswer(res, 'body');
    });
    try {
      expect(await (await fetch(server.url, { headers: { 'x-hook': '1' } })).text()).to.equal('body');
      expect(await (await fetch(server.url)).text()).to.equal('body');
      expect(await (await fetch(server.url, { method: 'HEAD' })).text()).to.equal('');
    } finally {
      await server.close();
    }
  });

  it('refuses a second hook on one response', async function () {
    let error: unknown;
    const server = await serve((_req, res) => {
      beforeAnswer(res, async () => undefined);
      try {
        beforeAnswer(res, async () => undefined);
      } catch (err) {
        error = err;
      }
      endAnswer(res, '');
    });
    try {
      await fetch(server.url);
      expect(String(error)).to.match(/one answer hook/);
    } finally {
      await server.close();
    }
  });
});
