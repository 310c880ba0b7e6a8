import crypto, { type KeyObject } from 'node:crypto';

const rsaPairs = new Map<string, { publicKey: KeyObject; privateKey: KeyObject }>();

/**
 * An RSA key pair for a test that needs some RSA key (a partner's `securityKey`, a token signed
 * with a refused algorithm, a key the sandbox never issued), made once per test process and size
 * and then reused: one RSA-2048 generation costs about 200 ms of CPU on the suite's 2-core
 * machines (the files that use one made 25 of them, 4.6 s of CPU, run serially; 10 now, most of
 * them the sandboxes' own PIN keys). A test that needs two different keys asks
 * for a second `slot` ('other', ...): each slot is its own key.
 */
export function rsaKeyPair(modulusLength = 2048, slot = 'default'): { publicKey: KeyObject; privateKey: KeyObject } {
  const key = `${modulusLength}:${slot}`;
  let pair = rsaPairs.get(key);
  if (!pair) {
    pair = crypto.generateKeyPairSync('rsa', { modulusLength });
    rsaPairs.set(key, pair);
  }
  return pair;
}

/** A `securityKey` as a partner sends it: base64 of the SPKI DER public key of {@link rsaKeyPair}. */
export function rsaSecurityKey(modulusLength = 2048, slot = 'default'): string {
  return rsaKeyPair(modulusLength, slot).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
}
