/**
 * A standalone Partner Gateway webhook receiver (docs/webhooks.md), on the partner SDK
 * (`npm install @partner-gateway/sdk`, docs/sdk.md) and node:http: copy it into your own service.
 *
 *   PORT=4000 WEBHOOK_SECRET=whsec_… node dist/examples/webhook-receiver.js
 *
 * `verifyWebhook` checks `Partner-Gateway-Signature` against the raw body (any `v1=` with any of
 * your secrets, so it keeps working through a rotation: set WEBHOOK_SECRET to both, comma-separated)
 * and refuses a `t` more than 5 minutes away (a replayed delivery). The receiver drops repeats by
 * event id and answers 2xx quickly: anything else is retried.
 */
import http from 'node:http';
import { SignatureVerificationError, verifyWebhook, type WebhookEvent } from '@partner-gateway/sdk';

/** A request handler that verifies each delivery, then hands the event to `onEvent` once per event id. */
export function createWebhookReceiver(options: { secrets: readonly string[]; toleranceSeconds?: number; onEvent: (event: WebhookEvent) => void }): http.RequestListener {
  const seen = new Set<string>();
  return (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // An event is a few KiB: refuse anything far larger.
      if (size > 256 * 1024) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      let event: WebhookEvent;
      try {
        // The bytes as received: parsing and re-serializing would change them.
        event = verifyWebhook(Buffer.concat(chunks), req.headers['partner-gateway-signature'], options.secrets, { toleranceSeconds: options.toleranceSeconds ?? 300 });
      } catch (err) {
        if (!(err instanceof SignatureVerificationError)) throw err;
        // Signed, but of a type added to the gateway after this SDK: acknowledged, not acted on.
        res.writeHead(err.reason === 'unknown_event_type' ? 204 : 400).end();
        return;
      }
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
  const server = http.createServer(createWebhookReceiver({ secrets, onEvent: (event) => console.log(`${event.type} ${event.id}`) }));
  server.listen(port, () => console.log(`webhook receiver on http://localhost:${(server.address() as { port: number }).port}`));
}
