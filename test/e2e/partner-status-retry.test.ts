import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, cardBody, individualBody, sandboxControl, type ApiResponse } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { startTamperingUpstream, type TamperingUpstream } from '../support/tampering-upstream';

/**
 * A partner's card status change retried with its Idempotency-Key after a timeout the issuer did
 * apply (docs/cards.md, "Status changes"; docs/reliability.md, "Upstream operation ids"): the
 * status-change pipelines carry the idempotency step, so the retry carries the first attempt's
 * upstream operation id and is known as a resumed operation. A real gateway process, its issuer
 * a sandbox in this process behind a tampering proxy that lets the issuer apply the close and
 * holds its answer past the gateway's UPSTREAM_TIMEOUT_MS.
 */
describe('e2e: a partner status change retried with its Idempotency-Key after a timeout the issuer applied', function () {
  this.timeout(90_000);
  let sandboxes: Sandboxes;
  let issuer: TamperingUpstream;
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let db: Client;
  let ada: { _id: string; clientID: string };

  before(async function () {
    sandboxes = await startSandboxes();
    issuer = await startTamperingUpstream(sandboxes.issuer.url);
    gateway = await startGatewayProcess({
      ownDatabase: true,
      // 3 s, not 1: the account creation of `before` goes through the same timeout, and took over 1 s
      // on a loaded machine (504). The issuer's answer is held by the test until the gateway gave up.
      env: { ...HIGH_RATE_LIMITS, UPSTREAM_TIMEOUT_MS: '3000', ISSUER_URL: issuer.url, PROCESSING_URL: sandboxes.processing.url, ACCOUNTS_URL: sandboxes.accounts.url },
    });
    acme = await registerPartner(gateway, 'acme-status-retry');
    db = new Client({ connectionString: gateway.databaseUrl });
    await db.connect();
    const individual = await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ lastName: 'Retried' }) });
    expect(individual.status, JSON.stringify(individual.body)).to.equal(201);
    ada = individual.body;
  });

  afterEach(function () {
    issuer?.clear();
  });

  after(async function () {
    await db?.end();
    await gateway?.stop();
    await issuer?.close();
    await sandboxes?.close();
  });

  /** The status changes the issuer received for a card (replays of an Idempotency-Key included). */
  const issuerStatusCalls = async (cardKey: string) =>
    (await sandboxControl(sandboxes.issuer.url, 'GET', `/__sandbox/requests?method=POST&path=/cards/${cardKey}/status`)) as { headers: Record<string, string>; body: unknown }[];

  it('close with key K times out after the issuer closed the card; the retry with K answers the change (200 CLOSED) under the same operation id, the issuer changed the card once; K with another body is 409 idempotency_key_reused', async function () {
    const card = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    const cardKey: string = card.body.cardKey;
    const key = `close-${crypto.randomUUID()}`;
    const body = { reason: 'customer closed the account' };
    const close = (headers: Record<string, string> = { 'idempotency-key': key }, requestBody: unknown = body): Promise<ApiResponse> =>
      api(gateway, acme, 'POST', `/cards/${cardKey}/restrict/closed`, { body: requestBody, headers });

    // The issuer closes the card at once; its answer is held until the gateway has given up (3 s).
    const held = issuer.hold('POST', `/cards/${cardKey}/status`);
    const [timedOut] = await Promise.all([close(), held.arrived]);
    expect(timedOut.status, JSON.stringify(timedOut.body)).to.equal(504);
    expect(timedOut.body.code).to.equal('upstream_timeout');
    held.release();
    const atIssuer = await sandboxControl(sandboxes.issuer.url, 'GET', `/cards/${cardKey}`);
    expect(atIssuer.statusCode, 'the issuer applied the close').to.equal('S4');
    const first = await issuerStatusCalls(cardKey);
    expect(first).to.have.length(1);
    const operationId = first[0].headers['idempotency-key'];
    expect(operationId).to.match(/^[0-9a-f]{24}$/);

    // Two concurrent retries with K: one runs (the same operation, resumed), the other waits its
    // turn (409 idempotency_in_progress) or replays the answer; neither is a new operation.
    const retries = await Promise.all([close(), close()]);
    const ran = retries.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null);
    expect(ran, JSON.stringify(retries.map((r) => [r.status, r.body]))).to.have.length(1);
    expect(ran[0].body).to.deep.equal({ cardKey, status: 'CLOSED', statusCode: 'S4' });
    for (const other of retries.filter((r) => r !== ran[0])) {
      if (other.status === 409) expect(other.body.code).to.equal('idempotency_in_progress');
      else expect([other.status, other.headers.get('idempotent-replayed'), other.body]).to.deep.equal([200, 'true', ran[0].body]);
    }
    // Once the first retry is recorded, K answers it again.
    const replayed = await close();
    expect(replayed.status).to.equal(200);
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    expect(replayed.body).to.deep.equal(ran[0].body);

    // Every call the issuer got is the one operation (same id, same request): the sandbox, as an
    // issuer does, applies it once and replays its answer to the repeats.
    const calls = await issuerStatusCalls(cardKey);
    expect(calls.map((c) => c.headers['idempotency-key']), 'one operation id for the close and its retries').to.deep.equal(calls.map(() => operationId));
    expect(calls.map((c) => c.body)).to.deep.equal(calls.map(() => first[0].body));

    // K with another body is refused, and reaches no issuer.
    const reused = await close({ 'idempotency-key': key }, { reason: 'another reason' });
    expect(reused.status, JSON.stringify(reused.body)).to.equal(409);
    expect(reused.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(reused.body.code).to.equal('idempotency_key_reused');
    expect(await issuerStatusCalls(cardKey)).to.have.length(calls.length);

    // Our record: CLOSED, no longer due for an issuer check, one card.status_changed event.
    const row = (await db.query('SELECT status, status_code, issuer_check_due FROM cards WHERE card_key = $1', [cardKey])).rows[0];
    expect(row).to.deep.equal({ status: 'CLOSED', status_code: 'S4', issuer_check_due: false });
    const events = (await db.query<{ payload: string }>('SELECT payload FROM partner_events WHERE ordering_key = $1 ORDER BY seq', [cardKey])).rows.map((r) => JSON.parse(r.payload));
    expect(events.filter((e) => e.type === 'card.status_changed').map((e) => e.data.statusCode)).to.deep.equal(['S4']);

    // Without a key a close of the closed card is a new operation: 409 invalid_transition, no issuer call.
    const fresh = await close({});
    expect(fresh.status).to.equal(409);
    expect(fresh.body.code).to.equal('invalid_transition');
    expect(await issuerStatusCalls(cardKey)).to.have.length(calls.length);
  });
});
