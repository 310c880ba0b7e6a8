import crypto from 'node:crypto';
import { expect } from 'chai';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls, type ApiResponse } from '../support/api';
import { logsSettled, startGatewayProcess, waitForRequestLog, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { rsaKeyPair } from '../support/keys';

/** A well-formed card key the issuer never made. */
const UNKNOWN_CARD = 'CKFFFFFFFFFFFFFFFF';

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** An RSA key pair as a partner makes it: `securityKey` is base64 of the SPKI DER public key. */
function securityKeyPair(modulusLength = 2048): { securityKey: string; decrypt(ciphertext: string): string } {
  const { publicKey, privateKey } = rsaKeyPair(modulusLength);
  const securityKey = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  recordSecret('securityKey', securityKey);
  return {
    securityKey,
    decrypt: (ciphertext) =>
      crypto.privateDecrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(ciphertext, 'base64')).toString('utf8'),
  };
}

const secretQuery = (expDate: string, securityKey: string) => `?${new URLSearchParams({ expDate, securityKey })}`;

describe('e2e: proxied card reads, fees and delivery methods (upstream-proxy)', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let globex: TestPartner;
  let sandboxes: { issuer: string; processing: string; accounts: string };
  let ada: any;
  let card: any; // acme's virtual card
  let leakCard: any; // acme's SANDBOX-LEAK card
  let globexCard: any;
  let globexIndividual: any; // globex's individual (owner of globexCard)
  /** Every secret this suite handled: none may appear in the gateway's output. */
  const secrets = { pans: [] as string[], cvvs: [] as string[], texts: [] as string[] };
  const keys = securityKeyPair();

  before(async function () {
    // 2 s: the hang case waits for it, and on a loaded machine the set-up's own upstream calls
    // (account creation, card issues) took longer than the 800 ms used before.
    gateway = await startGatewayProcess({ env: { UPSTREAM_TIMEOUT_MS: '2000', LOG_LEVEL: 'debug' } });
    sandboxes = sandboxUrls(gateway);
    acme = await registerPartner(gateway, 'acme-proxy');
    globex = await registerPartner(gateway, 'globex-proxy');
    const createIndividual = async (partner: TestPartner, body: unknown) => {
      const created = await api(gateway, partner, 'POST', '/individual/accounts', { body });
      if (created.status !== 201) throw new Error(`individual creation failed: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body;
    };
    ada = await createIndividual(acme, individualBody());
    const grace = await createIndividual(globex, individualBody({ firstName: 'Grace', lastName: 'Hopper' }));
    const issue = async (partner: TestPartner, individual: any, overrides: Record<string, unknown> = {}) => {
      const created = await api(gateway, partner, 'POST', `/individual/accounts/${individual._id}/cards/virtual`, { body: cardBody(individual.clientID, overrides) });
      if (created.status !== 201) throw new Error(`card issuance failed: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body;
    };
    card = await issue(acme, ada);
    leakCard = await issue(acme, ada, { embossedName: 'SANDBOX-LEAK' });
    globexCard = await issue(globex, grace);
    globexIndividual = grace;
    for (const c of [card, leakCard, globexCard]) {
      const s = await sandboxControl(sandboxes.issuer, 'GET', `/__sandbox/cards/${c.cardKey}/secrets`);
      secrets.pans.push(s.cardNumber);
      secrets.cvvs.push(s.cvv);
    }
    secrets.texts.push(keys.securityKey);
    // The issuer sandbox makes its RSA-2048 PIN key at the first request that needs it, in the
    // request, once per sandbox process (a real issuer has had one all along): on a loaded machine
    // that took longer than this suite's short upstream timeout, which is meant for the fault
    // cases. Made here, so that the PIN-key test measures the gateway, not the keygen.
    await sandboxControl(sandboxes.issuer, 'GET', '/pin-encryption-key');
  });

  afterEach(async function () {
    await sandboxControl(sandboxes.issuer, 'DELETE', '/__sandbox/faults');
    await sandboxControl(sandboxes.processing, 'DELETE', '/__sandbox/faults');
  });

  after(async function () {
    await gateway?.stop();
  });

  const get = (path: string, partner: TestPartner | null = acme, headers?: Record<string, string>): Promise<ApiResponse> => api(gateway, partner, 'GET', path, { headers });
  const secretsOf = (cardKey: string) => sandboxControl(sandboxes.issuer, 'GET', `/__sandbox/cards/${cardKey}/secrets`);

  /** Every proxied card route: path template, and a valid query. */
  const cardRoutes: { route: string; query?: () => string }[] = [
    { route: '/cards/{id}' },
    { route: '/cards/{id}/status' },
    { route: '/cards/{id}/cvv', query: () => secretQuery(card.expDate, keys.securityKey) },
    { route: '/cards/{id}/pan', query: () => secretQuery(card.expDate, keys.securityKey) },
    { route: '/cards/{id}/limits' },
    { route: '/cards/{id}/limits/dailyPurchase' },
    { route: '/cards/{id}/limits/dailyPurchase/available' },
  ];

  describe('authentication and ownership on every proxied route', function () {
    for (const { route, query } of cardRoutes) {
      it(`GET ${route}: 401 without a token, 403 on another partner's card, 404 on an unknown card (upstream not called)`, async function () {
        const path = (cardKey: string) => route.replace('{id}', cardKey) + (query?.() ?? '');
        await sandboxControl(sandboxes.issuer, 'DELETE', '/__sandbox/requests');
        const anonymous = await get(path(card.cardKey), null);
        expect(anonymous.status).to.equal(401);
        expect(anonymous.body.code).to.equal('token_missing');
        const foreign = await get(path(globexCard.cardKey));
        expect(foreign.status).to.equal(403);
        expect(foreign.body.code).to.equal('forbidden');
        const unknown = await get(path(UNKNOWN_CARD));
        expect(unknown.status).to.equal(404);
        expect(unknown.body.code).to.equal('not_found');
        const received = await sandboxControl(sandboxes.issuer, 'GET', '/__sandbox/requests');
        expect(received, 'no refused request reached the issuer').to.have.length(0);
      });
    }

    const publicRoutes: [string, string, unknown?][] = [
      ['GET', '/pin-encryption-key'],
      ['GET', '/delivery-methods?country=DE'],
      ['POST', '/fees/card-issuing', { CustomerType: 'Consumer Debit', ProductType: 'R001', clientId: '1' }],
      ['POST', '/fees/card-delivery', { CustomerType: 'Consumer Debit', ProductType: 'R001', clientId: '1' }],
    ];
    for (const [method, path, body] of publicRoutes) {
      it(`${method} ${path}: 401 without a token`, async function () {
        const response = await api(gateway, null, method, path, { body });
        expect(response.status).to.equal(401);
        expect(response.body.code).to.equal('token_missing');
      });
    }
  });

  describe('GET /cards/{id} and /status', function () {
    it('answers the full card (spec 2.3) with the issuer\'s current status, and forwards the request id', async function () {
      const response = await get(`/cards/${card.cardKey}`, acme, { 'x-request-id': 'proxy-e2e-details' });
      expect(response.status).to.equal(200);
      expect(response.headers.get('cache-control')).to.equal('no-store');
      expect(response.body).to.include({
        cardKey: card.cardKey,
        cardMask: card.cardMask,
        type: 'virtual',
        status: 'ACTIVE',
        statusCode: '00',
        currency: 'EUR',
        ownerType: 'individual',
        ownerId: ada._id,
        productCode: 'P-STD',
        holderClientCode: ada.clientID,
        expDate: card.expDate,
      });
      expect(response.body.createdAt).to.equal(card.createdAt);
      const calls = await sandboxControl(sandboxes.issuer, 'GET', `/__sandbox/requests?path=/cards/${card.cardKey}`);
      const call = calls.find((c: any) => c.requestId === 'proxy-e2e-details');
      expect(call, 'x-request-id forwarded').to.not.equal(undefined);
      expect(call.headers).to.not.have.any.keys('authorization', 'cookie', 'idempotency-key');
    });

    it('never answers the PAN or CVV of a SANDBOX-LEAK card (the issuer sends them)', async function () {
      const leaked = await secretsOf(leakCard.cardKey);
      const response = await get(`/cards/${leakCard.cardKey}`);
      expect(response.status).to.equal(200);
      expect(response.body.embossedName).to.equal('SANDBOX-LEAK');
      expect(response.body).to.not.have.any.keys('cardNumber', 'cvv');
      const text = JSON.stringify(response.body);
      expect(text).to.not.match(/\d{16}/);
      expect(text).to.not.include(leaked.cardNumber);
    });

    it('GET /status answers the card status result (spec 2.4)', async function () {
      const response = await get(`/cards/${card.cardKey}/status`);
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ cardKey: card.cardKey, status: 'ACTIVE', statusCode: '00' });
    });

    it('a card the issuer no longer knows is 404 (upstream 404 CARD_NOT_FOUND)', async function () {
      await sandboxControl(sandboxes.issuer, 'POST', '/__sandbox/faults', { method: 'GET', path: `/cards/${card.cardKey}`, mode: 'status', status: 404 });
      const response = await get(`/cards/${card.cardKey}`);
      expect(response.status).to.equal(404);
      expect(response.body).to.include({ code: 'not_found', upstream: 'issuer', upstreamCode: 'SANDBOX_FAULT' });
    });
  });

  describe('GET /cards/{id}/cvv and /pan (RSA-OAEP-256 under the partner\'s securityKey)', function () {
    const reads = [
      { route: 'cvv', field: 'cvv', operation: 'card.cvv.read', check: (clear: string) => expect(clear).to.match(/^\d{3}$/) },
      {
        route: 'pan',
        field: 'cardNumber',
        operation: 'card.pan.read',
        check: (clear: string) => {
          expect(clear).to.match(/^\d{16}$/);
          expect(luhnValid(clear), 'Luhn-valid').to.equal(true);
        },
      },
    ] as const;

    for (const read of reads) {
      it(`${read.route}: decrypts to the issuer's ${read.field}, no-store, and is audited as ${read.operation}`, async function () {
        const requestId = `proxy-e2e-${read.route}-${Date.now()}`;
        const response = await get(`/cards/${card.cardKey}/${read.route}${secretQuery(card.expDate, keys.securityKey)}`, acme, { 'x-request-id': requestId });
        expect(response.status).to.equal(200);
        expect(response.headers.get('cache-control')).to.equal('no-store');
        expect(Object.keys(response.body)).to.deep.equal([read.field]);
        secrets.texts.push(response.body[read.field]);
        recordSecret('cardCiphertext', response.body[read.field]);
        const clear = keys.decrypt(response.body[read.field]);
        read.check(clear);
        expect(clear).to.equal((await secretsOf(card.cardKey))[read.field]);
        const sent = (await sandboxControl(sandboxes.issuer, 'GET', `/__sandbox/requests?path=/cards/${card.cardKey}/${read.route}`)).find((c: any) => c.requestId === requestId);
        expect(sent.query.securityKey, 'the securityKey arrives intact (+ / =)').to.equal(keys.securityKey);
        expect(sent.headers).to.not.have.property('authorization');
        const audit = await get(`/individual/accounts/${ada._id}/audit-logs`);
        const entry = audit.body.data.find((e: any) => e.requestId === requestId);
        expect(entry, 'audit entry').to.include({ operation: read.operation, targetType: 'card', targetId: card.cardKey, outcome: 'success' });
        // As a value of its own: a 3-digit CVV is also a substring of the entry's dates and hex ids.
        expect(JSON.stringify(entry)).to.not.match(new RegExp(`(?<![0-9A-Za-z])${clear}(?![0-9A-Za-z])`));
      });

      it(`${read.route}: refuses a missing, short, EC or garbage securityKey and a bad expDate with 400, and never calls the issuer`, async function () {
        const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
        recordSecret('securityKey', ec);
        const short = securityKeyPair(1024).securityKey;
        secrets.texts.push(short);
        const invalid: { description: string; query: string; field: string }[] = [
          { description: 'no securityKey', query: `?expDate=${encodeURIComponent(card.expDate)}`, field: 'securityKey' },
          { description: 'a 1024-bit RSA key', query: secretQuery(card.expDate, short), field: 'securityKey' },
          { description: 'an EC key', query: secretQuery(card.expDate, ec), field: 'securityKey' },
          { description: 'garbage', query: secretQuery(card.expDate, 'not-a-key!!'), field: 'securityKey' },
          { description: 'an expDate that is not MM/YYYY', query: secretQuery('2030-12', keys.securityKey), field: 'expDate' },
          { description: 'no expDate', query: `?securityKey=${encodeURIComponent(keys.securityKey)}`, field: 'expDate' },
        ];
        await sandboxControl(sandboxes.issuer, 'DELETE', '/__sandbox/requests');
        for (const testCase of invalid) {
          const response = await get(`/cards/${card.cardKey}/${read.route}${testCase.query}`);
          expect(response.status, testCase.description).to.equal(400);
          expect(response.body.code).to.equal('validation_failed');
          expect(response.body.invalidParams.map((p: any) => p.name), testCase.description).to.include(testCase.field);
        }
        expect(await sandboxControl(sandboxes.issuer, 'GET', '/__sandbox/requests')).to.have.length(0);
      });

      it(`${read.route}: another card's expiry is 422 upstream_rejected (EXP_DATE_MISMATCH), audited as a failure`, async function () {
        const [month, year] = card.expDate.split('/');
        const requestId = `proxy-e2e-${read.route}-mismatch-${Date.now()}`;
        const response = await get(`/cards/${card.cardKey}/${read.route}${secretQuery(`${month}/${Number(year) + 1}`, keys.securityKey)}`, acme, { 'x-request-id': requestId });
        expect(response.status).to.equal(422);
        expect(response.body).to.include({ code: 'upstream_rejected', upstreamCode: 'EXP_DATE_MISMATCH' });
        const audit = await get(`/individual/accounts/${ada._id}/audit-logs`);
        expect(audit.body.data.find((e: any) => e.requestId === requestId)).to.deep.include({ outcome: 'failure', targetId: card.cardKey });
      });
    }
  });

  describe('limits', function () {
    it('GET /limits answers all five limits (spec 2.5)', async function () {
      const response = await get(`/cards/${card.cardKey}/limits`);
      expect(response.status).to.equal(200);
      expect(response.body.map((l: any) => l.name)).to.deep.equal(['dailyPurchase', 'monthlyPurchase', 'dailyWithdrawal', 'monthlyWithdrawal', 'singleTransaction']);
      for (const limit of response.body) expect(limit).to.have.all.keys('name', 'value', 'currency', 'used', 'available');
    });

    it('GET /limits/{name} answers one limit; GET .../available its available amount', async function () {
      const one = await get(`/cards/${card.cardKey}/limits/dailyWithdrawal`);
      expect(one.status).to.equal(200);
      expect(one.body).to.include({ name: 'dailyWithdrawal', value: 500, currency: 'EUR' });
      const available = await get(`/cards/${card.cardKey}/limits/dailyWithdrawal/available`);
      expect(available.status).to.equal(200);
      expect(available.body).to.deep.equal({ available: one.body.available });
    });

    for (const suffix of ['', '/available']) {
      it(`GET /limits/{name}${suffix} refuses an unknown limit name with 400`, async function () {
        const response = await get(`/cards/${card.cardKey}/limits/bogusLimit${suffix}`);
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('validation_failed');
        expect(response.body.invalidParams.map((p: any) => p.name)).to.include('limitName');
      });
    }
  });

  describe('GET /pin-encryption-key', function () {
    it('answers the issuer\'s PIN key', async function () {
      const response = await get('/pin-encryption-key');
      expect(response.status).to.equal(200);
      expect(response.body).to.have.all.keys('keyId', 'algorithm', 'publicKey');
      expect(response.body.algorithm).to.equal('RSA-OAEP-256');
      expect(crypto.createPublicKey(response.body.publicKey).asymmetricKeyType).to.equal('rsa');
    });
  });

  describe('GET /delivery-methods', function () {
    it('wraps the processing system\'s answer in data (spec 4.4)', async function () {
      const response = await get('/delivery-methods?country=DE');
      expect(response.status).to.equal(200);
      expect(response.body).to.have.all.keys('data');
      expect(response.body.data).to.include({ success: true, country: 'DE' });
      expect(response.body.data.deliveryMethods.map((m: any) => m.id)).to.deep.equal(['de-dp-standard', 'de-dhl-express']);
      expect(response.body.data.deliveryMethods[0]).to.have.all.keys('id', 'type', 'carrier', 'name', 'estimatedDays', 'fee', 'currency');
    });

    for (const [description, query] of [
      ['a country that is not ISO 3166-1 (XX)', '?country=XX'],
      ['a lower-case country (de)', '?country=de'],
      ['no country', ''],
      ['an extra parameter', '?country=DE&carrier=DHL'],
    ]) {
      it(`refuses ${description} with 400`, async function () {
        const response = await get(`/delivery-methods${query}`);
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('validation_failed');
      });
    }
  });

  describe('POST /fees/card-issuing and /fees/card-delivery', function () {
    const fees = [
      { route: '/fees/card-issuing', operationType: 'CARD_ISSUING_FEE', fee: 8 },
      { route: '/fees/card-delivery', operationType: 'CARD_DELIVERY_FEE', fee: 4.5 },
    ];
    for (const { route, operationType, fee } of fees) {
      it(`${route}: the gateway fixes OperationType ${operationType} upstream and answers the fee result (spec 2.6)`, async function () {
        const requestId = `proxy-e2e-fee-${operationType}`;
        const response = await api(gateway, acme, 'POST', route, {
          body: { CustomerType: 'Business Debit', ProductType: 'R002', cardKey: card.cardKey },
          headers: { 'x-request-id': requestId, 'idempotency-key': 'fee-key-1' },
        });
        expect(response.status).to.equal(200);
        expect(response.body).to.deep.equal({ OperationType: operationType, CustomerType: 'Business Debit', ProductType: 'R002', fee, currency: 'EUR' });
        const sent = (await sandboxControl(sandboxes.processing, 'GET', '/__sandbox/requests?path=/fees')).find((r: any) => r.requestId === requestId);
        expect(sent.method).to.equal('POST');
        expect(sent.body).to.deep.equal({ CustomerType: 'Business Debit', ProductType: 'R002', cardKey: card.cardKey, OperationType: operationType });
        expect(sent.headers).to.not.have.any.keys('authorization', 'idempotency-key');
      });

      // Issue 11 item 10: a cardKey or clientId named in the body is owned like a path id.
      const feeBody = (ids: Record<string, string>) => ({ CustomerType: 'Business Debit', ProductType: 'R002', ...ids });
      const ownershipCases: { description: string; partner: () => TestPartner; ids: () => Record<string, string>; expectedStatus: number; expectedCode?: string }[] = [
        { description: "another partner's cardKey", partner: () => globex, ids: () => ({ cardKey: card.cardKey }), expectedStatus: 403, expectedCode: 'forbidden' },
        { description: "another partner's clientId", partner: () => globex, ids: () => ({ clientId: ada.clientID }), expectedStatus: 403, expectedCode: 'forbidden' },
        { description: "its own clientId with another partner's cardKey", partner: () => globex, ids: () => ({ clientId: globexIndividual.clientID, cardKey: card.cardKey }), expectedStatus: 403, expectedCode: 'forbidden' },
        { description: "its own cardKey with another partner's clientId", partner: () => globex, ids: () => ({ cardKey: globexCard.cardKey, clientId: ada.clientID }), expectedStatus: 403, expectedCode: 'forbidden' },
        { description: "another partner's cardKey next to an iban", partner: () => globex, ids: () => ({ cardKey: card.cardKey, iban: 'DE89370400440532013000' }), expectedStatus: 403, expectedCode: 'forbidden' },
        { description: 'an unknown cardKey', partner: () => acme, ids: () => ({ cardKey: UNKNOWN_CARD }), expectedStatus: 404, expectedCode: 'not_found' },
        { description: 'an unknown clientId', partner: () => acme, ids: () => ({ clientId: '99999999999' }), expectedStatus: 404, expectedCode: 'not_found' },
        { description: 'a malformed cardKey', partner: () => acme, ids: () => ({ cardKey: 'CK/../1' }), expectedStatus: 400, expectedCode: 'invalid_id' },
        { description: 'its own cardKey', partner: () => acme, ids: () => ({ cardKey: card.cardKey }), expectedStatus: 200 },
        { description: 'its own clientId', partner: () => acme, ids: () => ({ clientId: ada.clientID }), expectedStatus: 200 },
        { description: 'its own cardKey and clientId', partner: () => globex, ids: () => ({ cardKey: globexCard.cardKey, clientId: globexIndividual.clientID }), expectedStatus: 200 },
        { description: 'an iban alone (passed through: docs/decisions.md)', partner: () => globex, ids: () => ({ iban: 'DE89370400440532013000' }), expectedStatus: 200 },
      ];
      for (const testCase of ownershipCases) {
        it(`${route}: ${testCase.description} → ${testCase.expectedStatus}${testCase.expectedStatus === 200 ? ' (forwarded as sent)' : ' (processing not called)'}`, async function () {
          await sandboxControl(sandboxes.processing, 'DELETE', '/__sandbox/requests');
          const body = feeBody(testCase.ids());
          const response = await api(gateway, testCase.partner(), 'POST', route, { body });
          expect(response.status, JSON.stringify(response.body)).to.equal(testCase.expectedStatus);
          const sent = await sandboxControl(sandboxes.processing, 'GET', '/__sandbox/requests?path=/fees');
          if (testCase.expectedStatus === 200) {
            expect(response.body).to.include({ OperationType: operationType, fee });
            expect(sent).to.have.length(1);
            expect(sent[0].body).to.deep.equal({ ...body, OperationType: operationType });
          } else {
            expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
            expect(response.body.code).to.equal(testCase.expectedCode);
            expect(sent, 'a refused fee check never reaches the processing system').to.have.length(0);
          }
        });
      }

      const invalid: { description: string; body: Record<string, unknown> }[] = [
        { description: 'none of cardKey, clientId, iban', body: { CustomerType: 'Consumer Debit', ProductType: 'R001' } },
        { description: 'an unknown CustomerType', body: { CustomerType: 'Consumer Credit', ProductType: 'R001', clientId: '1' } },
        { description: 'an unknown ProductType', body: { CustomerType: 'Consumer Debit', ProductType: 'R007', clientId: '1' } },
        { description: 'no CustomerType', body: { ProductType: 'R001', clientId: '1' } },
      ];
      for (const testCase of invalid) {
        it(`${route}: refuses ${testCase.description} with 400 (processing not called)`, async function () {
          await sandboxControl(sandboxes.processing, 'DELETE', '/__sandbox/requests');
          const response = await api(gateway, acme, 'POST', route, { body: testCase.body });
          expect(response.status).to.equal(400);
          expect(response.body.code).to.equal('validation_failed');
          expect(await sandboxControl(sandboxes.processing, 'GET', '/__sandbox/requests?path=/fees')).to.have.length(0);
        });
      }
    }
  });

  describe('upstream faults', function () {
    const faults: { description: string; fault: Record<string, unknown>; expectedStatus: number; expectedCode: string }[] = [
      { description: 'a hang (UPSTREAM_TIMEOUT_MS=2000)', fault: { mode: 'timeout' }, expectedStatus: 504, expectedCode: 'upstream_timeout' },
      { description: 'a reset mid-response', fault: { mode: 'reset' }, expectedStatus: 502, expectedCode: 'upstream_error' },
      { description: 'a malformed 200', fault: { mode: 'malformed' }, expectedStatus: 502, expectedCode: 'upstream_error' },
      { description: 'a 500', fault: { mode: 'status', status: 500 }, expectedStatus: 502, expectedCode: 'upstream_error' },
      { description: 'a 404', fault: { mode: 'status', status: 404 }, expectedStatus: 404, expectedCode: 'not_found' },
    ];
    for (const { description, fault, expectedStatus, expectedCode } of faults) {
      it(`the issuer's ${description} → ${expectedStatus} ${expectedCode}, and the gateway stays up`, async function () {
        await sandboxControl(sandboxes.issuer, 'POST', '/__sandbox/faults', { method: 'GET', path: `/cards/${card.cardKey}/status`, ...fault });
        const started = Date.now();
        const response = await get(`/cards/${card.cardKey}/status`);
        expect(response.status).to.equal(expectedStatus);
        expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(response.body).to.include({ code: expectedCode, upstream: 'issuer' });
        expect(JSON.stringify(response.body)).to.not.include('Injected fault').and.not.include('this is not JSON');
        if (fault.mode === 'timeout') expect(Date.now() - started).to.be.below(5000);
        expect((await get('/health-check', null)).status).to.equal(200);
        const again = await get(`/cards/${card.cardKey}/status`);
        expect(again.status, 'the next call succeeds').to.equal(200);
      });
    }

    it('the processing system\'s 503 on /fees → 502 with Retry-After', async function () {
      await sandboxControl(sandboxes.processing, 'POST', '/__sandbox/faults', { method: 'POST', path: '/fees', mode: 'status', status: 503 });
      const response = await api(gateway, acme, 'POST', '/fees/card-issuing', { body: { CustomerType: 'Consumer Debit', ProductType: 'R001', clientId: ada.clientID } });
      expect(response.status).to.equal(502);
      expect(response.body).to.include({ code: 'upstream_error', upstream: 'processing' });
      expect(response.headers.get('retry-after')).to.equal('1');
    });

    it('writes the upstream latency to the access log', async function () {
      await get(`/cards/${card.cardKey}/status`, acme, { 'x-request-id': 'proxy-e2e-latency' });
      const line = await waitForRequestLog(gateway, 'proxy-e2e-latency');
      expect(line.upstreamLatencyMs).to.be.a('number').and.to.be.above(0);
    });
  });

  describe('the gateway output', function () {
    it('holds none of the PANs, CVVs, securityKeys or ciphertexts used', async function () {
      // Every line of the requests answered so far is written (debug lines come before their request's access-log line).
      await logsSettled(gateway);
      const output = gateway.output();
      expect(output.length).to.be.above(0);
      for (const pan of secrets.pans) expect(output, 'a PAN').to.not.include(pan);
      for (const text of secrets.texts) {
        // Raw, and as it travels in a query string.
        for (const form of [text, encodeURIComponent(text), new URLSearchParams({ k: text }).toString().slice(2)]) {
          expect(output, 'a securityKey or ciphertext').to.not.include(form);
        }
      }
      // A 3-digit CVV is found in any log by chance (ports, latencies): no logged value may be one.
      const values: string[] = [];
      const walk = (value: unknown): void => {
        if (typeof value === 'string') values.push(value);
        else if (value && typeof value === 'object') Object.values(value).forEach(walk);
      };
      gateway.logLines().forEach(walk);
      for (const cvv of secrets.cvvs) {
        expect(values, 'a CVV as a logged value').to.not.include(cvv);
        expect(output).to.not.match(new RegExp(`(cvv|cvv2)["=:\\s]+"?${cvv}\\b`, 'i'));
      }
    });
  });
});
