import crypto from 'node:crypto';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import sensitiveDataPolicy from '../../../policies/sensitive-data';
import { sensitiveData } from '../../../policies/sensitive-data/sensitive-data';
import { GatewayError } from '../../../gateway/errors';
import { createLogger } from '../../../gateway/logging/logger';
import { serve } from '../../support/in-process';

describe('sensitive-data policy: no-store, Pragma, and the route pattern in the access log', function () {
  const lines: Record<string, any>[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const servers: { url: string; close(): Promise<void> }[] = [];

  after(async function () {
    for (const server of servers) await server.close();
  });

  async function start(path: string, terminal: RequestHandler, marked = true): Promise<string> {
    const middlewares = marked ? [sensitiveData(), terminal] : [terminal];
    const server = await serve(middlewares, log, path);
    servers.push(server);
    return server.url;
  }

  // The line is written when the response finishes, which may be just after the client has read it.
  const accessLine = async (requestId: string) => {
    const deadline = Date.now() + 5000;
    for (;;) {
      const line = lines.find((l) => l.msg === 'request' && l.requestId === requestId);
      if (line || Date.now() > deadline) return line;
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  const table: { description: string; terminal: RequestHandler; status: number }[] = [
    { description: 'a successful answer', terminal: (_req, res) => void res.json({ cvv: 'ciphertext' }), status: 200 },
    { description: 'an error answer (problem)', terminal: (_req, _res, next) => next(new GatewayError('not_found')), status: 404 },
    { description: 'a handler that sets its own cache header first', terminal: (_req, res) => void res.set('Cache-Control', 'no-store').json({}), status: 200 },
  ];
  for (const [index, row] of table.entries()) {
    it(`${row.description}: Cache-Control no-store, Pragma no-cache, logged URL is the route pattern`, async function () {
      const url = await start(`/t${index}/cards/:id/cvv`, row.terminal);
      // Hex, not a millisecond timestamp: 13 digits in a row can pass the Luhn check and be scrubbed as a PAN.
      const requestId = `sensitive-${index}-${crypto.randomBytes(6).toString('hex')}`;
      const response = await fetch(`${url}/t${index}/cards/CK1234567890/cvv?expDate=01%2F2030&securityKey=c2VjcmV0`, { headers: { 'x-request-id': requestId } });
      expect(response.status).to.equal(row.status);
      expect(response.headers.get('cache-control')).to.equal('no-store');
      expect(response.headers.get('pragma')).to.equal('no-cache');
      const line = await accessLine(requestId);
      expect(line, JSON.stringify(lines.slice(-3))).to.include({ url: `/t${index}/cards/:id/cvv`, route: `/t${index}/cards/:id/cvv`, status: row.status });
      expect(JSON.stringify(line)).to.not.match(/CK1234567890|2030|c2VjcmV0/);
    });
  }

  it('leaves other routes alone: their logged URL is the (redacted) URL', async function () {
    const url = await start('/plain/:id', (_req, res) => void res.json({}), false);
    const requestId = `plain-${crypto.randomBytes(6).toString('hex')}`;
    const response = await fetch(`${url}/plain/abc?securityKey=c2VjcmV0&page=2`, { headers: { 'x-request-id': requestId } });
    expect(response.headers.get('pragma')).to.equal(null);
    const line = await accessLine(requestId);
    expect(line?.url).to.equal('/plain/abc?securityKey=[REDACTED]&page=2');
  });

  it('takes no params (its schema has no properties)', function () {
    expect(sensitiveDataPolicy.schema.properties).to.deep.equal({});
    expect(sensitiveDataPolicy.name).to.equal('sensitive-data');
  });
});
