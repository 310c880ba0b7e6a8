import { expect } from 'chai';
import type { Request, Response } from 'express';
import { accessLogFields } from '../../../../gateway/http/request-context';
import { createLogger, templatedLines } from '../../../../gateway/logging/logger';
import { REDACTED, redactUrl, redactValue } from '../../../../gateway/logging/redaction';

// Issue 22 item 5: the access-log line is built from a template instead of going through pino's
// formatter (a deep copy scrubbing every string). These tests hold it to the bytes the old way
// wrote: the same request, logged the old way and the new, gives the same line (time aside).

const JWT = 'eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';

/** A logger writing into an array; `time` replaced so that two lines written apart compare. */
function capture(level = 'info'): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ level, destination: { write: (line: string) => void lines.push(line.replace(/"time":"[^"]+"/, '"time":"T"')) } });
  return { log, lines };
}

interface Case {
  name: string;
  req: Record<string, unknown>;
  locals: Record<string, unknown>;
  status: number;
}

const CASES: Case[] = [
  { name: 'S1 (a proxied read, partner, upstream latency)', req: { requestId: '8f14e45f-ceea-467f-a8f0-4b3c1b2e1a11', method: 'GET', originalUrl: '/api/partner/cards/CK1/status', partner: { _id: '65a1b2c3d4e5f60718293a4b' }, route: { path: '/api/partner/cards/:id/status' } }, locals: { upstreamLatencyMs: 1.23 }, status: 200 },
  { name: 'secrets in the URL and a JWT as request id', req: { requestId: JWT, method: 'GET', originalUrl: `/api/partner/x/${JWT}/4111111111111111?securityKey=MIIB&page=2&search=5355%207099%209999%209994` }, locals: {}, status: 404 },
  { name: 'a card number as request id, a 5xx', req: { requestId: '4111-1111-1111-1111', method: 'POST', originalUrl: '/api/partner/cards/CK1/lock', partner: { _id: 'p1' }, route: { path: '/api/partner/cards/:id/lock' } }, locals: { upstreamLatencyMs: 5001 }, status: 504 },
  { name: 'a sensitive route (the pattern is logged)', req: { requestId: 'r-1', method: 'GET', originalUrl: '/api/partner/cards/CK1/cvv?expDate=12/2030&securityKey=abc', route: { path: '/api/partner/cards/:id/cvv' } }, locals: { sensitive: true, route: '/api/partner/cards/{id}/cvv' }, status: 200 },
  { name: 'a sensitive request no route served', req: { requestId: 'r-2', method: 'GET', originalUrl: '/api/partner/cards/CK1/cvv' }, locals: { sensitive: true }, status: 401 },
  { name: 'a handler\'s log fields: a secret key, a URL, a JWT value, one named like a field of the line', req: { requestId: 'r-3', method: 'POST', originalUrl: '/processing/authorizations' }, locals: { logFields: { authorizationId: 'a1', approved: true, decidedBy: `x ${JWT}`, pin: '1234', url: '/a?token=zzz', status: 999, partnerId: 'forged', amount: 12.5 } }, status: 200 },
  { name: 'a 15 KB hostile path', req: { requestId: 'r-4', method: 'GET', originalUrl: `/api/partner/${'eyJ'.repeat(5000)}` }, locals: {}, status: 404 },
  { name: 'quotes, backslashes and control characters', req: { requestId: 'r-5', method: 'GET', originalUrl: '/api/partner/"a\\b"\u0001\u2028?q="x"' }, locals: { route: 'weird "route"' }, status: 400 },
];

/** The line's object as request-context.ts built it before the template (pino's formatter then scrubbed it). */
function oldEntry(req: Record<string, unknown>, locals: Record<string, unknown>, status: number, latencyMs: number): Record<string, unknown> {
  const route = (locals.route ?? (req.route as { path?: unknown } | undefined)?.path) as string | undefined;
  return {
    ...(locals.logFields as Record<string, unknown> | undefined),
    component: 'gateway',
    requestId: req.requestId,
    partnerId: (req.partner as { _id?: string } | undefined)?._id,
    method: req.method,
    url: locals.sensitive ? (route ?? REDACTED) : redactUrl(req.originalUrl as string),
    route,
    status,
    latencyMs: Math.round(latencyMs * 100) / 100,
    upstreamLatencyMs: locals.upstreamLatencyMs,
  };
}

describe('unit: logging/templated access-log line', function () {
  for (const c of CASES) {
    it(`writes the bytes pino wrote for the old line object: ${c.name}`, function () {
      const latencyMs = 12.345678;
      const old = capture();
      const level = c.status >= 500 ? 'error' : 'info';
      old.log[level](oldEntry(c.req, c.locals, c.status, latencyMs), 'request');
      const now = capture();
      const res = { statusCode: c.status, locals: c.locals } as unknown as Response;
      templatedLines(now.log, 'request')(level, accessLogFields(c.req as unknown as Request, res, 'gateway', latencyMs));
      expect(now.lines).to.have.length(1);
      expect(now.lines[0]).to.equal(old.lines[0]);
    });
  }

  it('keeps secrets out: no JWT, card number, security key or PIN reaches the line', function () {
    const { log, lines } = capture();
    const write = templatedLines(log, 'request');
    for (const c of CASES) write('info', accessLogFields(c.req as unknown as Request, { statusCode: c.status, locals: c.locals } as unknown as Response, 'gateway', 1));
    const text = lines.join('');
    for (const secret of [JWT, '4111111111111111', '4111-1111-1111-1111', '5355%207099%209999%209994', 'MIIB', '"1234"', 'zzz', 'securityKey=abc']) expect(text).not.to.include(secret);
  });

  it('writes nothing below the logger\'s level, and an error line at error', function () {
    const { log, lines } = capture('error');
    const write = templatedLines(log, 'request');
    write('info', '"status":200');
    expect(lines).to.deep.equal([]);
    write('error', '"status":500');
    expect(JSON.parse(lines[0]!)).to.deep.equal({ level: 'error', time: 'T', service: 'partner-gateway', status: 500, msg: 'request' });
  });

  it('carries a child logger\'s bindings, as pino does', function () {
    const { log, lines } = capture();
    const child = log.child({ worker: 2 });
    child.info({ status: 200 }, 'request');
    templatedLines(child, 'request')('info', '"status":200');
    expect(lines[1]).to.equal(lines[0]);
  });

  it('the redaction list is what the old formatter applied to a log field (sanity of the reference)', function () {
    expect(redactValue({ pin: '1' })).to.deep.equal({ pin: REDACTED });
  });
});
