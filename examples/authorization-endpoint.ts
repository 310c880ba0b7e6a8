/**
 * A standalone Partner Gateway decision endpoint (docs/authorization-endpoint.md), on the partner
 * SDK (`npm install @partner-gateway/sdk`, docs/sdk.md) and node:http: copy it into your own service.
 *
 *   PORT=4100 AUTHORIZATION_SECRET=whsec_… MAX_AMOUNT=500 node dist/examples/authorization-endpoint.js
 *
 * For each `authorization.request` the gateway POSTs, `verifyAuthorizationRequest` checks
 * `Partner-Gateway-Signature` against the raw body (any `v1=` with any of your secrets, so it keeps
 * working through a rotation; a `t` more than 5 minutes away is refused), then the endpoint decides
 * with one simple rule: decline above `MAX_AMOUNT` (in the card's currency, as the request's amount: 12.5 is 12.50), approve
 * otherwise. It answers at once: past the endpoint's `timeoutMs` the gateway applies your
 * `defaultDecision` instead.
 */
import http from 'node:http';
import { approve, decisionAnswer, decline, SignatureVerificationError, verifyAuthorizationRequest, type AuthorizationDecision, type AuthorizationRequest } from '@partner-gateway/sdk';

/** The example's rule: decline above `maxAmount`. */
export function decide(request: AuthorizationRequest, maxAmount: number): AuthorizationDecision {
  return request.data.authorization.amount > maxAmount ? decline('amount_over_limit') : approve();
}

/** A request handler that verifies each request, then answers the example's decision (400 to anything unsigned or not an `authorization.request`). */
export function createDecisionEndpoint(options: { secrets: readonly string[]; maxAmount: number; onDecision?: (request: AuthorizationRequest, decision: AuthorizationDecision) => void }): http.RequestListener {
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
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      let request: AuthorizationRequest;
      try {
        // The bytes as received: parsing and re-serializing would change them.
        request = verifyAuthorizationRequest(Buffer.concat(chunks), req.headers['partner-gateway-signature'], options.secrets);
      } catch (err) {
        if (!(err instanceof SignatureVerificationError)) throw err;
        res.writeHead(400).end();
        return;
      }
      const decision = decide(request, options.maxAmount);
      options.onDecision?.(request, decision);
      const answer = decisionAnswer(decision);
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  };
}

if (require.main === module) {
  const secrets = (process.env.AUTHORIZATION_SECRET ?? '').split(',').filter(Boolean);
  if (secrets.length === 0) throw new Error('set AUTHORIZATION_SECRET (comma-separated during a rotation)');
  const port = Number(process.env.PORT ?? 4100);
  const maxAmount = Number(process.env.MAX_AMOUNT ?? 500);
  const server = http.createServer(
    createDecisionEndpoint({
      secrets,
      maxAmount,
      onDecision: (request, decision) =>
        console.log(`${request.data.authorization.id} ${request.data.authorization.amount} ${request.data.authorization.currency}: ${decision.approved ? 'approved' : `declined (${decision.declineReason})`}`),
    })
  );
  // Longer than the gateway's idle keep-alive (4 s), so that it closes idle connections first.
  server.keepAliveTimeout = 10_000;
  server.listen(port, () => console.log(`decision endpoint on http://localhost:${(server.address() as { port: number }).port}`));
}
