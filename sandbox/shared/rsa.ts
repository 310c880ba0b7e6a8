import {
  constants,
  createHash,
  createPublicKey,
  generateKeyPairSync,
  privateDecrypt,
  publicEncrypt,
  type KeyObject,
} from 'node:crypto';
import { upstreamError, type SandboxError } from './sandbox-error';

/** The smallest RSA modulus the issuer accepts for a partner's security key. */
export const MIN_SECURITY_KEY_BITS = 2048;

const BASE64_PATTERN = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Parses a partner's `securityKey`: base64 (or base64url) of an RSA public key in SPKI DER form
 * of at least 2048 bits. Throws 400 `INVALID_SECURITY_KEY` otherwise.
 */
export function parseSecurityKey(encoded: string): KeyObject {
  // A '+' sent unencoded in a query string arrives as a space; undo that instead of failing.
  const normalized = encoded.trim().replace(/ /g, '+');
  const invalid = (why: string): SandboxError => upstreamError('INVALID_SECURITY_KEY', `securityKey ${why}`);
  if (normalized.length === 0 || !BASE64_PATTERN.test(normalized)) throw invalid('is not base64');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(normalized, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw invalid('is not an SPKI DER public key');
  }
  if (key.asymmetricKeyType !== 'rsa') throw invalid('is not an RSA key');
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_SECURITY_KEY_BITS) throw invalid(`has ${bits} bits; at least ${MIN_SECURITY_KEY_BITS} are required`);
  return key;
}

/** RSA-OAEP with SHA-256 (hash and MGF1), the scheme of every encrypted card secret. */
export function encryptOaepSha256(key: KeyObject, plaintext: string): string {
  return publicEncrypt(
    { key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    Buffer.from(plaintext, 'utf8'),
  ).toString('base64');
}

/** The issuer's PIN encryption key pair; PIN blocks are RSA-OAEP-256 ciphertexts under it. */
export interface PinEncryptionKey {
  keyId: string;
  algorithm: 'RSA-OAEP-256';
  publicKeyPem: string;
  /** The plaintext of a base64 PIN block, or `null` when it does not decrypt. */
  decrypt(pinBlock: string): string | null;
}

let processPinKey: PinEncryptionKey | undefined;

/**
 * The PIN encryption key of this process, generated (RSA-2048) on first use and then reused,
 * so a gateway that cached the public key keeps working across `POST /__sandbox/reset`.
 */
export function pinEncryptionKey(): PinEncryptionKey {
  if (processPinKey) return processPinKey;
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  processPinKey = {
    keyId: 'pin-' + createHash('sha256').update(spki).digest('hex').slice(0, 16),
    algorithm: 'RSA-OAEP-256',
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    decrypt(pinBlock: string): string | null {
      const normalized = pinBlock.trim().replace(/ /g, '+');
      if (!BASE64_PATTERN.test(normalized)) return null;
      try {
        return privateDecrypt(
          { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
          Buffer.from(normalized, 'base64'),
        ).toString('utf8');
      } catch {
        return null;
      }
    },
  };
  return processPinKey;
}
