import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { SandboxName } from './sandbox-app';

/** A sandbox listening on a real port. */
export interface RunningSandbox {
  name: SandboxName;
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  url: string;
  server: http.Server;
  /** Stops listening and destroys every open socket, including hanging requests. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `listener` on `host:port` (port 0 = a free port) and resolves once it listens.
 * Sockets are tracked so that {@link RunningSandbox.close} never waits on keep-alive or
 * deliberately hanging connections.
 */
export function listenSandbox(
  name: SandboxName,
  listener: http.RequestListener,
  host: string,
  port: number,
): Promise<RunningSandbox> {
  // Idle keep-alive connections stay open longer than any client's own idle timeout (the gateway's
  // agents close theirs after 4 s, undici's after 4 s), so a client never reuses a socket at the
  // moment the sandbox closes it ("other side closed" / ECONNRESET on a new request).
  const server = http.createServer({ keepAliveTimeout: 65_000 }, listener);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
    });
    return closing;
  };
  return new Promise<RunningSandbox>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({ name, url: `http://${urlHost}:${address.port}`, server, close });
    });
  });
}
