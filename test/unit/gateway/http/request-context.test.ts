import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import express from 'express';
import { requestContext } from '../../../../gateway/http/request-context';
import { createLogger } from '../../../../gateway/logging/logger';

describe('unit: http/request-context access log', function () {
  let server: Server;
  let baseUrl: string;
  let lines: Record<string, unknown>[];

  before(async function () {
    lines = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        cb();
      },
    });
    const app = express();
    app.use(requestContext(createLogger({ level: 'info', destination: sink }), 'gateway'));
    app.use((_req, res) => res.status(404).end());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(function () {
    server?.close();
  });

  async function accessLine(path: string): Promise<Record<string, unknown>> {
    const before = lines.length;
    const response = await fetch(`${baseUrl}${path}`, { headers: { 'x-request-id': `rc-${before}` } });
    expect(response.status).to.equal(404);
    const deadline = Date.now() + 5000;
    for (;;) {
      const line = lines.find((l) => l.requestId === `rc-${before}`);
      if (line) return line;
      if (Date.now() > deadline) throw new Error(`no access-log line for ${path.slice(0, 80)}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('logs a 15 KB "eyJeyJ…" path capped at 2 KB and marked truncated', async function () {
    const path = `/api/partner/${'eyJ'.repeat(5000)}`;
    const line = await accessLine(path);
    expect(line.status).to.equal(404);
    expect(line.url).to.equal(`${path.slice(0, 2048)}…[truncated]`);
  });

  it('still logs a short URL whole, with JWTs, PANs and secret parameters scrubbed', async function () {
    const jwt = 'eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const line = await accessLine(`/api/partner/x/${jwt}/4111111111111111?securityKey=MIIB&page=2`);
    expect(line.url).to.equal('/api/partner/x/[REDACTED_JWT]/[REDACTED_PAN]?securityKey=[REDACTED]&page=2');
  });
});
