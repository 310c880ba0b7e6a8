import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { Client } from 'pg';
import { RESPONSE_SCHEMAS } from '../../gateway/schemas/responses';
import { api, cardBody, individualBody, type ApiResponse } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { ABSENT_BODIES, rawRequest } from '../support/raw-http';
import { runDatabaseUrl } from '../support/test-database';

const UNKNOWN_KEY = 'CK0000000000000000';

/**
 * Spend controls end to end (docs/spend-controls.md) on the shared gateway and real PostgreSQL: a
 * card's own (`/cards/{id}/spend-controls`) and the partner's default (`/spend-controls`), read,
 * replaced and cleared; every bad body a 400 naming the field that changes nothing; another
 * partner's card refused; each change audited, and a card's change a `card.updated` event.
 */
describe('e2e: spend controls (GET/PUT /cards/{id}/spend-controls, GET/PUT /spend-controls)', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let globex: TestPartner;
  let db: Client;
  let acmeCard: any;
  let globexCard: any;
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv, ['date', 'date-time', 'email', 'uri']);
  const validControls = ajv.compile(RESPONSE_SCHEMAS.SpendControls);
  const validEvent = ajv.compile(RESPONSE_SCHEMAS.Event);

  const CONTROLS = {
    maxAmountPerTransaction: 250.5,
    allowedMccs: ['5411', '5812'],
    blockedMccs: ['7995'],
    allowedCountries: ['DE', 'FR'],
    blockedCountries: ['RU'],
    velocity: [
      { window: '1h', maxCount: 3 },
      { window: '24h', maxAmount: 500.25 },
      { window: '7d', maxCount: 20, maxAmount: 2000 },
      { window: '30d', maxCount: 60 },
    ],
  };

  const newCard = async (partner: TestPartner, firstName: string) => {
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody({ firstName }) });
    expect(individual.status, JSON.stringify(individual.body)).to.equal(201);
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return card.body;
  };
  const expectControls = (response: ApiResponse, expected: unknown) => {
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body).to.deep.equal(expected);
    expect(validControls(response.body), JSON.stringify(validControls.errors)).to.equal(true);
  };
  const auditOf = async (targetType: string, targetId: string) =>
    (await db.query("SELECT partner_id, individual_id, operation, outcome, request_id, details FROM audit_log WHERE target_type = $1 AND target_id = $2 AND operation LIKE '%.spend-controls.%' ORDER BY id", [targetType, targetId])).rows;
  const cardUpdatedEvents = async (partner: TestPartner, cardKey: string) => {
    const page = await api(gateway, partner, 'GET', '/events?type=card.updated&limit=100');
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    return page.body.data.filter((e: any) => e.data.cardKey === cardKey);
  };
  const stored = async (partnerId: string) => (await db.query('SELECT card_key, controls FROM spend_controls WHERE partner_id = $1 ORDER BY card_key NULLS FIRST', [partnerId])).rows;

  before(async function () {
    gateway = await sharedGateway();
    acme = await registerPartner(gateway, 'acme-spend');
    globex = await registerPartner(gateway, 'globex-spend');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    acmeCard = await newCard(acme, 'Ada');
    globexCard = await newCard(globex, 'Grace');
  });

  after(async function () {
    await db?.end();
  });

  describe("a card's own controls", function () {
    it('answers {} when none are set, the whole object after a PUT, and {} again after PUT {}', async function () {
      const path = `/cards/${acmeCard.cardKey}/spend-controls`;
      expectControls(await api(gateway, acme, 'GET', path), {});
      expectControls(await api(gateway, acme, 'PUT', path, { body: CONTROLS }), CONTROLS);
      expectControls(await api(gateway, acme, 'GET', path), CONTROLS);

      // PUT replaces the whole object: what it leaves out is gone.
      expectControls(await api(gateway, acme, 'PUT', path, { body: { blockedCountries: ['US'] } }), { blockedCountries: ['US'] });
      expectControls(await api(gateway, acme, 'GET', path), { blockedCountries: ['US'] });

      expectControls(await api(gateway, acme, 'PUT', path, { body: {} }), {});
      expectControls(await api(gateway, acme, 'GET', path), {});
      expect((await stored(acme.id)).filter((r) => r.card_key === acmeCard.cardKey), 'cleared: no row').to.deep.equal([]);
    });

    it('audits each change (target the card) and emits card.updated with changed ["spendControls"] in the same transaction', async function () {
      const card = await newCard(acme, 'Mary');
      const path = `/cards/${card.cardKey}/spend-controls`;
      const put = await api(gateway, acme, 'PUT', path, { body: { velocity: [{ window: '24h', maxCount: 2 }] }, headers: { 'x-request-id': `spend-${card.cardKey}` } });
      expect(put.status).to.equal(200);
      const audit = await auditOf('card', card.cardKey);
      expect(audit).to.have.length(1);
      expect(audit[0]).to.deep.include({ partner_id: acme.id, individual_id: card.ownerId, operation: 'card.spend-controls.update', outcome: 'success', request_id: `spend-${card.cardKey}` });
      expect(JSON.parse(audit[0].details.controls)).to.deep.equal({ velocity: [{ window: '24h', maxCount: 2 }] });

      const [event] = await cardUpdatedEvents(acme, card.cardKey);
      expect(event).to.deep.include({ type: 'card.updated', partnerId: acme.id, requestId: `spend-${card.cardKey}` });
      expect(event.data.changed).to.deep.equal(['spendControls']);
      expect(event.data.card).to.deep.include({ cardKey: card.cardKey, status: card.status });
      expect(validEvent(event), JSON.stringify(validEvent.errors)).to.equal(true);

      // Clearing is a change too.
      expect((await api(gateway, acme, 'PUT', path, { body: {} })).status).to.equal(200);
      expect((await auditOf('card', card.cardKey)).map((a) => JSON.parse(a.details.controls))).to.deep.equal([{ velocity: [{ window: '24h', maxCount: 2 }] }, {}]);
      expect((await cardUpdatedEvents(acme, card.cardKey)).map((e: any) => e.data.changed)).to.deep.equal([['spendControls'], ['spendControls']]);
    });
  });

  describe('bad input: 400 naming the field, nothing changed', function () {
    const bad: [string, unknown, string][] = [
      ['an empty velocity rule', { velocity: [{ window: '1h' }] }, 'velocity.0.maxCount'],
      ['an unknown window', { velocity: [{ window: '12h', maxCount: 1 }] }, 'velocity.0.window'],
      ['a rule without a window', { velocity: [{ maxCount: 1 }] }, 'velocity.0.window'],
      ['five velocity rules', { velocity: [1, 2, 3, 4, 5].map(() => ({ window: '1h', maxCount: 1 })) }, 'velocity'],
      ['a negative amount', { maxAmountPerTransaction: -1 }, 'maxAmountPerTransaction'],
      ['a zero velocity amount', { velocity: [{ window: '7d', maxAmount: 0 }] }, 'velocity.0.maxAmount'],
      ['an amount with 3 decimals', { maxAmountPerTransaction: 10.001 }, 'maxAmountPerTransaction'],
      ['an amount as a string', { maxAmountPerTransaction: '10' }, 'maxAmountPerTransaction'],
      ['a zero count', { velocity: [{ window: '1h', maxCount: 0 }] }, 'velocity.0.maxCount'],
      ['a 5-digit MCC', { blockedMccs: ['79950'] }, 'blockedMccs.0'],
      ['an empty allow list', { allowedCountries: [] }, 'allowedCountries'],
      ['201 MCCs', { blockedMccs: Array.from({ length: 201 }, (_, i) => String(1000 + i)) }, 'blockedMccs'],
      ['251 countries', { allowedCountries: Array.from({ length: 251 }, () => 'DE') }, 'allowedCountries'],
      ['a repeated MCC', { allowedMccs: ['5411', '5411'] }, 'allowedMccs'],
      ['a country that is not ISO 3166-1', { blockedCountries: ['UK'] }, 'blockedCountries.0'],
      ['an unknown field', { maxPerDay: 3 }, 'maxPerDay'],
      ['an unknown field in a rule', { velocity: [{ window: '1h', maxCount: 1, merchant: 'x' }] }, 'velocity.0.merchant'],
      ['an array instead of an object', [CONTROLS], 'body'],
    ];
    for (const [scope, pathOf] of [
      ['card', () => `/cards/${acmeCard.cardKey}/spend-controls`],
      ['partner default', () => '/spend-controls'],
    ] as const) {
      it(`refuses every bad ${scope} body (${bad.length} cases), keeping what was set, without an audit entry or event`, async function () {
        const path = pathOf();
        const before = { blockedMccs: ['7995'], velocity: [{ window: '1h', maxCount: 5 }] };
        expectControls(await api(gateway, acme, 'PUT', path, { body: before }), before);
        const audits = (await db.query("SELECT count(*)::int AS n FROM audit_log WHERE partner_id = $1 AND operation LIKE '%spend-controls%'", [acme.id])).rows[0].n;
        const events = (await cardUpdatedEvents(acme, acmeCard.cardKey)).length;
        for (const [description, body, field] of bad) {
          const response = await api(gateway, acme, 'PUT', path, { body });
          expect(response.status, description).to.equal(400);
          expect(response.body.code, description).to.equal('validation_failed');
          expect(response.body.invalidParams.map((p: any) => p.name), description).to.include(field);
        }
        expectControls(await api(gateway, acme, 'GET', path), before);
        expect((await db.query("SELECT count(*)::int AS n FROM audit_log WHERE partner_id = $1 AND operation LIKE '%spend-controls%'", [acme.id])).rows[0].n).to.equal(audits);
        expect(await cardUpdatedEvents(acme, acmeCard.cardKey)).to.have.length(events);
        expect((await api(gateway, acme, 'PUT', path, { body: {} })).status).to.equal(200);
      });
    }
  });

  describe("the partner's default", function () {
    it('answers {} when none is set, replaces and clears it, audited with target type partner and no event', async function () {
      const partner = await registerPartner(gateway, 'initech-spend');
      expectControls(await api(gateway, partner, 'GET', '/spend-controls'), {});
      const put = await api(gateway, partner, 'PUT', '/spend-controls', { body: CONTROLS, headers: { 'x-request-id': `spend-default-${partner.id}` } });
      expectControls(put, CONTROLS);
      expectControls(await api(gateway, partner, 'GET', '/spend-controls'), CONTROLS);
      expectControls(await api(gateway, partner, 'PUT', '/spend-controls', { body: { maxAmountPerTransaction: 99.99 } }), { maxAmountPerTransaction: 99.99 });
      expectControls(await api(gateway, partner, 'PUT', '/spend-controls', { body: {} }), {});
      expectControls(await api(gateway, partner, 'GET', '/spend-controls'), {});

      const audit = await auditOf('partner', partner.id);
      expect(audit.map((a) => a.operation)).to.deep.equal(['partner.spend-controls.update', 'partner.spend-controls.update', 'partner.spend-controls.update']);
      expect(audit[0]).to.deep.include({ partner_id: partner.id, individual_id: null, outcome: 'success', request_id: `spend-default-${partner.id}` });
      expect(audit.map((a) => JSON.parse(a.details.controls))).to.deep.equal([CONTROLS, { maxAmountPerTransaction: 99.99 }, {}]);
      const events = await api(gateway, partner, 'GET', '/events?limit=100');
      expect(events.body.data, 'no card changed: no event').to.deep.equal([]);
    });

    it('is each partner\'s own: B sets its default and A\'s is untouched', async function () {
      expectControls(await api(gateway, acme, 'PUT', '/spend-controls', { body: { blockedMccs: ['7995'] } }), { blockedMccs: ['7995'] });
      expectControls(await api(gateway, globex, 'GET', '/spend-controls'), {});
      expectControls(await api(gateway, globex, 'PUT', '/spend-controls', { body: { allowedCountries: ['GB'] } }), { allowedCountries: ['GB'] });
      expectControls(await api(gateway, acme, 'GET', '/spend-controls'), { blockedMccs: ['7995'] });
      expectControls(await api(gateway, globex, 'PUT', '/spend-controls', { body: {} }), {});
      expectControls(await api(gateway, acme, 'GET', '/spend-controls'), { blockedMccs: ['7995'] });
      expect((await api(gateway, acme, 'PUT', '/spend-controls', { body: {} })).status).to.equal(200);
    });
  });

  describe('a PUT without a body (issue 32: a dropped body must not remove every limit)', function () {
    it(`is 400 body_required in each of ${ABSENT_BODIES.length} shapes on both routes: the card's and the default controls stay, no audit entry, no card.updated event`, async function () {
      const partner = await registerPartner(gateway, 'hooli-spend');
      const card = await newCard(partner, 'Ada');
      const cardPath = `/cards/${card.cardKey}/spend-controls`;
      expectControls(await api(gateway, partner, 'PUT', cardPath, { body: CONTROLS }), CONTROLS);
      expectControls(await api(gateway, partner, 'PUT', '/spend-controls', { body: { blockedMccs: ['7995'] } }), { blockedMccs: ['7995'] });
      const auditBefore = [await auditOf('card', card.cardKey), await auditOf('partner', partner.id)];
      const eventsBefore = await cardUpdatedEvents(partner, card.cardKey);
      expect(eventsBefore).to.have.length(1);

      for (const path of [cardPath, '/spend-controls']) {
        for (const shape of ABSENT_BODIES) {
          const response = await rawRequest(gateway.baseUrl, 'PUT', `/api/partner${path}`, { authorization: `Bearer ${await partner.token()}` }, shape);
          expect(response.status, `${path}, ${shape.description}: ${response.text}`).to.equal(400);
          expect(response.headers['content-type']).to.match(/^application\/problem\+json/);
          expect(response.body).to.include({ code: 'body_required', status: 400 });
        }
      }
      expectControls(await api(gateway, partner, 'GET', cardPath), CONTROLS);
      expectControls(await api(gateway, partner, 'GET', '/spend-controls'), { blockedMccs: ['7995'] });
      expect((await stored(partner.id)).map((r) => r.controls)).to.deep.equal([{ blockedMccs: ['7995'] }, CONTROLS]);
      expect([await auditOf('card', card.cardKey), await auditOf('partner', partner.id)]).to.deep.equal(auditBefore);
      expect(await cardUpdatedEvents(partner, card.cardKey)).to.deep.equal(eventsBefore);
    });

    it('{} clears, on purpose, on both routes: audited, and the card\'s clear is a card.updated event', async function () {
      const partner = await registerPartner(gateway, 'pied-piper-spend');
      const card = await newCard(partner, 'Grace');
      const cardPath = `/cards/${card.cardKey}/spend-controls`;
      expectControls(await api(gateway, partner, 'PUT', cardPath, { body: CONTROLS }), CONTROLS);
      expectControls(await api(gateway, partner, 'PUT', '/spend-controls', { body: CONTROLS }), CONTROLS);

      expectControls(await api(gateway, partner, 'PUT', cardPath, { body: {} }), {});
      expectControls(await api(gateway, partner, 'PUT', '/spend-controls', { body: {} }), {});
      expectControls(await api(gateway, partner, 'GET', cardPath), {});
      expectControls(await api(gateway, partner, 'GET', '/spend-controls'), {});
      expect(await stored(partner.id), 'cleared: no row').to.deep.equal([]);
      expect((await auditOf('card', card.cardKey)).map((a) => JSON.parse(a.details.controls))).to.deep.equal([CONTROLS, {}]);
      expect((await auditOf('partner', partner.id)).map((a) => JSON.parse(a.details.controls))).to.deep.equal([CONTROLS, {}]);
      expect((await cardUpdatedEvents(partner, card.cardKey)).map((e: any) => e.data.changed)).to.deep.equal([['spendControls'], ['spendControls']]);
    });
  });

  describe('ownership and authentication', function () {
    it("B cannot read or change A's card controls (403), and they stay as A set them", async function () {
      const path = `/cards/${acmeCard.cardKey}/spend-controls`;
      const set = { allowedMccs: ['5411'] };
      expectControls(await api(gateway, acme, 'PUT', path, { body: set }), set);
      const read = await api(gateway, globex, 'GET', path);
      expect(read.status).to.equal(403);
      expect(read.body.code).to.equal('forbidden');
      const write = await api(gateway, globex, 'PUT', path, { body: {} });
      expect(write.status).to.equal(403);
      expect(write.body.code).to.equal('forbidden');
      expectControls(await api(gateway, acme, 'GET', path), set);
      // and A cannot touch B's card either
      expect((await api(gateway, acme, 'PUT', `/cards/${globexCard.cardKey}/spend-controls`, { body: set })).status).to.equal(403);
      expectControls(await api(gateway, globex, 'GET', `/cards/${globexCard.cardKey}/spend-controls`), {});
      expect((await api(gateway, acme, 'PUT', path, { body: {} })).status).to.equal(200);
    });

    it('answers 401 without a token, 404 for an unknown card, 400 for a malformed cardKey', async function () {
      for (const [method, path] of [
        ['GET', `/cards/${acmeCard.cardKey}/spend-controls`],
        ['PUT', `/cards/${acmeCard.cardKey}/spend-controls`],
        ['GET', '/spend-controls'],
        ['PUT', '/spend-controls'],
      ]) {
        expect((await api(gateway, null, method, path, { body: method === 'PUT' ? {} : undefined })).status, `${method} ${path}`).to.equal(401);
      }
      for (const method of ['GET', 'PUT']) {
        const body = method === 'PUT' ? {} : undefined;
        expect((await api(gateway, acme, method, `/cards/${UNKNOWN_KEY}/spend-controls`, { body })).status).to.equal(404);
        expect((await api(gateway, acme, method, '/cards/bad%20key/spend-controls', { body })).status).to.equal(400);
      }
    });
  });
});
