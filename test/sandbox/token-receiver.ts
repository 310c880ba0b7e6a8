// A stand-in for the gateway's notification listener that answers the processor's questions of
// docs/upstreams.md section 10 (tokenization and verification requests) with answers a test sets,
// for the processing sandbox's token tests, over real HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureVerifies } from '../support/signatures';

/** One request the receiver got, and whether its signature matched its secret. */
export interface Got {
  path: string;
  /** `Upstream-Notification-Id`. */
  id: string | undefined;
  body: { id: string; type: string; [field: string]: unknown };
  raw: string;
  signed: boolean;
  at: number;
}

/** How the receiver answers one kind of question: a 200 with a body, another status with a body, or never (`hang`). */
export type Answer = { status?: number; body: unknown } | 'hang';

export class TokenReceiver {
  /** Notifications (`/upstream-notifications/processing`), in the order received. */
  readonly notifications: Got[] = [];
  readonly tokenizations: Got[] = [];
  readonly verifications: Got[] = [];
  readonly authorizations: Got[] = [];
  tokenizationAnswer: Answer = { body: { decision: 'approve' } };
  verificationAnswer: Answer = { body: { verified: true } };
  authorizationAnswer: Answer = { body: { approved: true } };
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      // The processor signs as the gateway signs its deliveries (t=, v1= HMAC of "t.body").
      const signed = signatureVerifies(req.headers['upstream-signature'] as string | undefined, raw, [this.secret]);
      const got: Got = { path: req.url ?? '', id: req.headers['upstream-notification-id'] as string | undefined, body: JSON.parse(raw), raw, signed, at: Date.now() };
      const path = got.path;
      const question =
        path === '/upstream-notifications/processing/tokenizations/verifications' ? ([this.verifications, this.verificationAnswer] as const)
        : path === '/upstream-notifications/processing/tokenizations' ? ([this.tokenizations, this.tokenizationAnswer] as const)
        : path === '/upstream-notifications/processing/authorizations' ? ([this.authorizations, this.authorizationAnswer] as const)
        : undefined;
      if (!question) {
        this.notifications.push(got);
        res.statusCode = signed ? 200 : 401;
        res.end('{}');
        return;
      }
      const [list, answer] = question;
      list.push(got);
      if (answer === 'hang') return;
      res.statusCode = signed ? (answer.status ?? 200) : 401;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer.body));
    });
  });

  constructor(readonly secret: string) {}

  async up(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Forgets what was received and restores the default answers. */
  reset(): void {
    this.notifications.length = 0;
    this.tokenizations.length = 0;
    this.verifications.length = 0;
    this.authorizations.length = 0;
    this.tokenizationAnswer = { body: { decision: 'approve' } };
    this.verificationAnswer = { body: { verified: true } };
    this.authorizationAnswer = { body: { approved: true } };
  }

  /** The notifications about one token, in the order received. */
  notificationsOf(tokenReference: string): Got[] {
    return this.notifications.filter((n) => (n.body.token as { tokenReference?: string } | undefined)?.tokenReference === tokenReference);
  }

  /** Resolves once `count` notifications match, polling (no fixed sleep); rejects after `ms`. */
  async waitForNotifications(match: (g: Got) => boolean, count = 1, ms = 5000): Promise<Got[]> {
    const until = Date.now() + ms;
    for (;;) {
      const found = this.notifications.filter(match);
      if (found.length >= count) return found;
      if (Date.now() > until) throw new Error(`${found.length} of ${count} matching notifications within ${ms} ms: ${JSON.stringify(this.notifications.map((n) => [n.body.type, n.id]))}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
