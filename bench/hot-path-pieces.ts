/**
 * `npm run bench:hot-path-pieces [-- --iterations 200000] [--rounds 5]`
 *
 * The pieces of issue 22 item 5 one by one, in this process, without HTTP: each piece's former way
 * (kept here as the reference) beside the way the gateway takes now, rounds alternating, medians
 * of CPU time per operation (`process.cpuUsage`). The HTTP rounds of `npm run bench:hot-path` see
 * S1 as a whole (~350 µs on this machine) and swing by ±5 % or more while other work loads the
 * machine; a piece worth a few µs shows here. docs/performance.md ("Issue 22 item 5") quotes it.
 *
 * - access-log line: the line's object through pino (its logMethod hook, the formatter's deep
 *   scrub, `JSON.stringify`), against the template (`templatedLines` + `accessLogFields`);
 * - partner gone: an `AbortController` per request and its signal's listener, removed on the
 *   upstream request's 'close', against the proxy's `PartnerGone` (the listeners on the two
 *   emitters standing for the partner's response and the upstream request are in both);
 * - upstream request head: `http.request` with a header object (a `setHeader` per header, Node
 *   adding Host) against the flat list with the prebuilt Host, built and ended on an agent that
 *   never connects;
 * - metrics: what one request's observations cost now (`http_requests_total`,
 *   `http_request_duration_seconds`, `upstream_request_duration_seconds`), with no alternative:
 *   the figure behind leaving them as they are.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import { parseArgs } from 'node:util';
import type { Request, Response } from 'express';
import { accessLogFields } from '../gateway/http/request-context';
import { createLogger, templatedLines } from '../gateway/logging/logger';
import { redactUrl } from '../gateway/logging/redaction';
import { recordUpstreamCall, requestMetrics } from '../gateway/metrics/recorders';
import { PartnerGone } from '../policies/proxy/proxy';

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** CPU µs per call of `f` over `iterations` calls (after a warm-up). */
function perCall(f: () => void, iterations: number): number {
  for (let i = 0; i < Math.min(20_000, iterations); i++) f();
  const started = process.cpuUsage();
  for (let i = 0; i < iterations; i++) f();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / iterations;
}

/** An agent that takes requests and never connects (`addRequest` is internal to Node's Agent, absent from its typings). */
function neverConnects(): http.Agent {
  const agent = new http.Agent({ keepAlive: true });
  (agent as unknown as { addRequest: () => void }).addRequest = () => undefined;
  return agent;
}

function pieces(): Record<string, { before: () => void; after: () => void }> {
  // S1's access-log line.
  const log = createLogger({ level: 'info', destination: { write: () => true } });
  const req = {
    requestId: '8f14e45f-ceea-467f-a8f0-4b3c1b2e1a11',
    method: 'GET',
    originalUrl: '/api/partner/cards/CK12345678/status',
    partner: { _id: '65a1b2c3d4e5f60718293a4b' },
    route: { path: '/api/partner/cards/:id/status' },
  } as unknown as Request;
  const res = { statusCode: 200, locals: { upstreamLatencyMs: 1.23 } } as unknown as Response;
  const writeLine = templatedLines(log, 'request');

  const agent = neverConnects();
  const requestId = '8f14e45f-ceea-467f-a8f0-4b3c1b2e1a11';
  const target = { hostname: '127.0.0.1', port: '4101', method: 'GET', path: '/cards/CK12345678/status', agent };

  const metrics = requestMetrics('gateway');
  const routed = { apiEndpointName: 'get-card-status', method: 'GET' } as unknown as Request;
  let tick = 0;

  return {
    'access-log line': {
      before: () =>
        log.info(
          { component: 'gateway', requestId: req.requestId, partnerId: req.partner!._id, method: req.method, url: redactUrl(req.originalUrl), route: req.route.path, status: 200, latencyMs: 3.21, upstreamLatencyMs: 1.23 },
          'request'
        ),
      after: () => writeLine('info', accessLogFields(req, res, 'gateway', 3.2111)),
    },
    'partner gone (abort signal)': {
      before: () => {
        const partnerRes = new EventEmitter();
        const upstreamReq = new EventEmitter();
        const partnerGone = new AbortController();
        let done = false;
        partnerRes.once('close', () => {
          if (!done) partnerGone.abort();
        });
        const onAbort = (): void => undefined;
        partnerGone.signal.addEventListener('abort', onAbort, { once: true });
        upstreamReq.once('close', () => partnerGone.signal.removeEventListener('abort', onAbort));
        upstreamReq.emit('close');
        done = true;
        partnerRes.emit('close');
      },
      after: () => {
        const partnerRes = new EventEmitter();
        const upstreamReq = new EventEmitter();
        const partnerGone = new PartnerGone();
        let done = false;
        partnerRes.on('close', () => {
          if (!done) partnerGone.abort();
        });
        const onAbort = (): void => undefined;
        partnerGone.addEventListener('abort', onAbort);
        partnerGone.removeEventListener('abort', onAbort);
        upstreamReq.emit('close');
        done = true;
        partnerRes.emit('close');
      },
    },
    'upstream request head': {
      before: () => http.request({ ...target, headers: { accept: 'application/json', 'x-request-id': requestId } }).end(),
      after: () => {
        const headers: http.OutgoingHttpHeaders = { accept: 'application/json', 'x-request-id': requestId };
        const list: string[] = [];
        for (const name in headers) list.push(name, String(headers[name]));
        list.push('Host', '127.0.0.1:4101');
        http.request({ ...target, headers: list }).end();
      },
    },
    'metrics (one request, kept as is)': {
      before: () => {
        tick = (tick + 1) % 100;
        metrics.record(routed, 200, tick / 10_000);
        recordUpstreamCall('issuer', tick / 20_000, undefined, 200);
      },
      after: () => {
        tick = (tick + 1) % 100;
        metrics.record(routed, 200, tick / 10_000);
        recordUpstreamCall('issuer', tick / 20_000, undefined, 200);
      },
    },
  };
}

function main(): void {
  const { values } = parseArgs({ options: { iterations: { type: 'string' }, rounds: { type: 'string' } } });
  const iterations = Number(values.iterations ?? 200_000);
  const rounds = Number(values.rounds ?? 5);
  for (const [name, piece] of Object.entries(pieces())) {
    const before: number[] = [];
    const after: number[] = [];
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        before.push(perCall(piece.before, iterations));
        after.push(perCall(piece.after, iterations));
      } else {
        after.push(perCall(piece.after, iterations));
        before.push(perCall(piece.before, iterations));
      }
    }
    const b = median(before);
    const a = median(after);
    process.stdout.write(`${name}: before ${b.toFixed(2)} µs, after ${a.toFixed(2)} µs, saved ${(b - a).toFixed(2)} µs per request (medians of ${rounds} rounds of ${iterations.toLocaleString('en')})\n`);
  }
}

main();
