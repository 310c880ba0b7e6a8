// The upstream clients end to end over real HTTP against the real sandboxes (no mock agent).
import { expect } from 'chai';
import { constants, privateDecrypt, publicEncrypt, type KeyObject } from 'node:crypto';
import { GatewayError } from '../../../../gateway/errors';
import { createUpstreamClients, upstreamPath, type CallContext, type CreateAccountRequest, type UpstreamClients, type UpstreamName, type UpstreamRequest } from '../../../../gateway/upstreams';
import { startSandboxes, type RecordedRequest, type Sandboxes } from '../../../../sandbox';
import { captureLogger } from './helpers';
import { rsaKeyPair } from '../../../support/keys';

const EXP = '12/2031';
let onboardingSeq = 0;

function individual(overrides: Partial<CreateAccountRequest> = {}): CreateAccountRequest {
  onboardingSeq += 1;
  return {
    partnerId: '65f0000000000000000000aa',
    onboardingId: `65f2${String(onboardingSeq).padStart(20, '0')}`,
    firstName: 'Grace',
    middleName: 'Brewster',
    lastName: 'Hopper',
    country: 'US',
    birthDate: '1986-12-09',
    email: 'grace@example.com',
    phone: '+12125550123',
    idType: 'PASSPORT',
    passportNumber: 'P1234567',
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

function oaepDecrypt(privateKey: KeyObject, base64: string): string {
  return privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(base64, 'base64')).toString();
}

/** A partner RSA-2048 key pair whose base64 SPKI contains `+` and `/`, so the query encoding is exercised. */
function partnerKeyPair(): { privateKey: KeyObject; securityKey: string } {
  for (let slot = 0; ; slot++) {
    const { publicKey, privateKey } = rsaKeyPair(2048, `sandbox-${slot}`);
    const securityKey = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    if (securityKey.includes('+') && securityKey.includes('/')) return { privateKey, securityKey };
  }
}

describe('unit: upstreams/clients against the real sandboxes', () => {
  let sandboxes: Sandboxes;
  let clients: UpstreamClients;
  const ctx = (requestId: string): CallContext => ({ requestId, timing: {} });

  before(async () => {
    sandboxes = await startSandboxes({ hangMs: 10_000 });
    const urls = { issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url };
    clients = createUpstreamClients(urls, { timeoutMs: 2000, log: captureLogger().log });
  });
  after(async () => {
    clients.close();
    await sandboxes.close();
  });

  /** A call as the `upstream-proxy` policy makes it: the upstream's HTTP client, fields picked and checked by the transform. */
  function proxied<T = unknown>(upstream: UpstreamName, context: CallContext, request: UpstreamRequest): Promise<T> {
    return clients.http[upstream].request<T>(context, { ...request, fieldsCheckedByCaller: true });
  }

  const deliveryMethods = (context: CallContext, country: string) =>
    proxied<{ country: string }>('processing', context, { method: 'GET', path: '/delivery-methods', query: { country } });

  async function secretsOf(cardKey: string): Promise<{ cardNumber: string; cvv: string }> {
    const response = await fetch(`${sandboxes.issuer.url}/__sandbox/cards/${cardKey}/secrets`);
    return (await response.json()) as { cardNumber: string; cvv: string };
  }

  it('creates an account and finds it by onboarding id, forwarding x-request-id', async () => {
    const body = individual();
    const created = await clients.accounts.createAccount(ctx('acc-1'), body);
    expect(created.clientId).to.match(/^\d{8}$/);
    expect(created).to.have.all.keys('accountId', 'clientId', 'status');
    const account = await clients.accounts.findByOnboardingId(ctx('acc-3'), body.onboardingId);
    expect(account).to.include({ accountId: created.accountId, clientId: created.clientId, onboardingId: body.onboardingId });
    expect(await clients.accounts.findByOnboardingId(ctx('acc-4'), 'no-such-onboarding')).to.equal(undefined);
    const recorded = (await (await fetch(`${sandboxes.accounts.url}/__sandbox/requests?method=POST&path=/accounts`)).json()) as RecordedRequest[];
    expect(recorded.at(-1)?.requestId).to.equal('acc-1');
    // The onboardingId is the operation id: a repeat of the request answers the same account, another body is refused.
    expect(await clients.accounts.createAccount(ctx('acc-5'), body)).to.deep.equal(created);
    expect((await rejection(clients.accounts.createAccount(ctx('acc-6'), { ...body, firstName: 'Other' }))).extensions).to.deep.equal({ upstream: 'accounts', upstreamCode: 'DUPLICATE_ONBOARDING' });
  });

  it('creates a card for the account, reads CVV and PAN encrypted under an RSA key, and its transactions are there at once', async () => {
    const { clientId } = await clients.accounts.createAccount(ctx('c-1'), individual());
    const card = await clients.issuer.createCard(ctx('c-2'), { type: 'virtual', clientCode: clientId, expDate: EXP, currency: 'EUR', productCode: 'P-STD', embossedName: 'GRACE' });
    expect(card).to.include({ holderClientCode: clientId, statusCode: '00', type: 'virtual' });
    expect(await clients.issuer.getCard(ctx('c-3'), card.cardKey)).to.deep.equal(card);
    expect(await clients.issuer.getStatus(ctx('c-4'), card.cardKey)).to.deep.equal({ cardKey: card.cardKey, statusCode: '00' });

    const { privateKey, securityKey } = partnerKeyPair();
    const secrets = await secretsOf(card.cardKey);
    const { cvv } = await proxied<{ cvv: string }>('issuer', ctx('c-5'), { method: 'GET', path: upstreamPath`/cards/${card.cardKey}/cvv`, query: { expDate: EXP, securityKey } });
    expect(oaepDecrypt(privateKey, cvv)).to.equal(secrets.cvv);
    const { cardNumber } = await proxied<{ cardNumber: string }>('issuer', ctx('c-6'), { method: 'GET', path: upstreamPath`/cards/${card.cardKey}/pan`, query: { expDate: EXP, securityKey } });
    expect(oaepDecrypt(privateKey, cardNumber)).to.equal(secrets.cardNumber);

    const page = await clients.processing.listTransactions(ctx('c-7'), { accountId: clientId, cardId: card.cardKey, page: 1, limit: 100 });
    expect(page.total).to.be.within(6, 24);
    expect(page.data.every((t) => t.cardId === card.cardKey && t.accountId === clientId)).to.equal(true);
  });

  it('PIN, status, limits, replace and the processing notifications round-trip', async () => {
    const card = await clients.issuer.createCard(ctx('p-1'), { type: 'physical', clientCode: '10000001', expDate: EXP, currency: 'EUR', productCode: 'P-STD' });
    expect((await clients.issuer.changeStatus(ctx('p-2'), card.cardKey, { action: 'activate', expDate: EXP })).statusCode).to.equal('00');
    const wrongExp = await rejection(clients.issuer.changeStatus(ctx('p-3'), card.cardKey, { action: 'lock', expDate: '11/2031' }));
    expect(wrongExp).to.include({ status: 422, code: 'upstream_rejected', message: 'The card issuer platform refused the request (EXP_DATE_MISMATCH)' });

    const pinKey = await proxied<{ publicKey: string }>('issuer', ctx('p-4'), { method: 'GET', path: '/pin-encryption-key' });
    const pin = publicEncrypt({ key: pinKey.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('1234')).toString('base64');
    expect((await clients.issuer.authorize(ctx('p-5'), card.cardKey, { pin })).cardKey).to.equal(card.cardKey);
    expect((await clients.issuer.resetPinTries(ctx('p-6'), card.cardKey)).cardKey).to.equal(card.cardKey);
    const unsupported = await rejection(clients.issuer.changePin(ctx('p-7'), card.cardKey, { expDate: EXP, pin }));
    expect(unsupported).to.include({ status: 502, code: 'upstream_error' });
    expect(unsupported.extensions).to.deep.equal({ upstream: 'issuer', upstreamCode: 'OPERATION_NOT_SUPPORTED' });

    await clients.issuer.patchLimits(ctx('p-8'), card.cardKey, [{ name: 'dailyPurchase', value: 150 }]);
    expect((await clients.issuer.setLimit(ctx('p-9'), card.cardKey, 'singleTransaction', { name: 'singleTransaction', value: 99 })).value).to.equal(99);
    const limit = (name: string) => upstreamPath`/cards/${card.cardKey}/limits/${name}`;
    expect((await proxied<{ value: number }>('issuer', ctx('p-10'), { method: 'GET', path: limit('dailyPurchase') })).value).to.equal(150);
    expect((await proxied<{ available: number }>('issuer', ctx('p-11'), { method: 'GET', path: `${limit('singleTransaction')}/available` })).available).to.equal(99);
    expect(await rejection(proxied('issuer', ctx('p-12'), { method: 'GET', path: limit('weekly') }))).to.include({ status: 404, code: 'not_found' });

    const { cardKey: newKey } = await clients.issuer.replace(ctx('p-13'), card.cardKey, { expDate: '01/2033', reason: 'damaged' });
    const replacement = await clients.issuer.getCard(ctx('p-14'), newKey);
    expect(await rejection(clients.issuer.getCard(ctx('p-15'), card.cardKey))).to.include({ status: 404, code: 'not_found' });
    await clients.processing.cardCreated(ctx('p-16'), {
      event: 'card_created', cardKey: newKey, previousCardKey: card.cardKey, cardMask: replacement.cardMask, type: 'physical',
      ownerType: 'individual', ownerId: '65f0000000000000000000c1', partnerId: '65f0000000000000000000aa', occurredAt: new Date().toISOString(),
    });
    expect(await clients.processing.statusUpdate(ctx('p-17'), { cardKey: card.cardKey, statusCode: '00' })).to.deep.equal({ accepted: true });
    const fee = await proxied<{ fee: number }>('processing', ctx('p-18'), { method: 'POST', path: '/fees', body: { OperationType: 'CARD_ISSUING_FEE', CustomerType: 'Business Prepaid', ProductType: 'R005', cardKey: newKey } });
    expect(fee.fee).to.equal(65);
    expect((await deliveryMethods(ctx('p-19'), 'de')).country).to.equal('DE');
  });

  it('SANDBOX-FAIL: 502 upstream_error (ACCOUNT_CREATION_FAILED); SANDBOX-UNAVAILABLE: 502 with Retry-After', async () => {
    const failed = await rejection(clients.accounts.createAccount(ctx('f-1'), individual({ lastName: 'SANDBOX-FAIL' })));
    expect(failed).to.include({ status: 502, code: 'upstream_error', message: 'The account-creation service failed (ACCOUNT_CREATION_FAILED)' });
    expect(failed.extensions).to.deep.equal({ upstream: 'accounts', upstreamCode: 'ACCOUNT_CREATION_FAILED' });
    const unavailable = await rejection(clients.accounts.createAccount(ctx('f-2'), individual({ lastName: 'SANDBOX-UNAVAILABLE' })));
    expect(unavailable).to.include({ status: 502, code: 'upstream_error' });
    expect(unavailable.headers).to.deep.equal({ 'Retry-After': '1' });
  });

  it('SANDBOX-TIMEOUT with timeoutMs 300: 504 upstream_timeout after ~300 ms', async () => {
    const fast = createUpstreamClients(
      { issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url },
      { timeoutMs: 300, log: captureLogger().log },
    );
    const started = Date.now();
    const context = ctx('t-1');
    const error = await rejection(fast.accounts.createAccount(context, individual({ lastName: 'SANDBOX-TIMEOUT' })));
    const elapsed = Date.now() - started;
    expect(error).to.include({ status: 504, code: 'upstream_timeout' });
    expect(error.extensions).to.deep.equal({ upstream: 'accounts' });
    expect(elapsed).to.be.within(280, 1500);
    expect(context.timing?.upstreamLatencyMs).to.be.at.least(290);
    fast.close();
  });

  it('injected reset and malformed faults: 502 upstream_error', async () => {
    for (const mode of ['reset', 'malformed'] as const) {
      await fetch(`${sandboxes.processing.url}/__sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ method: 'GET', path: '/delivery-methods', mode }),
      });
      const error = await rejection(deliveryMethods(ctx(`m-${mode}`), 'FR'));
      expect(error, mode).to.include({ status: 502, code: 'upstream_error' });
    }
    expect((await deliveryMethods(ctx('m-ok'), 'FR')).country).to.equal('FR');
  });
});
