/**
 * The loopback partner decision endpoint of the authorization and tokenization phases
 * (bench/authorizations.ts, bench/tokenizations.ts), in a process of its own: a node:http server
 * answering an `authorization.request` `{"approved":true}` and a `tokenization.request`
 * `{"decision":"approve"}` at once. Apart from the
 * open-loop client, so that neither queues behind the other's work (docs/performance.md, "Authorization decisions"):
 * the partner's latency the gateway records is then the HTTP exchange and this process's
 * scheduling, not the load generator's event loop. `GET /hang?on=1` makes it hang (read each
 * request, never answer: the deadline stage), `?on=0` answer again. Announces `{"port": n}` on stdout;
 * `GET /handling?from=i` answers its own handling times (request event to answer written, ms) from
 * the i-th call on, with each call's authorization or tokenization id. With BENCH_AUTHORIZATION_TRACE_DIR, each call's request event and answer
 * (epoch ms) by authorization id go to endpoint.jsonl there at `GET /flush`.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { traceNow } from '../gateway/authorizations/decision-trace';

const TRACE_DIR = process.env.BENCH_AUTHORIZATION_TRACE_DIR;
const handling: number[] = [];
/** The authorization (or tokenization) id of each call, in the order of `handling`. */
const ids: string[] = [];
const traced: string[] = [];
const answer = Buffer.from('{"approved":true}');
const tokenizationAnswer = Buffer.from('{"decision":"approve"}');

/** The request's kind and the id it is about (the authorization's or the tokenization's). */
type DecisionRequest = { type: 'authorization.request'; data: { authorization: { id: string } } } | { type: 'tokenization.request'; data: { tokenization: { id: string } } };
let hanging = false;

const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/flush' && TRACE_DIR) {
      if (traced.length > 0) fs.appendFileSync(path.join(TRACE_DIR, 'endpoint.jsonl'), `${traced.join('\n')}\n`);
      traced.length = 0;
    }
    if (url.pathname === '/hang') hanging = url.searchParams.get('on') === '1';
    const from = Number(url.searchParams.get('from') ?? 0);
    const all = url.pathname === '/handling';
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls: handling.length, handling: all ? handling.slice(from) : [], ids: all ? ids.slice(from) : [] }));
    return;
  }
  const started = performance.now();
  const requestAt = TRACE_DIR ? traceNow() : 0;
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (hanging) return;
    const request = JSON.parse(Buffer.concat(chunks).toString()) as DecisionRequest;
    const body = request.type === 'tokenization.request' ? tokenizationAnswer : answer;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    handling.push(performance.now() - started);
    const id = request.type === 'tokenization.request' ? request.data.tokenization.id : request.data.authorization.id;
    ids.push(id);
    if (TRACE_DIR) traced.push(JSON.stringify({ id, request: requestAt, written: traceNow() }));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
