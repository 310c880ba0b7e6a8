import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { runDatabaseUrl } from '../support/test-database';

const UNKNOWN_ID = 'ffffffffffffffffffffffff';
/** A PAN a test sends: recorded so the run's log scan looks for it (test/setup.ts). */
const recordedPan = (pan: string) => (recordSecret('pan', pan), pan);

describe('e2e: individual accounts and card issuance (spec 4.2)', function () {
  this.timeout(60_000);
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let globex: TestPartner;
  let sandboxes: { issuer: string; processing: string; accounts: string };
  let db: Client;
  let ada: any; // acme's individual
  let grace: any; // globex's individual

  async function counts(partnerId: string) {
    const row = await db.query(
      `SELECT (SELECT count(*) FROM users WHERE partner_id = $1)::int AS users,
              (SELECT count(*) FROM individual_onboardings WHERE partner_id = $1)::int AS onboardings,
              (SELECT count(*) FROM audit_log WHERE partner_id = $1)::int AS audit,
              (SELECT count(*) FROM cards WHERE partner_id = $1)::int AS cards,
              (SELECT count(*) FROM card_status_history WHERE partner_id = $1)::int AS history`,
      [partnerId]
    );
    return row.rows[0] as { users: number; onboardings: number; audit: number; cards: number; history: number };
  }

  before(async function () {
    gateway = await startGatewayProcess({ env: { UPSTREAM_TIMEOUT_MS: '1500' } });
    sandboxes = sandboxUrls(gateway);
    acme = await registerPartner(gateway, 'acme-individuals');
    globex = await registerPartner(gateway, 'globex-individuals');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    ada = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() })).body;
    grace = (await api(gateway, globex, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Grace', lastName: 'Hopper', country: 'US', nationality: 'US' }) })).body;
  });

  after(async function () {
    await db?.end();
    await gateway?.stop();
  });

  describe('every individual route refuses a missing token (401) and, with an {id}, a malformed id (400)', function () {
    const routes: [string, string, boolean][] = [
      ['GET', '/individual/accounts', false],
      ['POST', '/individual/accounts', false],
      ['GET', '/individual/accounts/{id}', true],
      ['GET', '/individual/accounts/{id}/cards', true],
      ['POST', '/individual/accounts/{id}/cards/virtual', true],
      ['POST', '/individual/accounts/{id}/cards/physical', true],
      ['GET', '/individual/accounts/{id}/audit-logs', true],
      ['GET', '/individual/accounts/{id}/card-status-history', true],
      ['GET', '/individual/accounts/{id}/transactions', true],
    ];
    for (const [method, route, hasId] of routes) {
      it(`${method} ${route}`, async function () {
        const body = method === 'POST' ? {} : undefined;
        const anonymous = await api(gateway, null, method, route.replace('{id}', ada._id), { body });
        expect(anonymous.status).to.equal(401);
        expect(anonymous.body.code).to.equal('token_missing');
        if (hasId) {
          const malformed = await api(gateway, acme, method, route.replace('{id}', 'ZZZ'), { body });
          expect(malformed.status).to.equal(400);
          expect(malformed.body.code).to.equal('invalid_id');
          expect((await api(gateway, acme, method, route.replace('{id}', grace._id), { body })).status).to.equal(403);
          expect((await api(gateway, acme, method, route.replace('{id}', UNKNOWN_ID), { body })).status).to.equal(404);
        }
      });
    }
  });

  describe('POST /individual/accounts', function () {
    it('creates the individual (201) with the documented shape, masked document numbers and defaults', async function () {
      const before = await counts(acme.id);
      const created = await api(gateway, acme, 'POST', '/individual/accounts', {
        body: individualBody({ firstName: 'Mary', lastName: 'Somerville', passportNumber: 'X9876543', baasAccountClientId: 42 }),
        headers: { 'x-request-id': 'create-individual-1' },
      });
      expect(created.status).to.equal(201);
      const account = created.body;
      expect(account._id).to.match(/^[0-9a-f]{24}$/);
      expect(account.clientID).to.match(/^\d+$/);
      expect(account.applicationStatus).to.equal('APPROVED');
      expect(account.dashboardStatus).to.equal('ACTIVE');
      expect(account.baasAccountClientId).to.equal(42);
      expect(account.personalInfo).to.include({ firstName: 'Mary', middleName: 'Augusta', lastName: 'Somerville', fatca: 'F', idType: 'PASSPORT' });
      expect(account.personalInfo.passportNumber).to.equal('****6543');
      expect(account.personalInfo.taxIdNumber, 'taxIdNumber defaults to the passport number').to.equal('****6543');
      expect(account.address).to.deep.equal({
        address1: 'St James Square',
        address2: null,
        buildingNumber: '12',
        city: 'London',
        stateProvince: null,
        zipCode: 'SW1Y 4LE',
        country: 'GB',
      });
      expect(Date.parse(account.createdAt)).to.be.a('number');
      expect(created.headers.get('cache-control')).to.equal('no-store');
      expect(JSON.stringify(account)).to.not.include('X9876543');

      const after = await counts(acme.id);
      expect(after).to.deep.include({ users: before.users + 1, onboardings: before.onboardings + 1, audit: before.audit + 1 });
      const received = await sandboxControl(sandboxes.accounts, 'GET', '/__sandbox/requests?path=/accounts');
      const call = received.find((r: any) => r.body?.onboardingId === account._id);
      expect(call.requestId, 'x-request-id forwarded upstream').to.equal('create-individual-1');
      expect(call.body.taxIdNumber).to.equal('X9876543');
      expect(call.body.partnerId).to.equal(acme.id);
    });

    const invalid: { description: string; body: Record<string, unknown>; fields: string[] }[] = [
      { description: 'a missing required field', body: individualBody({ firstName: undefined }), fields: ['firstName'] },
      { description: 'a middleName of one character', body: individualBody({ middleName: 'A' }), fields: ['middleName'] },
      { description: 'a 201-character firstName', body: individualBody({ firstName: 'x'.repeat(201) }), fields: ['firstName'] },
      { description: 'a country code not in ISO 3166-1', body: individualBody({ country: 'XX' }), fields: ['country'] },
      { description: 'a lower-case country code', body: individualBody({ nationality: 'gb' }), fields: ['nationality'] },
      { description: 'Kosovo\'s user-assigned XK', body: individualBody({ birthCountry: 'XK' }), fields: ['birthCountry'] },
      { description: 'a birth date in the future', body: individualBody({ birthDate: `${new Date().getUTCFullYear() + 1}-01-01` }), fields: ['birthDate'] },
      { description: 'an impossible date (30 February)', body: individualBody({ birthDate: '1990-02-30' }), fields: ['birthDate'] },
      { description: 'a date in another format', body: individualBody({ issuingDate: '15/01/2020' }), fields: ['issuingDate'] },
      { description: 'validityDate before issuingDate', body: individualBody({ issuingDate: '2020-01-15', validityDate: '2019-01-15' }), fields: ['validityDate'] },
      { description: 'an unknown idType', body: individualBody({ idType: 'LIBRARY_CARD' }), fields: ['idType'] },
      { description: 'an invalid email', body: individualBody({ email: 'not-an-email' }), fields: ['email'] },
      { description: 'a phone not in E.164', body: individualBody({ phone: '0770 0900 123' }), fields: ['phone'] },
      { description: 'a fatca value other than T or F', body: individualBody({ fatca: 'maybe' }), fields: ['fatca'] },
      { description: 'an unknown field', body: individualBody({ favouriteColour: 'blue' }), fields: ['favouriteColour'] },
      { description: 'a number where a string is expected', body: individualBody({ zipCode: 12345 }), fields: ['zipCode'] },
      {
        description: 'several invalid fields at once (every one listed)',
        body: individualBody({ firstName: undefined, country: 'ZZ', email: 'x', birthDate: '2999-01-01', extra: 1 }),
        fields: ['firstName', 'country', 'email', 'birthDate', 'extra'],
      },
    ];
    for (const testCase of invalid) {
      it(`refuses ${testCase.description} with 400 listing ${testCase.fields.join(', ')}, and changes nothing`, async function () {
        const before = await counts(acme.id);
        const accountsBefore = (await sandboxControl(sandboxes.accounts, 'GET', '/__sandbox/requests?path=/accounts')).length;
        const response = await api(gateway, acme, 'POST', '/individual/accounts', { body: JSON.parse(JSON.stringify(testCase.body)) });
        expect(response.status).to.equal(400);
        expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(response.body.code).to.equal('validation_failed');
        const names = response.body.invalidParams.map((p: { name: string }) => p.name);
        expect(names).to.include.members(testCase.fields);
        for (const p of response.body.invalidParams) expect(p.reason).to.be.a('string').and.not.equal('');
        expect(await counts(acme.id)).to.deep.equal(before);
        expect((await sandboxControl(sandboxes.accounts, 'GET', '/__sandbox/requests?path=/accounts')).length, 'upstream not called').to.equal(accountsBefore);
      });
    }

    it('refuses a non-JSON body with 415 and no token with 401', async function () {
      const text = await fetch(`${gateway.baseUrl}/api/partner/individual/accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await acme.token()}`, 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(text.status).to.equal(415);
      expect((await api(gateway, null, 'POST', '/individual/accounts', { body: individualBody() })).status).to.equal(401);
    });

    const failures: { lastName: string; status: number; code: string }[] = [
      { lastName: 'SANDBOX-FAIL', status: 502, code: 'upstream_error' },
      { lastName: 'SANDBOX-REJECT', status: 422, code: 'upstream_rejected' },
    ];
    for (const failure of failures) {
      it(`rolls back when account creation answers ${failure.lastName}: ${failure.status} ${failure.code}, no user, onboarding or audit row remains`, async function () {
        const before = await counts(acme.id);
        const response = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ lastName: failure.lastName }) });
        expect(response.status).to.equal(failure.status);
        expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(response.body.code).to.equal(failure.code);
        expect(response.body.upstream).to.equal('accounts');
        expect(await counts(acme.id)).to.deep.equal(before);
        const pending = await db.query("SELECT count(*)::int AS n FROM individual_onboardings WHERE provisioning = 'pending' AND partner_id = $1", [acme.id]);
        expect(pending.rows[0].n).to.equal(0);
      });
    }

    it('keeps the pending record when account creation times out (504 upstream_timeout): the upstream may have created it, a retry or the reconciler settles it', async function () {
      const before = await counts(acme.id);
      const response = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ lastName: 'SANDBOX-TIMEOUT' }) });
      expect(response.status).to.equal(504);
      expect(response.body.code).to.equal('upstream_timeout');
      expect(response.body.upstream).to.equal('accounts');
      const after = await counts(acme.id);
      expect(after).to.deep.equal({ ...before, users: before.users + 1, onboardings: before.onboardings + 1 });
      // Invisible to every read meanwhile: the list does not show it.
      const list = await api(gateway, acme, 'GET', '/individual/accounts?limit=100');
      expect(list.body.data.map((i: { lastName: string }) => i.lastName)).to.not.include('SANDBOX-TIMEOUT');
      const pending = await db.query("SELECT count(*)::int AS n FROM individual_onboardings WHERE provisioning = 'pending' AND partner_id = $1", [acme.id]);
      expect(pending.rows[0].n).to.equal(1);
      await db.query("DELETE FROM users WHERE partner_id = $1 AND id IN (SELECT user_id FROM individual_onboardings WHERE provisioning = 'pending')", [acme.id]);
    });
  });

  describe('Idempotency-Key', function () {
    it('replays the first response for the same key and body, refuses another body with 409', async function () {
      const key = `idem-${crypto.randomUUID()}`;
      const body = individualBody({ firstName: 'Idem' });
      const first = await api(gateway, acme, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
      const before = await counts(acme.id);
      const second = await api(gateway, acme, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
      expect(first.status).to.equal(201);
      expect(second.status).to.equal(201);
      expect(second.body).to.deep.equal(first.body);
      expect(second.headers.get('idempotent-replayed')).to.equal('true');
      expect(await counts(acme.id)).to.deep.equal(before);
      const other = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Other' }), headers: { 'idempotency-key': key } });
      expect(other.status).to.equal(409);
      expect(other.body.code).to.equal('idempotency_key_reused');
      expect(await counts(acme.id)).to.deep.equal(before);
    });

    it('creates exactly one record for concurrent duplicates', async function () {
      const key = `idem-${crypto.randomUUID()}`;
      const body = individualBody({ firstName: 'Concurrent', lastName: 'SANDBOX-SLOW' });
      const before = await counts(acme.id);
      const responses = await Promise.all(Array.from({ length: 8 }, () => api(gateway, acme, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } })));
      const created = responses.filter((r) => r.status === 201);
      const inProgress = responses.filter((r) => r.status === 409);
      expect(created.length + inProgress.length, JSON.stringify(responses.map((r) => [r.status, r.body.code])) + gateway.output().split('\n').filter((l) => l.includes('"level":"error"')).join('\n')).to.equal(8);
      expect(created.length).to.be.at.least(1);
      for (const r of inProgress) expect(r.body.code).to.equal('idempotency_in_progress');
      expect(new Set(created.map((r) => r.body._id)).size).to.equal(1);
      const after = await counts(acme.id);
      expect(after.onboardings).to.equal(before.onboardings + 1);
      expect(after.users).to.equal(before.users + 1);
      const replay = await api(gateway, acme, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
      expect(replay.status).to.equal(201);
      expect(replay.body._id).to.equal(created[0].body._id);
    });

    it('scopes keys per partner, and releases a key whose request failed upstream', async function () {
      const key = `idem-${crypto.randomUUID()}`;
      const a = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Scoped' }), headers: { 'idempotency-key': key } });
      const g = await api(gateway, globex, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Scoped' }), headers: { 'idempotency-key': key } });
      expect(a.status).to.equal(201);
      expect(g.status).to.equal(201);
      expect(g.body._id).to.not.equal(a.body._id);

      const failing = `idem-${crypto.randomUUID()}`;
      const failBody = individualBody({ lastName: 'SANDBOX-FAIL' });
      const calls = async () => (await sandboxControl(sandboxes.accounts, 'GET', '/__sandbox/requests?path=/accounts')).length;
      const before = await calls();
      expect((await api(gateway, acme, 'POST', '/individual/accounts', { body: failBody, headers: { 'idempotency-key': failing } })).status).to.equal(502);
      expect((await api(gateway, acme, 'POST', '/individual/accounts', { body: failBody, headers: { 'idempotency-key': failing } })).status).to.equal(502);
      expect(await calls(), 'the retry reached the upstream again').to.equal(before + 2);
    });

    it('refuses a malformed Idempotency-Key', async function () {
      const response = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody(), headers: { 'idempotency-key': 'x'.repeat(300) } });
      expect(response.status).to.equal(400);
      expect(response.body.invalidParams[0].name).to.equal('Idempotency-Key');
    });
  });

  describe('GET /individual/accounts and /individual/accounts/{id}', function () {
    it('lists only the partner\'s individuals, newest first, as {count, data}', async function () {
      const list = await api(gateway, acme, 'GET', '/individual/accounts?limit=100');
      expect(list.status).to.equal(200);
      expect(Object.keys(list.body).sort()).to.deep.equal(['count', 'data']);
      const ids = list.body.data.map((i: { _id: string }) => i._id);
      expect(ids).to.include(ada._id);
      expect(ids).to.not.include(grace._id);
      expect(list.body.count).to.equal((await counts(acme.id)).onboardings);
      const times = list.body.data.map((i: { createdAt: string }) => Date.parse(i.createdAt));
      expect(times).to.deep.equal([...times].sort((a, b) => b - a));
      expect(Object.keys(list.body.data[0]).sort()).to.deep.equal(['_id', 'applicationStatus', 'clientID', 'createdAt', 'dashboardStatus', 'firstName', 'lastName']);
    });

    it('paginates with page and limit (defaults 1 and 20)', async function () {
      const all = (await api(gateway, acme, 'GET', '/individual/accounts?limit=100')).body;
      const page2 = await api(gateway, acme, 'GET', '/individual/accounts?page=2&limit=2');
      expect(page2.body.count).to.equal(all.count);
      expect(page2.body.data.map((i: any) => i._id)).to.deep.equal(all.data.slice(2, 4).map((i: any) => i._id));
      const defaults = await api(gateway, acme, 'GET', '/individual/accounts');
      expect(defaults.body.data.length).to.equal(Math.min(20, all.count));
    });

    const badQueries = ['page=0', 'page=-1', 'page=1.5', 'page=abc', 'limit=0', 'limit=101', 'limit=ten', 'sort=name'];
    for (const query of badQueries) {
      it(`refuses ?${query} with 400`, async function () {
        const response = await api(gateway, acme, 'GET', `/individual/accounts?${query}`);
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('validation_failed');
        expect(response.body.invalidParams[0].name).to.equal(query.split('=')[0]);
      });
    }

    it('gets the partner\'s individual (200), refuses another partner\'s (403), unknown (404), malformed (400), no token (401)', async function () {
      const got = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(ada);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${grace._id}`)).body.code).to.equal('forbidden');
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${grace._id}`)).status).to.equal(403);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${UNKNOWN_ID}`)).status).to.equal(404);
      const malformed = await api(gateway, acme, 'GET', '/individual/accounts/not-an-id');
      expect(malformed.status).to.equal(400);
      expect(malformed.body.code).to.equal('invalid_id');
      expect((await api(gateway, null, 'GET', `/individual/accounts/${ada._id}`)).status).to.equal(401);
    });

    it('lists the newest individuals in /me', async function () {
      const me = await api(gateway, acme, 'GET', '/me');
      expect(me.body.individuals.map((i: { _id: string }) => i._id)).to.include(ada._id);
      expect(me.body.individuals.map((i: { _id: string }) => i._id)).to.not.include(grace._id);
    });
  });

  describe('cards of an individual', function () {
    let virtualCard: any;
    let physicalCard: any;

    before(async function () {
      virtualCard = (await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID, { embossedName: 'ADA.LOVELACE' }) })).body;
      physicalCard = (await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) })).body;
    });

    it('issues a virtual card: 201, ACTIVE 00, stored under partner → individual', async function () {
      expect(virtualCard).to.include({ type: 'virtual', status: 'ACTIVE', statusCode: '00', currency: 'EUR', ownerType: 'individual', ownerId: ada._id, productCode: 'P-STD', holderClientCode: ada.clientID, embossedName: 'ADA.LOVELACE' });
      expect(virtualCard.cardKey).to.be.a('string');
      expect(virtualCard.cardMask).to.match(/\*\*\*\*/);
      expect(Object.keys(virtualCard)).to.include.members(['cardKey', 'cardMask', 'type', 'status', 'statusCode', 'currency', 'ownerType', 'ownerId', 'createdAt', 'productCode', 'holderClientCode', 'expDate', 'embossedName']);
      const row = await db.query('SELECT partner_id, individual_id FROM cards WHERE card_key = $1', [virtualCard.cardKey]);
      expect(row.rows[0]).to.deep.equal({ partner_id: acme.id, individual_id: ada._id });
    });

    it('issues a physical card: 201, LOCKED with the not-yet-activated code I1', async function () {
      expect(physicalCard).to.include({ type: 'physical', status: 'LOCKED', statusCode: 'I1' });
    });

    it('never returns a card number or CVV, even when the issuer sends them', async function () {
      const leak = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID, { embossedName: 'SANDBOX-LEAK' }) });
      expect(leak.status).to.equal(201);
      expect(leak.body).to.not.have.any.keys('cardNumber', 'cvv', 'pan');
      // A card number is 16 digits on their own: not 16 digits inside a hex id (the individual's
      // time-prefixed object id has them now and then, which made this check fail at random).
      expect(JSON.stringify(leak.body)).to.not.match(/(?<![0-9a-fA-F])\d{16}(?![0-9a-fA-F])/);
    });

    const invalidCards: { description: string; body: () => Record<string, unknown>; field: string }[] = [
      { description: 'an expDate month 13', body: () => cardBody(ada.clientID, { expDate: '13/2030' }), field: 'expDate' },
      { description: 'an expDate in the past', body: () => cardBody(ada.clientID, { expDate: '01/2020' }), field: 'expDate' },
      { description: 'an expDate with a two-digit year', body: () => cardBody(ada.clientID, { expDate: '12/30' }), field: 'expDate' },
      { description: 'a lower-case currency', body: () => cardBody(ada.clientID, { currency: 'eur' }), field: 'currency' },
      { description: 'a four-letter currency', body: () => cardBody(ada.clientID, { currency: 'EURO' }), field: 'currency' },
      { description: 'a missing productCode', body: () => cardBody(ada.clientID, { productCode: undefined }), field: 'productCode' },
      { description: 'another client\'s clientCode', body: () => cardBody('99999999'), field: 'clientCode' },
      { description: 'an unknown field', body: () => cardBody(ada.clientID, { pan: recordedPan('4111111111111111') }), field: 'pan' },
    ];
    for (const testCase of invalidCards) {
      it(`refuses a card with ${testCase.description} (400), storing nothing`, async function () {
        const before = await counts(acme.id);
        const response = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: JSON.parse(JSON.stringify(testCase.body())) });
        expect(response.status).to.equal(400);
        expect(response.body.invalidParams.map((p: { name: string }) => p.name)).to.include(testCase.field);
        expect(await counts(acme.id)).to.deep.equal(before);
      });
    }

    it('stores nothing when the issuer fails (502), and audits the failure', async function () {
      await sandboxControl(sandboxes.issuer, 'POST', '/__sandbox/faults', { method: 'POST', path: '/cards', mode: 'status', status: 500, times: 1 });
      const before = await counts(acme.id);
      const response = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID) });
      expect(response.status).to.equal(502);
      expect(response.body).to.include({ code: 'upstream_error', upstream: 'issuer' });
      const after = await counts(acme.id);
      expect(after.cards).to.equal(before.cards);
      expect(after.history).to.equal(before.history);
      expect(after.audit).to.equal(before.audit + 1);
      const audit = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/audit-logs?limit=1`);
      expect(audit.body.data[0]).to.include({ operation: 'card.issue.virtual', outcome: 'failure' });
    });

    it('refuses card creation on another partner\'s individual (403) and an unknown one (404)', async function () {
      expect((await api(gateway, acme, 'POST', `/individual/accounts/${grace._id}/cards/virtual`, { body: cardBody(grace.clientID) })).status).to.equal(403);
      expect((await api(gateway, acme, 'POST', `/individual/accounts/${UNKNOWN_ID}/cards/physical`, { body: cardBody(ada.clientID) })).status).to.equal(404);
      expect((await api(gateway, null, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) })).status).to.equal(401);
    });

    it('replays a card creation for the same Idempotency-Key', async function () {
      const key = `card-${crypto.randomUUID()}`;
      const body = cardBody(ada.clientID);
      const first = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body, headers: { 'idempotency-key': key } });
      const again = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body, headers: { 'idempotency-key': key } });
      expect(again.body.cardKey, JSON.stringify([first.status, first.body, again.status, again.body])).to.equal(first.body.cardKey);
      const physical = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body, headers: { 'idempotency-key': key } });
      expect(physical.status, 'same key on another route').to.equal(409);
    });

    it('lists only ACTIVE cards with exactly the first nine fields of 2.3', async function () {
      const list = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/cards`);
      expect(list.status).to.equal(200);
      const keys = list.body.map((c: { cardKey: string }) => c.cardKey);
      expect(keys).to.include(virtualCard.cardKey);
      expect(keys).to.not.include(physicalCard.cardKey);
      for (const card of list.body) {
        expect(Object.keys(card)).to.deep.equal(['cardKey', 'cardMask', 'type', 'status', 'statusCode', 'currency', 'ownerType', 'ownerId', 'createdAt']);
        expect(card.status).to.equal('ACTIVE');
      }
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${grace._id}/cards`)).status).to.equal(403);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${UNKNOWN_ID}/cards`)).status).to.equal(404);
    });

    it('answers the whole list of active cards by default, and pages it with limit and a Link to the next page', async function () {
      for (let i = 0; i < 2; i++) {
        expect((await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID) })).status).to.equal(201);
      }
      const whole = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/cards`);
      expect(whole.headers.get('link'), 'no next page: every active card at once').to.equal(null);
      const all = whole.body.map((c: { cardKey: string }) => c.cardKey);
      expect(all.length).to.be.at.least(3);
      const walked: string[] = [];
      let next: string | null = `/individual/accounts/${ada._id}/cards?limit=2`;
      for (let pages = 0; next !== null; pages++) {
        expect(pages, 'pages end').to.be.below(all.length);
        const page = await api(gateway, acme, 'GET', next);
        expect(page.status).to.equal(200);
        expect(page.body.length).to.be.at.most(2);
        walked.push(...page.body.map((c: { cardKey: string }) => c.cardKey));
        const link = page.headers.get('link');
        if (link === null) break;
        const target = /^<\/api\/partner(\/individual\/accounts\/[0-9a-f]{24}\/cards\?page=\d+&limit=2)>; rel="next"$/.exec(link);
        expect(target, link).to.not.equal(null);
        next = target![1];
      }
      expect(walked, 'the pages hold the whole list, in its order').to.deep.equal(all);
      for (const query of ['limit=101', 'limit=0', 'page=0', 'status=ACTIVE']) {
        expect((await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/cards?${query}`)).status, query).to.equal(400);
      }
    });

    it('records card creation as the first status-history entry, newest first, paginated', async function () {
      const history = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/card-status-history?limit=100`);
      expect(history.status).to.equal(200);
      expect(Object.keys(history.body).sort()).to.deep.equal(['data', 'pagination']);
      const entry = history.body.data.find((e: any) => e.cardKey === physicalCard.cardKey);
      expect(entry).to.include({ operation: 'card.issue', oldStatus: null, newStatus: 'LOCKED', oldStatusCode: null, newStatusCode: 'I1' });
      expect(history.body.pagination).to.deep.equal({ page: 1, limit: 100, total: history.body.data.length, totalPages: 1, hasMore: false });
      const times = history.body.data.map((e: { createdAt: string }) => Date.parse(e.createdAt));
      expect(times).to.deep.equal([...times].sort((a, b) => b - a));
      const paged = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/card-status-history?page=2&limit=1`);
      expect(paged.body.data[0]._id).to.equal(history.body.data[1]._id);
      expect(paged.body.pagination.totalPages).to.equal(history.body.data.length);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${grace._id}/card-status-history`)).status).to.equal(403);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${UNKNOWN_ID}/card-status-history`)).status).to.equal(404);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/card-status-history?limit=500`)).status).to.equal(400);
    });

    it('audits every state change of the individual, newest first, without secrets', async function () {
      const audit = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/audit-logs?limit=100`);
      expect(audit.status).to.equal(200);
      const operations = audit.body.data.map((e: { operation: string }) => e.operation);
      expect(operations[operations.length - 1]).to.equal('individual.create');
      expect(operations).to.include.members(['card.issue.virtual', 'card.issue.physical']);
      const issue = audit.body.data.find((e: any) => e.targetId === physicalCard.cardKey);
      expect(issue).to.include({ operation: 'card.issue.physical', targetType: 'card', outcome: 'success' });
      expect(issue.requestId).to.be.a('string');
      expect(JSON.stringify(audit.body)).to.not.include('P1234567');
      expect(audit.body.pagination.total).to.equal(audit.body.data.length);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${grace._id}/audit-logs`)).status).to.equal(403);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${UNKNOWN_ID}/audit-logs`)).status).to.equal(404);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/audit-logs?page=0`)).status).to.equal(400);
    });

    // Issue 11 item 7: `_id` was the bigserial of one platform-wide sequence, so a partner's first
    // entry ("75") told how many entries all partners had made.
    it('gives audit and status-history entries random 24-hex ids, not one platform-wide sequence', async function () {
      const first = async (partner: TestPartner, individualId: string, list: string) => {
        const page = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/${list}?limit=100`);
        expect(page.status).to.equal(200);
        return page.body.data.map((e: { _id: string }) => e._id) as string[];
      };
      const graceCard = await api(gateway, globex, 'POST', `/individual/accounts/${grace._id}/cards/virtual`, { body: cardBody(grace.clientID) });
      expect(graceCard.status).to.equal(201);
      for (const list of ['audit-logs', 'card-status-history']) {
        const ids = [...(await first(acme, ada._id, list)), ...(await first(globex, grace._id, list))];
        expect(ids.length).to.be.at.least(2);
        for (const id of ids) {
          expect(id, `${list} _id`).to.match(/^[0-9a-f]{24}$/);
          expect(id, `${list} _id is not a number`).to.not.match(/^\d+$/);
        }
        expect(new Set(ids).size).to.equal(ids.length);
        // The 8 bytes after the time are random: no two entries share them, and none counts up.
        const tails = ids.map((id) => BigInt(`0x${id.slice(8)}`));
        expect(new Set(tails).size).to.equal(ids.length);
        for (const a of tails) for (const b of tails) expect(a - b === 1n, `${list}: adjacent ids`).to.equal(false);
      }
    });

    it('lists transactions from the processing system, paginated, filtered by card', async function () {
      const all = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/transactions?limit=5`);
      expect(all.status).to.equal(200);
      expect(all.body.data.length).to.be.within(1, 5);
      expect(all.body.pagination.total).to.be.at.least(all.body.data.length);
      expect(all.body.pagination).to.include({ page: 1, limit: 5 });
      const tx = all.body.data[0];
      // The spec's fields, and the lifecycle's (docs/transactions.md): a generated history item is read
      // as the processor derives it from its status.
      expect(tx).to.have.keys(['_id', 'cardKey', 'individualId', 'amount', 'currency', 'type', 'status', 'merchant', 'createdAt', 'updatedAt', 'settledAmount', 'declineReason', 'relatedTransactionId', 'history', 'authorization']);
      for (const t of all.body.data) {
        expect(t.individualId).to.equal(ada._id);
        const kinds = t.history.map((step: { kind: string }) => step.kind);
        expect(kinds[0], JSON.stringify(t)).to.equal(t.status === 'DECLINED' ? 'decline' : t.status === 'SETTLED' && t.type === 'REFUND' ? 'refund' : 'authorization');
        expect(t.declineReason === null, JSON.stringify(t)).to.equal(t.status !== 'DECLINED');
        expect(t.settledAmount === null, JSON.stringify(t)).to.equal(t.status !== 'SETTLED');
      }
      const one = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/transactions?cardKey=${virtualCard.cardKey}&limit=100`);
      expect(one.body.data.length).to.be.greaterThan(0);
      for (const t of one.body.data) expect(t.cardKey).to.equal(virtualCard.cardKey);
      const foreign = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/transactions?cardKey=CKNOTTHEIRS0000000`);
      expect(foreign.status).to.equal(400);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${grace._id}/transactions`)).status).to.equal(403);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${UNKNOWN_ID}/transactions`)).status).to.equal(404);
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/transactions?limit=0`)).status).to.equal(400);
    });

    it('answers an empty page for a partner without the processing system', async function () {
      await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}`, { processingEnabled: false });
      try {
        const processingBefore = (await sandboxControl(sandboxes.processing, 'GET', '/__sandbox/requests?path=/transactions')).length;
        const empty = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/transactions`);
        expect(empty.status).to.equal(200);
        expect(empty.body).to.deep.equal({ data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0, hasMore: false } });
        expect((await api(gateway, acme, 'GET', '/transactions')).body, 'the partner-wide search too').to.deep.equal({ data: [], nextCursor: null });
        expect((await sandboxControl(sandboxes.processing, 'GET', '/__sandbox/requests?path=/transactions')).length).to.equal(processingBefore);
      } finally {
        await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}`, { processingEnabled: true });
      }
    });

    it('maps a processing-system outage to 502 and its timeout to 504', async function () {
      await sandboxControl(sandboxes.processing, 'POST', '/__sandbox/faults', { path: '/transactions', mode: 'status', status: 503, times: 1 });
      expect((await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/transactions`)).status).to.equal(502);
      await sandboxControl(sandboxes.processing, 'POST', '/__sandbox/faults', { path: '/transactions', mode: 'timeout', times: 1 });
      const timeout = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/transactions`);
      expect(timeout.status).to.equal(504);
      expect(timeout.body.code).to.equal('upstream_timeout');
    });
  });
});
