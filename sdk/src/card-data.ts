/**
 * Card data the gateway only ever sends or takes encrypted (docs/cards.md): the CVV and the card
 * number come back under a one-off RSA key of yours (RSA-OAEP, SHA-256), and a PIN goes to the
 * issuer under its published PIN key (RSA-OAEP-256). Nothing here is ever logged.
 */
import crypto, { type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { PinEncryptionKey } from './types';

const generateKeyPair = promisify(crypto.generateKeyPair);

/** A one-off RSA-2048 key: its public half to send as `securityKey`, and a decrypter of the answer. */
export interface OneOffKey {
  /** base64 of the public key's SPKI DER, the `securityKey` query parameter. */
  securityKey: string;
  /** Decrypts a base64 RSA-OAEP (SHA-256) ciphertext the gateway answered. */
  decrypt(ciphertextBase64: string): string;
}

/** Makes a one-off RSA-2048 key for one reveal: use it once, then drop it. */
export async function oneOffRevealKey(): Promise<OneOffKey> {
  const { publicKey, privateKey } = await generateKeyPair('rsa', { modulusLength: 2048 });
  return {
    securityKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    decrypt: (ciphertextBase64) => decryptOaep(privateKey, ciphertextBase64),
  };
}

function decryptOaep(privateKey: KeyObject, ciphertextBase64: string): string {
  return crypto.privateDecrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(ciphertextBase64, 'base64')).toString('utf8');
}

/**
 * The PIN encrypted under the issuer's PIN key (RSA-OAEP with SHA-256), base64: the `pin` of
 * `cards.changePin`. The PIN is 4 to 12 digits.
 */
export function encryptPin(pin: string, pinKey: Pick<PinEncryptionKey, 'publicKey' | 'algorithm'>): string {
  if (!/^\d{4,12}$/.test(pin)) throw new TypeError('a PIN is 4 to 12 digits');
  if (pinKey.algorithm !== 'RSA-OAEP-256') throw new TypeError(`the PIN key's algorithm is ${pinKey.algorithm}, not RSA-OAEP-256`);
  return crypto.publicEncrypt({ key: pinKey.publicKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(pin, 'utf8')).toString('base64');
}
