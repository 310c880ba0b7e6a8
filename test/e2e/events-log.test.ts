import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls, type ApiResponse } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { RESPONSE_SCHEMAS } from '../../gateway/schemas/responses';
import { runDatabaseUrl } from '../support/test-database';

/**
 * The event log end to end (docs/events.md): every change a partner sees writes its event in the
 * same transaction, read back through `GET /events` and `GET /events/{id}` of a real gateway on
 * real PostgreSQL, against the sandbox upstreams.
 */
describe('e2e: partner events written with their change, and the event log', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let globex: TestPartner;
  let sandboxes: { issuer: string; processing: string; accounts: string };
  let db: Client;
  let ada: any;
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv, ['date', 'date-time', 'email', 'uri']);
  /** The OpenAPI document's Event schema (the oneOf of every type's envelope). */
  const validEvent = ajv.compile(RESPONSE_SCHEMAS.Event);

  /** The partner's events, oldest first, as stored (one read of the table, not the API under test). */
  const storedEvents = async (partner: TestPartner) =>
    (await db.query<{ payload: string }>('SELECT payload FROM partner_events WHERE partner_id = $1 ORDER BY seq', [partner.id])).rows.map((r) => JSON.parse(r.payload));
  const eventsOfCard = async (partner: TestPartner, cardKey: string) =>
    (await storedEvents(partner)).filter((e) => e.data.cardKey === cardKey || e.data.card?.cardKey === cardKey);
  /** Every event of the partner through the API, newest first, page by page. */
  const allPages = async (partner: TestPartner, query = '') => {
    const events: any[] = [];
    let after: string | null = null;
    do {
      const page: ApiResponse = await api(gateway, partner, 'GET', `/events?limit=100${query}${after ? `&after=${after}` : ''}`);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      events.push(...page.body.data);
      after = page.body.nextCursor;
    } while (after);
    return events;
  };
  const requestIdOf = (response: ApiResponse) => response.headers.get('x-request-id');
  const issue = async (type: 'virtual' | 'physical') => {
    const response = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/${type}`, { body: cardBody(ada.clientID) });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response;
  };
  const expectValid = (event: unknown) => expect(validEvent(event), JSON.stringify(validEvent.errors)).to.equal(true);

  before(async function () {
    gateway = await sharedGateway();
    sandboxes = sandboxUrls(gateway);
    acme = await registerPartner(gateway, 'acme-events');
    globex = await registerPartner(gateway, 'globex-events');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    const created = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() });
    expect(created.status).to.equal(201);
    ada = created.body;
  });

  after(async function () {
    await db?.end();
  });

  describe('each change writes its event', function () {
    it('individual.created: data.individual is the create answer, with the request id', async function () {
      const created = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Mary' }) });
      expect(created.status).to.equal(201);
      const [event] = (await storedEvents(acme)).filter((e) => e.type === 'individual.created' && e.data.individual._id === created.body._id);
      expect(event).to.deep.include({ type: 'individual.created', partnerId: acme.id, requestId: requestIdOf(created) });
      expect(event.data).to.deep.equal({ individual: created.body });
      expectValid(event);
    });

    it('card.created (issued): data.card is the answer; the event reads back by id and in the list', async function () {
      const issued = await issue('virtual');
      const events = await eventsOfCard(acme, issued.body.cardKey);
      expect(events).to.have.length(1);
      expect(events[0]).to.deep.include({ type: 'card.created', partnerId: acme.id, requestId: requestIdOf(issued), data: { card: issued.body, reason: 'issued' } });
      expect(events[0].id).to.match(/^evt_[0-9a-f]{24}$/);
      const read = await api(gateway, acme, 'GET', `/events/${events[0].id}`);
      expect(read.status).to.equal(200);
      expect(read.headers.get('content-type')).to.match(/^application\/json/);
      expect(read.body).to.deep.equal(events[0]);
      expectValid(read.body);
      expect((await allPages(acme)).map((e) => e.id)).to.include(events[0].id);
    });

    it('card.status_changed (partner): written when the code changes, not for a repeat of the current status', async function () {
      const card = (await issue('virtual')).body;
      const locked = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate, reason: 'holder asked' } });
      expect(locked.status).to.equal(200);
      const again = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } });
      expect(again.status).to.equal(200);
      const changes = (await eventsOfCard(acme, card.cardKey)).filter((e) => e.type === 'card.status_changed');
      expect(changes).to.have.length(1);
      expect(changes[0].requestId).to.equal(requestIdOf(locked));
      expect(changes[0].data).to.deep.equal({
        cardKey: card.cardKey,
        previousStatus: 'ACTIVE',
        status: 'LOCKED',
        statusCode: 'L1',
        previousStatusCode: '00',
        source: 'partner',
        reason: 'holder asked',
      });
      expectValid(changes[0]);
      const history = await db.query('SELECT count(*)::int AS n FROM card_status_history WHERE card_key = $1', [card.cardKey]);
      expect(history.rows[0].n, 'the repeat still writes history').to.equal(3);
    });

    it('card.updated: nickname, 3DS phone, emboss name and limits list the fields changed, each with the card as answered', async function () {
      const card = (await issue('virtual')).body;
      const changes: [string, string, unknown, string][] = [
        ['PATCH', 'nickname', { nickname: 'Travel' }, 'nickname'],
        ['PUT', '3ds/phone', { phoneNumber: '+447700900999' }, 'threeDsPhone'],
        ['PATCH', 'emboss-name', { embossedName: 'ADA.L' }, 'embossedName'],
      ];
      for (const [method, route, body, field] of changes) {
        const response = await api(gateway, acme, method, `/cards/${card.cardKey}/${route}`, { body });
        expect(response.status, route).to.equal(200);
        const last = (await eventsOfCard(acme, card.cardKey)).pop();
        expect(last, route).to.deep.include({ type: 'card.updated', requestId: requestIdOf(response), data: { cardKey: card.cardKey, changed: [field], card: response.body } });
        expectValid(last);
      }
      const patched = await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/limits`, { body: [{ name: 'dailyPurchase', value: 900 }, { name: 'monthlyWithdrawal', value: 1200 }] });
      expect(patched.status).to.equal(200);
      let last = (await eventsOfCard(acme, card.cardKey)).pop();
      expect(last.data.changed).to.deep.equal(['limits']);
      expect(last.data.limits).to.deep.equal([{ name: 'dailyPurchase', value: 900 }, { name: 'monthlyWithdrawal', value: 1200 }]);
      expect(last.data.card.nickname).to.equal('Travel');
      expectValid(last);
      const set = await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/limits/singleTransaction`, { body: { name: 'singleTransaction', value: 300 } });
      expect(set.status).to.equal(200);
      last = (await eventsOfCard(acme, card.cardKey)).pop();
      expect(last).to.deep.include({ type: 'card.updated', requestId: requestIdOf(set) });
      expect(last.data.limits).to.deep.equal([{ name: 'singleTransaction', value: 300 }]);
    });

    it('never a 3DS answer, a PIN or card data: the 3DS answer and PIN operations write no event, and no payload holds them', async function () {
      const card = (await issue('virtual')).body;
      const before = (await eventsOfCard(acme, card.cardKey)).length;
      const answer = `Analytical-${crypto.randomBytes(6).toString('hex')}`;
      recordSecret('threeDsAnswer', answer);
      expect((await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/3ds/answer`, { body: { answer } })).status).to.equal(200);
      const pinKey = await sandboxControl(sandboxes.issuer, 'GET', '/pin-encryption-key');
      const pin = crypto.publicEncrypt({ key: pinKey.publicKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('4921')).toString('base64');
      recordSecret('pinBlock', pin);
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/authorize`, { body: { pin } })).status).to.equal(200);
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/pin/reset-tries`, { body: {} })).status).to.equal(200);
      expect(await eventsOfCard(acme, card.cardKey)).to.have.length(before);

      expect((await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/nickname`, { body: { nickname: 'Secretless' } })).status).to.equal(200);
      const secrets = await sandboxControl(sandboxes.issuer, 'GET', `/__sandbox/cards/${card.cardKey}/secrets`);
      const payloads = (await db.query<{ payload: string }>('SELECT payload FROM partner_events WHERE partner_id = $1', [acme.id])).rows.map((r) => r.payload).join('\n');
      for (const secret of [answer, pin, secrets.cardNumber]) expect(payloads.includes(secret), 'a secret in an event').to.equal(false);
      expect(payloads).to.not.match(/"(pan|cardNumber|cvv|pin|answer|threeDSAnswer)"\s*:/i);
    });

    it('card.created (replaced) names the previous cardKey', async function () {
      const card = (await issue('physical')).body;
      const replaced = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate, reason: 'damaged' } });
      expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
      const events = await eventsOfCard(acme, replaced.body.cardKey);
      expect(events).to.have.length(1);
      expect(events[0]).to.deep.include({ type: 'card.created', requestId: requestIdOf(replaced), data: { card: replaced.body, reason: 'replaced', previousCardKey: card.cardKey } });
      expectValid(events[0]);
    });

    it('re-issue: the old card closed, then the new card created, in that order', async function () {
      const card = (await issue('virtual')).body;
      const reissued = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/reissue`, { body: { expDate: card.expDate } });
      expect(reissued.status, JSON.stringify(reissued.body)).to.equal(201);
      const events = (await storedEvents(acme)).filter((e) => e.requestId === requestIdOf(reissued));
      expect(events.map((e) => e.type)).to.deep.equal(['card.status_changed', 'card.created']);
      expect(events[0].data).to.deep.include({ cardKey: card.cardKey, previousStatusCode: '00', status: 'CLOSED', statusCode: 'S4', source: 'partner' });
      expect(events[1].data).to.deep.equal({ card: reissued.body, reason: 'reissued', previousCardKey: card.cardKey });
      for (const event of events) expectValid(event);
    });
  });

  describe('no change without its event, no event without its change', function () {
    it('an upstream failure leaves neither: a refused card issue, a failed status change, a refused individual', async function () {
      const card = (await issue('virtual')).body;
      const before = (await storedEvents(acme)).length;
      await sandboxControl(sandboxes.issuer, 'POST', '/__sandbox/faults', { method: 'POST', path: `/cards/${card.cardKey}/status`, mode: 'status', status: 500, times: 1 });
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } })).status).to.equal(502);
      const stored = await db.query('SELECT status_code FROM cards WHERE card_key = $1', [card.cardKey]);
      expect(stored.rows[0].status_code).to.equal('00');

      const clientCode = ada.clientID;
      await sandboxControl(sandboxes.issuer, 'POST', '/__sandbox/faults', { method: 'POST', path: '/cards', mode: 'status', status: 422, times: 1, bodyIncludes: clientCode });
      const cardsBefore = await db.query('SELECT count(*)::int AS n FROM cards WHERE individual_id = $1', [ada._id]);
      expect((await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(clientCode) })).status).to.equal(422);
      expect((await db.query('SELECT count(*)::int AS n FROM cards WHERE individual_id = $1', [ada._id])).rows[0].n).to.equal(cardsBefore.rows[0].n);

      const email = `refused-${crypto.randomBytes(4).toString('hex')}@example.com`;
      await sandboxControl(sandboxes.accounts, 'POST', '/__sandbox/faults', { method: 'POST', path: '/accounts', mode: 'status', status: 422, times: 1, bodyIncludes: email });
      expect((await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ email }) })).status).to.equal(422);

      expect(await storedEvents(acme), 'no event').to.have.length(before);
    });

    it('an event that cannot be written takes its change with it (nickname, limits): 500 and the card unchanged', async function () {
      const card = (await issue('virtual')).body;
      const trigger = `refuse_events_${crypto.randomBytes(4).toString('hex')}`;
      // Only this partner's events fail, so that the other files sharing the database are unaffected.
      await db.query(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'event refused by the test'; END $$`);
      await db.query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON partner_events FOR EACH ROW WHEN (NEW.partner_id = '${acme.id}') EXECUTE FUNCTION ${trigger}()`);
      try {
        expect((await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/nickname`, { body: { nickname: 'Never' } })).status).to.equal(500);
        expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } })).status).to.equal(500);
        expect((await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/limits`, { body: [{ name: 'dailyPurchase', value: 777 }] })).status).to.equal(500);
      } finally {
        await db.query(`DROP TRIGGER ${trigger} ON partner_events`);
        await db.query(`DROP FUNCTION ${trigger}()`);
      }
      const row = (await db.query('SELECT nickname, status_code FROM cards WHERE card_key = $1', [card.cardKey])).rows[0];
      expect(row).to.deep.equal({ nickname: null, status_code: '00' });
      const audit = await db.query("SELECT operation FROM audit_log WHERE target_id = $1 AND outcome = 'success' ORDER BY id", [card.cardKey]);
      expect(audit.rows.map((r) => r.operation), 'no success audit entry either').to.deep.equal(['card.issue.virtual']);
      expect((await eventsOfCard(acme, card.cardKey)).map((e) => e.type)).to.deep.equal(['card.created']);
    });
  });

  describe('card.status_changed when the issuer changed the card', function () {
    /** A lock whose connection the issuer resets: the outcome is unknown, the card marked due. */
    const lockWithUnknownOutcome = async (card: any) => {
      await sandboxControl(sandboxes.issuer, 'POST', '/__sandbox/faults', { method: 'POST', path: `/cards/${card.cardKey}/status`, mode: 'reset', times: 1 });
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } })).status).to.equal(502);
      expect((await db.query('SELECT issuer_check_due, issuer_check_source, issuer_check_target FROM cards WHERE card_key = $1', [card.cardKey])).rows[0]).to.deep.equal({
        issuer_check_due: true,
        issuer_check_source: 'partner',
        issuer_check_target: 'L1',
      });
    };
    const issuerChanges = async (card: any, action: string) => {
      const response = await fetch(`${sandboxes.issuer}/cards/${card.cardKey}/status`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action, expDate: card.expDate }) });
      expect(response.status).to.equal(200);
    };

    it("source issuer: a code nobody asked for, found on the card's next access; no request id", async function () {
      const card = (await issue('virtual')).body;
      await lockWithUnknownOutcome(card);
      await issuerChanges(card, 'fraud');
      // The next operation brings the card to the issuer first; FRAUD cannot be unlocked (409).
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/unlock`, { body: { expDate: card.expDate } })).status).to.equal(409);
      const [change] = (await eventsOfCard(acme, card.cardKey)).filter((e) => e.type === 'card.status_changed');
      expect(change).to.not.have.property('requestId');
      expect(change.data).to.deep.equal({
        cardKey: card.cardKey,
        previousStatus: 'ACTIVE',
        status: 'FRAUD',
        statusCode: 'S5',
        previousStatusCode: '00',
        source: 'issuer',
        reason: 'issuer-side change',
      });
      expectValid(change);
    });

    it('source partner: the code an unanswered lock asked for is that lock, then the next change follows it in order', async function () {
      const card = (await issue('virtual')).body;
      await lockWithUnknownOutcome(card);
      await issuerChanges(card, 'lock');
      const unlocked = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/unlock`, { body: { expDate: card.expDate } });
      expect(unlocked.status).to.equal(200);
      const changes = (await eventsOfCard(acme, card.cardKey)).filter((e) => e.type === 'card.status_changed');
      expect(changes.map((e) => [e.data.previousStatusCode, e.data.statusCode, e.data.source])).to.deep.equal([
        ['00', 'L1', 'partner'],
        ['L1', '00', 'partner'],
      ]);
      expect(changes[0]).to.not.have.property('requestId');
      expect(changes[1].requestId).to.equal(requestIdOf(unlocked));
    });
  });

  describe('the event log: GET /events and GET /events/{id}', function () {
    it('pages newest first with a cursor that events written meanwhile do not shift; filters by type', async function () {
      const initech = await registerPartner(gateway, 'initech-events');
      const grace = (await api(gateway, initech, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Grace' }) })).body;
      const cards: string[] = [];
      for (let i = 0; i < 4; i++) cards.push((await api(gateway, initech, 'POST', `/individual/accounts/${grace._id}/cards/virtual`, { body: cardBody(grace.clientID) })).body.cardKey);
      const newestFirst = (await storedEvents(initech)).reverse().map((e) => e.id);
      expect(newestFirst).to.have.length(5);

      const first = await api(gateway, initech, 'GET', '/events?limit=2');
      expect(first.status).to.equal(200);
      expect(first.headers.get('cache-control'), 'events carry cardholder data').to.equal('no-store');
      expect(first.body.data.map((e: any) => e.id)).to.deep.equal(newestFirst.slice(0, 2));
      expect(first.body.nextCursor).to.match(/^[A-Za-z0-9_-]+$/);
      // Three new events while the partner pages: the next pages are the older events as they were.
      const newCard = (await api(gateway, initech, 'POST', `/individual/accounts/${grace._id}/cards/virtual`, { body: cardBody(grace.clientID) })).body.cardKey;
      const nick = await api(gateway, initech, 'PATCH', `/cards/${newCard}/nickname`, { body: { nickname: 'Later' } });
      expect(nick.status).to.equal(200);
      const second = await api(gateway, initech, 'GET', `/events?limit=2&after=${first.body.nextCursor}`);
      expect(second.body.data.map((e: any) => e.id)).to.deep.equal(newestFirst.slice(2, 4));
      const third = await api(gateway, initech, 'GET', `/events?limit=2&after=${second.body.nextCursor}`);
      expect(third.body).to.deep.equal({ data: [(await storedEvents(initech))[0]], nextCursor: null });
      expect(third.body.data[0].type).to.equal('individual.created');

      const created = await allPages(initech, '&type=card.created');
      expect(created.map((e) => e.data.card.cardKey)).to.deep.equal([newCard, ...[...cards].reverse()]);
      expect((await allPages(initech, '&type=card.updated')).map((e) => e.data.cardKey)).to.deep.equal([newCard]);
      expect((await allPages(initech, '&type=transaction.created')).length).to.equal(0);
      const page = await api(gateway, initech, 'GET', '/events');
      expect(page.body.data, 'limit defaults to 20').to.have.length(7);
      expect(page.body.nextCursor).to.equal(null);
    });

    it('refuses a bad query with 400: limit outside 1..100, an unknown type, a cursor it never gave, unknown parameters', async function () {
      expect((await api(gateway, acme, 'GET', '/events?limit=100')).status).to.equal(200);
      expect((await api(gateway, acme, 'GET', '/events?limit=1')).body.data).to.have.length(1);
      const bad: [string, string][] = [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['limit=ten', 'limit'],
        ['type=card.deleted', 'type'],
        ['after=not%20a%20cursor', 'after'],
        ['after=AAAA', 'after'],
        ['page=2', 'page'],
      ];
      for (const [query, field] of bad) {
        const response = await api(gateway, acme, 'GET', `/events?${query}`);
        expect(response.status, query).to.equal(400);
        expect(response.body.code, query).to.equal('validation_failed');
        expect(response.body.invalidParams.map((p: any) => p.name), query).to.include(field);
      }
    });

    it("GET /events/{id}: own 200, another partner's 403, unknown 404, malformed 400", async function () {
      const [own] = await storedEvents(acme);
      const globexIndividual = await api(gateway, globex, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Grace' }) });
      expect(globexIndividual.status).to.equal(201);
      const [theirs] = await storedEvents(globex);
      expect((await api(gateway, acme, 'GET', `/events/${own.id}`)).status).to.equal(200);
      const forbidden = await api(gateway, acme, 'GET', `/events/${theirs.id}`);
      expect(forbidden.status).to.equal(403);
      expect(forbidden.body.code).to.equal('forbidden');
      expect(JSON.stringify(forbidden.body)).to.not.include(theirs.data.individual._id);
      const unknown = await api(gateway, acme, 'GET', `/events/evt_${'0'.repeat(24)}`);
      expect([unknown.status, unknown.body.code]).to.deep.equal([404, 'not_found']);
      for (const malformed of ['evt_123', 'EVT_0123456789abcdef01234567', own.id.slice(4)]) {
        const response = await api(gateway, acme, 'GET', `/events/${malformed}`);
        expect([response.status, response.body.code], malformed).to.deep.equal([400, 'invalid_id']);
      }
      expect((await api(gateway, null, 'GET', `/events/${own.id}`)).status).to.equal(401);
      expect((await api(gateway, null, 'GET', '/events')).status).to.equal(401);
    });

    it("partner B never reads partner A's events", async function () {
      const acmeIds = new Set((await storedEvents(acme)).map((e) => e.id));
      expect(acmeIds.size).to.be.greaterThan(5);
      const globexEvents = await allPages(globex);
      expect(globexEvents.length).to.be.greaterThan(0);
      for (const event of globexEvents) {
        expect(acmeIds.has(event.id)).to.equal(false);
        expect(event.partnerId).to.equal(globex.id);
      }
      for (const type of ['card.created', 'card.status_changed', 'card.updated', 'individual.created']) {
        for (const event of await allPages(globex, `&type=${type}`)) expect(event.partnerId).to.equal(globex.id);
      }
    });
  });
});
