// A stand-in for the gateway's notification listener (docs/upstreams.md, section 9), for the sandbox tests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureVerifies } from '../support/signatures';

/** One notification a receiver got, and whether its signature matched the secret the receiver expects. */
export interface Received {
  path: string;
  id: string | undefined;
  body: { id: string; type: string; [field: string]: unknown };
  /** The body as sent. */
  raw: string;
  signed: boolean;
}

/**
 * A stand-in for the gateway's notification listener: checks `Upstream-Signature` against `secret`
 * (its own HMAC, not the sandbox's helper) and answers 200 when it matches, 401 otherwise, or
 * `forced` when set.
 */
export class Receiver {
  readonly received: Received[] = [];
  forced: number | undefined;
  /** Authorization requests received (not notifications). */
  readonly asked: Received[] = [];
  /** The answer to an authorization request: a body, or `hang` (never answered). */
  decision: Record<string, unknown> | 'hang' = { approved: true };
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      // The processor signs as the gateway signs its deliveries (t=, v1= HMAC of "t.body").
      const signed = signatureVerifies(req.headers['upstream-signature'] as string | undefined, raw, [this.secret]);
      const received = { path: req.url ?? '', id: req.headers['upstream-notification-id'] as string | undefined, body: JSON.parse(raw), raw, signed };
      if (received.path.endsWith('/authorizations')) {
        // The processor's authorization request (docs/upstreams.md 6.10): answered with `decision`.
        this.asked.push(received);
        if (this.decision === 'hang') return;
        res.statusCode = signed ? 200 : 401;
        res.end(JSON.stringify(this.decision));
        return;
      }
      this.received.push(received);
      res.statusCode = this.forced ?? (signed ? 200 : 401);
      res.end('{}');
    });
  });

  constructor(public secret: string) {}

  async up(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves once a received notification matches, polling (no fixed sleep); rejects after `ms`. */
  async waitFor(match: (r: Received) => boolean, ms = 5000): Promise<Received> {
    const until = Date.now() + ms;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no matching notification within ${ms} ms: ${JSON.stringify(this.received.map((r) => [r.path, r.id, r.signed]))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
