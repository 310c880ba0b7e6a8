import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { METRICS_PATH } from './paths';

/** Where the scrape proxy listens and where the admin API is. */
export interface ScrapeProxyOptions {
  /** Port for Prometheus (default 9464); 0 picks a free one. */
  port: number;
  /** Interface for Prometheus (default 0.0.0.0: the pod IP). */
  host: string;
  /** The admin API: ADMIN_PORT on loopback, as the gateway container listens. */
  adminPort: number;
  adminHost: string;
  /** Longest wait for the admin API's answer (default 10 s). */
  timeoutMs?: number;
}

/** A running scrape proxy. */
export interface ScrapeProxy {
  port: number;
  close(): Promise<void>;
}

/**
 * A sidecar for Kubernetes: the admin API stays on loopback (the policy audit refuses an
 * ADMIN_HOST beyond it), and Prometheus, outside the pod, reaches `GET /admin/metrics` and nothing
 * else through this proxy. The caller's `Authorization` header is passed on unchanged: the admin
 * token is still required, and a token captured here cannot reach the partner or key routes.
 * Any other method or path is answered 404 without contacting the admin API.
 *
 * @example node dist/gateway/metrics/scrape-proxy.js --port 9464   # ADMIN_PORT from the environment
 */
export function startScrapeProxy(options: ScrapeProxyOptions): Promise<ScrapeProxy> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const server = http.createServer(function forwardScrape(req, res) {
    if (req.method !== 'GET' || req.url !== METRICS_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`only GET ${METRICS_PATH} is served here\n`);
      return;
    }
    const headers: http.OutgoingHttpHeaders = { accept: req.headers.accept ?? 'text/plain' };
    if (req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
    const upstream = http.request({ host: options.adminHost, port: options.adminPort, method: 'GET', path: METRICS_PATH, headers, timeout: timeoutMs }, (answer) => {
      const forwarded: http.OutgoingHttpHeaders = {};
      for (const name of ['content-type', 'cache-control', 'www-authenticate', 'x-request-id']) {
        if (answer.headers[name] !== undefined) forwarded[name] = answer.headers[name];
      }
      res.writeHead(answer.statusCode ?? 502, forwarded);
      answer.pipe(res);
    });
    upstream.on('timeout', () => upstream.destroy(new Error('admin API timeout')));
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end('the gateway admin API did not answer\n');
    });
    upstream.end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '9464' }, host: { type: 'string', default: '0.0.0.0' } } });
  const port = Number(values.port);
  const adminPort = Number(process.env.ADMIN_PORT || 9876);
  const adminHost = process.env.ADMIN_HOST || '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(adminPort)) throw new Error('ports must be integers from 0 to 65535');
  // The gateway binds 0.0.0.0 as "every interface": reach it on loopback.
  const proxy = await startScrapeProxy({ port, host: values.host!, adminPort, adminHost: adminHost === '0.0.0.0' ? '127.0.0.1' : adminHost });
  process.stdout.write(`${JSON.stringify({ level: 'info', msg: 'scrape proxy ready', port: proxy.port, adminPort })}\n`);
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`scrape-proxy: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
