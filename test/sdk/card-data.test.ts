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
});
