import crypto, { type KeyObject } from 'node:crypto';

/**
 * Partner secrets (webhook endpoints', decision endpoints') encrypted at rest (docs/webhooks.md,
 * "Storage of secrets"), with node:crypto only. The labels below keep their `webhook-endpoint`
 * names: they are part of every stored secret's format.
 *
 * A sealed secret is one ASCII string, `v1:<key id>:<iv>:<ciphertext>:<tag>`:
 * - `v1`: this format, AES-256-GCM, 96-bit IV, 128-bit tag;
 * - key id: 16 hex characters, HKDF-SHA256 of the key with a label of its own (a one-way
 *   fingerprint: it names the key that sealed the row, so a rotation knows which rows to re-encrypt
 *   and a missing key is named at boot; it reveals nothing of the key);
 * - iv: 12 random bytes for each encryption (`crypto.randomBytes`), base64url;
 * - ciphertext: the secret's UTF-8 bytes encrypted, base64url;
 * - tag: the 16-byte GCM tag, base64url.
 *
 * The additional authenticated data binds the ciphertext to the format, the key id and the
 * endpoint id: a sealed secret copied to another endpoint's row does not open, nor does one whose
 * prefix was altered.
 */

/** The form of a sealed secret (db/migrations/013 checks the same). */
const SEALED = /^v1:([0-9a-f]{16}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]+):([A-Za-z0-9_-]{22})$/;

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_INFO = 'partner-gateway/webhook-endpoint-secrets/key-id/v1';

/** The key id of a key: the first 8 bytes of HKDF-SHA256(key, info = a label of its own), hex. */
export function keyIdOf(key: KeyObject): string {
  return Buffer.from(crypto.hkdfSync('sha256', key, Buffer.alloc(0), KEY_ID_INFO, 8)).toString('hex');
}

/** The key id a sealed secret names, or undefined when it is not a sealed secret. */
export function sealedKeyId(sealed: string): string | undefined {
  return SEALED.exec(sealed)?.[1];
}

function additionalData(keyId: string, endpointId: string): Buffer {
  return Buffer.from(`partner-gateway/webhook-endpoint-secret/v1/${keyId}/${endpointId}`, 'utf8');
}

/** Why a sealed secret did not open. None of them carries any part of the secret or the key. */
export type OpenFailure =
  /** Not of the `v1:…` form. */
  | 'malformed'
  /** Sealed under a key that is neither WEBHOOKS_SECRET_KEY nor WEBHOOKS_SECRET_KEY_PREVIOUS. */
  | 'unknown_key'
  /** The tag does not verify: another endpoint's row, an altered byte, or a key that only shares the id. */
  | 'not_authentic';

/** A sealed secret that did not open: the reason and the key id it names, never a secret. */
export class SecretOpenError extends Error {
  constructor(
    readonly reason: OpenFailure,
    readonly keyId: string | undefined
  ) {
    super(`webhook secret does not open: ${reason}${keyId ? ` (key id ${keyId})` : ''}`);
    this.name = 'SecretOpenError';
  }
}

/**
 * The keys webhook secrets are sealed with: the current one seals and opens, the previous one
 * (during a key rotation) only opens.
 *
 * @example
 * const keyring = new SecretKeyring(settings.webhooksSecretKey, settings.webhooksSecretKeyPrevious);
 * const sealed = keyring.seal('we_…', secret); // v1:<key id>:<iv>:<ciphertext>:<tag>
 * keyring.open('we_…', sealed) === secret;
 */
export class SecretKeyring {
  /** The key id of the current key: every seal names it. */
  readonly currentId: string;
  private readonly keys = new Map<string, KeyObject>();

  constructor(current: KeyObject, previous?: KeyObject) {
    for (const key of [current, previous]) {
      if (key && (key.type !== 'secret' || key.symmetricKeySize !== 32)) throw new Error('a webhook secret key must be a 32-byte secret key');
    }
    this.currentId = keyIdOf(current);
    this.keys.set(this.currentId, current);
    if (previous) {
      const previousId = keyIdOf(previous);
      if (previousId === this.currentId) throw new Error('WEBHOOKS_SECRET_KEY_PREVIOUS has the key id of WEBHOOKS_SECRET_KEY: it must be another key');
      this.keys.set(previousId, previous);
    }
  }

  /** The ids of the keys that open: the current one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** Whether a sealed secret is sealed under the current key (nothing to re-encrypt). */
  isCurrent(sealed: string): boolean {
    return sealedKeyId(sealed) === this.currentId;
  }

  /** Encrypts `secret` for the endpoint `endpointId` under the current key, with a fresh random IV. */
  seal(endpointId: string, secret: string): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.keys.get(this.currentId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(this.currentId, endpointId));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', this.currentId, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(':');
  }

  /**
   * The secret sealed in `sealed` for the endpoint `endpointId`. Throws a {@link SecretOpenError}
   * when it is malformed, sealed under a key not here, or does not authenticate (another
   * endpoint's, altered): never a wrong or partial secret.
   */
  open(endpointId: string, sealed: string): string {
    const parts = SEALED.exec(sealed);
    if (!parts) throw new SecretOpenError('malformed', undefined);
    const [, keyId, ivText, ciphertextText, tagText] = parts;
    const key = this.keys.get(keyId);
    if (!key) throw new SecretOpenError('unknown_key', keyId);
    const iv = Buffer.from(ivText, 'base64url');
    const tag = Buffer.from(tagText, 'base64url');
    const ciphertext = Buffer.from(ciphertextText, 'base64url');
    // Canonical base64url only: one sealed secret has exactly one spelling.
    const canonical = iv.toString('base64url') === ivText && tag.toString('base64url') === tagText && ciphertext.toString('base64url') === ciphertextText;
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES || !canonical) throw new SecretOpenError('malformed', keyId);
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(additionalData(keyId, endpointId));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretOpenError('not_authentic', keyId);
    }
  }
}

/** The keyring of the settings' webhook keys; undefined without `WEBHOOKS_SECRET_KEY` (secrets stay plaintext). */
export function secretKeyringFrom(settings: { webhooksSecretKey: KeyObject | undefined; webhooksSecretKeyPrevious: KeyObject | undefined }): SecretKeyring | undefined {
  return settings.webhooksSecretKey ? new SecretKeyring(settings.webhooksSecretKey, settings.webhooksSecretKeyPrevious) : undefined;
}
