import net from 'node:net';

/** A loopback TCP forwarder a test can cut, stall and restore, to make a dependency unreachable. */
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
  /**
   * The link stalls as a network that holds packets does: from the first chunk the client sends
   * that contains one of `markers` (that chunk included), nothing crosses in either direction, on
   * any connection, new ones included (they connect, and what they send is held), until
   * {@link release}; nothing is lost. Resolves with that chunk when it was seen, that is when the
   * link stalled.
   */
  stallOn(markers: string | string[]): Promise<Buffer>;
  /** Stalls the link now, as {@link stallOn} does when its marker passes. */
  stall(): void;
  /** Lets everything held go on, in order, and forwards as before. */
  release(): void;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  listens: boolean;
  /** What the client sent while the link was stalled, not yet forwarded. */
  toUpstream: Buffer[];
  /** What the server sent while the link (or this listener connection) was stalled. */
  toClient: Buffer[];
}

/** Forwards 127.0.0.1:<port> to `target`, a TCP address or a Unix socket path. */
export async function startTcpProxy(target: { host: string; port: number } | { path: string }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const pairs = new Set<Pair>();
  let stallingListeners = false;
  let linkStalled = false;
  let armed: { markers: Buffer[]; stalled: (chunk: Buffer) => void } | undefined;
  const flush = (pair: Pair) => {
    if (linkStalled) return;
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
    if (pair.listens && stallingListeners) return;
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
  };
  const stallLink = (chunk?: Buffer) => {
    linkStalled = true;
    const { stalled } = armed ?? {};
    armed = undefined;
    stalled?.(chunk ?? Buffer.alloc(0));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    const pair: Pair = { client, upstream, listens: false, toUpstream: [], toClient: [] };
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
      if (!pair.listens && chunk.includes('LISTEN ')) pair.listens = true;
      if (armed?.markers.some((marker) => chunk.includes(marker))) stallLink(chunk);
      if (linkStalled || pair.toUpstream.length > 0) pair.toUpstream.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (linkStalled || (pair.listens && stallingListeners) || pair.toClient.length > 0) pair.toClient.push(chunk);
      else client.write(chunk);
    });
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
    close: async () => {
      linkStalled = false;
      armed = undefined;
      await stop();
    },
    stallListeners() {
      stallingListeners = true;
    },
    resumeListeners() {
      stallingListeners = false;
      for (const pair of pairs) flush(pair);
    },
    stallOn(markers: string | string[]) {
      return new Promise<Buffer>((resolve) => {
        armed = { markers: (Array.isArray(markers) ? markers : [markers]).map((m) => Buffer.from(m)), stalled: resolve };
      });
    },
    stall: () => stallLink(),
    release() {
      linkStalled = false;
      armed = undefined;
      for (const pair of pairs) flush(pair);
    },
  };
}
