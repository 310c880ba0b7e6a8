/**
 * A standalone Partner Gateway decision endpoint (docs/authorization-endpoint.md, docs/tokens.md),
 * on the partner SDK (`npm install @partner-gateway/sdk`, docs/sdk.md) and node:http: copy it into
 * your own service.
 *
 *   PORT=4100 AUTHORIZATION_SECRET=whsec_… MAX_AMOUNT=500 DEVICE_COUNTRIES=PT,ES node dist/examples/authorization-endpoint.js
 *
 * It answers both requests the gateway POSTs, told apart by their `Partner-Gateway-Event-Type`
 * header; each verifier checks `Partner-Gateway-Signature` against the raw body (any `v1=` with any
 * of your secrets, so it keeps working through a rotation; a `t` more than 5 minutes away is
 * refused) and the signed body's own `type`, so a request sent with another type header is refused:
 * - `authorization.request` (`verifyAuthorizationRequest`): decline above `MAX_AMOUNT` (in the
 *   card's currency, as the request's amount: 12.5 is 12.50), approve otherwise;
 * - `tokenization.request` (`verifyTokenizationRequest`, once the endpoint is enrolled for it):
 *   decline what the network declined, ask for the cardholder's one-time code when the network asks
 *   for it or when a wallet's device is outside `DEVICE_COUNTRIES` (a device with no country
 *   included; unset: any country), approve otherwise.
 * It answers at once: past the endpoint's `timeoutMs` the gateway applies your `defaultDecision` to
 * a purchase, and `require_verification` (or the network's decline) to a tokenization.
 */
import http from 'node:http';
import {
  approve,
  decisionAnswer,
  decline,
  SignatureVerificationError,
  tokenizationAnswer,
  verifyAuthorizationRequest,
  verifyTokenizationRequest,
  type AuthorizationDecision,
  type AuthorizationRequest,
  type DecisionAnswer,
  type TokenizationDecision,
  type TokenizationRequest,
} from '@partner-gateway/sdk';

/** The example's rule for purchases: decline above `maxAmount`. */
export function decide(request: AuthorizationRequest, maxAmount: number): AuthorizationDecision {
  return request.data.authorization.amount > maxAmount ? decline('amount_over_limit') : approve();
}

/**
 * The example's rule for tokenizations: the network's decline is declined, its request for a code
 * is followed, and a wallet's device outside `deviceCountries` (when given) needs the code too; a
 * merchant's token (no device country) follows the network.
 */
export function decideTokenization(request: TokenizationRequest, deviceCountries: readonly string[]): TokenizationDecision {
  const { networkVerdict, walletProvider, device } = request.data.tokenization;
  if (networkVerdict.decision === 'decline') return { decision: 'decline', declineReason: 'network_declined' };
  if (networkVerdict.decision === 'require_verification') return { decision: 'require_verification' };
  const outside = deviceCountries.length > 0 && walletProvider !== 'merchant' && !(device.ipCountry !== undefined && deviceCountries.includes(device.ipCountry));
  return outside ? { decision: 'require_verification' } : { decision: 'approve' };
}

/** What the endpoint does with a request. */
export interface DecisionEndpointOptions {
  secrets: readonly string[];
  maxAmount: number;
  /** ISO 3166-1 alpha-2 codes of the countries whose wallet devices are approved without a code; empty: any. */
  deviceCountries?: readonly string[];
  onDecision?: (request: AuthorizationRequest, decision: AuthorizationDecision) => void;
  onTokenizationDecision?: (request: TokenizationRequest, decision: TokenizationDecision) => void;
}

/** A request handler that verifies each request, then answers the example's decision (400 to anything unsigned or of another type). */
export function createDecisionEndpoint(options: DecisionEndpointOptions): http.RequestListener {
  const answerOf = (rawBody: Buffer, headers: http.IncomingHttpHeaders): DecisionAnswer => {
    // The bytes as received: parsing and re-serializing would change them.
    if (headers['partner-gateway-event-type'] === 'tokenization.request') {
      const request = verifyTokenizationRequest(rawBody, headers['partner-gateway-signature'], options.secrets);
      const decision = decideTokenization(request, options.deviceCountries ?? []);
      options.onTokenizationDecision?.(request, decision);
      return tokenizationAnswer(decision);
    }
    const request = verifyAuthorizationRequest(rawBody, headers['partner-gateway-signature'], options.secrets);
    const decision = decide(request, options.maxAmount);
    options.onDecision?.(request, decision);
    return decisionAnswer(decision);
  };
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
      let answer: DecisionAnswer;
      try {
        answer = answerOf(Buffer.concat(chunks), req.headers);
      } catch (err) {
        if (!(err instanceof SignatureVerificationError)) throw err;
        res.writeHead(400).end();
        return;
      }
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  };
}

if (require.main === module) {
  const secrets = (process.env.AUTHORIZATION_SECRET ?? '').split(',').filter(Boolean);
  if (secrets.length === 0) throw new Error('set AUTHORIZATION_SECRET (comma-separated during a rotation)');
  const port = Number(process.env.PORT ?? 4100);
  const maxAmount = Number(process.env.MAX_AMOUNT ?? 500);
  const deviceCountries = (process.env.DEVICE_COUNTRIES ?? '').split(',').map((code) => code.trim().toUpperCase()).filter(Boolean);
  const server = http.createServer(
    createDecisionEndpoint({
      secrets,
      maxAmount,
      deviceCountries,
      onDecision: (request, decision) =>
        console.log(`${request.data.authorization.id} ${request.data.authorization.amount} ${request.data.authorization.currency}: ${decision.approved ? 'approved' : `declined (${decision.declineReason})`}`),
      onTokenizationDecision: (request, decision) => {
        const { tokenId, walletProvider, device } = request.data.tokenization;
        console.log(`${tokenId} ${walletProvider} ${device.ipCountry ?? '-'}: ${decision.decision === 'decline' ? `decline (${decision.declineReason})` : decision.decision}`);
      },
    })
  );
  // Longer than the gateway's idle keep-alive (4 s), so that it closes idle connections first.
  server.keepAliveTimeout = 10_000;
  server.listen(port, () => console.log(`decision endpoint on http://localhost:${(server.address() as { port: number }).port}`));
}
