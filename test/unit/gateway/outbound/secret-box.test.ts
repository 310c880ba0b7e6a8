import crypto from 'node:crypto';
import { expect } from 'chai';
import { keyIdOf, SecretKeyring, SecretOpenError, sealedKeyId, type OpenFailure } from '../../../../gateway/outbound/secret-box';
import { newSecret } from '../../../../gateway/outbound/signature';

const newKey = () => crypto.createSecretKey(crypto.randomBytes(32));

/** The reason `open` refused with; fails when it opened. */
function refusal(open: () => string): OpenFailure {
  try {
    open();
  } catch (err) {
    expect(err).to.be.instanceOf(SecretOpenError);
    return (err as SecretOpenError).reason;
  }
  expect.fail('it opened');
}

/** `sealed` with its field `index` (0 = version … 4 = tag) replaced by `change(field)`. */
function withField(sealed: string, index: number, change: (field: string) => string): string {
  const fields = sealed.split(':');
  fields[index] = change(fields[index]);
  return fields.join(':');
}

/** A base64url string with one bit of its first byte flipped (still canonical). */
function flipFirstBit(field: string): string {
  const bytes = Buffer.from(field, 'base64url');
  bytes[0] ^= 0x01;
  return bytes.toString('base64url');
}

describe('unit: webhook secrets sealed at rest (gateway/outbound/secret-box.ts)', function () {
  const endpoint = 'we_0123456789abcdef01234567';
  const other = 'we_76543210fedcba9876543210';
  const key = newKey();
  const keyring = new SecretKeyring(key);
  const secret = newSecret();

  it('round-trips: the sealed form opens to the secret, for its endpoint, and holds no part of it', function () {
    const sealed = keyring.seal(endpoint, secret);
    expect(sealed).to.match(/^v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{66}:[A-Za-z0-9_-]{22}$/);
    expect(sealedKeyId(sealed)).to.equal(keyring.currentId);
    expect(keyring.open(endpoint, sealed)).to.equal(secret);
    const body = secret.slice('whsec_'.length);
    for (let i = 0; i + 8 <= body.length; i++) expect(sealed).to.not.include(body.slice(i, i + 8));
    expect(sealed).to.not.include('whsec_');
  });

  it('draws a fresh 96-bit IV for every seal: the same secret seals differently each time', function () {
    const seals = Array.from({ length: 50 }, () => keyring.seal(endpoint, secret));
    expect(new Set(seals.map((s) => s.split(':')[2])).size).to.equal(50);
    expect(new Set(seals).size).to.equal(50);
    for (const sealed of seals) {
      expect(Buffer.from(sealed.split(':')[2], 'base64url').length).to.equal(12);
      expect(keyring.open(endpoint, sealed)).to.equal(secret);
    }
  });

  it('binds the ciphertext to its endpoint id (GCM additional data): another endpoint\'s row does not open', function () {
    const sealed = keyring.seal(endpoint, secret);
    expect(refusal(() => keyring.open(other, sealed))).to.equal('not_authentic');
    expect(refusal(() => keyring.open(`${endpoint}x`, sealed))).to.equal('not_authentic');
  });

  it('does not open under a wrong key: another key is unknown by its id, and a key that only takes the id is not authentic', function () {
    const sealed = keyring.seal(endpoint, secret);
    const strangerKey = newKey();
    const stranger = new SecretKeyring(strangerKey);
    expect(refusal(() => stranger.open(endpoint, sealed))).to.equal('unknown_key');
    // The sealed form relabelled with the stranger's key id: its key is tried, and GCM refuses.
    expect(refusal(() => stranger.open(endpoint, withField(sealed, 1, () => stranger.currentId)))).to.equal('not_authentic');
    // Relabelled the other way: the right key cannot open under another key id (the id is in the additional data).
    const both = new SecretKeyring(key, strangerKey);
    expect(refusal(() => both.open(endpoint, withField(sealed, 1, () => stranger.currentId)))).to.equal('not_authentic');
  });

  it('refuses a tampered tag, ciphertext or IV, and a tag cut short', function () {
    const sealed = keyring.seal(endpoint, secret);
    expect(refusal(() => keyring.open(endpoint, withField(sealed, 4, flipFirstBit)))).to.equal('not_authentic');
    expect(refusal(() => keyring.open(endpoint, withField(sealed, 3, flipFirstBit)))).to.equal('not_authentic');
    expect(refusal(() => keyring.open(endpoint, withField(sealed, 2, flipFirstBit)))).to.equal('not_authentic');
    // A truncated tag (GCM would accept a 4-byte one if the length were not fixed).
    const shortTag = withField(sealed, 4, (tag) => Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url'));
    expect(refusal(() => keyring.open(endpoint, shortTag))).to.equal('malformed');
    // A ciphertext cut short by a byte: not authentic either.
    const shortCiphertext = withField(sealed, 3, (ct) => Buffer.from(ct, 'base64url').subarray(0, -1).toString('base64url'));
    expect(refusal(() => keyring.open(endpoint, shortCiphertext))).to.equal('not_authentic');
  });

  it('refuses malformed strings: another version, a plaintext secret, non-canonical base64url, a wrong IV length', function () {
    const sealed = keyring.seal(endpoint, secret);
    expect(refusal(() => keyring.open(endpoint, withField(sealed, 0, () => 'v2')))).to.equal('malformed');
    expect(refusal(() => keyring.open(endpoint, secret))).to.equal('malformed');
    expect(refusal(() => keyring.open(endpoint, ''))).to.equal('malformed');
    // The tag's last character with its unused low bits set: the same bytes, another spelling.
    const tag = sealed.split(':')[4];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(tag[tag.length - 1]);
    const respelled = withField(sealed, 4, (t) => t.slice(0, -1) + alphabet[last | 0x03]);
    expect(Buffer.from(respelled.split(':')[4], 'base64url').equals(Buffer.from(tag, 'base64url'))).to.equal(true);
    expect(refusal(() => keyring.open(endpoint, respelled))).to.equal('malformed');
    const shortIv = withField(sealed, 2, () => crypto.randomBytes(9).toString('base64url'));
    expect(refusal(() => keyring.open(endpoint, shortIv))).to.equal('malformed');
  });

  it('during a key rotation: seals under the current key, opens under both; the previous key alone does not open the new seals', function () {
    const next = newKey();
    const rotating = new SecretKeyring(next, key);
    expect(rotating.currentId).to.equal(keyIdOf(next));
    expect(rotating.keyIds).to.deep.equal([keyIdOf(next), keyIdOf(key)]);
    const old = keyring.seal(endpoint, secret);
    expect(rotating.open(endpoint, old)).to.equal(secret);
    expect(rotating.isCurrent(old)).to.equal(false);
    const fresh = rotating.seal(endpoint, secret);
    expect(rotating.isCurrent(fresh)).to.equal(true);
    expect(sealedKeyId(fresh)).to.equal(keyIdOf(next));
    expect(refusal(() => keyring.open(endpoint, fresh))).to.equal('unknown_key');
    expect(() => new SecretKeyring(key, crypto.createSecretKey(key.export()))).to.throw(/WEBHOOKS_SECRET_KEY_PREVIOUS has the key id of WEBHOOKS_SECRET_KEY/);
  });

  it('derives key ids one-way and stably: the same key gives the same id, another key another, and the id is not the key\'s bytes', function () {
    const bytes = crypto.randomBytes(32);
    const id = keyIdOf(crypto.createSecretKey(bytes));
    expect(id).to.match(/^[0-9a-f]{16}$/);
    expect(keyIdOf(crypto.createSecretKey(Buffer.from(bytes)))).to.equal(id);
    expect(keyIdOf(newKey())).to.not.equal(id);
    expect(bytes.toString('hex')).to.not.include(id);
    // Not a plain hash of the key either (a label of its own keeps it apart from any other use of the key).
    expect(crypto.createHash('sha256').update(bytes).digest('hex')).to.not.include(id);
  });

  it('refuses a key that is not 32 bytes', function () {
    expect(() => new SecretKeyring(crypto.createSecretKey(crypto.randomBytes(16)))).to.throw(/32-byte/);
  });
});
