/**
 * Run by test/sdk/packed-sdk.test.ts in an empty folder where only the packed SDK and its own
 * dependencies are installed: it imports nothing but `@partner-gateway/sdk` and Node's built-ins,
 * as a partner's program would, and prints one JSON line of what it saw.
 *
 * Environment: BASE_URL, PARTNER_ID, PARTNER_ISSUER, PARTNER_KID, PARTNER_KEY_FILE.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import {
  PartnerGateway,
  SignatureVerificationError,
  approve,
  decisionAnswer,
  tokenizationAnswer,
  verifyAuthorizationRequest,
  verifyStandardTokenizationRequest,
  verifyTokenizationRequest,
  verifyWebhook,
  type WebhookEvent,
} from '@partner-gateway/sdk';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

/** MM/YYYY, three years from now. */
function expiry(): string {
  const now = new Date();
  return `${String(now.getUTCMonth() + 1).padStart(2, '0')}/${now.getUTCFullYear() + 3}`;
}

function luhn(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

async function main() {
  // What went over the wire, seen through the client's fetch option.
  const lockAttempts: { idempotencyKey: string | undefined; replayed?: string | null }[] = [];
  const cardPages: string[] = [];
  const tokenPages: string[] = [];
  const tokensPath = `${new URL(env('BASE_URL')).pathname.replace(/\/+$/, '')}/tokens`;
  let dropNextLockAnswer = true;
  const observingFetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const headers = (init?.headers ?? {}) as Record<string, string>;
    if (url.pathname.endsWith('/lock')) {
      const response = await fetch(input, init);
      lockAttempts.push({ idempotencyKey: headers['idempotency-key'], replayed: response.headers.get('idempotent-replayed') });
      if (dropNextLockAnswer) {
        // The gateway locked the card, but its answer is lost on the way: the SDK sees a network error.
        dropNextLockAnswer = false;
        await response.arrayBuffer();
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      }
      return response;
    }
    if (init?.method === 'GET' && url.pathname.endsWith('/cards')) cardPages.push(url.search);
    if (init?.method === 'GET' && url.pathname === tokensPath) tokenPages.push(url.search);
    return fetch(input, init);
  };

  const client = new PartnerGateway({
    partnerId: env('PARTNER_ID'),
    issuer: env('PARTNER_ISSUER'),
    kid: env('PARTNER_KID'),
    privateKey: fs.readFileSync(env('PARTNER_KEY_FILE'), 'utf8'),
    baseUrl: env('BASE_URL'),
    fetch: observingFetch,
    retry: { baseDelayMs: 50 },
  });

  // One local server is both the webhook receiver and the decision endpoint.
  let webhookSecret = '';
  let decisionSecret = '';
  const webhooks: WebhookEvent[] = [];
  const refused: string[] = [];
  const decisions: string[] = [];
  const tokenizations: { tokenId: string; walletProvider: string; bothSchemes: boolean }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      try {
        // One endpoint for both kinds of request, told apart by their type header; the verifier checks the signed body's type.
        if (req.url === '/decide' && req.headers['partner-gateway-event-type'] === 'tokenization.request') {
          const request = verifyTokenizationRequest(raw, req.headers['partner-gateway-signature'], [decisionSecret]);
          const bothSchemes = verifyStandardTokenizationRequest(raw, req.headers, [decisionSecret]).id === request.id;
          tokenizations.push({ tokenId: request.data.tokenization.tokenId, walletProvider: request.data.tokenization.walletProvider, bothSchemes });
          const answer = tokenizationAnswer({ decision: 'approve' });
          res.writeHead(answer.status, answer.headers).end(answer.body);
          return;
        }
        if (req.url === '/decide') {
          const request = verifyAuthorizationRequest(raw, req.headers['partner-gateway-signature'], [decisionSecret]);
          decisions.push(request.data.authorization.id);
          const answer = decisionAnswer(approve());
          res.writeHead(answer.status, answer.headers).end(answer.body);
          return;
        }
        webhooks.push(verifyWebhook(raw, req.headers['partner-gateway-signature'], [webhookSecret]));
        // The same delivery with one byte changed does not verify.
        try {
          verifyWebhook(Buffer.concat([raw, Buffer.from(' ')]), req.headers['partner-gateway-signature'], [webhookSecret]);
        } catch (err) {
          if (err instanceof SignatureVerificationError) refused.push(err.reason);
        }
        res.writeHead(204).end();
      } catch (err) {
        refused.push(err instanceof SignatureVerificationError ? err.reason : String(err));
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const local = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  try {
    const me = await client.me();
    const endpoint = await client.webhookEndpoints.create({ url: `${local}/hooks`, events: ['card.status_changed'] });
    webhookSecret = endpoint.secret;
    const decider = await client.authorizationEndpoint.create({ url: `${local}/decide`, timeoutMs: 1500, requestTypes: ['authorization.request', 'tokenization.request'] });
    decisionSecret = decider.secret;

    const individual = await client.individuals.create({
      firstName: 'Grace',
      lastName: 'Hopper',
      middleName: 'Brewster',
      country: 'GB',
      city: 'London',
      zipCode: 'SW1Y 4LE',
      buildingNumber: '12',
      address1: 'St James Square',
      idType: 'PASSPORT',
      passportNumber: 'P7654321',
      issuingDate: '2020-01-15',
      validityDate: '2030-01-14',
      passportCountry: 'GB',
      birthCountry: 'GB',
      birthDate: '1990-12-09',
      nationality: 'GB',
      phone: '+447700900124',
      email: 'grace@example.com',
    });
    if (!individual.clientID) throw new Error('no clientID');
    const expDate = expiry();
    const card = await client.individuals.issueVirtualCard(individual._id, { expDate, clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD' });

    const { cvv } = await client.cards.revealCvv(card.cardKey, { expDate });
    const { cardNumber } = await client.cards.revealPan(card.cardKey, { expDate });
    // A PIN block under the issuer's published key (the sandbox issuer does not change PINs yet:
    // docs/cards.md), as long as the key's modulus.
    const pinKey = await client.cards.getPinEncryptionKey();
    const pinBlock = await client.cards.encryptPin('4921');
    const authorization = await client.simulate.cardAuthorization(card.cardKey, { amount: 9.99, merchant: { name: 'Packed Shop', mcc: '5411', country: 'GB' } });

    // The card into the wallets while it is ACTIVE: push provisioning to each, then the
    // tokenizations the wallets would ask for (the decision endpoint above approves them), then its
    // tokens, by the card and by the paged search.
    const applePay = await client.cards.provisionApplePay(card.cardKey, {
      certificates: [crypto.randomBytes(300).toString('base64')],
      nonce: crypto.randomBytes(16).toString('base64'),
      nonceSignature: crypto.randomBytes(70).toString('base64'),
    });
    const googlePay = await client.cards.provisionGooglePay(card.cardKey, { walletAccountId: 'packed-wallet-account', deviceId: 'packed-device' });
    const appleToken = await client.simulate.cardTokenization(card.cardKey, { walletProvider: 'apple_pay', device: { type: 'phone', name: 'Grace’s iPhone', ipCountry: 'GB' } });
    const googleToken = await client.simulate.cardTokenization(card.cardKey, { walletProvider: 'google_pay' });
    const cardTokens = await client.cards.listTokens(card.cardKey);
    const listedTokens: string[] = [];
    for await (const token of client.tokens.list({ cardKey: card.cardKey, limit: 1 })) listedTokens.push(token._id);

    const locked = await client.cards.lock(card.cardKey, { expDate, reason: 'packed SDK' });

    const seen = new Set<string>();
    let active = 0;
    for await (const item of client.cards.list({ status: 'ACTIVE', limit: 50 })) {
      seen.add(item.cardKey);
      if (item.status === 'ACTIVE') active += 1;
    }

    const deadline = Date.now() + 20_000;
    while (!webhooks.some((e) => e.type === 'card.status_changed' && e.data.cardKey === card.cardKey) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const event = webhooks.find((e) => e.type === 'card.status_changed' && e.data.cardKey === card.cardKey);

    process.stdout.write(
      `${JSON.stringify({
        partnerId: me.partner._id,
        individualId: individual._id,
        cardKey: card.cardKey,
        cvvDigits: /^\d{3}$/.test(cvv) ? 3 : 0,
        // Never the number itself: its length, whether it is Luhn-valid, and whether its last four are the mask's.
        pan: { digits: cardNumber.length, luhn: luhn(cardNumber), matchesMask: card.cardMask.replace(/\s/g, '').slice(-4) === cardNumber.slice(-4) },
        pinBlock: { bytes: Buffer.from(pinBlock, 'base64').length, algorithm: pinKey.algorithm },
        authorization: { id: authorization._id, status: authorization.status, decidedBy: authorization.authorization?.decidedBy, asked: decisions.length },
        // The wallets' payloads: their members and sizes, never their bytes.
        provisioning: {
          applePay: { keys: Object.keys(applePay).sort(), activationDataBytes: Buffer.from(applePay.activationData, 'base64').length },
          googlePay: { keys: Object.keys(googlePay).sort(), opaquePaymentCardBytes: Buffer.from(googlePay.opaquePaymentCard, 'base64url').length },
        },
        tokens: {
          made: [appleToken, googleToken].map((t) => ({ id: t._id, cardKey: t.cardKey, walletProvider: t.walletProvider, status: t.status, by: t.history[0]?.by })),
          asked: tokenizations,
          ofCard: cardTokens.data.map((t) => t._id),
          listed: listedTokens,
          pages: tokenPages,
        },
        lock: { status: locked.status, attempts: lockAttempts },
        cards: { unique: seen.size, active, pages: cardPages },
        webhook: event ? { id: event.id, type: event.type, status: event.type === 'card.status_changed' ? event.data.status : null } : null,
        refused,
      })}\n`
    );
  } finally {
    server.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`packed SDK script failed: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n`);
  process.exit(1);
});
