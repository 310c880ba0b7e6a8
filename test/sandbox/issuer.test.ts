import { expect } from 'chai';
import { constants, generateKeyPairSync, privateDecrypt, publicEncrypt, type KeyObject } from 'node:crypto';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { isLuhnValid } from '../../sandbox/shared/luhn';
import { call, type ErrorBody } from './http-client';
import { rsaKeyPair } from '../support/keys';

const EXP = '12/2031';

interface Card {
  cardKey: string;
  cardMask: string;
  type: string;
  statusCode: string;
  currency: string;
  productCode: string;
  holderClientCode: string;
  expDate: string;
  embossedName: string;
  createdAt: string;
  cardNumber?: string;
  cvv?: string;
}
interface Limit {
  name: string;
  value: number;
  currency: string;
  used: number;
  available: number;
}
interface Secrets {
  cardNumber: string;
  cvv: string;
}
interface CardState {
  pinTriesRemaining: number;
  threeDSAnswer: string | null;
  previousCardKey: string | null;
  pinMailer: string | null;
  statusHistory: Array<{ action: string; from: string; to: string; reason: string | null; cardLocation: string | null }>;
}

function oaepEncrypt(publicKey: KeyObject | string, text: string): string {
  return publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(text)).toString('base64');
}
function oaepDecrypt(privateKey: KeyObject, base64: string): string {
  return privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(base64, 'base64')).toString();
}

describe('issuer sandbox (card issuer platform)', () => {
  let sandboxes: Sandboxes;
  let issuer: string;

  async function createCard(overrides: Record<string, unknown> = {}): Promise<Card> {
    const { status, body } = await call<Card>(`${issuer}/cards`, {
      method: 'POST',
      body: { type: 'virtual', clientCode: '10000001', expDate: EXP, currency: 'EUR', productCode: 'P-STD', embossedName: 'ADA', ...overrides },
    });
    expect(status, JSON.stringify(body)).to.equal(201);
    return body;
  }
  const secretsOf = async (cardKey: string): Promise<Secrets> => (await call<Secrets>(`${issuer}/__sandbox/cards/${cardKey}/secrets`)).body;
  const stateOf = async (cardKey: string): Promise<CardState> => (await call<CardState>(`${issuer}/__sandbox/cards/${cardKey}`)).body;
  const changeStatus = (cardKey: string, body: Record<string, unknown>) =>
    call<{ cardKey: string; statusCode: string; previousStatusCode: string } & ErrorBody>(`${issuer}/cards/${cardKey}/status`, { method: 'POST', body });

  before(async () => {
    sandboxes = await startSandboxes();
    issuer = sandboxes.issuer.url;
  });
  after(() => sandboxes.close());

  describe('card creation and details', () => {
    it('POST /cards issues a virtual card: 201 full card, status 00, no secrets', async () => {
      const card = await createCard({ shippingAddressId: 'addr-1' });
      expect(card.cardKey).to.match(/^CK[0-9A-F]{16}$/);
      expect(card.cardMask).to.match(/^5355 70\*\* \*\*\*\* \d{4}$/);
      expect(card).to.include({ type: 'virtual', statusCode: '00', currency: 'EUR', productCode: 'P-STD', holderClientCode: '10000001', expDate: EXP, embossedName: 'ADA' });
      expect(Number.isNaN(Date.parse(card.createdAt))).to.equal(false);
      expect(card).not.to.have.any.keys('cardNumber', 'cvv', 'pan');
    });

    it('a physical card starts I1 (issued, not activated)', async () => {
      expect((await createCard({ type: 'physical' })).statusCode).to.equal('I1');
    });

    it('GET /cards/{cardKey} returns the same card; an unknown key is 404 CARD_NOT_FOUND', async () => {
      const card = await createCard();
      expect((await call<Card>(`${issuer}/cards/${card.cardKey}`)).body).to.deep.equal(card);
      const { status, body } = await call<ErrorBody>(`${issuer}/cards/CK0000000000000000`);
      expect(status).to.equal(404);
      expect(body.errorCode).to.equal('CARD_NOT_FOUND');
    });

    it('keeps a Luhn-valid, unique 16-digit PAN and a 3-digit CVV per card, consistent with the mask', async () => {
      const pans = new Set<string>();
      for (let i = 0; i < 15; i += 1) {
        const card = await createCard();
        const { cardNumber, cvv } = await secretsOf(card.cardKey);
        expect(cardNumber).to.match(/^535570\d{10}$/);
        expect(isLuhnValid(cardNumber), cardNumber).to.equal(true);
        expect(cvv).to.match(/^\d{3}$/);
        expect(card.cardMask.slice(-4)).to.equal(cardNumber.slice(-4));
        pans.add(cardNumber);
      }
      expect(pans.size).to.equal(15);
    });

    it('embossedName SANDBOX-LEAK makes the card leak cardNumber and cvv in its details', async () => {
      const card = await createCard({ embossedName: 'SANDBOX-LEAK' });
      const secrets = await secretsOf(card.cardKey);
      const { body } = await call<Card>(`${issuer}/cards/${card.cardKey}`);
      expect(body.cardNumber).to.equal(secrets.cardNumber);
      expect(body.cvv).to.equal(secrets.cvv);
    });

    const badCards: Array<{ description: string; overrides: Record<string, unknown>; errorCode: string }> = [
      { description: 'an unknown type', overrides: { type: 'plastic' }, errorCode: 'VALIDATION_ERROR' },
      { description: 'no clientCode', overrides: { clientCode: undefined }, errorCode: 'VALIDATION_ERROR' },
      { description: 'month 13', overrides: { expDate: '13/2031' }, errorCode: 'VALIDATION_ERROR' },
      { description: 'a two-digit year', overrides: { expDate: '12/31' }, errorCode: 'VALIDATION_ERROR' },
      { description: 'an expiry in the past', overrides: { expDate: '01/2020' }, errorCode: 'INVALID_EXP_DATE' },
      { description: 'a lower-case currency', overrides: { currency: 'eur' }, errorCode: 'VALIDATION_ERROR' },
      { description: 'a 27-char embossedName', overrides: { embossedName: 'A'.repeat(27) }, errorCode: 'VALIDATION_ERROR' },
    ];
    for (const { description, overrides, errorCode } of badCards) {
      it(`refuses a card with ${description}: 400 ${errorCode}`, async () => {
        const { status, body } = await call<ErrorBody>(`${issuer}/cards`, {
          method: 'POST',
          body: { type: 'virtual', clientCode: '1', expDate: EXP, currency: 'EUR', productCode: 'P', ...overrides },
        });
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal(errorCode);
      });
    }
  });

  describe('status', () => {
    it('GET /cards/{cardKey}/status answers { cardKey, statusCode }', async () => {
      const card = await createCard();
      expect((await call(`${issuer}/cards/${card.cardKey}/status`)).body).to.deep.equal({ cardKey: card.cardKey, statusCode: '00' });
    });

    const fromActive: Array<{ action: string; expected: string | number }> = [
      { action: 'lock', expected: 'L1' },
      { action: 'unlock', expected: '00' },
      { action: 'activate', expected: '00' },
      { action: 'temporary-lock', expected: 'T1' },
      { action: 'restrict', expected: 'S1' },
      { action: 'lost', expected: 'S2' },
      { action: 'stolen', expected: 'S3' },
      { action: 'closed', expected: 'S4' },
      { action: 'fraud', expected: 'S5' },
      { action: 'mobile-lost', expected: 'S6' },
    ];
    for (const { action, expected } of fromActive) {
      it(`action ${action} on an active card gives ${expected}`, async () => {
        const card = await createCard();
        const { status, body } = await changeStatus(card.cardKey, { action, expDate: EXP, reason: 'test' });
        expect(status).to.equal(200);
        expect(body).to.deep.equal({ cardKey: card.cardKey, statusCode: expected, previousStatusCode: '00' });
        expect((await call<Card>(`${issuer}/cards/${card.cardKey}`)).body.statusCode).to.equal(expected);
      });
    }

    it('walks a physical card through its life, refusing transitions the table does not allow', async () => {
      const card = await createCard({ type: 'physical' });
      const steps: Array<[string, number, string]> = [
        ['lock', 409, 'I1'],
        ['unlock', 409, 'I1'],
        ['activate', 200, '00'],
        ['lock', 200, 'L1'],
        ['temporary-lock', 409, 'L1'],
        ['unlock', 200, '00'],
        ['temporary-lock', 200, 'T1'],
        ['unlock', 200, '00'],
        ['restrict', 200, 'S1'],
        ['unlock', 200, '00'],
        ['lost', 200, 'S2'],
        ['unlock', 409, 'S2'],
        ['restrict', 409, 'S2'],
        ['stolen', 200, 'S3'],
        ['closed', 200, 'S4'],
      ];
      for (const [action, expectedStatus, expectedCode] of steps) {
        const { status, body } = await changeStatus(card.cardKey, { action, expDate: EXP });
        expect(status, `${action}: ${JSON.stringify(body)}`).to.equal(expectedStatus);
        if (status === 409) expect(body.errorCode).to.equal('INVALID_STATUS_TRANSITION');
        expect((await call<Card>(`${issuer}/cards/${card.cardKey}/status`)).body.statusCode, action).to.equal(expectedCode);
      }
      const history = (await stateOf(card.cardKey)).statusHistory;
      expect(history.map((h) => h.to)).to.deep.equal(['00', 'L1', '00', 'T1', '00', 'S1', '00', 'S2', 'S3', 'S4']);
    });

    it('a closed card refuses every action with 409 CARD_CLOSED', async () => {
      const card = await createCard();
      await changeStatus(card.cardKey, { action: 'closed' });
      for (const { action } of fromActive) {
        const { status, body } = await changeStatus(card.cardKey, { action, expDate: EXP });
        expect(status).to.equal(409);
        expect(body.errorCode).to.equal('CARD_CLOSED');
      }
    });

    it('an expDate that does not match the card: 422 EXP_DATE_MISMATCH, status unchanged', async () => {
      const card = await createCard();
      const { status, body } = await changeStatus(card.cardKey, { action: 'lock', expDate: '11/2031' });
      expect(status).to.equal(422);
      expect(body.errorCode).to.equal('EXP_DATE_MISMATCH');
      expect((await call<Card>(`${issuer}/cards/${card.cardKey}/status`)).body.statusCode).to.equal('00');
    });

    it('lock/unlock/activate/temporary-lock require expDate; the restrict family does not', async () => {
      const card = await createCard();
      const missing = await changeStatus(card.cardKey, { action: 'lock' });
      expect(missing.status).to.equal(400);
      expect(missing.body.errorCode).to.equal('VALIDATION_ERROR');
      const restricted = await changeStatus(card.cardKey, { action: 'lost', reason: 'left in a taxi', description: 'd', cardLocation: 'Berlin' });
      expect(restricted.body.statusCode).to.equal('S2');
      const [change] = (await stateOf(card.cardKey)).statusHistory;
      expect(change).to.include({ action: 'lost', from: '00', to: 'S2', reason: 'left in a taxi', cardLocation: 'Berlin' });
    });

    it('an unknown action: 400 VALIDATION_ERROR; an unknown card: 404', async () => {
      const card = await createCard();
      expect((await changeStatus(card.cardKey, { action: 'freeze', expDate: EXP })).status).to.equal(400);
      expect((await changeStatus('CK0000000000000000', { action: 'lock', expDate: EXP })).status).to.equal(404);
    });
  });

  describe('emboss name, replace and re-issue', () => {
    it('PATCH emboss-name changes the name; a space or more than 26 chars is 400 INVALID_EMBOSS_NAME', async () => {
      const card = await createCard();
      const ok = await call<Card>(`${issuer}/cards/${card.cardKey}/emboss-name`, { method: 'PATCH', body: { embossedName: 'ADA-LOVELACE' } });
      expect(ok.status).to.equal(200);
      expect(ok.body).to.include({ cardKey: card.cardKey, embossedName: 'ADA-LOVELACE' });
      for (const embossedName of ['ADA LOVELACE', 'A'.repeat(27), '']) {
        const { status, body } = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/emboss-name`, { method: 'PATCH', body: { embossedName } });
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal('INVALID_EMBOSS_NAME');
      }
      expect((await call(`${issuer}/cards/${card.cardKey}/emboss-name`, { method: 'PATCH', body: {} })).status).to.equal(400);
    });

    it('POST replace (physical): 201 new key with a new PAN; the old key is 404 afterwards', async () => {
      const old = await createCard({ type: 'physical' });
      await call(`${issuer}/cards/${old.cardKey}/limits/dailyPurchase`, { method: 'PUT', body: { name: 'dailyPurchase', value: 777 } });
      const oldSecrets = await secretsOf(old.cardKey);
      const { status, body } = await call<{ cardKey: string }>(`${issuer}/cards/${old.cardKey}/replace`, {
        method: 'POST',
        body: { expDate: '06/2032', reason: 'damaged', pinMailer: 'PM-1' },
      });
      expect(status).to.equal(201);
      expect(Object.keys(body)).to.deep.equal(['cardKey']);
      expect(body.cardKey).to.match(/^CK[0-9A-F]{16}$/).and.not.equal(old.cardKey);
      const fresh = (await call<Card>(`${issuer}/cards/${body.cardKey}`)).body;
      const freshSecrets = await secretsOf(body.cardKey);
      expect(freshSecrets.cardNumber).not.to.equal(oldSecrets.cardNumber);
      expect(fresh.cardMask.slice(-4)).to.equal(freshSecrets.cardNumber.slice(-4));
      expect(fresh).to.include({ type: 'physical', statusCode: 'I1', expDate: '06/2032', holderClientCode: old.holderClientCode, embossedName: old.embossedName });
      expect((await call<Limit>(`${issuer}/cards/${body.cardKey}/limits/dailyPurchase`)).body.value).to.equal(777);
      expect(await stateOf(body.cardKey)).to.include({ previousCardKey: old.cardKey, pinMailer: 'PM-1' });
      expect((await call<ErrorBody>(`${issuer}/cards/${old.cardKey}`)).status).to.equal(404);
    });

    it('POST replace of a virtual card: 409 NOT_PHYSICAL', async () => {
      const card = await createCard();
      const { status, body } = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/replace`, { method: 'POST', body: { expDate: EXP } });
      expect(status).to.equal(409);
      expect(body.errorCode).to.equal('NOT_PHYSICAL');
    });

    it('POST reissue: 201 new key; the old card becomes S4 and refuses actions', async () => {
      const old = await createCard();
      const { status, body } = await call<{ cardKey: string }>(`${issuer}/cards/${old.cardKey}/reissue`, { method: 'POST', body: { expDate: EXP, reason: 'expiry' } });
      expect(status).to.equal(201);
      expect(body.cardKey).not.to.equal(old.cardKey);
      expect((await call<Card>(`${issuer}/cards/${old.cardKey}`)).body.statusCode).to.equal('S4');
      expect((await call<Card>(`${issuer}/cards/${body.cardKey}`)).body).to.include({ statusCode: '00', type: 'virtual' });
      expect((await changeStatus(old.cardKey, { action: 'unlock', expDate: EXP })).body.errorCode).to.equal('CARD_CLOSED');
      expect((await call<ErrorBody>(`${issuer}/cards/${old.cardKey}/reissue`, { method: 'POST', body: { expDate: EXP } })).status).to.equal(409);
    });

    it('replace and reissue require a valid expDate', async () => {
      const card = await createCard({ type: 'physical' });
      for (const suffix of ['replace', 'reissue']) {
        expect((await call(`${issuer}/cards/${card.cardKey}/${suffix}`, { method: 'POST', body: {} })).status).to.equal(400);
        expect((await call(`${issuer}/cards/${card.cardKey}/${suffix}`, { method: 'POST', body: { expDate: '2032-06' } })).status).to.equal(400);
      }
    });
  });

  describe('CVV and PAN', () => {
    let privateKey: KeyObject;
    let securityKey: string;

    before(() => {
      const pair = rsaKeyPair();
      privateKey = pair.privateKey;
      securityKey = pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    });
    const query = (expDate: string, key: string): string => new URLSearchParams({ expDate, securityKey: key }).toString();

    it('GET cvv answers the CVV encrypted with RSA-OAEP-SHA256 under the securityKey', async () => {
      const card = await createCard();
      const { status, body } = await call<{ cvv: string }>(`${issuer}/cards/${card.cardKey}/cvv?${query(EXP, securityKey)}`);
      expect(status).to.equal(200);
      expect(Object.keys(body)).to.deep.equal(['cvv']);
      expect(oaepDecrypt(privateKey, body.cvv)).to.equal((await secretsOf(card.cardKey)).cvv);
    });

    it('GET pan answers the card number encrypted the same way, and it is Luhn-valid', async () => {
      const card = await createCard();
      const { status, body } = await call<{ cardNumber: string }>(`${issuer}/cards/${card.cardKey}/pan?${query(EXP, securityKey)}`);
      expect(status).to.equal(200);
      const pan = oaepDecrypt(privateKey, body.cardNumber);
      expect(pan).to.equal((await secretsOf(card.cardKey)).cardNumber);
      expect(isLuhnValid(pan)).to.equal(true);
    });

    it("tolerates a securityKey whose '+' arrived as a space (unencoded in the query)", async () => {
      const card = await createCard();
      const raw = `${issuer}/cards/${card.cardKey}/cvv?expDate=${encodeURIComponent(EXP)}&securityKey=${securityKey.replace(/\//g, '%2F')}`;
      const { status, body } = await call<{ cvv: string }>(raw);
      expect(status).to.equal(200);
      expect(oaepDecrypt(privateKey, body.cvv)).to.match(/^\d{3}$/);
    });

    it('refuses weak, non-RSA or garbage keys with 400 INVALID_SECURITY_KEY', async () => {
      const card = await createCard();
      const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
      for (const key of [weak, ec, 'bm90IGEga2V5', '%%%']) {
        for (const secret of ['cvv', 'pan']) {
          const { status, body } = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/${secret}?${query(EXP, key)}`);
          expect(status, `${secret} ${key.slice(0, 10)}`).to.equal(400);
          expect(body.errorCode).to.equal('INVALID_SECURITY_KEY');
        }
      }
    });

    it('a wrong expDate is 422 EXP_DATE_MISMATCH; missing parameters are 400 VALIDATION_ERROR', async () => {
      const card = await createCard();
      const wrong = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/pan?${query('01/2030', securityKey)}`);
      expect(wrong.status).to.equal(422);
      expect(wrong.body.errorCode).to.equal('EXP_DATE_MISMATCH');
      const missing = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/cvv?expDate=${encodeURIComponent(EXP)}`);
      expect(missing.status).to.equal(400);
      expect(missing.body.errorCode).to.equal('VALIDATION_ERROR');
      expect((await call(`${issuer}/cards/${card.cardKey}/cvv`)).status).to.equal(400);
    });
  });

  describe('3-D Secure and PIN', () => {
    let pinKeyPem: string;
    before(async () => {
      const { status, body } = await call<{ keyId: string; algorithm: string; publicKey: string }>(`${issuer}/pin-encryption-key`);
      expect(status).to.equal(200);
      expect(body.algorithm).to.equal('RSA-OAEP-256');
      expect(body.keyId).to.be.a('string').and.not.empty;
      expect(body.publicKey).to.match(/^-----BEGIN PUBLIC KEY-----/);
      pinKeyPem = body.publicKey;
    });

    it('PUT 3ds/answer stores the answer and returns the card; more than 200 chars is 400', async () => {
      const card = await createCard();
      const ok = await call<Card>(`${issuer}/cards/${card.cardKey}/3ds/answer`, { method: 'PUT', body: { answer: 'my first pet' } });
      expect(ok.status).to.equal(200);
      expect(ok.body.cardKey).to.equal(card.cardKey);
      expect((await stateOf(card.cardKey)).threeDSAnswer).to.equal('my first pet');
      const long = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/3ds/answer`, { method: 'PUT', body: { answer: 'x'.repeat(201) } });
      expect(long.status).to.equal(400);
    });

    it('the PIN key is the same on every call', async () => {
      expect((await call<{ publicKey: string }>(`${issuer}/pin-encryption-key`)).body.publicKey).to.equal(pinKeyPem);
    });

    it('POST authorize accepts a PIN block of 4 to 12 digits and returns the card', async () => {
      const card = await createCard();
      for (const pin of ['1234', '123456789012']) {
        const { status, body } = await call<Card>(`${issuer}/cards/${card.cardKey}/authorize`, { method: 'POST', body: { pin: oaepEncrypt(pinKeyPem, pin) } });
        expect(status).to.equal(200);
        expect(body.cardKey).to.equal(card.cardKey);
      }
    });

    it('refuses PIN blocks that do not decrypt to 4 to 12 digits: 400 INVALID_PIN_BLOCK', async () => {
      const card = await createCard();
      const otherKey = rsaKeyPair(2048, 'other').publicKey;
      const blocks = [oaepEncrypt(pinKeyPem, '123'), oaepEncrypt(pinKeyPem, '12ab'), oaepEncrypt(pinKeyPem, '1234567890123'), oaepEncrypt(otherKey, '1234'), 'bm90IGEgcGlu', '1234'];
      for (const pin of blocks) {
        const { status, body } = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/authorize`, { method: 'POST', body: { pin } });
        expect(status).to.equal(400);
        expect(body.errorCode).to.equal('INVALID_PIN_BLOCK');
      }
    });

    it('POST pin/change: 500 OPERATION_NOT_SUPPORTED after the PIN block is checked', async () => {
      const card = await createCard();
      const good = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/pin/change`, { method: 'POST', body: { expDate: EXP, pin: oaepEncrypt(pinKeyPem, '4321') } });
      expect(good.status).to.equal(500);
      expect(good.body.errorCode).to.equal('OPERATION_NOT_SUPPORTED');
      const bad = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/pin/change`, { method: 'POST', body: { expDate: EXP, pin: oaepEncrypt(pinKeyPem, 'abcd') } });
      expect(bad.body.errorCode).to.equal('INVALID_PIN_BLOCK');
      expect((await call(`${issuer}/cards/${card.cardKey}/pin/change`, { method: 'POST', body: { pin: 'x' } })).status).to.equal(400);
    });

    it('POST pin/force-lock: 500 OPERATION_NOT_SUPPORTED; expDate is required', async () => {
      const card = await createCard();
      const { status, body } = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/pin/force-lock`, { method: 'POST', body: { expDate: EXP } });
      expect(status).to.equal(500);
      expect(body.errorCode).to.equal('OPERATION_NOT_SUPPORTED');
      expect((await call(`${issuer}/cards/${card.cardKey}/pin/force-lock`, { method: 'POST' })).status).to.equal(400);
    });

    it('POST pin/reset-tries (no body) returns the card and restores the PIN attempts', async () => {
      const card = await createCard();
      const { status, body } = await call<Card>(`${issuer}/cards/${card.cardKey}/pin/reset-tries`, { method: 'POST' });
      expect(status).to.equal(200);
      expect(body.cardKey).to.equal(card.cardKey);
      expect((await stateOf(card.cardKey)).pinTriesRemaining).to.equal(3);
    });
  });

  describe('limits', () => {
    const NAMES = ['dailyPurchase', 'monthlyPurchase', 'dailyWithdrawal', 'monthlyWithdrawal', 'singleTransaction'];
    const expectConsistent = (limit: Limit): void => {
      expect(limit.available).to.equal(Math.max(0, Math.round((limit.value - limit.used) * 100) / 100));
    };

    it('GET limits: the five limits in the card currency, available = max(0, value - used)', async () => {
      const card = await createCard({ currency: 'USD' });
      const { status, body } = await call<Limit[]>(`${issuer}/cards/${card.cardKey}/limits`);
      expect(status).to.equal(200);
      expect(body.map((l) => l.name)).to.deep.equal(NAMES);
      body.forEach(expectConsistent);
      body.forEach((l) => expect(l.currency).to.equal('USD'));
      const byName = new Map(body.map((l) => [l.name, l]));
      expect(byName.get('dailyPurchase')?.value).to.equal(2000);
      expect(byName.get('monthlyPurchase')?.used).to.be.at.least(byName.get('dailyPurchase')?.used ?? 0);
      expect(byName.get('monthlyWithdrawal')?.used).to.be.at.least(byName.get('dailyWithdrawal')?.used ?? 0);
      expect(body.some((l) => l.used > 0)).to.equal(true);
    });

    it('scales default values for weak currencies', async () => {
      const card = await createCard({ currency: 'HUF' });
      expect((await call<Limit>(`${issuer}/cards/${card.cardKey}/limits/dailyPurchase`)).body).to.include({ value: 800000, currency: 'HUF' });
    });

    it('GET one limit and its available amount agree with the full list', async () => {
      const card = await createCard();
      const all = (await call<Limit[]>(`${issuer}/cards/${card.cardKey}/limits`)).body;
      for (const limit of all) {
        expect((await call<Limit>(`${issuer}/cards/${card.cardKey}/limits/${limit.name}`)).body).to.deep.equal(limit);
        expect((await call(`${issuer}/cards/${card.cardKey}/limits/${limit.name}/available`)).body).to.deep.equal({ available: limit.available });
      }
    });

    it('PUT one limit sets it; the list and available follow', async () => {
      const card = await createCard();
      const { status, body } = await call<Limit>(`${issuer}/cards/${card.cardKey}/limits/dailyWithdrawal`, { method: 'PUT', body: { name: 'dailyWithdrawal', value: 1234.5 } });
      expect(status).to.equal(200);
      expect(body.value).to.equal(1234.5);
      expectConsistent(body);
      const listed = (await call<Limit[]>(`${issuer}/cards/${card.cardKey}/limits`)).body.find((l) => l.name === 'dailyWithdrawal');
      expect(listed).to.deep.equal(body);
    });

    it('PATCH limits sets several at once and answers the full list', async () => {
      const card = await createCard();
      const { status, body } = await call<Limit[]>(`${issuer}/cards/${card.cardKey}/limits`, {
        method: 'PATCH',
        body: [{ name: 'dailyPurchase', value: 100 }, { name: 'singleTransaction', value: 50.25 }],
      });
      expect(status).to.equal(200);
      expect(body.map((l) => l.name)).to.deep.equal(NAMES);
      expect(body.find((l) => l.name === 'dailyPurchase')?.value).to.equal(100);
      expect(body.find((l) => l.name === 'singleTransaction')).to.include({ value: 50.25, used: 0, available: 50.25 });
      body.forEach(expectConsistent);
    });

    it('a value below the used amount leaves nothing available', async () => {
      const card = await createCard();
      await call(`${issuer}/__sandbox/cards/${card.cardKey}/limits/dailyPurchase`, { method: 'PUT', body: { used: 300 } });
      const { body } = await call<Limit>(`${issuer}/cards/${card.cardKey}/limits/dailyPurchase`, { method: 'PUT', body: { name: 'dailyPurchase', value: 200 } });
      expect(body).to.include({ value: 200, used: 300, available: 0 });
      expect((await call(`${issuer}/cards/${card.cardKey}/limits/dailyPurchase/available`)).body).to.deep.equal({ available: 0 });
    });

    it('unknown names are 404 UNKNOWN_LIMIT; negative values 400; a PATCH with one bad item changes nothing', async () => {
      const card = await createCard();
      const before = (await call<Limit[]>(`${issuer}/cards/${card.cardKey}/limits`)).body;
      const cases: Array<{ url: string; method: string; body?: unknown; status: number; errorCode: string }> = [
        { url: 'limits/weeklyPurchase', method: 'GET', status: 404, errorCode: 'UNKNOWN_LIMIT' },
        { url: 'limits/weeklyPurchase/available', method: 'GET', status: 404, errorCode: 'UNKNOWN_LIMIT' },
        { url: 'limits/weeklyPurchase', method: 'PUT', body: { name: 'weeklyPurchase', value: 1 }, status: 404, errorCode: 'UNKNOWN_LIMIT' },
        { url: 'limits/dailyPurchase', method: 'PUT', body: { name: 'dailyPurchase', value: -1 }, status: 400, errorCode: 'INVALID_LIMIT_VALUE' },
        { url: 'limits/dailyPurchase', method: 'PUT', body: { name: 'monthlyPurchase', value: 1 }, status: 400, errorCode: 'LIMIT_NAME_MISMATCH' },
        { url: 'limits/dailyPurchase', method: 'PUT', body: { name: 'dailyPurchase', value: '10' }, status: 400, errorCode: 'VALIDATION_ERROR' },
        { url: 'limits', method: 'PATCH', body: [{ name: 'dailyPurchase', value: 5 }, { name: 'weeklyPurchase', value: 5 }], status: 404, errorCode: 'UNKNOWN_LIMIT' },
        { url: 'limits', method: 'PATCH', body: [{ name: 'dailyPurchase', value: 5 }, { name: 'monthlyPurchase', value: -5 }], status: 400, errorCode: 'INVALID_LIMIT_VALUE' },
        { url: 'limits', method: 'PATCH', body: [], status: 400, errorCode: 'VALIDATION_ERROR' },
        { url: 'limits', method: 'PATCH', body: { name: 'dailyPurchase', value: 5 }, status: 400, errorCode: 'VALIDATION_ERROR' },
      ];
      for (const c of cases) {
        const { status, body } = await call<ErrorBody>(`${issuer}/cards/${card.cardKey}/${c.url}`, { method: c.method, body: c.body });
        expect(status, `${c.method} ${c.url} ${JSON.stringify(c.body)}`).to.equal(c.status);
        expect(body.errorCode).to.equal(c.errorCode);
      }
      expect((await call<Limit[]>(`${issuer}/cards/${card.cardKey}/limits`)).body).to.deep.equal(before);
    });
  });
});
