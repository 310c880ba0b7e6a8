import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { requestHash } from '../../gateway/idempotency/key-claims';
import { api, sandboxControl, sandboxUrls } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';

/**
 * Idempotency keys live 24 hours across deployments: rows written before the partners' and the
 * operators' keys went through one key-claim store (gateway/idempotency/key-claims.ts, issue 22)
 * must still replay after it. The rows below are written as the code before it wrote them, with the
 * request hashes that code computed, hard-coded (computed by `requestHash` of
 * policies/idempotency/idempotency.ts and `adminRequestHash` of gateway/idempotency/admin-keys.ts
 * as they were): a retry of the same request with the same key is answered the recorded answer,
 * marked replayed, and reaches no upstream.
 */
describe('e2e: idempotency keys stored before the key-claim store was one still replay', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let db: Client;

  const CARD_KEY = 'pinned-card-issue-22';
  const PARTNER_ROUTE = `POST /api/partner/cards/${CARD_KEY}/lock`;
  const PARTNER_BODY = { expDate: '12/2030', reason: 'pinned before issue 22' };
  /** `requestHash(PARTNER_ROUTE, { id: CARD_KEY }, PARTNER_BODY)`, by the partner policy's code before issue 22. */
  const PARTNER_HASH = '5e5836d4fc80ee02845c4be447794468b57f11047465d7f47a8c8394b6acafec';
  const OPERATOR_ROUTE = `POST /admin/cards/${CARD_KEY}/status`;
  const OPERATOR_BODY = { status: 'LOCKED', reason: 'pinned before issue 22' };
  /** `adminRequestHash(OPERATOR_ROUTE, OPERATOR_BODY)`, by gateway/idempotency/admin-keys.ts before issue 22. */
  const OPERATOR_HASH = '9d748e0a1d55d8b9624435559ff9b9987f9b670c679a1ece1e68b9c0dc86e871';
  const ANSWER = { cardKey: CARD_KEY, status: 'LOCKED', statusCode: 'L1' };
  const objectId = () => crypto.randomBytes(12).toString('hex');
  const issuerStatusCalls = async () => (await sandboxControl(sandboxUrls(gateway).issuer, 'GET', `/__sandbox/requests?method=POST&path=/cards/${CARD_KEY}/status`)).length;

  before(async function () {
    gateway = await sharedGateway();
    acme = await registerPartner(gateway, 'acme-pinned-keys');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    // A card of acme's (a B2B tenant's), known to the gateway only: a call that reached the issuer would fail.
    const tenant = await adminCall(gateway, 'POST', `/admin/partners/${acme.id}/tenants`, { name: 'Acme Pinned' });
    expect(tenant.status, JSON.stringify(tenant.body)).to.equal(201);
    await db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date)
       VALUES ($1, $2, 'b2b', $3, $3, '4921 83** **** 2222', 'virtual', 'ACTIVE', '00', 'EUR', 'P-BIZ', '12/2030')`,
      [CARD_KEY, acme.id, tenant.body._id]
    );
  });

  after(async function () {
    await db?.end();
  });

  it('hashes both requests as the code before the change did (the one request hash keeps every stored hash)', function () {
    expect(requestHash(PARTNER_ROUTE, { id: CARD_KEY }, PARTNER_BODY)).to.equal(PARTNER_HASH);
    expect(requestHash(OPERATOR_ROUTE, undefined, OPERATOR_BODY)).to.equal(OPERATOR_HASH);
  });

  it("a partner's key row as migrations 006 and 008 wrote it (exact bytes, headers, heartbeat, operation id) replays byte for byte", async function () {
    const key = 'pinned-partner-key-issue-22';
    const bytes = Buffer.from(JSON.stringify(ANSWER));
    await db.query(
      `INSERT INTO idempotency_keys (partner_id, key, route, request_hash, state, response_status, response_bytes, response_headers, created_at, expires_at, claim_id, claimed_by, heartbeat_at, operation_id)
       VALUES ($1, $2, $3, $4, 'completed', 200, $5, $6::jsonb, now(), now() + interval '24 hours', $7, 'host:1:0a0b0c0d', now(), $8)`,
      [acme.id, key, PARTNER_ROUTE, PARTNER_HASH, bytes, JSON.stringify({ 'content-type': 'application/json; charset=utf-8' }), crypto.randomUUID(), objectId()]
    );
    const headers = { 'idempotency-key': key, authorization: `Bearer ${await acme.token()}`, 'content-type': 'application/json' };
    const response = await fetch(`${gateway.baseUrl}/api/partner/cards/${CARD_KEY}/lock`, { method: 'POST', headers, body: JSON.stringify(PARTNER_BODY) });
    expect(response.status).to.equal(200);
    expect(response.headers.get('idempotent-replayed')).to.equal('true');
    expect(response.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).to.equal(true);
    expect(await issuerStatusCalls()).to.equal(0);
  });

  it("a partner's key row recorded before migration 006 (parsed body only, no heartbeat) replays its body", async function () {
    const key = 'pinned-partner-key-issue-22-before-006';
    await db.query(
      `INSERT INTO idempotency_keys (partner_id, key, route, request_hash, state, response_status, response_body, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 'completed', 200, $5::jsonb, now(), now() + interval '24 hours')`,
      [acme.id, key, PARTNER_ROUTE, PARTNER_HASH, JSON.stringify(ANSWER)]
    );
    const replayed = await api(gateway, acme, 'POST', `/cards/${CARD_KEY}/lock`, { body: PARTNER_BODY, headers: { 'idempotency-key': key } });
    expect(replayed.status).to.equal(200);
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    expect(replayed.body).to.deep.equal(ANSWER);
    expect(await issuerStatusCalls()).to.equal(0);
  });

  it("an operator's key row as migration 012 wrote it (parsed body, lease column) replays through the admin API as it did", async function () {
    const key = 'pinned-operator-key-issue-22';
    await db.query(
      `INSERT INTO admin_idempotency_keys (key, route, request_hash, operation_id, state, claim_id, claimed_at, response_status, response_body, expires_at)
       VALUES ($1, $2, $3, $4, 'completed', $5, now(), 200, $6::jsonb, now() + interval '24 hours')`,
      [key, OPERATOR_ROUTE, OPERATOR_HASH, objectId(), crypto.randomUUID(), JSON.stringify(ANSWER)]
    );
    const response = await fetch(`${gateway.adminUrl}/admin/cards/${CARD_KEY}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(OPERATOR_BODY),
    });
    expect(response.status).to.equal(200);
    expect(response.headers.get('idempotent-replayed')).to.equal('true');
    expect(response.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    // What the code before answered: res.json of the jsonb column (jsonb orders keys by length).
    expect(await response.text()).to.equal('{"status":"LOCKED","cardKey":"pinned-card-issue-22","statusCode":"L1"}');
    expect(await issuerStatusCalls()).to.equal(0);
    // Another request with the stored key is still refused.
    const other = await fetch(`${gateway.adminUrl}/admin/cards/${CARD_KEY}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ status: 'CLOSED', reason: 'pinned before issue 22' }),
    });
    expect(other.status).to.equal(409);
    expect(((await other.json()) as { code: string }).code).to.equal('idempotency_key_reused');
  });
});
