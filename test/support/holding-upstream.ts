import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A call held by {@link HoldingUpstream.hold}. */
export interface Hold {
  /** Resolves once the upstream has answered the call (it has done the work: only the answer waits). */
  arrived: Promise<void>;
  /** Lets the upstream's answer go to the caller (at once if it is already there, or when it comes). */
  release(): void;
}

/**
 * A real HTTP server between the gateway and an upstream that forwards every call at once and
 * holds back the answer of the calls a test names, until the test releases it: an upstream that is
 * slow for exactly as long as the test needs its call to be in flight (a fixed delay is too short
 * on a loaded machine and too long everywhere else).
 */
export interface HoldingUpstream {
  url: string;
  /**
   * Holds the answer of the next call with this method and exact path (without the query string);
   * later calls pass. An answer never released is dropped on {@link close}.
   */
  hold(method: string, path: string): Hold;
  /** Drops the holds no call has met yet and lets every held answer go (between tests). */
  clear(): void;
  close(): Promise<void>;
}

interface PendingHold {
  method: string;
  path: string;
  arrived: () => void;
  released: Promise<void>;
}

export async function startHoldingUpstream(target: string): Promise<HoldingUpstream> {
  const targetUrl = new URL(target);
  const sockets = new Set<Socket>();
  const agent = new http.Agent({ keepAlive: true });
  let pending: PendingHold[] = [];
  let releases: (() => void)[] = [];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = (req.url ?? '/').split('?')[0];
      const held = pending.find((h) => h.method === method && h.path === path);
      if (held) pending = pending.filter((h) => h !== held);
      const upstream = http.request(
        { hostname: targetUrl.hostname, port: targetUrl.port, method, path: req.url, headers: { ...req.headers, host: targetUrl.host }, agent },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            const body = Buffer.concat(parts);
            const headers = { ...answer.headers, 'content-length': String(body.length) };
            delete headers['transfer-encoding'];
            const answerNow = () => {
              res.writeHead(answer.statusCode ?? 502, headers);
              res.end(body);
            };
            if (held) {
              held.arrived();
              void held.released.then(answerNow);
            } else answerNow();
          });
        }
      );
      upstream.on('error', () => res.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold(method, path) {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      pending.push({ method: method.toUpperCase(), path, arrived, released });
      releases.push(release);
      return { arrived: arrival, release };
    },
    clear() {
      pending = [];
      for (const release of releases) release();
      releases = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        pending = [];
        releases = [];
        agent.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
