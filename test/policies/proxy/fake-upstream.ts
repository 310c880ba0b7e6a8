import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the fake upstream received it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Which connection carried it (1, 2, ...): proves keep-alive reuse. */
  connection: number;
  /** How many requests that connection had carried before this one. */
  previousOnConnection: number;
}

/** What the fake upstream does with a request. */
export type Behaviour =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; body: string | Buffer; headers?: Record<string, string> }
  | { kind: 'hang' }
  /** 200 with content-length 4096, a few bytes, then the socket is destroyed. */
  | { kind: 'reset' }
  /** Destroys the connection without answering when it already carried a request (a stale keep-alive socket). */
  | { kind: 'stale-then'; then: Behaviour };

/**
 * A tiny real HTTP server on 127.0.0.1:0 standing in for an upstream in policy tests (no global
 * interception as nock does). `behave` decides per request; `seen` records everything.
 */
export interface FakeUpstream {
  url: string;
  seen: SeenRequest[];
  behave: (req: SeenRequest) => Behaviour;
  /** Open connections right now. */
  openConnections(): number;
  /** Whether the connection of that id (`SeenRequest.connection`) is still open. */
  isOpen(connection: number): boolean;
  close(): Promise<void>;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const sockets = new Set<Socket>();
  const connectionIds = new WeakMap<Socket, { id: number; served: number }>();
  const openIds = new Set<number>();
  let connections = 0;
  const fake: FakeUpstream = {
    url: '',
    seen: [],
    behave: () => ({ kind: 'json', body: {} }),
    openConnections: () => sockets.size,
    isOpen: (connection) => openIds.has(connection),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const info = connectionIds.get(req.socket)!;
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        connection: info.id,
        previousOnConnection: info.served,
      };
      info.served += 1;
      fake.seen.push(seen);
      let behaviour = fake.behave(seen);
      if (behaviour.kind === 'stale-then') {
        if (seen.previousOnConnection > 0) {
          req.socket.destroy();
          return;
        }
        behaviour = behaviour.then;
      }
      switch (behaviour.kind) {
        case 'json':
          res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json', ...behaviour.headers });
          res.end(JSON.stringify(behaviour.body));
          return;
        case 'raw':
          res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json', ...behaviour.headers });
          res.end(behaviour.body);
          return;
        case 'hang':
          return;
        case 'reset':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
          res.write('{"cvv": "partial answer, then');
          setTimeout(() => req.socket.destroy(), 20);
          return;
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket: Socket) => {
    connections += 1;
    const id = connections;
    connectionIds.set(socket, { id, served: 0 });
    openIds.add(id);
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      openIds.delete(id);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** A URL on which nothing listens (a port bound, then released). */
export async function refusedUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
