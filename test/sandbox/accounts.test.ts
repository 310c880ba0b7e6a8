import { expect } from 'chai';
import { startSandboxes, type RecordedRequest, type Sandboxes } from '../../sandbox';
import { call, type ErrorBody } from './http-client';

let onboardingSeq = 0;
function individual(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  onboardingSeq += 1;
  return {
    partnerId: '65f0000000000000000000aa',
    onboardingId: `65f1${String(onboardingSeq).padStart(20, '0')}`,
    baasAccountClientId: 42,
    firstName: 'Grace',
    middleName: 'Brewster',
    lastName: 'Hopper',
    country: 'US',
    city: 'New York',
    zipCode: '10001',
    buildingNumber: '12',
    address1: 'Main Street',
    birthDate: '1986-12-09',
    email: 'grace@example.com',
    phone: '+12125550123',
    idType: 'PASSPORT',
    passportNumber: 'P1234567',
    issuingDate: '2020-01-01',
    validityDate: '2030-01-01',
    passportCountry: 'US',
    birthCountry: 'US',
    nationality: 'US',
    ...overrides,
  };
}

interface Created {
  accountId: string;
  clientId: string;
  status: string;
}

describe('accounts sandbox (account-creation proxy)', () => {
  let sandboxes: Sandboxes;
  let accounts: string;

  before(async () => {
    sandboxes = await startSandboxes();
    accounts = sandboxes.accounts.url;
  });
  after(() => sandboxes.close());

  it('POST /accounts creates the account: 201 { accountId, clientId, status: CREATED }', async () => {
    const { status, body } = await call<Created>(`${accounts}/accounts`, { method: 'POST', body: individual() });
    expect(status).to.equal(201);
    expect(Object.keys(body).sort()).to.deep.equal(['accountId', 'clientId', 'status']);
    expect(body.accountId).to.match(/^[0-9a-f]{24}$/);
    expect(body.clientId).to.match(/^[1-9][0-9]{7}$/);
    expect(body.status).to.equal('CREATED');
  });

  it('GET /accounts/{accountId} returns the account with the individual as received', async () => {
    const sent = individual({ middleName: 'Q.' });
    const { body: created } = await call<Created>(`${accounts}/accounts`, { method: 'POST', body: sent });
    const { status, body } = await call<Record<string, unknown>>(`${accounts}/accounts/${created.accountId}`);
    expect(status).to.equal(200);
    expect(body).to.include({
      accountId: created.accountId,
      clientId: created.clientId,
      status: 'CREATED',
      partnerId: sent.partnerId,
      onboardingId: sent.onboardingId,
      baasAccountClientId: '42',
    });
    expect(body.individual).to.include({ firstName: 'Grace', middleName: 'Q.', lastName: 'Hopper', email: 'grace@example.com' });
    expect(body.createdAt).to.be.a('string');
  });

  it('GET /accounts?onboardingId= finds the account of an onboarding (reconciliation after a timeout)', async () => {
    const sent = individual();
    const { body: created } = await call<Created>(`${accounts}/accounts`, { method: 'POST', body: sent });
    const found = await call<{ data: Array<{ accountId: string }> }>(`${accounts}/accounts?onboardingId=${String(sent.onboardingId)}`);
    expect(found.body.data.map((a) => a.accountId)).to.deep.equal([created.accountId]);
    const none = await call<{ data: unknown[] }>(`${accounts}/accounts?onboardingId=nobody`);
    expect(none.body.data).to.deep.equal([]);
    expect((await call(`${accounts}/accounts`)).status).to.equal(400);
  });

  it('GET /accounts/{accountId} of an unknown id: 404 ACCOUNT_NOT_FOUND', async () => {
    for (const id of ['65f000000000000000000000', 'not-an-id']) {
      const { status, body } = await call<ErrorBody>(`${accounts}/accounts/${id}`);
      expect(status).to.equal(404);
      expect(body.errorCode).to.equal('ACCOUNT_NOT_FOUND');
    }
  });

  it('the same onboardingId with the same body (a retry): 201 with the first account again, no second account', async () => {
    const sent = individual();
    const first = await call(`${accounts}/accounts`, { method: 'POST', body: sent });
    expect(first.status).to.equal(201);
    // Same fields in another order: the same request.
    const reordered = Object.fromEntries(Object.entries(sent).reverse());
    const again = await call(`${accounts}/accounts`, { method: 'POST', body: reordered });
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    const all = await call<Array<{ onboardingId: string }>>(`${accounts}/__sandbox/accounts`);
    expect(all.body.filter((a) => a.onboardingId === sent.onboardingId)).to.have.length(1);
  });

  it('the same onboardingId with another body: 409 DUPLICATE_ONBOARDING, no second account', async () => {
    const sent = individual();
    expect((await call(`${accounts}/accounts`, { method: 'POST', body: sent })).status).to.equal(201);
    const { status, body } = await call<ErrorBody>(`${accounts}/accounts`, { method: 'POST', body: { ...sent, firstName: 'Other' } });
    expect(status).to.equal(409);
    expect(body.errorCode).to.equal('DUPLICATE_ONBOARDING');
    const all = await call<Array<{ onboardingId: string }>>(`${accounts}/__sandbox/accounts`);
    expect(all.body.filter((a) => a.onboardingId === sent.onboardingId)).to.have.length(1);
  });

  const invalid: Array<{ description: string; overrides: Record<string, unknown>; field: string }> = [
    { description: 'missing lastName', overrides: { lastName: undefined }, field: '/lastName' },
    { description: 'missing partnerId', overrides: { partnerId: undefined }, field: '/partnerId' },
    { description: 'a 1-char middleName', overrides: { middleName: 'B' }, field: '/middleName' },
    { description: 'a 3-letter country', overrides: { country: 'USA' }, field: '/country' },
    { description: 'a bad birthDate', overrides: { birthDate: '09.12.1986' }, field: '/birthDate' },
    { description: 'a bad email', overrides: { email: 'grace-at-example' }, field: '/email' },
    { description: 'an unknown idType', overrides: { idType: 'LIBRARY_CARD' }, field: '/idType' },
    { description: 'a fractional baasAccountClientId', overrides: { baasAccountClientId: 1.5 }, field: '/baasAccountClientId' },
  ];
  for (const { description, overrides, field } of invalid) {
    it(`refuses ${description}: 400 VALIDATION_ERROR naming ${field}`, async () => {
      const { status, body } = await call<ErrorBody>(`${accounts}/accounts`, { method: 'POST', body: individual(overrides) });
      expect(status).to.equal(400);
      expect(body.errorCode).to.equal('VALIDATION_ERROR');
      expect(body.details?.map((d) => d.path)).to.include(field);
    });
  }

  describe('lastName triggers', () => {
    it('SANDBOX-FAIL: 500 ACCOUNT_CREATION_FAILED and no account', async () => {
      const sent = individual({ lastName: 'SANDBOX-FAIL' });
      const { status, body } = await call<ErrorBody>(`${accounts}/accounts`, { method: 'POST', body: sent });
      expect(status).to.equal(500);
      expect(body.errorCode).to.equal('ACCOUNT_CREATION_FAILED');
      const found = await call<{ data: unknown[] }>(`${accounts}/accounts?onboardingId=${String(sent.onboardingId)}`);
      expect(found.body.data).to.deep.equal([]);
    });

    it('SANDBOX-TIMEOUT: no answer before the client aborts (~300 ms)', async () => {
      const started = Date.now();
      let error: unknown;
      try {
        await call(`${accounts}/accounts`, {
          method: 'POST',
          body: individual({ lastName: 'SANDBOX-TIMEOUT' }),
          signal: AbortSignal.timeout(300),
        });
      } catch (err) {
        error = err;
      }
      expect((error as Error).name).to.equal('TimeoutError');
      expect(Date.now() - started).to.be.within(280, 1000);
      const { body } = await call<RecordedRequest[]>(`${accounts}/__sandbox/requests?method=POST&path=/accounts`);
      expect(body.some((r) => (r.body as { lastName?: string }).lastName === 'SANDBOX-TIMEOUT')).to.equal(true);
    });

    it('SANDBOX-REJECT: 422 ACCOUNT_REJECTED', async () => {
      const { status, body } = await call<ErrorBody>(`${accounts}/accounts`, { method: 'POST', body: individual({ lastName: 'SANDBOX-REJECT' }) });
      expect(status).to.equal(422);
      expect(body.errorCode).to.equal('ACCOUNT_REJECTED');
    });

    it('SANDBOX-UNAVAILABLE: 503 SERVICE_UNAVAILABLE', async () => {
      const { status, body } = await call<ErrorBody>(`${accounts}/accounts`, { method: 'POST', body: individual({ lastName: 'SANDBOX-UNAVAILABLE' }) });
      expect(status).to.equal(503);
      expect(body.errorCode).to.equal('SERVICE_UNAVAILABLE');
    });

    it('SANDBOX-SLOW: answers 201 after about one second', async () => {
      const started = Date.now();
      const { status } = await call(`${accounts}/accounts`, { method: 'POST', body: individual({ lastName: 'SANDBOX-SLOW' }) });
      expect(status).to.equal(201);
      expect(Date.now() - started).to.be.at.least(950);
    });

    it('validation runs before triggers: SANDBOX-FAIL with a missing field is a 400', async () => {
      const { status } = await call(`${accounts}/accounts`, { method: 'POST', body: individual({ lastName: 'SANDBOX-FAIL', email: undefined }) });
      expect(status).to.equal(400);
    });
  });

  it('SANDBOX-TIMEOUT answers 504 SANDBOX_TIMEOUT after hangMs when started with a short hangMs', async () => {
    const quick = await startSandboxes({ hangMs: 100 });
    try {
      const { status, body } = await call<ErrorBody>(`${quick.accounts.url}/accounts`, {
        method: 'POST',
        body: individual({ lastName: 'SANDBOX-TIMEOUT' }),
      });
      expect(status).to.equal(504);
      expect(body.errorCode).to.equal('SANDBOX_TIMEOUT');
    } finally {
      await quick.close();
    }
  });
});
