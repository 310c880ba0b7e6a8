/**
 * A standalone Partner Gateway decision endpoint (docs/authorization-endpoint.md). It imports
 * nothing from the gateway, only node:http and node:crypto: copy it into your own service.
 *
 *   PORT=4100 AUTHORIZATION_SECRET=whsec_… MAX_AMOUNT=50000 node dist/examples/authorization-endpoint.js
 *
 * For each `authorization.request` the gateway POSTs, it verifies `Partner-Gateway-Signature`
 * against the raw body (any `v1=` with any of your secrets, so it keeps working through a
 * rotation; a `t` more than 5 minutes away is refused), then decides with one simple rule: decline
 * above `MAX_AMOUNT` (minor units of the card's currency), approve otherwise. It answers at once:
 * past the endpoint's `timeoutMs` the gateway applies your `defaultDecision` instead.
 */
import crypto from 'node:crypto';
import http from 'node:http';

/** Whether `header` signs `rawBody` with one of `secrets`, with a `t` at most `toleranceSeconds` away. */
export function verifyAuthorizationRequest(header: string | undefined, rawBody: string, secrets: readonly string[], toleranceSeconds = 300, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
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

/** The part of an `authorization.request` this example reads. */
export interface AuthorizationRequest {
  id: string;
  type: 'authorization.request';
  partnerId: string;
  data: {
    authorization: { id: string; amount: number; currency: string; type: string; merchant: { name: string; mcc: string; city?: string | null; country: string } };
    card: { cardKey: string; status: string; currency: string };
  };
}

/** The answer: `{approved: true}` or `{approved: false, declineReason}`. */
export type Decision = { approved: true } | { approved: false; declineReason: string };

/** The example's rule: decline above `maxAmount`. */
export function decide(request: AuthorizationRequest, maxAmount: number): Decision {
  if (request.data.authorization.amount > maxAmount) return { approved: false, declineReason: 'amount_over_limit' };
  return { approved: true };
}

/** A request handler that verifies each request, then answers the example's decision (400 to anything unsigned or not an `authorization.request`). */
export function createDecisionEndpoint(options: { secrets: readonly string[]; maxAmount: number; onDecision?: (request: AuthorizationRequest, decision: Decision) => void }): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // A request is a few KiB: refuse anything far larger.
      if (size > 64 * 1024) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      // Verify the bytes as received: parsing and re-serializing would change them.
      const raw = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || !verifyAuthorizationRequest(req.headers['partner-gateway-signature'] as string | undefined, raw, options.secrets)) {
        res.writeHead(400).end();
        return;
      }
      const request = JSON.parse(raw) as AuthorizationRequest;
      if (request.type !== 'authorization.request') {
        res.writeHead(400).end();
        return;
      }
      const decision = decide(request, options.maxAmount);
      options.onDecision?.(request, decision);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(decision));
    });
  };
}

if (require.main === module) {
  const secrets = (process.env.AUTHORIZATION_SECRET ?? '').split(',').filter(Boolean);
  if (secrets.length === 0) throw new Error('set AUTHORIZATION_SECRET (comma-separated during a rotation)');
  const port = Number(process.env.PORT ?? 4100);
  const maxAmount = Number(process.env.MAX_AMOUNT ?? 50_000);
  const server = http.createServer(
    createDecisionEndpoint({
      secrets,
      maxAmount,
      onDecision: (request, decision) => console.log(`${request.data.authorization.id} ${request.data.authorization.amount} ${request.data.authorization.currency}: ${decision.approved ? 'approved' : `declined (${decision.declineReason})`}`),
    })
  );
  // Longer than the gateway's idle keep-alive (4 s), so that it closes idle connections first.
  server.keepAliveTimeout = 10_000;
  server.listen(port, () => console.log(`decision endpoint on http://localhost:${(server.address() as { port: number }).port}`));
}
