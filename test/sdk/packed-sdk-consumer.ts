/**
 * A partner's TypeScript, type-checked by test/sdk/packed-sdk.test.ts against the packed SDK as
 * installed: its dist/*.d.ts, found through its package.json (`exports`, `types`), with `module`
 * and `moduleResolution` node16 and `strict`, copied there as consumer.ts (CommonJS) and
 * consumer.mts (an ES module). It is never run. The project's build checks it too, against
 * sdk/src. Each `@ts-expect-error` marks a mistake the typings must refuse: were a type `any`,
 * the unused directive would be an error of its own.
 */
import { PartnerGateway, PartnerGatewayError, SignatureVerificationError, verifyWebhook, type CardListItem, type PartnerGatewayErrorCode, type WebhookEvent } from '@partner-gateway/sdk';

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
