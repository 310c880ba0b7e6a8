/**
 * A standalone Partner Gateway webhook receiver (docs/webhooks.md). It imports nothing from the
 * gateway: copy it into your own service.
 *
 *   PORT=4000 WEBHOOK_SECRET=whsec_… node dist/examples/webhook-receiver.js
 *
 * It verifies `Partner-Gateway-Signature` against the raw body (any `v1=` with any of your secrets,
 * so it keeps working through a rotation), refuses a `t` older than 5 minutes (a replayed
 * delivery), drops repeats by event id, and answers 2xx quickly: anything else is retried.
 */
import crypto from 'node:crypto';
import http from 'node:http';

/** Whether `header` signs `rawBody` with one of `secrets`, with a `t` at most `toleranceSeconds` old. */
export function verifyWebhook(header: string | undefined, rawBody: string, secrets: readonly string[], toleranceSeconds = 300, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  const parts = header.split(',').map((part) => part.trim());
  const t = Number(parts.find((part) => part.startsWith('t='))?.slice(2));
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const signatures = parts.filter((part) => part.startsWith('v1=')).map((part) => Buffer.from(part.slice(3), 'hex'));
  return secrets.some((secret) => {
    const expected = crypto.createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
    return signatures.some((given) => given.length === expected.length && crypto.timingSafeEqual(given, expected));
  });
}

/** A request handler that verifies each delivery, then hands the event to `onEvent` once per event id. */
export function createWebhookReceiver(options: { secrets: readonly string[]; toleranceSeconds?: number; onEvent: (event: { id: string; type: string; data: unknown }) => void }): http.RequestListener {
  const seen = new Set<string>();
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // Verify the bytes as received: parsing and re-serializing would change them.
      const raw = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || !verifyWebhook(req.headers['partner-gateway-signature'] as string | undefined, raw, options.secrets, options.toleranceSeconds ?? 300)) {
        res.writeHead(400).end();
        return;
      }
      const event = JSON.parse(raw) as { id: string; type: string; data: unknown };
      // At least once: the same event may arrive again (same id); act on it once.
      if (!seen.has(event.id)) {
        seen.add(event.id);
        options.onEvent(event);
      }
      res.writeHead(204).end();
    });
  };
}

if (require.main === module) {
  const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').filter(Boolean);
  if (secrets.length === 0) throw new Error('set WEBHOOK_SECRET (comma-separated during a rotation)');
  const port = Number(process.env.PORT ?? 4000);
  http
    .createServer(createWebhookReceiver({ secrets, onEvent: (event) => console.log(`${event.type} ${event.id}`) }))
    .listen(port, () => console.log(`webhook receiver on http://localhost:${port}`));
}
