import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One upstream call as the tampering proxy saw it. */
export interface TamperedCall {
  method: string;
  /** Path without the query string. */
  path: string;
}

/** A rule of the tampering proxy: which calls it applies to and what it does to them. */
export interface Tamper {
  method?: string;
  /** Exact path, or a prefix when it ends in `*`. */
  path: string;
  /** Answer this instead of forwarding (the real upstream never sees the call). */
  answer?: { status: number; body: unknown };
  /** Forward, then replace the upstream's JSON answer (2xx only) by what this returns. */
  rewrite?: (body: any) => unknown;
  /** Forward at once (the upstream does the work now), then hold its answer back this many ms: a slow upstream. */
  delayMs?: number;
}

/** A call held by {@link TamperingUpstream.hold}. */
export interface Hold {
  /** Resolves once the upstream has answered the call (it has done the work: only the answer waits). */
  arrived: Promise<void>;
  /** Lets the upstream's answer go to the caller (at once if it is already there, or when it comes). */
  release(): void;
}

/**
 * A real HTTP server standing between the gateway and a sandbox upstream, playing a hostile or
 * broken upstream: calls matching a rule are answered by the rule (or forwarded and their JSON
 * answer rewritten); everything else is forwarded unchanged. Rules apply until {@link clear}.
 */
export interface TamperingUpstream {
  url: string;
  tampers: Tamper[];
  /** Calls a rule applied to, oldest first. */
  tampered: TamperedCall[];
  /**
   * Holds the answer of the next call with this method and exact path (without the query string)
   * until the test releases it; later calls pass. An upstream slow for exactly as long as the test
   * needs its call in flight (a fixed delay is too short on a loaded machine and too long elsewhere).
   */
  hold(method: string, path: string): Hold;
  /** Drops the rules, the record and the holds no call has met yet, and lets every held answer go. */
  clear(): void;
  close(): Promise<void>;
}

interface PendingHold {
  method: string;
  path: string;
  arrived: () => void;
  released: Promise<void>;
}

function matches(tamper: Tamper, method: string, path: string): boolean {
  if (tamper.method && tamper.method.toUpperCase() !== method) return false;
  return tamper.path.endsWith('*') ? path.startsWith(tamper.path.slice(0, -1)) : tamper.path === path;
}

export async function startTamperingUpstream(target: string): Promise<TamperingUpstream> {
  const targetUrl = new URL(target);
  const sockets = new Set<Socket>();
  const agent = new http.Agent({ keepAlive: true });
  let holds: PendingHold[] = [];
  let releases: (() => void)[] = [];
  const proxy: TamperingUpstream = {
    url: '',
    tampers: [],
    tampered: [],
    hold(method, path) {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ method: method.toUpperCase(), path, arrived, released });
      releases.push(release);
      return { arrived: arrival, release };
    },
    clear() {
      proxy.tampers = [];
      proxy.tampered = [];
      holds = [];
      for (const release of releases) release();
      releases = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        holds = [];
        releases = [];
        agent.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = (req.url ?? '/').split('?')[0];
      const tamper = proxy.tampers.find((t) => matches(t, method, path));
      if (tamper) proxy.tampered.push({ method, path });
      const held = holds.find((h) => h.method === method && h.path === path);
      if (held) holds = holds.filter((h) => h !== held);
      if (tamper?.answer) {
        res.writeHead(tamper.answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(tamper.answer.body));
        return;
      }
      const headers = { ...req.headers, host: targetUrl.host };
      const upstream = http.request(
        { hostname: targetUrl.hostname, port: targetUrl.port, method, path: req.url, headers, agent },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            let body = Buffer.concat(parts);
            const status = answer.statusCode ?? 502;
            if (tamper?.rewrite && status >= 200 && status < 300) body = Buffer.from(JSON.stringify(tamper.rewrite(JSON.parse(body.toString('utf8')))));
            const outHeaders = { ...answer.headers, 'content-length': String(body.length) };
            delete outHeaders['transfer-encoding'];
            const answerNow = () => {
              res.writeHead(status, outHeaders);
              res.end(body);
            };
            if (held) {
              held.arrived();
              void held.released.then(answerNow);
            } else if (tamper?.delayMs) setTimeout(answerNow, tamper.delayMs).unref();
            else answerNow();
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
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
