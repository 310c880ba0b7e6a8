// Baseline (b): the smallest useful Node reverse proxy, http.request over a keep-alive agent.
// TARGET=http://host:port node dist/bench/baselines/bare-proxy.js → prints {"port": N}.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const target = new URL(process.env.TARGET ?? 'http://127.0.0.1:8081');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const server = http.createServer((req, res) => {
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
    (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
      upstreamRes.pipe(res);
    }
  );
  upstream.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
process.once('SIGTERM', () => process.exit(0));
