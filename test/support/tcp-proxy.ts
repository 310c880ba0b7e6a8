import net from 'node:net';

/** A loopback TCP forwarder a test can cut and restore, to make a dependency unreachable. */
export interface TcpProxy {
  port: number;
  /** Closes the listener and destroys every open connection (the dependency "goes down"). */
  cut(): Promise<void>;
  /** Listens again on the same port (the dependency "comes back"). */
  restore(): Promise<void>;
  close(): Promise<void>;
  /**
   * PostgreSQL only: holds back everything the server sends on connections that issued `LISTEN`
   * (notifications stop arriving, and so do that connection's query answers), until
   * {@link resumeListeners}. Other connections flow as before.
   */
  stallListeners(): void;
  resumeListeners(): void;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  listens: boolean;
  stalled: boolean;
}

/** Forwards 127.0.0.1:<port> to `target`, a TCP address or a Unix socket path. */
export async function startTcpProxy(target: { host: string; port: number } | { path: string }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const pairs = new Set<Pair>();
  let stalling = false;
  const stall = (pair: Pair) => {
    if (pair.stalled) return;
    pair.stalled = true;
    pair.upstream.unpipe(pair.client);
    pair.upstream.pause();
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    const pair: Pair = { client, upstream, listens: false, stalled: false };
    pairs.add(pair);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => {
      if (!pair.listens && chunk.includes('LISTEN ')) {
        pair.listens = true;
        if (stalling) stall(pair);
      }
    });
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      pairs.clear();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return {
    port,
    cut: stop,
    restore: () => listen(port),
    close: stop,
    stallListeners() {
      stalling = true;
      for (const pair of pairs) if (pair.listens) stall(pair);
    },
    resumeListeners() {
      stalling = false;
      for (const pair of pairs) {
        if (!pair.stalled) continue;
        pair.stalled = false;
        pair.upstream.pipe(pair.client);
        pair.upstream.resume();
      }
    },
  };
}
