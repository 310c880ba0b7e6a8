import crypto from 'node:crypto';
import { expect } from 'chai';
import { api, cardBody, individualBody, sandboxControl } from './api';
import type { Gateway } from './gateway-process';
import type { TestPartner } from './partners';
import { recordSecret } from './secrets';
import { rsaSecurityKey } from './keys';

/** What a card-route test needs: an individual, a virtual and a physical card, a securityKey and a PIN block. */
export interface CardFixture {
  ada: any;
  virtualCard: any;
  physicalCard: any;
  /** Base64 SPKI of a fresh RSA-2048 key, for the CVV/PAN reveals. */
  securityKey: string;
  /** The PIN 4921 encrypted under the issuer's PIN key (RSA-OAEP-256). */
  pinBlock: string;
}

/**
 * Onboards an individual for `partner`, issues it a virtual and a physical card, and makes a
 * securityKey and a PIN block under the key of the issuer at `issuerUrl` (all recorded as secrets
 * for the run's log scan).
 */
export async function cardFixture(gateway: Gateway, partner: TestPartner, issuerUrl: string): Promise<CardFixture> {
  const ada = await setUpCreate(gateway, partner, '/individual/accounts', individualBody());
  const issue = (type: 'virtual' | 'physical') => setUpCreate(gateway, partner, `/individual/accounts/${ada._id}/cards/${type}`, cardBody(ada.clientID));
  const virtualCard = await issue('virtual');
  const physicalCard = await issue('physical');
  const securityKey = rsaSecurityKey();
  recordSecret('securityKey', securityKey);
  const pinKey = await sandboxControl(issuerUrl, 'GET', '/pin-encryption-key');
  const pinBlock = crypto.publicEncrypt({ key: pinKey.publicKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('4921')).toString('base64');
  recordSecret('pinBlock', pinBlock);
  return { ada, virtualCard, physicalCard, securityKey, pinBlock };
}

/**
 * A set-up write, sent as a partner's client would on a loaded machine: with an Idempotency-Key,
 * retried with the same key while the answer is a 5xx (a fault file's short UPSTREAM_TIMEOUT_MS can
 * expire under load) or 409 `idempotency_in_progress`, so the set-up makes one resource and its
 * test starts from it; anything else than 201 fails the set-up with the answer.
 */
async function setUpCreate(gateway: Gateway, partner: TestPartner, path: string, body: unknown): Promise<any> {
  const key = `setup-${crypto.randomUUID()}`;
  for (let attempt = 1; ; attempt++) {
    const created = await api(gateway, partner, 'POST', path, { body, headers: { 'idempotency-key': key } });
    const retryable = created.status >= 500 || created.body?.code === 'idempotency_in_progress';
    if (created.status === 201 || !retryable || attempt === 5) {
      expect(created.status, `set-up POST ${path} (attempt ${attempt}): ${JSON.stringify(created.body)}`).to.equal(201);
      return created.body;
    }
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}
