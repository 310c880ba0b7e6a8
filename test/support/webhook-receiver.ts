import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  raw: string;
  event: any;
}

/** How the receiver answers the next requests. */
export type Behaviour =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; times: number }
  | { kind: 'hang' }
  | { kind: 'slow'; ms: number }
  /** Answers every request with this status, body and headers (a decision endpoint's answer), after `delayMs`. */
  | { kind: 'respond'; status: number; body: string | Buffer; headers?: Record<string, string>; delayMs?: number };

/**
 * A real HTTP receiver on 127.0.0.1 for the webhook and decision-endpoint tests: records every
 * request (raw body and headers), answers as told (`ok`, a status some times, `hang`, `slow`, a
 * given answer), and can go down and come back up on the same port.
 */
export class TestReceiver {
  readonly received: Received[] = [];
  behaviour: Behaviour = { kind: 'ok' };
  private server: http.Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();
  private waiters: (() => void)[] = [];
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async up(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        this.received.push({ at: Date.now(), headers: req.headers, raw, event: JSON.parse(raw) });
        for (const wake of this.waiters.splice(0)) wake();
        const b = this.behaviour;
        if (b.kind === 'hang') return;
        if (b.kind === 'status' && b.times > 0) {
          b.times--;
          res.writeHead(b.status).end();
          return;
        }
        if (b.kind === 'respond') {
          const send = () => res.writeHead(b.status, b.headers ?? { 'Content-Type': 'application/json' }).end(b.body);
          if (b.delayMs) setTimeout(send, b.delayMs);
          else send();
          return;
        }
        if (b.kind === 'slow') {
          setTimeout(() => res.writeHead(200).end('ok'), b.ms);
          return;
        }
        res.writeHead(200).end('ok');
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Closes the port: deliveries fail with connection errors until `up()`. */
  async down(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** Resolves once `predicate` holds for what was received (checked at each arrival), or rejects after `ms`. */
  async waitFor(predicate: (received: Received[]) => boolean, ms = 20_000, what = 'deliveries'): Promise<Received[]> {
    const deadline = Date.now() + ms;
    while (!predicate(this.received)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; received ${this.received.length}: ${this.received.map((r) => r.event.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received;
  }

  async close(): Promise<void> {
    if (this.server?.listening) await this.down();
  }
}
