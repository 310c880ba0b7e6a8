/**
 * `npm run bench:hot-path-pieces [-- --iterations 200000] [--rounds 5]`
 *
 * The pieces of the hot path one by one, in this process, without HTTP: each piece's other way
 * (kept here as the reference) beside the way the gateway takes, rounds alternating, medians
 * of CPU time per operation (`process.cpuUsage`). The HTTP rounds of `npm run bench:hot-path` see
 * S1 as a whole (~350 µs on this machine) and swing by ±5 % or more while other work loads the
 * machine; a piece worth a few µs shows here. docs/performance.md ("The hot path") quotes it.
 *
 * - access-log line: the line's object through pino (its logMethod hook, the formatter's deep
 *   scrub, `JSON.stringify`), against the template (`templatedLines` + `accessLogFields`);
 * - partner gone: an `AbortController` per request and its signal's listener, removed on the
 *   upstream request's 'close', against the proxy's `PartnerGone` (the listeners on the two
 *   emitters standing for the partner's response and the upstream request are in both);
 * - upstream request head: `http.request` with a header object (a `setHeader` per header, Node
 *   adding Host) against the flat list with the prebuilt Host, built and ended on an agent that
 *   never connects;
 * - answer headers: S1's answer as the gateway writes it (a `setHeader` per header: the request
 *   context's three, the rate limit's two, the proxy's `Cache-Control`, `sendJson`'s two, then
 *   `end`), against the one `writeHead` with the route's prebuilt list a single writer of the
 *   answer's headers would make (not adopted: docs/performance.md, "The hot path"); the same head bytes, on a
 *   `ServerResponse` without a socket;
 * - metrics: what one request's observations cost (`http_requests_total`,
 *   `http_request_duration_seconds`, `upstream_request_duration_seconds`), against the floor a
 *   metric type of our own could reach (a count, a sum and a bucket array per series, kept in
 *   plain numbers and read at scrape time; not built: docs/performance.md, "The hot path").
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

/** A `ServerResponse` to a keep-alive GET, without a socket: its head is built, its bytes kept. */
function response(): http.ServerResponse {
  const req = new http.IncomingMessage(null as unknown as import('node:net').Socket);
  req.method = 'GET';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const res = new http.ServerResponse(req);
  res.shouldKeepAlive = true;
  return res;
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
  // The floor of a metric of our own: per series a count, a sum and cumulative-at-scrape bucket counts.
  const bounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  interface PlainHistogram {
    count: number;
    sum: number;
    buckets: Float64Array;
  }
  const plainHistogram = (): PlainHistogram => ({ count: 0, sum: 0, buckets: new Float64Array(bounds.length + 1) });
  const observePlain = (h: PlainHistogram, value: number): void => {
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    h.buckets[i]! += 1;
    h.count += 1;
    h.sum += value;
  };
  const plainSeries = new Map([['get-card-status', { count200: 0, duration: plainHistogram() }]]);
  const plainUpstream = plainHistogram();

  const statusBody = '{"cardId":"CK12345678","status":"ACTIVE","statusCode":"00","updatedAt":"2026-11-27T12:00:00.000Z"}';
  const rateLimitPolicy = '"get-card-status";q=600;w=60';
  const rateLimit = '"get-card-status";r=599;t=60';

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
    'answer headers (S1)': {
      before: () => {
        const answer = response();
        answer.setHeader('X-Request-Id', requestId);
        answer.setHeader('X-Content-Type-Options', 'nosniff');
        answer.setHeader('Cache-Control', 'no-store');
        answer.setHeader('RateLimit-Policy', rateLimitPolicy);
        answer.setHeader('RateLimit', rateLimit);
        answer.setHeader('Cache-Control', 'no-store');
        answer.statusCode = 200;
        answer.setHeader('Content-Type', 'application/json; charset=utf-8');
        answer.setHeader('Content-Length', Buffer.byteLength(statusBody));
        answer.end(statusBody);
      },
      after: () => {
        const answer = response();
        answer.writeHead(200, [
          'X-Request-Id', requestId,
          'X-Content-Type-Options', 'nosniff',
          'Cache-Control', 'no-store',
          'RateLimit-Policy', rateLimitPolicy,
          'RateLimit', rateLimit,
          'Content-Type', 'application/json; charset=utf-8',
          'Content-Length', String(Buffer.byteLength(statusBody)),
        ]);
        answer.end(statusBody);
      },
    },
    'metrics (one request; after: plain accumulators)': {
      before: () => {
        tick = (tick + 1) % 100;
        metrics.record(routed, 200, tick / 10_000);
        recordUpstreamCall('issuer', tick / 20_000, undefined, 200);
      },
      after: () => {
        tick = (tick + 1) % 100;
        const route = plainSeries.get(routed.apiEndpointName!)!;
        route.count200 += 1;
        observePlain(route.duration, tick / 10_000);
        observePlain(plainUpstream, tick / 20_000);
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
