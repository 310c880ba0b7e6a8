import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { FAST_WEBHOOKS, startGatewayProcess, waitForLogLine, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { TestReceiver } from '../support/webhook-receiver';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * An operator changes a card's status through the admin API (`POST /admin/cards/{cardKey}/status`,
 * docs/admin-api.md) and its CLI: a real gateway process on a database of its own (its webhook
 * dispatcher alone delivers these events), its sandbox issuer, and a real webhook receiver.
 */
describe('e2e: operator card status change (admin API and CLI)', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let issuerUrl: string;
  let db: Client;
  let receiver: TestReceiver;
  let ada: { _id: string; clientID: string };

  const admin = async (cardKey: string, body: unknown, headers: Record<string, string> = {}, token = gateway.adminToken) => {
    const response = await fetch(`${gateway.adminUrl}/admin/cards/${encodeURIComponent(cardKey)}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
  };
  const issue = async (type: 'virtual' | 'physical' = 'virtual') => {
    const card = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/${type}`, { body: cardBody(ada.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return card.body as { cardKey: string; expDate: string };
  };
  /** The status changes the issuer received for a card (faulted attempts included). */
  const issuerStatusCalls = async (cardKey: string) => sandboxControl(issuerUrl, 'GET', `/__sandbox/requests?method=POST&path=/cards/${cardKey}/status`) as Promise<any[]>;
  /** Everything we hold of a card that a status change writes. */
  const stateOf = async (cardKey: string) => ({
    card: (await db.query('SELECT status, status_code, updated_at FROM cards WHERE card_key = $1', [cardKey])).rows[0],
    history: (await db.query('SELECT operation, old_status_code, new_status_code, reason, request_id FROM card_status_history WHERE card_key = $1 ORDER BY id', [cardKey])).rows,
    audit: (await db.query('SELECT operation, outcome, partner_id, individual_id, details, request_id FROM audit_log WHERE target_id = $1 ORDER BY id', [cardKey])).rows,
    events: (await db.query<{ payload: string }>('SELECT payload FROM partner_events WHERE ordering_key = $1 ORDER BY seq', [cardKey])).rows.map((r) => JSON.parse(r.payload)),
  });
  const statusEvents = (cardKey: string) => receiver.received.filter((r) => r.event.type === 'card.status_changed' && r.event.data.cardKey === cardKey);

  before(async function () {
    gateway = await startGatewayProcess({ ownDatabase: true, env: FAST_WEBHOOKS });
    issuerUrl = sandboxUrls(gateway).issuer;
    acme = await registerPartner(gateway, 'acme-operator-status');
    db = new Client({ connectionString: gateway.databaseUrl });
    await db.connect();
    receiver = await new TestReceiver().up();
    const endpoint = await api(gateway, acme, 'POST', '/webhooks/endpoints', { body: { url: receiver.url, events: ['card.status_changed'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
    recordSecret('webhookSecret', endpoint.body.secret);
    const individual = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status).to.equal(201);
    ada = individual.body;
  });

  after(async function () {
    await db?.end();
    await receiver?.close();
    await gateway?.stop();
  });

  it('locks a card once at the issuer; status, history and an audit entry naming the operator action; the partner receives card.status_changed with source operator, also in GET /events; a retry with the key replays it', async function () {
    const card = await issue();
    const reason = 'Fraud team: card used in two countries within an hour';
    const locked = await admin(card.cardKey, { status: 'LOCKED', reason }, { 'idempotency-key': 'lock-once-1', 'x-request-id': 'operator-lock-1' });
    expect(locked.status, JSON.stringify(locked.body)).to.equal(200);
    expect(locked.body).to.deep.equal({ cardKey: card.cardKey, status: 'LOCKED', statusCode: 'L1' });
    expect(locked.headers.get('idempotent-replayed')).to.equal(null);

    // The issuer got one lock, with the card's expiry (the operator sends none) and the operation id as its Idempotency-Key.
    const calls = await issuerStatusCalls(card.cardKey);
    expect(calls).to.have.length(1);
    expect(calls[0].body).to.deep.equal({ action: 'lock', expDate: card.expDate, reason });
    expect(calls[0].headers['idempotency-key']).to.match(/^[0-9a-f]{24}$/);

    const state = await stateOf(card.cardKey);
    expect(state.card).to.include({ status: 'LOCKED', status_code: 'L1' });
    expect(state.history.at(-1)).to.deep.equal({ operation: 'admin.card.lock', old_status_code: '00', new_status_code: 'L1', reason, request_id: 'operator-lock-1' });
    expect(state.audit.at(-1)).to.deep.equal({
      operation: 'admin.card.lock',
      outcome: 'success',
      partner_id: acme.id,
      individual_id: ada._id,
      details: { from: '00', to: 'L1', source: 'operator' },
      request_id: 'operator-lock-1',
    });
    // No audit entry of this change is a partner operation.
    expect(state.audit.filter((a) => a.operation === 'card.lock')).to.deep.equal([]);

    // The partner's webhook: the operator's event, naming no request (the operator's is not the partner's).
    await receiver.waitFor(() => statusEvents(card.cardKey).length === 1, 20_000, 'the operator\'s card.status_changed');
    const event = statusEvents(card.cardKey)[0].event;
    expect(event.data).to.deep.equal({ cardKey: card.cardKey, previousStatus: 'ACTIVE', status: 'LOCKED', statusCode: 'L1', previousStatusCode: '00', source: 'operator', reason });
    expect(event).to.not.have.property('requestId');
    // The event log has the same event.
    const log = await api(gateway, acme, 'GET', '/events?type=card.status_changed');
    expect(log.status).to.equal(200);
    const logged = log.body.data.find((e: any) => e.data.cardKey === card.cardKey);
    expect(logged).to.deep.equal(event);
    // The partner reads the change in its individual's card-status history and audit log.
    const history = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/card-status-history`);
    expect(history.body.data.find((h: any) => h.cardKey === card.cardKey && h.operation === 'admin.card.lock')).to.include({ oldStatus: 'ACTIVE', newStatus: 'LOCKED', reason });
    const audit = await api(gateway, acme, 'GET', `/individual/accounts/${ada._id}/audit-logs`);
    expect(audit.body.data.find((a: any) => a.targetId === card.cardKey && a.operation === 'admin.card.lock')).to.include({ outcome: 'success' });

    // A retry with the same key answers the first result again and writes nothing more.
    const retried = await admin(card.cardKey, { reason, status: 'LOCKED' }, { 'idempotency-key': 'lock-once-1' });
    expect(retried.status).to.equal(200);
    expect(retried.headers.get('idempotent-replayed')).to.equal('true');
    expect(retried.body).to.deep.equal(locked.body);
    expect(await issuerStatusCalls(card.cardKey)).to.have.length(1);
    expect(await stateOf(card.cardKey)).to.deep.equal(state);
    // The key with another request is refused, and changes nothing either.
    const reused = await admin(card.cardKey, { status: 'CLOSED', reason }, { 'idempotency-key': 'lock-once-1' });
    expect(reused.status).to.equal(409);
    expect(reused.body.code).to.equal('idempotency_key_reused');
    expect(await issuerStatusCalls(card.cardKey)).to.have.length(1);
    expect(await stateOf(card.cardKey)).to.deep.equal(state);

    // One `admin change` line, without the reason (free text) or the token.
    const line = await waitForLogLine(gateway, (l) => l.msg === 'admin change' && l.cardKey === card.cardKey);
    expect(line).to.include({ operation: 'admin.card.lock', status: 'LOCKED', statusCode: 'L1', requestId: 'operator-lock-1' });
    expect(gateway.output()).to.not.include(reason);
    expect(gateway.output()).to.not.include(gateway.adminToken);
  });

  it('unlocks, blocks and closes: each status by the partner table\'s action, one event each with source operator', async function () {
    const card = await issue();
    const steps: [string, string, string, string][] = [
      ['RESTRICTED', 'restrict', 'S1', 'admin.card.restrict'],
      ['ACTIVE', 'unlock', '00', 'admin.card.unlock'],
      ['FRAUD', 'fraud', 'S5', 'admin.card.restrict.fraud'],
      ['CLOSED', 'closed', 'S4', 'admin.card.restrict.closed'],
    ];
    for (const [status, action, code, operation] of steps) {
      const changed = await admin(card.cardKey, { status, reason: `step ${status}` });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      expect(changed.body).to.deep.equal({ cardKey: card.cardKey, status, statusCode: code });
      const last = (await issuerStatusCalls(card.cardKey)).at(-1);
      expect(last.body.action).to.equal(action);
      expect((await stateOf(card.cardKey)).history.at(-1)).to.include({ operation, new_status_code: code });
    }
    await receiver.waitFor(() => statusEvents(card.cardKey).length === steps.length, 20_000, 'four operator events');
    expect(statusEvents(card.cardKey).map((r) => [r.event.data.statusCode, r.event.data.source])).to.deep.equal(steps.map(([, , code]) => [code, 'operator']));
  });

  it('refuses an invalid transition with the partner route\'s problem (409 invalid_transition), calls no issuer and changes nothing', async function () {
    const closed = await issue();
    expect((await admin(closed.cardKey, { status: 'CLOSED', reason: 'account closed by the bank' })).status).to.equal(200);
    const physical = await issue('physical');
    const fraud = await issue();
    expect((await admin(fraud.cardKey, { status: 'FRAUD', reason: 'confirmed fraud' })).status).to.equal(200);
    const cases: [string, string, string, string][] = [
      [closed.cardKey, 'LOCKED', 'CLOSED', 'S4'],
      [closed.cardKey, 'FRAUD', 'CLOSED', 'S4'],
      // Activation is the holder's, with the card in hand: an operator's ACTIVE is an unlock, which a new physical card (I1) cannot take.
      [physical.cardKey, 'ACTIVE', 'LOCKED', 'I1'],
      // A fraud card cannot be unlocked: only closed, reported again, or replaced.
      [fraud.cardKey, 'ACTIVE', 'FRAUD', 'S5'],
      [fraud.cardKey, 'LOCKED', 'FRAUD', 'S5'],
    ];
    for (const [cardKey, status, cardStatus, statusCode] of cases) {
      const before = { calls: (await issuerStatusCalls(cardKey)).length, state: await stateOf(cardKey) };
      const refused = await admin(cardKey, { status, reason: 'should not happen' }, { 'idempotency-key': `refused-${cardKey}-${status}` });
      expect(refused.status, `${status} on ${statusCode}`).to.equal(409);
      expect(refused.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(refused.body).to.include({ code: 'invalid_transition', cardStatus, statusCode });
      expect((await issuerStatusCalls(cardKey)).length, 'issuer not called').to.equal(before.calls);
      expect(await stateOf(cardKey)).to.deep.equal(before.state);
    }
  });

  it('refuses a bad body with a 400 problem, an unknown card with 404, and changes nothing', async function () {
    const card = await issue();
    const pan = '5355709999999995';
    recordSecret('pan', pan);
    const before = { calls: (await issuerStatusCalls(card.cardKey)).length, state: await stateOf(card.cardKey) };
    const bad: [unknown, string][] = [
      [{}, 'status'],
      [{ status: 'LOCKED' }, 'reason'],
      [{ status: 'LOCKED', reason: '' }, 'reason'],
      [{ status: 'LOCKED', reason: '   ' }, 'reason'],
      [{ status: 'LOCKED', reason: 'x'.repeat(501) }, 'reason'],
      [{ status: 'LOCKED', reason: 42 }, 'reason'],
      // Not an operator's status: the holder's temporary lock and reports stay the partner's.
      [{ status: 'TEMP_LOCKED', reason: 'why not' }, 'status'],
      [{ status: 'LOST', reason: 'why not' }, 'status'],
      [{ status: 'locked', reason: 'case matters in the API' }, 'status'],
      [{ status: 'LOCKED', reason: 'ok', expDate: card.expDate }, 'expDate'],
      [{ status: 'LOCKED', reason: `card ${pan} seen at a skimmer` }, 'reason'],
    ];
    for (const [body, field] of bad) {
      const refused = await admin(card.cardKey, body);
      expect(refused.status, JSON.stringify(body)).to.equal(400);
      expect(refused.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(refused.body.code).to.equal('validation_failed');
      expect(refused.body.invalidParams.map((p: { name: string }) => p.name), JSON.stringify(body)).to.include(field);
    }
    expect(JSON.stringify((await admin(card.cardKey, { status: 'LOST', reason: 'x' })).body)).to.include('ACTIVE, LOCKED, RESTRICTED, FRAUD, CLOSED');
    const malformedJson = await admin(card.cardKey, '{"status": "LOCKED",');
    expect(malformedJson.status).to.equal(400);
    const badKey = await admin(card.cardKey, { status: 'LOCKED', reason: 'ok' }, { 'idempotency-key': 'has a space' });
    expect(badKey.status).to.equal(400);
    expect(badKey.body.invalidParams).to.deep.equal([{ name: 'Idempotency-Key', reason: 'must be 1 to 255 visible ASCII characters' }]);
    expect((await issuerStatusCalls(card.cardKey)).length, 'issuer not called').to.equal(before.calls);
    expect(await stateOf(card.cardKey)).to.deep.equal(before.state);
    expect(gateway.output()).to.not.include(pan);

    for (const unknown of ['CK0000000000000000', 'not a card key']) {
      const missing = await admin(unknown, { status: 'LOCKED', reason: 'no such card' });
      expect(missing.status, unknown).to.equal(404);
      expect(missing.body.code).to.equal('not_found');
    }
  });

  it('refuses any other token than ADMIN_TOKEN (none, a wrong one, a partner\'s JWT) and is not on the partner port', async function () {
    const card = await issue();
    const before = { calls: (await issuerStatusCalls(card.cardKey)).length, state: await stateOf(card.cardKey) };
    const partnerJwt = await acme.token();
    for (const token of ['', `${gateway.adminToken}x`, gateway.adminToken.slice(0, -1), partnerJwt]) {
      const refused = await admin(card.cardKey, { status: 'LOCKED', reason: 'not an operator' }, {}, token);
      expect(refused.status).to.equal(401);
      expect(refused.body.code).to.equal('admin_unauthorized');
      expect(refused.headers.get('www-authenticate')).to.equal('Bearer realm="admin"');
    }
    const onPartnerPort = await fetch(`${gateway.baseUrl}/admin/cards/${card.cardKey}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'LOCKED', reason: 'wrong port' }),
    });
    expect(onPartnerPort.status).to.equal(404);
    expect((await issuerStatusCalls(card.cardKey)).length).to.equal(before.calls);
    expect(await stateOf(card.cardKey)).to.deep.equal(before.state);
  });

  it('CLI card-status: a retry after an issuer failure carries the same operation id, and the issuer applies the change once', async function () {
    const card = await issue();
    // The issuer's first answer to this card's status change is a 503 (it applies nothing).
    await sandboxControl(issuerUrl, 'POST', '/__sandbox/faults', { method: 'POST', path: `/cards/${card.cardKey}/status`, mode: 'status', status: 503, times: 1 });
    const env = { ...process.env, ADMIN_PORT: new URL(gateway.adminUrl).port, ADMIN_TOKEN: gateway.adminToken };
    const reason = 'Bank fraud team, case 4711';
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, 'dist/scripts/partners.js'), 'card-status', card.cardKey, '--status', 'fraud', '--reason', reason], { env });
    expect(JSON.parse(stdout)).to.deep.equal({ cardKey: card.cardKey, status: 'FRAUD', statusCode: 'S5' });
    expect(stderr).to.match(/502: .*retrying in 1 s with the same Idempotency-Key/);

    const calls = await issuerStatusCalls(card.cardKey);
    expect(calls, 'the faulted attempt and the retry').to.have.length(2);
    expect(calls[1].headers['idempotency-key']).to.equal(calls[0].headers['idempotency-key']);
    expect(calls[1].body).to.deep.equal(calls[0].body);
    const state = await stateOf(card.cardKey);
    expect(state.card).to.include({ status: 'FRAUD', status_code: 'S5' });
    expect(state.history.filter((h) => h.operation === 'admin.card.restrict.fraud')).to.have.length(1);
    expect(state.audit.filter((a) => a.operation === 'admin.card.restrict.fraud').map((a) => a.outcome)).to.deep.equal(['failure', 'success']);
    await receiver.waitFor(() => statusEvents(card.cardKey).length === 1, 20_000, 'one event');
    expect(state.events.filter((e) => e.type === 'card.status_changed')).to.have.length(1);

    // Usage: a missing --reason is exit 2, and --help lists the verb.
    const usage = await run(process.execPath, [path.join(ROOT, 'dist/scripts/partners.js'), 'card-status', card.cardKey, '--status', 'locked'], { env }).catch((e: { code: number; stderr: string }) => e);
    expect((usage as { code: number }).code).to.equal(2);
    expect((usage as { stderr: string }).stderr).to.match(/missing --reason/);
    const help = await run(process.execPath, [path.join(ROOT, 'dist/scripts/partners.js'), '--help'], { env });
    expect(help.stdout).to.match(/card-status CARDKEY --status STATUS --reason TEXT/);
    // A refused change is exit 1 with the problem, and is not retried.
    const refused = await run(process.execPath, [path.join(ROOT, 'dist/scripts/partners.js'), 'card-status', card.cardKey, '--status', 'active', '--reason', 'unlock a fraud card'], { env }).catch(
      (e: { code: number; stderr: string }) => e
    );
    expect((refused as { code: number }).code).to.equal(1);
    expect((refused as { stderr: string }).stderr).to.match(/409: A FRAUD card \(S5\) cannot be moved by unlock/);
    expect((refused as { stderr: string }).stderr).to.not.match(/retrying/);
  });
});
