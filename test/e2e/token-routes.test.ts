import crypto from 'node:crypto';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { logsSettled, sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';
import { waitFor } from '../support/wait';
import { newTokenId } from '../../gateway/ids';
import { RESPONSE_SCHEMAS } from '../../gateway/schemas/responses';

/**
 * The partner's token routes (docs/tokens.md), through the run's shared gateway over real HTTP on
 * real PostgreSQL: the reads (`GET /cards/{id}/tokens`, `GET /tokens` with its filters and cursor,
 * `GET /tokens/{id}`) and their ownership (partner B never sees A's tokens), and wallet
 * provisioning's refusal of a card that is not ACTIVE before any processor call. The tokens read are
 * written straight into the gateway's database, as its tokenization decision records them
 * (migration 028): the decision and the processing sandbox's token service are other files' tests.
 */
describe('e2e: token routes (reads, ownership, provisioning refusals)', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let a: TestPartner;
  let b: TestPartner;
  let pg: Client;
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv, ['date-time']);
  const validToken = ajv.compile(RESPONSE_SCHEMAS.Token);
  const validList = ajv.compile(RESPONSE_SCHEMAS.TokenList);
  const validCardTokens = ajv.compile(RESPONSE_SCHEMAS.CardTokens);

  const newCard = async (as: TestPartner, type: 'virtual' | 'physical' = 'virtual') => {
    const individual = await api(gateway, as, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status, JSON.stringify(individual.body)).to.equal(201);
    const card = await api(gateway, as, 'POST', `/individual/accounts/${individual.body._id}/cards/${type}`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return { individualId: individual.body._id as string, cardKey: card.body.cardKey as string, expDate: card.body.expDate as string };
  };

  /** A token as the decision records it, `seconds` after a fixed instant (so the order is known). */
  const insertToken = async (partner: TestPartner, card: { cardKey: string; individualId: string }, seconds: number, status: string, walletProvider: string) => {
    const id = newTokenId();
    const at = new Date(Date.parse('2026-12-01T10:00:00.000Z') + seconds * 1000).toISOString();
    await pg.query(
      `INSERT INTO tokens (id, partner_id, card_key, individual_id, processor_ref, wallet_provider, token_requestor_id, last4, token_exp_date, device, status, history, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, '50110030273', '4821', '11/2029', '{"type":"phone","name":"Ada''s iPhone","ipCountry":"GB"}', $7, $8, $9, $9)`,
      [id, partner.id, card.cardKey, card.individualId, `tref_${crypto.randomBytes(12).toString('hex')}`, walletProvider, status, JSON.stringify([{ status, at, by: 'network' }]), at]
    );
    return id;
  };

  let cardA: Awaited<ReturnType<typeof newCard>>;
  let otherCardA: Awaited<ReturnType<typeof newCard>>;
  let cardB: Awaited<ReturnType<typeof newCard>>;
  /** A's tokens, newest first: on cardA t3 (google, suspended), t2 (apple, active), t1 (apple, active); on otherCardA t0. */
  const tokensA: string[] = [];
  let tokenB: string;

  before(async function () {
    gateway = await sharedGateway();
    [a, b] = await Promise.all([registerPartner(gateway), registerPartner(gateway)]);
    pg = new Client({ connectionString: runDatabaseUrl() });
    await pg.connect();
    [cardA, otherCardA, cardB] = await Promise.all([newCard(a), newCard(a), newCard(b)]);
    const t0 = await insertToken(a, otherCardA, 0, 'active', 'merchant');
    const t1 = await insertToken(a, cardA, 1, 'active', 'apple_pay');
    const t2 = await insertToken(a, cardA, 2, 'active', 'apple_pay');
    const t3 = await insertToken(a, cardA, 3, 'suspended', 'google_pay');
    tokensA.push(t3, t2, t1, t0);
    tokenB = await insertToken(b, cardB, 4, 'active', 'apple_pay');
  });
  after(async function () {
    await pg?.end();
  });

  it("GET /cards/{id}/tokens answers every token of the card, newest first, as the CardTokens schema says", async function () {
    const r = await api(gateway, a, 'GET', `/cards/${cardA.cardKey}/tokens`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(validCardTokens(r.body), JSON.stringify(validCardTokens.errors)).to.equal(true);
    expect(r.body.data.map((t: { _id: string }) => t._id)).to.deep.equal(tokensA.slice(0, 3));
    expect(r.body.data[0]).to.deep.include({ cardKey: cardA.cardKey, walletProvider: 'google_pay', status: 'suspended', last4: '4821', device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' } });
    expect(JSON.stringify(r.body)).to.not.include('tref_');
    expect(r.headers.get('cache-control')).to.equal('no-store');
    const none = await api(gateway, a, 'GET', `/cards/${otherCardA.cardKey}/tokens`);
    expect(none.body.data.map((t: { _id: string }) => t._id)).to.deep.equal([tokensA[3]]);
  });

  it('GET /tokens pages newest first through every filter, the cursor carrying the search', async function () {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r = await api(gateway, a, 'GET', `/tokens${query}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(validList(r.body), JSON.stringify(validList.errors)).to.equal(true);
      seen.push(...r.body.data.map((t: { _id: string }) => t._id));
      cursor = r.body.nextCursor;
    } while (cursor !== null && seen.length < 10);
    expect(seen).to.deep.equal(tokensA);
    const ids = async (query: string) => {
      const r = await api(gateway, a, 'GET', `/tokens?${query}`);
      expect(r.status, `${query}: ${JSON.stringify(r.body)}`).to.equal(200);
      expect(r.body.nextCursor, query).to.equal(null);
      return r.body.data.map((t: { _id: string }) => t._id);
    };
    expect(await ids(`cardKey=${cardA.cardKey}`)).to.deep.equal(tokensA.slice(0, 3));
    expect(await ids('status=active')).to.deep.equal(tokensA.slice(1));
    expect(await ids('walletProvider=apple_pay')).to.deep.equal([tokensA[1], tokensA[2]]);
    expect(await ids(`status=active&walletProvider=merchant`)).to.deep.equal([tokensA[3]]);
    expect(await ids(`cardKey=${cardA.cardKey}&status=suspended&walletProvider=google_pay`)).to.deep.equal([tokensA[0]]);
    expect(await ids('status=declined')).to.deep.equal([]);
  });

  it('GET /tokens refuses a cursor used with other filters, changed, or of another partner, and every malformed parameter (400 naming it)', async function () {
    const first = await api(gateway, a, 'GET', '/tokens?limit=1&status=active');
    const cursor = first.body.nextCursor as string;
    expect(cursor).to.be.a('string');
    const refusals: [TestPartner, string, string][] = [
      [a, `?limit=1&cursor=${cursor}`, 'cursor'],
      [a, `?limit=1&status=suspended&cursor=${cursor}`, 'cursor'],
      [a, `?limit=1&status=active&cursor=${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`, 'cursor'],
      [b, `?limit=1&status=active&cursor=${cursor}`, 'cursor'],
      [a, '?cursor=not-a-cursor', 'cursor'],
      [a, '?status=frozen', 'status'],
      [a, '?walletProvider=paypal', 'walletProvider'],
      [a, '?limit=0', 'limit'],
      [a, '?limit=101', 'limit'],
      [a, '?cardKey=bad%20key', 'cardKey'],
      [a, '?color=blue', 'color'],
    ];
    for (const [as, query, name] of refusals) {
      const r = await api(gateway, as, 'GET', `/tokens${query}`);
      expect(r.status, query).to.equal(400);
      expect(r.headers.get('content-type'), query).to.match(/^application\/problem\+json/);
      expect(r.body.code, query).to.equal('validation_failed');
      expect(r.body.invalidParams.map((p: { name: string }) => p.name), query).to.include(name);
    }
    const next = await api(gateway, a, 'GET', `/tokens?limit=1&status=active&cursor=${cursor}`);
    expect(next.status, JSON.stringify(next.body)).to.equal(200);
    expect(next.body.data.map((t: { _id: string }) => t._id)).to.deep.equal([tokensA[2]]);
  });

  it('GET /tokens/{id} answers the token with its history; 400 malformed, 404 unknown', async function () {
    const r = await api(gateway, a, 'GET', `/tokens/${tokensA[0]}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(validToken(r.body), JSON.stringify(validToken.errors)).to.equal(true);
    expect(r.body).to.deep.include({ _id: tokensA[0], cardKey: cardA.cardKey, status: 'suspended' });
    expect(r.body.history).to.deep.equal([{ status: 'suspended', at: '2026-12-01T10:00:03.000Z', by: 'network' }]);
    expect((await api(gateway, a, 'GET', '/tokens/tok_123')).body.code).to.equal('invalid_id');
    const unknown = await api(gateway, a, 'GET', `/tokens/${newTokenId()}`);
    expect([unknown.status, unknown.body.code]).to.deep.equal([404, 'not_found']);
  });

  it("partner B never sees A's tokens: 403 by id and by card, an empty search on A's cardKey, and only its own in a search", async function () {
    const byId = await api(gateway, b, 'GET', `/tokens/${tokensA[1]}`);
    expect([byId.status, byId.body.code]).to.deep.equal([403, 'forbidden']);
    const byCard = await api(gateway, b, 'GET', `/cards/${cardA.cardKey}/tokens`);
    expect([byCard.status, byCard.body.code]).to.deep.equal([403, 'forbidden']);
    const search = await api(gateway, b, 'GET', `/tokens?cardKey=${cardA.cardKey}`);
    expect([search.status, search.body]).to.deep.equal([200, { data: [], nextCursor: null }]);
    const own = await api(gateway, b, 'GET', '/tokens');
    expect(own.body.data.map((t: { _id: string }) => t._id)).to.deep.equal([tokenB]);
    for (const action of ['suspend', 'resume', 'deactivate']) {
      const change = await api(gateway, b, 'POST', `/tokens/${tokensA[1]}/${action}`, { body: {} });
      expect([change.status, change.body.code], action).to.deep.equal([403, 'forbidden']);
    }
    const status = await pg.query<{ status: string }>('SELECT status FROM tokens WHERE id = $1', [tokensA[1]]);
    expect(status.rows[0].status).to.equal('active');
  });

  it('provisions an ACTIVE card to Apple Pay and Google Pay: the processor\'s payload untouched, no-store, never replayed, in no log line and no table', async function () {
    const apple = { certificates: [crypto.randomBytes(300).toString('base64')], nonce: crypto.randomBytes(16).toString('base64'), nonceSignature: crypto.randomBytes(70).toString('base64') };
    const key = { 'idempotency-key': `prov-${crypto.randomBytes(6).toString('hex')}` };
    const first = await api(gateway, a, 'POST', `/cards/${cardA.cardKey}/wallet-provisioning/apple-pay`, { body: apple, headers: key });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.have.all.keys('activationData', 'encryptedPassData', 'ephemeralPublicKey');
    expect(Buffer.from(first.body.activationData, 'base64')).to.have.length(64);
    expect(Buffer.from(first.body.encryptedPassData, 'base64').length).to.be.within(1024, 2048);
    const ephemeral = Buffer.from(first.body.ephemeralPublicKey, 'base64');
    expect([ephemeral.length, ephemeral[0]]).to.deep.equal([65, 0x04]);
    expect(first.headers.get('cache-control')).to.equal('no-store');
    // No idempotency step: the same key makes another payload, never a stored one.
    const again = await api(gateway, a, 'POST', `/cards/${cardA.cardKey}/wallet-provisioning/apple-pay`, { body: apple, headers: key });
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal(null);
    expect(again.body.activationData).to.not.equal(first.body.activationData);
    const google = await api(gateway, a, 'POST', `/cards/${cardA.cardKey}/wallet-provisioning/google-pay`, { body: { walletAccountId: 'wallet-account-1', deviceId: 'device-1' } });
    expect(google.status, JSON.stringify(google.body)).to.equal(200);
    expect(google.body).to.have.all.keys('opaquePaymentCard', 'network', 'tokenServiceProvider', 'displayName', 'lastDigits');
    expect(Buffer.from(google.body.opaquePaymentCard, 'base64url').length).to.be.within(1024, 2048);
    expect(google.headers.get('cache-control')).to.equal('no-store');
    const audits = await pg.query<{ outcome: string; details: Record<string, unknown> }>("SELECT outcome, details FROM audit_log WHERE target_id = $1 AND operation = 'card.wallet.provision' ORDER BY id", [cardA.cardKey]);
    expect(audits.rows).to.deep.equal([
      { outcome: 'success', details: { wallet: 'apple_pay' } },
      { outcome: 'success', details: { wallet: 'apple_pay' } },
      { outcome: 'success', details: { wallet: 'google_pay' } },
    ]);
    // The inputs and the payloads: in no log line of the gateway, in no row of any table.
    const secrets = [apple.nonce, apple.nonceSignature, apple.certificates[0].slice(0, 40), first.body.activationData, first.body.encryptedPassData.slice(0, 40), first.body.ephemeralPublicKey, google.body.opaquePaymentCard.slice(0, 40)];
    await logsSettled(gateway);
    const output = gateway.output();
    for (const secret of secrets) expect(output.includes(secret), `log holds ${secret.slice(0, 12)}…`).to.equal(false);
    const tables = await pg.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'");
    expect(tables.rows.length).to.be.greaterThan(10);
    for (const { table_name } of tables.rows) {
      for (const secret of [apple.nonce, first.body.activationData, google.body.opaquePaymentCard.slice(0, 40)]) {
        const found = await pg.query(`SELECT 1 FROM "${table_name}" t WHERE t::text LIKE $1 LIMIT 1`, [`%${secret}%`]);
        expect(found.rowCount, `${table_name} holds ${secret.slice(0, 12)}…`).to.equal(0);
      }
    }
  });

  it('provisioning refuses a card that is not ACTIVE with 409 card_not_active before any processor call, and a malformed body with 400; nothing is written', async function () {
    const locked = await newCard(a);
    const lock = await api(gateway, a, 'POST', `/cards/${locked.cardKey}/lock`, { body: { expDate: locked.expDate } });
    expect(lock.status, JSON.stringify(lock.body)).to.equal(200);
    const physical = await newCard(a, 'physical');
    const apple = { certificates: ['A'.repeat(100)], nonce: 'q7l3Bw==', nonceSignature: 'A'.repeat(24) };
    const google = { walletAccountId: 'wallet-account-1', deviceId: 'device-1' };
    const audit = async (cardKey: string) => (await pg.query("SELECT count(*)::int AS n FROM audit_log WHERE target_id = $1 AND operation = 'card.wallet.provision'", [cardKey])).rows[0].n;
    const processing = sandboxUrls(gateway).processing;
    const provisioningCalls = async (cardKey: string) =>
      ((await sandboxControl(processing, 'GET', '/__sandbox/requests?method=POST')) as { path: string; body?: { cardKey?: string } }[]).filter((r) => r.path.startsWith('/tokens/provisioning/') && r.body?.cardKey === cardKey).length;
    for (const card of [locked, physical]) {
      for (const [wallet, body] of [['apple-pay', apple], ['google-pay', google]] as const) {
        const r = await api(gateway, a, 'POST', `/cards/${card.cardKey}/wallet-provisioning/${wallet}`, { body });
        expect(r.status, `${wallet}: ${JSON.stringify(r.body)}`).to.equal(409);
        expect(r.body.code).to.equal('card_not_active');
        expect(r.body).to.deep.include({ cardStatus: 'LOCKED', statusCode: card === locked ? 'L1' : 'I1' });
        expect(r.headers.get('cache-control')).to.equal('no-store');
      }
      expect(await audit(card.cardKey)).to.equal(0);
      expect(await provisioningCalls(card.cardKey), 'no processor call').to.equal(0);
    }
    const auditsBefore = await audit(cardA.cardKey);
    const callsBefore = await provisioningCalls(cardA.cardKey);
    expect(callsBefore, 'the request log shows the calls that were made').to.be.greaterThan(0);
    const malformed: [string, unknown, string][] = [
      ['apple-pay', { ...apple, certificates: [] }, 'certificates'],
      ['apple-pay', { ...apple, certificates: ['A'.repeat(99)] }, 'certificates.0'],
      ['apple-pay', { ...apple, nonce: 'q7l3' }, 'nonce'],
      ['apple-pay', { ...apple, nonce: 'not base64!' }, 'nonce'],
      ['apple-pay', { ...apple, nonceSignature: 'A'.repeat(20) }, 'nonceSignature'],
      ['apple-pay', { ...apple, extra: 1 }, 'extra'],
      ['google-pay', { ...google, deviceId: '' }, 'deviceId'],
      ['google-pay', { ...google, walletAccountId: 'x'.repeat(65) }, 'walletAccountId'],
      ['google-pay', { walletAccountId: 'w' }, 'deviceId'],
    ];
    for (const [wallet, body, name] of malformed) {
      const r = await api(gateway, a, 'POST', `/cards/${cardA.cardKey}/wallet-provisioning/${wallet}`, { body });
      expect(r.status, `${wallet} ${name}: ${JSON.stringify(r.body)}`).to.equal(400);
      expect(r.body.invalidParams.map((p: { name: string }) => p.name).join(' '), `${wallet} ${name}`).to.include(name);
    }
    expect(await audit(cardA.cardKey)).to.equal(auditsBefore);
    expect(await provisioningCalls(cardA.cardKey)).to.equal(callsBefore);
    const foreign = await api(gateway, b, 'POST', `/cards/${cardA.cardKey}/wallet-provisioning/google-pay`, { body: google });
    expect([foreign.status, foreign.body.code]).to.deep.equal([403, 'forbidden']);
  });

  it('simulations (sandbox mode): a tokenization decided by the gateway answers its token; a verification code from the event, wrong then right; a purchase with the token', async function () {
    const card = await newCard(a);
    const approved = await api(gateway, a, 'POST', `/simulate/cards/${card.cardKey}/tokenizations`, { body: { walletProvider: 'apple_pay' } });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(201);
    expect(validToken(approved.body), JSON.stringify(validToken.errors)).to.equal(true);
    expect(approved.body).to.deep.include({ cardKey: card.cardKey, walletProvider: 'apple_pay', status: 'active' });
    expect((await api(gateway, a, 'GET', `/tokens/${approved.body._id}`)).body).to.deep.equal(approved.body);
    // The processor's retry of the same tokenization id: the same token, nothing new.
    const tokenizationId = `tkz-${crypto.randomBytes(6).toString('hex')}`;
    const pending = await api(gateway, a, 'POST', `/simulate/cards/${card.cardKey}/tokenizations`, { body: { walletProvider: 'google_pay', networkVerdict: 'require_verification', tokenizationId } });
    expect(pending.status, JSON.stringify(pending.body)).to.equal(201);
    expect(pending.body.status).to.equal('pending_verification');
    const repeat = await api(gateway, a, 'POST', `/simulate/cards/${card.cardKey}/tokenizations`, { body: { walletProvider: 'google_pay', networkVerdict: 'require_verification', tokenizationId } });
    expect(repeat.body._id).to.equal(pending.body._id);
    const reused = await api(gateway, a, 'POST', `/simulate/cards/${otherCardA.cardKey}/tokenizations`, { body: { walletProvider: 'google_pay', tokenizationId } });
    expect([reused.status, reused.body.code]).to.deep.equal([409, 'tokenization_id_reused']);
    const events = await api(gateway, a, 'GET', '/events?type=token.verification_code');
    const codeEvent = events.body.data.find((e: { data: { token: { _id: string } } }) => e.data.token._id === pending.body._id);
    expect(codeEvent?.data.code).to.match(/^[0-9]{6}$/);
    const wrong = codeEvent.data.code === '000000' ? '111111' : '000000';
    const failed = await api(gateway, a, 'POST', `/simulate/tokens/${pending.body._id}/verify`, { body: { code: wrong } });
    expect([failed.status, failed.body.code, failed.body.attemptsLeft]).to.deep.equal([409, 'verification_failed', 2]);
    const verified = await api(gateway, a, 'POST', `/simulate/tokens/${pending.body._id}/verify`, { body: { code: codeEvent.data.code } });
    expect(verified.status, JSON.stringify(verified.body)).to.equal(200);
    expect(verified.body.status).to.equal('active');
    const notPending = await api(gateway, a, 'POST', `/simulate/tokens/${pending.body._id}/verify`, { body: { code: codeEvent.data.code } });
    expect([notPending.status, notPending.body.code]).to.deep.equal([409, 'token_transition_invalid']);
    const purchase = await api(gateway, a, 'POST', `/simulate/tokens/${approved.body._id}/authorizations`, { body: { amount: 12.5 } });
    expect(purchase.status, JSON.stringify(purchase.body)).to.equal(201);
    expect(purchase.body).to.deep.include({ cardKey: card.cardKey, amount: 12.5 });
    await logsSettled(gateway);
    expect(gateway.output().includes(`"${codeEvent.data.code}"`), 'the code in a log line').to.equal(false);
    const foreign = await api(gateway, b, 'POST', `/simulate/tokens/${approved.body._id}/authorizations`, { body: { amount: 1 } });
    expect([foreign.status, foreign.body.code]).to.deep.equal([403, 'forbidden']);
  });
  it("a partner's suspensions and resumptions: each is one change and one token.updated with its request id, by the partner, whether the processor's notification of it or its answer is applied first", async function () {
    const card = await newCard(a);
    const made = await api(gateway, a, 'POST', `/simulate/cards/${card.cardKey}/tokenizations`, { body: { walletProvider: 'google_pay' } });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const id = made.body._id as string;
    const requestIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const action = i % 2 === 0 ? 'suspend' : 'resume';
      const requestId = `token-change-${i}-${crypto.randomBytes(4).toString('hex')}`;
      requestIds.push(requestId);
      const r = await api(gateway, a, 'POST', `/tokens/${id}/${action}`, { body: { reason: `step ${i}` }, headers: { 'x-request-id': requestId, 'idempotency-key': requestId } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    }
    // The processor notifies each of the ten changes: all of them applied (or found applied already).
    await waitFor('the processor\'s ten notifications', async () => {
      const n = await pg.query("SELECT count(*)::int AS n FROM upstream_notifications WHERE card_key = $1 AND type = 'token.updated'", [card.cardKey]);
      return n.rows[0].n >= 10;
    });
    const events = await pg.query<{ request_id: string | null; payload: string }>("SELECT request_id, payload FROM partner_events WHERE partner_id = $1 AND type = 'token.updated' AND payload::jsonb->'data'->'token'->>'_id' = $2 ORDER BY seq", [a.id, id]);
    expect(events.rows.map((e) => [e.request_id, JSON.parse(e.payload).data.change])).to.deep.equal(requestIds.map((r, i) => [r, i % 2 === 0 ? 'suspended' : 'resumed']));
    const token = (await api(gateway, a, 'GET', `/tokens/${id}`)).body;
    expect(token.history.slice(1).map((h: { status: string; by: string; reason?: string }) => [h.status, h.by, h.reason])).to.deep.equal(
      requestIds.map((_, i) => [i % 2 === 0 ? 'suspended' : 'active', 'partner', `step ${i}`])
    );
  });
});
