import crypto, { type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

/**
 * A P-521 key kept in a key store (an HSM, a cloud KMS): the SDK hands it the JWS signing input and
 * gets the ECDSA P-521 / SHA-512 signature back; the private key never enters the process.
 */
export interface KeyStoreSigner {
  /** Signs `signingInput` (the bytes of `<header>.<payload>`) with ECDSA P-521 and SHA-512. */
  sign(signingInput: Uint8Array): Promise<Uint8Array>;
  /**
   * The form of the signature `sign` returns: `der` (an ASN.1 ECDSA-Sig-Value, what AWS KMS and
   * Google Cloud KMS return) or `ieee-p1363` (r and s, 66 bytes each, what PKCS#11 returns).
   */
  signatureFormat: 'der' | 'ieee-p1363';
}

/** The partner's P-521 private key: a PEM (PKCS#8 or SEC1), a `KeyObject`, or a key-store signer. */
export type PartnerPrivateKey = string | KeyObject | KeyStoreSigner;

/** What tokens are signed with and how long they live. */
export interface TokenOptions {
  partnerId: string;
  issuer: string;
  privateKey: PartnerPrivateKey;
  /** The key id the operator registered; sent in the header so that the gateway tries that key only. */
  kid?: string;
  /** Lifetime of a token in seconds, 1 to 300 (the gateway's maximum); default 60. */
  lifetimeSeconds?: number;
  /** A token is renewed when fewer seconds than this are left; default a quarter of the lifetime, at most 15. */
  renewBeforeSeconds?: number;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
}

/**
 * Signs the partner's ES512 tokens (claims `iss`, `sub`, `iat`, `exp`) and reuses each until shortly
 * before it expires. Concurrent callers share one signature.
 */
export class PartnerTokens {
  private readonly key: KeyObject | KeyStoreSigner;
  private readonly lifetimeSeconds: number;
  private readonly renewBeforeMs: number;
  private readonly now: () => number;
  private current: { token: string; expiresAtMs: number } | undefined;
  private pending: Promise<string> | undefined;
  /** How many tokens were signed (for tests and metrics). */
  signed = 0;

  constructor(private readonly options: TokenOptions) {
    if (!options.partnerId) throw new TypeError('partnerId is required');
    if (!options.issuer) throw new TypeError('issuer is required');
    this.key = partnerKey(options.privateKey);
    this.lifetimeSeconds = options.lifetimeSeconds ?? 60;
    if (!Number.isInteger(this.lifetimeSeconds) || this.lifetimeSeconds < 1 || this.lifetimeSeconds > 300) throw new RangeError('lifetimeSeconds must be an integer from 1 to 300');
    const renewBefore = options.renewBeforeSeconds ?? Math.min(15, this.lifetimeSeconds / 4);
    if (!(renewBefore >= 0 && renewBefore < this.lifetimeSeconds)) throw new RangeError('renewBeforeSeconds must be at least 0 and less than lifetimeSeconds');
    this.renewBeforeMs = renewBefore * 1000;
    this.now = options.now ?? Date.now;
  }

  /** A token valid for a while yet: the current one, or a new one. */
  async token(): Promise<string> {
    if (this.current && this.now() < this.current.expiresAtMs - this.renewBeforeMs) return this.current.token;
    this.pending ??= this.sign().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets the current token (the gateway refused it): the next call signs a new one. */
  invalidate(): void {
    this.current = undefined;
  }

  private async sign(): Promise<string> {
    const iat = Math.floor(this.now() / 1000);
    const exp = iat + this.lifetimeSeconds;
    const header: { alg: 'ES512'; typ: 'JWT'; kid?: string } = { alg: 'ES512', typ: 'JWT', ...(this.options.kid ? { kid: this.options.kid } : {}) };
    const claims = { iss: this.options.issuer, sub: this.options.partnerId, iat, exp };
    const token = isKeyStoreSigner(this.key)
      ? await signWithKeyStore(this.key, header, claims)
      : await new SignJWT({}).setProtectedHeader(header).setIssuer(claims.iss).setSubject(claims.sub).setIssuedAt(iat).setExpirationTime(exp).sign(this.key);
    this.signed += 1;
    this.current = { token, expiresAtMs: exp * 1000 };
    return token;
  }
}

function isKeyStoreSigner(key: unknown): key is KeyStoreSigner {
  return typeof key === 'object' && key !== null && typeof (key as KeyStoreSigner).sign === 'function' && !(key instanceof crypto.KeyObject);
}

/** The key as a P-521 private KeyObject (or the signer as given); the error never shows the key. */
function partnerKey(privateKey: PartnerPrivateKey): KeyObject | KeyStoreSigner {
  if (isKeyStoreSigner(privateKey)) {
    if (privateKey.signatureFormat !== 'der' && privateKey.signatureFormat !== 'ieee-p1363') throw new TypeError("a key-store signer's signatureFormat is 'der' or 'ieee-p1363'");
    return privateKey;
  }
  let key: KeyObject;
  try {
    key = typeof privateKey === 'string' ? crypto.createPrivateKey(privateKey) : privateKey;
  } catch {
    throw new TypeError('privateKey is not a readable PEM private key');
  }
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'secp521r1') {
    throw new TypeError('privateKey must be a P-521 (secp521r1) private key: the gateway accepts ES512 only');
  }
  return key;
}

async function signWithKeyStore(signer: KeyStoreSigner, header: object, claims: object): Promise<string> {
  const signingInput = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = Buffer.from(await signer.sign(Buffer.from(signingInput)));
  const raw = signer.signatureFormat === 'der' ? derToP1363(signature, 66) : signature;
  if (raw.length !== 132) throw new Error('the key store answered a signature that is not ECDSA P-521');
  return `${signingInput}.${raw.toString('base64url')}`;
}

/** An ASN.1 DER ECDSA-Sig-Value (SEQUENCE of two INTEGERs) as r‖s, each `size` bytes. */
export function derToP1363(der: Buffer, size: number): Buffer {
  let offset = 0;
  const readLength = (): number => {
    let length = der[offset++]!;
    if (length & 0x80) {
      const bytes = length & 0x7f;
      length = 0;
      for (let i = 0; i < bytes; i++) length = (length << 8) | der[offset++]!;
    }
    return length;
  };
  if (der[offset++] !== 0x30) throw new Error('not a DER ECDSA signature');
  readLength();
  const integer = (): Buffer => {
    if (der[offset++] !== 0x02) throw new Error('not a DER ECDSA signature');
    const length = readLength();
    let value = der.subarray(offset, offset + length);
    offset += length;
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new Error('not a DER ECDSA signature of this curve');
    return Buffer.concat([Buffer.alloc(size - value.length), value]);
  };
  return Buffer.concat([integer(), integer()]);
}
