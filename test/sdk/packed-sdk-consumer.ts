/**
 * A partner's TypeScript, type-checked by test/sdk/packed-sdk.test.ts against the packed SDK as
 * installed: its dist/*.d.ts, found through its package.json (`exports`, `types`), with `module`
 * and `moduleResolution` node16 and `strict`, copied there as consumer.ts (CommonJS) and
 * consumer.mts (an ES module). It is never run. The project's build checks it too, against
 * sdk/src. Each `@ts-expect-error` marks a mistake the typings must refuse: were a type `any`,
 * the unused directive would be an error of its own.
 */
import {
  PartnerGateway,
  PartnerGatewayError,
  SignatureVerificationError,
  tokenizationAnswer,
  verifyStandardTokenizationRequest,
  verifyTokenizationRequest,
  verifyWebhook,
  type CardListItem,
  type DecisionAnswer,
  type PartnerGatewayErrorCode,
  type Token,
  type TokenizationDecision,
  type TokenizationRequest,
  type WebhookEvent,
} from '@partner-gateway/sdk';

export async function lockAndList(privateKeyPem: string): Promise<string[]> {
  const client = new PartnerGateway({ partnerId: '65f1a2b3c4d5e6f708192a00', issuer: 'https://acme.example', privateKey: privateKeyPem, kid: 'key-1' });
  const locked = await client.cards.lock('CK1', { expDate: '12/2030', reason: 'lost' }, { idempotencyKey: 'lock-CK1-1' });
  const seen: string[] = [locked.status];
  // @ts-expect-error expDate is required
  await client.cards.lock('CK1', { reason: 'lost' });
  // @ts-expect-error the lock takes no such field
  await client.cards.lock('CK1', { expDate: '12/2030', colour: 'red' });

  const controller = new AbortController();
  for await (const card of client.cards.list({ status: 'ACTIVE', limit: 100 }, { signal: controller.signal, retry: { maxRetries: 1 } })) {
    const item: CardListItem = card;
    seen.push(item.cardKey);
    // @ts-expect-error a card of the list carries no CVV
    seen.push(card.cvv);
  }
  // @ts-expect-error not a status of the list's query
  client.cards.list({ status: 'FROZEN' });

  try {
    await client.me();
  } catch (err) {
    if (err instanceof PartnerGatewayError) {
      const code: PartnerGatewayErrorCode = err.code;
      seen.push(code, String(err.status), err.requestId ?? '');
    }
  }
  return seen;
}

export function receive(rawBody: string | Uint8Array, signature: string | undefined, secrets: string[]): string {
  let event: WebhookEvent;
  try {
    event = verifyWebhook(rawBody, signature, secrets, { toleranceSeconds: 300 });
  } catch (err) {
    if (err instanceof SignatureVerificationError && err.reason === 'unknown_event_type') return 'acknowledged';
    throw err;
  }
  if (event.type === 'card.status_changed') {
    // Narrowed by its type: the data of a status change.
    const status: 'ACTIVE' | 'LOCKED' | 'CLOSED' | 'LOST' | 'STOLEN' | 'FRAUD' | 'MOBILE_LOST' | 'RESTRICTED' | 'TEMP_LOCKED' = event.data.status;
    return `${event.id} ${event.data.cardKey} ${status}`;
  }
  // @ts-expect-error not narrowed: the other events' data has no previousStatus
  return String(event.data.previousStatus);
}

export async function wallets(client: PartnerGateway, cardKey: string): Promise<string[]> {
  const apple = await client.cards.provisionApplePay(cardKey, { certificates: ['MIIB'.repeat(30)], nonce: 'q7l3Bw==', nonceSignature: 'A'.repeat(24) });
  const seen: string[] = [apple.activationData, apple.encryptedPassData, apple.ephemeralPublicKey];
  // @ts-expect-error the Apple Pay body needs its nonce
  await client.cards.provisionApplePay(cardKey, { certificates: ['MIIB'], nonceSignature: 'A'.repeat(24) });
  const google = await client.cards.provisionGooglePay(cardKey, { walletAccountId: 'wallet-account-1', deviceId: 'device-1' });
  seen.push(google.opaquePaymentCard);
  // @ts-expect-error a Google Pay answer has no Apple Pay member
  seen.push(google.activationData);

  const made: Token = await client.simulate.cardTokenization(cardKey, { walletProvider: 'apple_pay', device: { type: 'phone', name: 'Ada’s iPhone' }, networkVerdict: 'require_verification' });
  // @ts-expect-error not a wallet
  await client.simulate.cardTokenization(cardKey, { walletProvider: 'paypal' });
  for (const token of (await client.cards.listTokens(cardKey)).data) seen.push(token._id, token.status);
  for await (const token of client.tokens.list({ cardKey, status: 'active', walletProvider: 'google_pay', limit: 10 })) {
    const status: 'requested' | 'pending_verification' | 'active' | 'suspended' | 'deactivated' | 'declined' = token.status;
    seen.push(status, token.suspendedBy ?? 'not suspended');
  }
  // @ts-expect-error not a token status
  client.tokens.list({ status: 'frozen' });
  const suspended = await client.tokens.suspend(made._id, { reason: 'phone lost' }, { idempotencyKey: `suspend-${made._id}` });
  seen.push(suspended.status, (await client.tokens.get(made._id)).cardKey);
  // @ts-expect-error the reason is a string
  await client.tokens.deactivate(made._id, { reason: 42 });

  // The signer, and its deprecated place beside the token methods.
  seen.push(await client.signer.token(), await client.tokens.token());
  client.tokens.invalidate();
  return seen;
}

export function decideTokenization(rawBody: string | Uint8Array, headers: Record<string, string | string[] | undefined>, secrets: string[]): DecisionAnswer {
  const request: TokenizationRequest = verifyTokenizationRequest(rawBody, headers['partner-gateway-signature'], secrets, { toleranceSeconds: 300 });
  const same = verifyStandardTokenizationRequest(rawBody, headers, secrets);
  // @ts-expect-error a tokenization request carries no authorization
  void request.data.authorization;
  const verdict: 'approve' | 'require_verification' | 'decline' = request.data.tokenization.networkVerdict.decision;
  if (verdict === 'decline') return tokenizationAnswer({ decision: 'decline', declineReason: 'network_declined' });
  // @ts-expect-error a purchase's answer is not a tokenization's
  tokenizationAnswer({ approved: true });
  // @ts-expect-error a reason goes with a decline only
  const approvedWithReason: TokenizationDecision = { decision: 'approve', declineReason: 'x' };
  void approvedWithReason;
  return tokenizationAnswer(same.data.tokenization.device.name === undefined ? { decision: 'require_verification' } : { decision: 'approve' });
}
