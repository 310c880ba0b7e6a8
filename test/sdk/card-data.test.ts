import crypto from 'node:crypto';
import { expect } from 'chai';
import { encryptPin, PartnerGateway } from '../../sdk/src';

const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const PIN_KEY = { keyId: 'pin-1', algorithm: 'RSA-OAEP-256', publicKey: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
const oaepDecrypt = (ciphertext: string) =>
  crypto.privateDecrypt({ key: rsa.privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(ciphertext, 'base64')).toString('utf8');
const oaepEncrypt = (securityKey: string, value: string) =>
  crypto
    .publicEncrypt({ key: crypto.createPublicKey({ key: Buffer.from(securityKey, 'base64'), format: 'der', type: 'spki' }), padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(value))
    .toString('base64');

/** A fake gateway for the card-data routes: encrypts under the securityKey it is sent, as the issuer does, and records each request. */
function cardDataGateway() {
  const seen: URL[] = [];
  const fetch = (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    seen.push(url);
    const securityKey = url.searchParams.get('securityKey') ?? '';
    const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    if (url.pathname.endsWith('/cvv')) return json({ cvv: oaepEncrypt(securityKey, '123') });
    if (url.pathname.endsWith('/pan')) return json({ cardNumber: oaepEncrypt(securityKey, '5355709999999995') });
    if (url.pathname.endsWith('/pin-encryption-key')) return json(PIN_KEY);
    return new Response('{}', { status: 404 });
  }) as typeof globalThis.fetch;
  const keys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const client = new PartnerGateway({ partnerId: '65f1a2b3c4d5e6f708192a00', issuer: 'https://acme.example', privateKey: keys.privateKey, baseUrl: 'http://gateway.test/api/partner', fetch });
  return { client, seen };
}

describe('sdk: card data', function () {
  it('revealCvv and revealPan send a fresh RSA-2048 public key as securityKey and decrypt the answer', async function () {
    const { client, seen } = cardDataGateway();
    expect(await client.cards.revealCvv('CK1', { expDate: '12/2030' })).to.deep.equal({ cvv: '123' });
    expect(await client.cards.revealPan('CK1', { expDate: '12/2030' })).to.deep.equal({ cardNumber: '5355709999999995' });
    const [cvvKey, panKey] = seen.map((url) => url.searchParams.get('securityKey')!);
    expect(cvvKey, 'a one-off key per reveal').to.not.equal(panKey);
    const publicKey = crypto.createPublicKey({ key: Buffer.from(cvvKey!, 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyType).to.equal('rsa');
    expect(publicKey.asymmetricKeyDetails?.modulusLength).to.equal(2048);
    expect(seen[0]!.pathname).to.equal('/api/partner/cards/CK1/cvv');
    expect(seen[0]!.searchParams.get('expDate')).to.equal('12/2030');
  });

  it('encryptPin encrypts a 4 to 12 digit PIN with RSA-OAEP-256 under the PIN key; the client fetches the published key once', async function () {
    const block = encryptPin('4921', PIN_KEY);
    expect(block).to.match(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(oaepDecrypt(block)).to.equal('4921');
    expect(encryptPin('4921', PIN_KEY), 'OAEP is randomized').to.not.equal(block);
    for (const pin of ['123', '1234567890123', '12a4', ' 1234']) expect(() => encryptPin(pin, PIN_KEY), pin).to.throw(TypeError, /4 to 12 digits/);
    expect(() => encryptPin('1234', { ...PIN_KEY, algorithm: 'RSA1_5' })).to.throw(TypeError, /not RSA-OAEP-256/);

    const { client, seen } = cardDataGateway();
    expect(oaepDecrypt(await client.cards.encryptPin('0000'))).to.equal('0000');
    expect(oaepDecrypt(await client.cards.encryptPin('987654'))).to.equal('987654');
    expect(seen.map((url) => url.pathname)).to.deep.equal(['/api/partner/pin-encryption-key']);
  });

  it('a refused changePin drops the cached PIN key, and refreshPinKey fetches it at once: a rotated issuer key is picked up within the hour', async function () {
    // A fake issuer that rotates its PIN key: a block under another key is refused, as the gateway
    // refuses it (422 upstream_rejected, INVALID_PIN_BLOCK); a 5xx is not a refusal of the key.
    // Three keys of the issuer, one after the other (1024-bit: only the rotation is tested here).
    const issuerKeys = [1, 2, 3].map((n) => ({ n, ...crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }) }));
    let current = issuerKeys[0]!;
    let failNext = false;
    const asked: string[] = [];
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      asked.push(url.pathname.replace('/api/partner', ''));
      const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
      if (url.pathname.endsWith('/pin-encryption-key')) return json(200, { keyId: `pin-${current.n}`, algorithm: 'RSA-OAEP-256', publicKey: current.publicKey.export({ type: 'spki', format: 'pem' }).toString() });
      if (failNext) {
        failNext = false;
        return json(502, { status: 502, code: 'upstream_error', detail: 'the issuer failed', requestId: 'r-502' });
      }
      const { pin } = JSON.parse(String(init?.body)) as { pin: string };
      try {
        crypto.privateDecrypt({ key: current.privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(pin, 'base64'));
      } catch {
        return json(422, { status: 422, code: 'upstream_rejected', upstreamCode: 'INVALID_PIN_BLOCK', detail: 'the issuer refused the request', requestId: 'r-422' });
      }
      return json(200, { cardKey: 'CK1', status: 'ACTIVE' });
    }) as typeof globalThis.fetch;
    const keys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
    const client = new PartnerGateway({ partnerId: '65f1a2b3c4d5e6f708192a00', issuer: 'https://acme.example', privateKey: keys.privateKey, baseUrl: 'http://gateway.test/api/partner', fetch, retry: { maxRetries: 0 } });
    const change = async () => client.cards.changePin('CK1', { expDate: '12/2030', pin: await client.cards.encryptPin('4921') }).then(() => 'changed', (err: { code?: string }) => err.code);

    expect(await change()).to.equal('changed');
    current = issuerKeys[1]!; // the issuer rotates its key
    expect(await change(), 'the cached key is stale').to.equal('upstream_rejected');
    expect(await change(), 'the refusal dropped it: the new key is fetched').to.equal('changed');
    expect(asked).to.deep.equal(['/pin-encryption-key', '/cards/CK1/pin/change', '/cards/CK1/pin/change', '/pin-encryption-key', '/cards/CK1/pin/change']);

    // A failure that is not a refusal keeps the key.
    asked.length = 0;
    failNext = true;
    expect(await change()).to.equal('upstream_error');
    expect(await change()).to.equal('changed');
    expect(asked).to.deep.equal(['/cards/CK1/pin/change', '/cards/CK1/pin/change']);

    // Told of a rotation, the partner refreshes the key at once; encryptPin uses the new one.
    asked.length = 0;
    current = issuerKeys[2]!;
    expect(await client.cards.refreshPinKey()).to.include({ keyId: 'pin-3', algorithm: 'RSA-OAEP-256' });
    expect(await change()).to.equal('changed');
    expect(asked).to.deep.equal(['/pin-encryption-key', '/cards/CK1/pin/change']);
  });
});
