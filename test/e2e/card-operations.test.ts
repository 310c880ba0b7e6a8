import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { logsSettled, sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { runDatabaseUrl } from '../support/test-database';

const UNKNOWN_KEY = 'CK0000000000000000';

describe('e2e: card operations (status changes, local fields, replace, re-issue, PIN, 3DS, limits)', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let globex: TestPartner;
  let sandboxes: { issuer: string; processing: string; accounts: string };
  let db: Client;
  let ada: any;
  let globexCard: any;
  const secretsUsed: string[] = [];

  const issue = async (type: 'virtual' | 'physical', overrides: Record<string, unknown> = {}) => {
    const response = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/${type}`, { body: cardBody(ada.clientID, overrides) });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response.body;
  };
  const issuerCalls = async (cardKey: string) =>
    (await sandboxControl(sandboxes.issuer, 'GET', '/__sandbox/requests')).filter((r: any) => r.path.startsWith(`/cards/${cardKey}`)).length;
  const row = async (cardKey: string) => (await db.query('SELECT status, status_code, card_key, nickname, three_ds_phone, embossed_name FROM cards WHERE card_key = $1', [cardKey])).rows[0];
  const auditOf = async (cardKey: string) => (await db.query('SELECT operation, outcome, request_id FROM audit_log WHERE target_id = $1 ORDER BY id', [cardKey])).rows;
  const historyOf = async (cardKey: string) =>
    (await db.query('SELECT operation, old_status, new_status, old_status_code, new_status_code, reason FROM card_status_history WHERE card_key = $1 ORDER BY id', [cardKey])).rows;

  before(async function () {
    gateway = await sharedGateway();
    sandboxes = sandboxUrls(gateway);
    acme = await registerPartner(gateway, 'acme-cards');
    globex = await registerPartner(gateway, 'globex-cards');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    ada = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() })).body;
    const grace = (await api(gateway, globex, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Grace' }) })).body;
    globexCard = (await api(gateway, globex, 'POST', `/individual/accounts/${grace._id}/cards/virtual`, { body: cardBody(grace.clientID) })).body;
  });

  after(async function () {
    await db?.end();
  });

  describe('status changes', function () {
    const table: { action: string; type: 'virtual' | 'physical'; prepare?: string[]; status: string; statusCode: string }[] = [
      { action: 'lock', type: 'virtual', status: 'LOCKED', statusCode: 'L1' },
      { action: 'unlock', type: 'virtual', prepare: ['lock'], status: 'ACTIVE', statusCode: '00' },
      { action: 'activate', type: 'physical', status: 'ACTIVE', statusCode: '00' },
      { action: 'temporary-lock', type: 'virtual', status: 'TEMP_LOCKED', statusCode: 'T1' },
      { action: 'restrict', type: 'virtual', status: 'RESTRICTED', statusCode: 'S1' },
      { action: 'restrict/lost', type: 'virtual', status: 'LOST', statusCode: 'S2' },
      { action: 'restrict/stolen', type: 'physical', status: 'STOLEN', statusCode: 'S3' },
      { action: 'restrict/closed', type: 'virtual', status: 'CLOSED', statusCode: 'S4' },
      { action: 'restrict/fraud', type: 'virtual', status: 'FRAUD', statusCode: 'S5' },
      { action: 'restrict/mobile-lost', type: 'virtual', status: 'MOBILE_LOST', statusCode: 'S6' },
    ];
    for (const row_ of table) {
      it(`${row_.action} → ${row_.status} (${row_.statusCode}): local status, one history row and one audit entry`, async function () {
        const card = await issue(row_.type);
        for (const step of row_.prepare ?? []) {
          expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/${step}`, { body: { expDate: card.expDate } })).status).to.equal(200);
        }
        const before = await row(card.cardKey);
        const body = row_.action.startsWith('restrict') ? { reason: 'customer call', cardLocation: 'Berlin' } : { expDate: card.expDate, reason: 'customer call' };
        const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/${row_.action}`, { body, headers: { 'x-request-id': `status-${row_.action.replace('/', '-')}` } });
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        expect(response.body).to.deep.equal({ cardKey: card.cardKey, status: row_.status, statusCode: row_.statusCode });
        expect(await row(card.cardKey)).to.include({ status: row_.status, status_code: row_.statusCode });
        const history = await historyOf(card.cardKey);
        expect(history[history.length - 1]).to.include({ old_status: before.status, new_status: row_.status, old_status_code: before.status_code, new_status_code: row_.statusCode, reason: 'customer call' });
        const audit = await auditOf(card.cardKey);
        expect(audit[audit.length - 1]).to.include({ outcome: 'success', request_id: `status-${row_.action.replace('/', '-')}` });
      });
    }

    const refused: { description: string; type: 'virtual' | 'physical'; prepare: string[]; action: string }[] = [
      { description: 'lock a new physical card before activation', type: 'physical', prepare: [], action: 'lock' },
      { description: 'unlock a lost card', type: 'virtual', prepare: ['restrict/lost'], action: 'unlock' },
      { description: 'activate a locked card', type: 'virtual', prepare: ['lock'], action: 'activate' },
      { description: 'lock a closed card', type: 'virtual', prepare: ['restrict/closed'], action: 'lock' },
      { description: 'report a closed card stolen', type: 'virtual', prepare: ['restrict/closed'], action: 'restrict/stolen' },
      { description: 'temporarily lock a restricted card', type: 'virtual', prepare: ['restrict'], action: 'temporary-lock' },
    ];
    for (const testCase of refused) {
      it(`refuses to ${testCase.description}: 409 invalid_transition without calling the issuer`, async function () {
        const card = await issue(testCase.type);
        for (const step of testCase.prepare) {
          const body = step.startsWith('restrict') ? {} : { expDate: card.expDate };
          expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/${step}`, { body })).status).to.equal(200);
        }
        const calls = await issuerCalls(card.cardKey);
        const before = await row(card.cardKey);
        const body = testCase.action.startsWith('restrict') ? {} : { expDate: card.expDate };
        const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/${testCase.action}`, { body });
        expect(response.status).to.equal(409);
        expect(response.body.code).to.equal('invalid_transition');
        expect(await issuerCalls(card.cardKey), 'issuer not called').to.equal(calls);
        expect(await row(card.cardKey)).to.deep.equal(before);
      });
    }

    it('refuses invalid bodies with 400 (missing or malformed expDate, unknown field, long reason)', async function () {
      const card = await issue('virtual');
      const calls = await issuerCalls(card.cardKey);
      const bad: [string, unknown, string][] = [
        ['lock', {}, 'expDate'],
        ['unlock', { expDate: '2030-12' }, 'expDate'],
        ['activate', { expDate: '13/2030' }, 'expDate'],
        ['temporary-lock', { expDate: card.expDate, colour: 'red' }, 'colour'],
        ['restrict', { reason: 'x'.repeat(501) }, 'reason'],
        ['restrict/lost', { cardLocation: 42 }, 'cardLocation'],
      ];
      for (const [action, body, field] of bad) {
        const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/${action}`, { body });
        expect(response.status, action).to.equal(400);
        expect(response.body.invalidParams.map((p: { name: string }) => p.name), action).to.include(field);
      }
      expect(await issuerCalls(card.cardKey)).to.equal(calls);
    });

    it('maps an issuer refusal (expDate not the card\'s) to 422 with upstreamCode, changing nothing and auditing the failure', async function () {
      const card = await issue('virtual');
      const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: '01/2099' } });
      expect(response.status).to.equal(422);
      expect(response.body).to.include({ code: 'upstream_rejected', upstream: 'issuer', upstreamCode: 'EXP_DATE_MISMATCH' });
      expect(await row(card.cardKey)).to.include({ status: 'ACTIVE', status_code: '00' });
      const audit = await auditOf(card.cardKey);
      expect(audit[audit.length - 1]).to.include({ operation: 'card.lock', outcome: 'failure' });
    });
  });

  describe('every {id} card route: 401 without token, 403 on another partner\'s card, 404 on an unknown card', function () {
    const routes: [string, string, unknown][] = [
      ['POST', '/lock', { expDate: '12/2030' }],
      ['POST', '/unlock', { expDate: '12/2030' }],
      ['POST', '/activate', { expDate: '12/2030' }],
      ['POST', '/temporary-lock', { expDate: '12/2030' }],
      ['POST', '/restrict', {}],
      ['POST', '/restrict/lost', {}],
      ['POST', '/restrict/stolen', {}],
      ['POST', '/restrict/closed', {}],
      ['POST', '/restrict/fraud', {}],
      ['POST', '/restrict/mobile-lost', {}],
      ['PATCH', '/nickname', { nickname: 'x' }],
      ['PATCH', '/emboss-name', { embossedName: 'X' }],
      ['POST', '/replace', { expDate: '12/2030' }],
      ['POST', '/reissue', { expDate: '12/2030' }],
      ['PUT', '/3ds/answer', { answer: 'x' }],
      ['PUT', '/3ds/phone', { phoneNumber: '+491511234567' }],
      ['POST', '/pin/reset-tries', {}],
      ['POST', '/pin/change', { expDate: '12/2030', pin: 'QUFBQUFBQUFBQUFBQUFBQQ==' }],
      ['POST', '/pin/force-lock', { expDate: '12/2030' }],
      ['POST', '/authorize', { pin: 'QUFBQUFBQUFBQUFBQUFBQQ==' }],
      ['PATCH', '/limits', [{ name: 'dailyPurchase', value: 10 }]],
      ['PUT', '/limits/dailyPurchase', { name: 'dailyPurchase', value: 10 }],
    ];
    for (const [method, suffix, body] of routes) {
      it(`${method} /cards/{id}${suffix}`, async function () {
        const calls = await issuerCalls(globexCard.cardKey);
        expect((await api(gateway, null, method, `/cards/${globexCard.cardKey}${suffix}`, { body })).status).to.equal(401);
        const forbidden = await api(gateway, acme, method, `/cards/${globexCard.cardKey}${suffix}`, { body });
        expect(forbidden.status).to.equal(403);
        expect(forbidden.body.code).to.equal('forbidden');
        const unknown = await api(gateway, acme, method, `/cards/${UNKNOWN_KEY}${suffix}`, { body });
        expect(unknown.status).to.equal(404);
        expect((await api(gateway, acme, method, `/cards/bad%20key${suffix}`, { body })).status).to.equal(400);
        expect(await issuerCalls(globexCard.cardKey), 'issuer never reached').to.equal(calls);
      });
    }
  });

  describe('local-only fields: nickname and 3DS phone', function () {
    it('sets the nickname locally (no issuer call) and answers the full card', async function () {
      const card = await issue('virtual');
      const calls = await issuerCalls(card.cardKey);
      const response = await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/nickname`, { body: { nickname: 'Groceries 🛒' } });
      expect(response.status).to.equal(200);
      expect(response.body).to.include({ cardKey: card.cardKey, nickname: 'Groceries 🛒', status: 'ACTIVE' });
      expect(await issuerCalls(card.cardKey)).to.equal(calls);
      expect((await row(card.cardKey)).nickname).to.equal('Groceries 🛒');
      expect((await auditOf(card.cardKey)).pop()).to.include({ operation: 'card.nickname.update' });
      for (const body of [{ nickname: 'x'.repeat(65) }, { nickname: '' }, {}, { nickname: 'ok', extra: 1 }]) {
        expect((await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/nickname`, { body })).status).to.equal(400);
      }
      expect((await row(card.cardKey)).nickname).to.equal('Groceries 🛒');
    });

    it('sets the 3DS phone locally (no issuer call), E.164 up to 32 characters', async function () {
      const card = await issue('virtual');
      const calls = await issuerCalls(card.cardKey);
      const response = await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/3ds/phone`, { body: { phoneNumber: '+491511234567' } });
      expect(response.status).to.equal(200);
      expect(response.body.threeDsPhone).to.equal('+491511234567');
      expect(await issuerCalls(card.cardKey)).to.equal(calls);
      for (const phoneNumber of ['0151 1234567', '+1'.padEnd(33, '2'), '']) {
        expect((await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/3ds/phone`, { body: { phoneNumber } })).status).to.equal(400);
      }
    });
  });

  describe('emboss name', function () {
    it('changes it at the issuer and locally; refuses spaces and more than 26 characters', async function () {
      const card = await issue('physical');
      const response = await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/emboss-name`, { body: { embossedName: "ADA.O'NEIL-KING" } });
      expect(response.status).to.equal(200);
      expect(response.body.embossedName).to.equal("ADA.O'NEIL-KING");
      const issuerCard = await sandboxControl(sandboxes.issuer, 'GET', `/cards/${card.cardKey}`);
      expect(issuerCard.embossedName).to.equal("ADA.O'NEIL-KING");
      const calls = await issuerCalls(card.cardKey);
      for (const embossedName of ['ADA LOVELACE', 'A'.repeat(27), '', 'ADA_LOVELACE']) {
        const refused = await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/emboss-name`, { body: { embossedName } });
        expect(refused.status, embossedName).to.equal(400);
      }
      expect(await issuerCalls(card.cardKey)).to.equal(calls);
    });
  });

  describe('replace and re-issue', function () {
    const received = async (path: string) => sandboxControl(sandboxes.processing, 'GET', `/__sandbox/requests?path=${path}`);

    it('replaces a physical card: new cardKey and mask, old key 404, card_created webhook after the local update', async function () {
      const card = await issue('physical');
      await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/nickname`, { body: { nickname: 'Travel' } });
      const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/replace`, {
        body: { expDate: `06/${new Date().getUTCFullYear() + 5}`, reason: 'damaged', pinMailer: 'PM-1' },
        headers: { 'x-request-id': 'replace-1' },
      });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      const replaced = response.body;
      expect(replaced.cardKey).to.not.equal(card.cardKey);
      expect(replaced.cardMask).to.not.equal(card.cardMask);
      expect(replaced).to.include({ type: 'physical', nickname: 'Travel', ownerId: ada._id });
      const issuerCard = await sandboxControl(sandboxes.issuer, 'GET', `/cards/${replaced.cardKey}`);
      expect(replaced.cardMask).to.equal(issuerCard.cardMask);
      expect(await row(card.cardKey)).to.equal(undefined);
      const old = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } });
      expect(old.status, 'the old key is gone').to.equal(404);

      const webhook = (await received('/webhooks/card-created')).find((r: any) => r.body.cardKey === replaced.cardKey);
      expect(webhook.body).to.include({ event: 'card_created', cardKey: replaced.cardKey, previousCardKey: card.cardKey, cardMask: replaced.cardMask, ownerType: 'individual', ownerId: ada._id, partnerId: acme.id });
      expect(webhook.requestId).to.equal('replace-1');
      const outbox = await db.query("SELECT delivered_at, created_at FROM outbox_events WHERE payload->>'cardKey' = $1", [replaced.cardKey]);
      expect(outbox.rows.length).to.equal(1);
      expect(outbox.rows[0].delivered_at, JSON.stringify((await db.query("SELECT id, attempts, last_error, delivered_at FROM outbox_events ORDER BY id DESC LIMIT 3")).rows)).to.not.equal(null);
      expect(outbox.rows[0].delivered_at).to.be.instanceOf(Date);
      expect(outbox.rows[0].delivered_at.getTime()).to.be.at.least(outbox.rows[0].created_at.getTime());
      expect((await auditOf(card.cardKey)).pop(), 'audited on the key the partner named').to.include({ operation: 'card.replace', outcome: 'success' });
    });

    it('refuses to replace a virtual card (409) without calling the issuer', async function () {
      const card = await issue('virtual');
      const calls = await issuerCalls(card.cardKey);
      const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate } });
      expect(response.status).to.equal(409);
      expect(await issuerCalls(card.cardKey)).to.equal(calls);
    });

    it('re-issues: old card CLOSED locally, new card stored, processing got the OLD statusCode then card_created', async function () {
      const card = await issue('virtual');
      await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } });
      await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/3ds/phone`, { body: { phoneNumber: '+491511234567' } });
      const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/reissue`, { body: { expDate: `06/${new Date().getUTCFullYear() + 5}`, reason: 'expiry' } });
      expect(response.status, JSON.stringify(response.body)).to.equal(201);
      const fresh = response.body;
      expect(fresh.cardKey).to.not.equal(card.cardKey);
      expect(fresh).to.include({ status: 'ACTIVE', statusCode: '00', ownerId: ada._id, threeDsPhone: '+491511234567' });
      expect(await row(card.cardKey)).to.include({ status: 'CLOSED', status_code: 'S4' });
      expect(await row(fresh.cardKey)).to.include({ status: 'ACTIVE', status_code: '00' });

      const requests = await sandboxControl(sandboxes.processing, 'GET', '/__sandbox/requests');
      const update = requests.findIndex((r: any) => r.path === '/cards/status-update' && r.body.cardKey === card.cardKey);
      const created = requests.findIndex((r: any) => r.path === '/webhooks/card-created' && r.body.cardKey === fresh.cardKey);
      expect(update, 'status update sent').to.be.greaterThan(-1);
      expect(created, 'card_created sent').to.be.greaterThan(-1);
      expect(requests[update].body.statusCode, 'the old statusCode, read before the local update').to.equal('L1');
      expect(update, 'status update before the webhook').to.be.lessThan(created);
      expect(requests[created].body.previousCardKey).to.equal(card.cardKey);
      const history = await historyOf(card.cardKey);
      expect(history[history.length - 1]).to.include({ operation: 'card.reissue', old_status_code: 'L1', new_status_code: 'S4', new_status: 'CLOSED' });
      const closed = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/unlock`, { body: { expDate: card.expDate } });
      expect(closed.status, 'the old card is closed').to.equal(409);
      const list = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/cards`);
      const keys = list.body.map((c: { cardKey: string }) => c.cardKey);
      expect(keys).to.include(fresh.cardKey);
      expect(keys).to.not.include(card.cardKey);
    });

    it('keeps the local change when the webhook fails, and leaves it in the outbox for a retry', async function () {
      const card = await issue('physical');
      await sandboxControl(sandboxes.processing, 'POST', '/__sandbox/faults', { method: 'POST', path: '/webhooks/card-created', mode: 'status', status: 500, times: 1, bodyIncludes: card.cardKey });
      const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate } });
      expect(response.status).to.equal(200);
      const outbox = await db.query("SELECT delivered_at, attempts, last_error, next_attempt_at FROM outbox_events WHERE payload->>'cardKey' = $1", [response.body.cardKey]);
      expect(outbox.rows[0]).to.include({ delivered_at: null, attempts: 1 });
      expect(outbox.rows[0].next_attempt_at.getTime()).to.be.greaterThan(Date.now());
    });
  });

  describe('PIN, authorize and 3DS answer', function () {
    let pinKey: crypto.KeyObject;
    const pinBlock = (pin: string) => {
      const block = crypto.publicEncrypt({ key: pinKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(pin)).toString('base64');
      secretsUsed.push(block);
      recordSecret('pinBlock', block);
      return block;
    };

    before(async function () {
      const key = await sandboxControl(sandboxes.issuer, 'GET', '/pin-encryption-key');
      pinKey = crypto.createPublicKey(key.publicKey);
    });

    it('authorizes the cardholder with a PIN block and answers the full card', async function () {
      const card = await issue('virtual');
      const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/authorize`, { body: { pin: pinBlock('4921') } });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(response.body).to.include({ cardKey: card.cardKey, status: 'ACTIVE' });
      expect((await auditOf(card.cardKey)).pop()).to.include({ operation: 'card.authorize', outcome: 'success' });
      const bad = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/authorize`, { body: { pin: Buffer.alloc(256, 7).toString('base64') } });
      expect(bad.status).to.equal(422);
      expect(bad.body.upstreamCode).to.equal('INVALID_PIN_BLOCK');
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/authorize`, { body: { pin: '1234' } })).status, 'a clear PIN is refused').to.equal(400);
    });

    it('resets PIN tries ({}: no field) and answers the full card; a field is refused, and so is no body', async function () {
      const card = await issue('virtual');
      const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/pin/reset-tries`, { body: {} });
      expect(response.status).to.equal(200);
      expect(response.body.cardKey).to.equal(card.cardKey);
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/pin/reset-tries`, { body: { tries: 0 } })).status).to.equal(400);
      const bodiless = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/pin/reset-tries`);
      expect([bodiless.status, bodiless.body.code]).to.deep.equal([400, 'body_required']);
    });

    it('answers PIN change and force PIN lock with the documented known-limitation problem', async function () {
      const card = await issue('virtual');
      const change = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/pin/change`, { body: { expDate: card.expDate, pin: pinBlock('7302') } });
      expect(change.status).to.equal(502);
      expect(change.body).to.include({ code: 'upstream_error', upstream: 'issuer', upstreamCode: 'OPERATION_NOT_SUPPORTED' });
      expect(change.body.detail).to.match(/known limitation/);
      const lock = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/pin/force-lock`, { body: { expDate: card.expDate } });
      expect(lock.status).to.equal(502);
      expect(lock.body.detail).to.match(/known limitation/);
      expect(await row(card.cardKey)).to.include({ status: 'ACTIVE' });
      expect((await api(gateway, acme, 'POST', `/cards/${card.cardKey}/pin/change`, { body: { expDate: card.expDate } })).status).to.equal(400);
    });

    it('forwards the 3DS answer to the issuer and answers the full card', async function () {
      const card = await issue('virtual');
      const answer = `my-first-pet-${crypto.randomBytes(4).toString('hex')}`;
      secretsUsed.push(answer);
      recordSecret('threeDsAnswer', answer);
      const response = await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/3ds/answer`, { body: { answer } });
      expect(response.status).to.equal(200);
      expect(JSON.stringify(response.body)).to.not.include(answer);
      const state = await sandboxControl(sandboxes.issuer, 'GET', `/__sandbox/cards/${card.cardKey}`);
      expect(JSON.stringify(state)).to.include(answer);
      expect((await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/3ds/answer`, { body: { answer: 'x'.repeat(201) } })).status).to.equal(400);
    });
  });

  describe('limits', function () {
    it('patches several limits and sets one; used and available stay consistent', async function () {
      const card = await issue('virtual');
      const patched = await api(gateway, acme, 'PATCH', `/cards/${card.cardKey}/limits`, {
        body: [
          { name: 'dailyPurchase', value: 750.5 },
          { name: 'monthlyWithdrawal', value: 2000 },
        ],
      });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      const daily = patched.body.find((l: any) => l.name === 'dailyPurchase');
      expect(daily).to.have.keys(['name', 'value', 'currency', 'used', 'available']);
      expect(daily.value).to.equal(750.5);
      // Amounts are money with two decimals: compare in cents, never as floats (750.5 - 222.57 is 527.9300000000001).
      expect(Math.round(daily.available * 100)).to.equal(Math.max(0, Math.round(daily.value * 100) - Math.round(daily.used * 100)));
      const one = await api(gateway, acme, 'PUT', `/cards/${card.cardKey}/limits/singleTransaction`, { body: { name: 'singleTransaction', value: 99 } });
      expect(one.status).to.equal(200);
      expect(one.body).to.include({ name: 'singleTransaction', value: 99 });
      expect((await auditOf(card.cardKey)).pop()).to.include({ operation: 'card.limits.update' });
    });

    const bad: [string, string, unknown][] = [
      ['PATCH', '/limits', []],
      ['PATCH', '/limits', [{ name: 'coffee', value: 1 }]],
      ['PATCH', '/limits', [{ name: 'dailyPurchase', value: -1 }]],
      ['PATCH', '/limits', [{ name: 'dailyPurchase', value: 1 }, { name: 'dailyPurchase', value: 2 }]],
      ['PATCH', '/limits', { name: 'dailyPurchase', value: 1 }],
      ['PUT', '/limits/dailyPurchase', { name: 'monthlyPurchase', value: 1 }],
      ['PUT', '/limits/coffee', { name: 'coffee', value: 1 }],
      ['PUT', '/limits/dailyPurchase', { name: 'dailyPurchase', value: '10' }],
    ];
    for (const [method, suffix, body] of bad) {
      it(`refuses ${method} ${suffix} ${JSON.stringify(body)} with 400`, async function () {
        const card = await issue('virtual');
        const calls = await issuerCalls(card.cardKey);
        const response = await api(gateway, acme, method, `/cards/${card.cardKey}${suffix}`, { body });
        expect(response.status).to.equal(400);
        expect(await issuerCalls(card.cardKey)).to.equal(calls);
      });
    }
  });

  describe('logs', function () {
    it('never logs a PIN block or a 3DS answer it handled', async function () {
      await logsSettled(gateway);
      expect(secretsUsed.length).to.be.at.least(3);
      const output = gateway.output();
      for (const secret of secretsUsed) expect(output.includes(secret), 'a secret was logged').to.equal(false);
    });
  });
});
