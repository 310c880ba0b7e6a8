import crypto, { type KeyObject } from 'node:crypto';
// jose's subpath modules, not its index (which loads every JWE/JWT/JWKS module: about 25 ms of CPU a start).
import { calculateJwkThumbprint } from 'jose/jwk/thumbprint';
import { exportJWK } from 'jose/key/export';

/** Why a submitted partner key was refused. */
export class PublicKeyError extends Error {}

/**
 * Parses the PEM of a partner's public key and insists on an EC key on P-521 (secp521r1), the only
 * curve ES512 uses. A PEM holding a private key is refused outright: the operator must never
 * receive it, and we must not derive and store its public half silently.
 */
export function parsePartnerPublicKey(pem: unknown): KeyObject {
  if (typeof pem !== 'string' || pem.length > 10_000) throw new PublicKeyError('publicKey must be a PEM string');
  if (/PRIVATE KEY/.test(pem)) throw new PublicKeyError('publicKey holds a private key: send only the public key');
  let key: KeyObject;
  try {
    key = crypto.createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new PublicKeyError('publicKey is not a valid PEM public key');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
    throw new PublicKeyError('publicKey must be an EC public key on curve P-521 (secp521r1) for ES512');
  }
  return key;
}

/** The RFC 7638 JWK thumbprint of a key: the default `kid` of a partner key. */
export async function keyThumbprint(key: KeyObject): Promise<string> {
  return calculateJwkThumbprint(await exportJWK(key), 'sha256');
}

/** The canonical SPKI PEM of a key (what we store, whatever formatting the operator sent). */
export function toSpkiPem(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'pem' }).toString();
}
