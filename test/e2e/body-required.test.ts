import { expect } from 'chai';
import { Client } from 'pg';
import { OPERATION_NAMES, OPERATIONS, type Operation, type OperationName } from '../../gateway/catalog';
import type { OwnedKind } from '../../gateway/ownership';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls, type ApiResponse } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { ABSENT_BODIES, rawRequest } from '../support/raw-http';
import { runDatabaseUrl } from '../support/test-database';
import { waitFor } from '../support/wait';

/** Every operation of the catalog that takes a body, read from the catalog when the test runs. */
const BODY_TAKING: readonly OperationName[] = OPERATION_NAMES.filter((name) => (OPERATIONS[name] as Operation).schemas?.body !== undefined);

/**
 * Money paths fail closed (issue 32): every operation of the catalog that takes a body (a new one is
 * covered without a change here) answers a request without one (nothing at all, zero bytes by
 * length or chunked, only whitespace; with and without `Content-Type: application/json`) 400
 * `body_required` as a problem, and changes nothing: no Idempotency-Key claimed, no upstream called,
 * no audit entry or event written, every resource reading the same. Each request is otherwise good
 * (the partner's token, resources it owns, a well-formed path), so that the body check answers it.
 * On the run's shared gateway, in sandbox mode: the sandbox-only operations are served too.
 */
describe('e2e: an operation that takes a body refuses a request without one (400 body_required), changing nothing', function () {
  this.timeout(120_000);
  let gateway: Gateway;
  let partner: TestPartner;
  let db: Client;
  let sandboxes: { issuer: string; processing: string; accounts: string };
  const ids: Partial<Record<OwnedKind, string>> = {};
  const REQUEST_PREFIX = `body-required-${Date.now().toString(36)}`;

  const ok = (response: ApiResponse, status: number, what: string) => {
    expect(response.status, `${what}: ${JSON.stringify(response.body)}`).to.equal(status);
    return response.body;
  };

  /** The operation's path under /api/partner, its parameters the partner's own resources. */
  function pathOf(name: OperationName): string {
    const entry: Operation = OPERATIONS[name];
    return entry.path.replace(/:([A-Za-z]+)/g, (_, param: string) => {
      if (param === 'limitName') return 'dailyPurchase';
      const check = entry.ownership?.find((c) => c.in === 'path' && c.param === param);
      const id = check ? ids[check.resource] : undefined;
      if (id === undefined) throw new Error(`${name}: no resource of the partner for :${param} (${check?.resource ?? 'no ownership check'}); give the fixture one`);
      return encodeURIComponent(id);
    });
  }

  /** What the partner's resources and records read as, through the API and in PostgreSQL. */
  async function state() {
    const read = async (path: string) => {
      const response = await api(gateway, partner, 'GET', path);
      return { status: response.status, body: response.body };
    };
    const rows = await db.query(
      `SELECT (SELECT count(*) FROM audit_log WHERE partner_id = $1)::int AS audit,
              (SELECT count(*) FROM partner_events WHERE partner_id = $1)::int AS events,
              (SELECT count(*) FROM idempotency_keys WHERE partner_id = $1)::int AS keys,
              (SELECT count(*) FROM card_transactions WHERE partner_id = $1)::int AS transactions,
              (SELECT json_agg(json_build_array(card_key, status_code, nickname, three_ds_phone, updated_at) ORDER BY card_key) FROM cards WHERE partner_id = $1) AS cards,
              (SELECT json_agg(json_build_array(card_key, controls) ORDER BY card_key NULLS FIRST) FROM spend_controls WHERE partner_id = $1) AS controls`,
      [partner.id]
    );
    return {
      records: rows.rows[0],
      individual: await read(`/individual/accounts/${ids.individual}`),
      card: await read(`/cards/${ids.card}`),
      limits: await read(`/cards/${ids.card}/limits`),
      cardControls: await read(`/cards/${ids.card}/spend-controls`),
      defaultControls: await read('/spend-controls'),
      transaction: await read(`/transactions/${ids.transaction}`),
      webhookEndpoint: await read(`/webhooks/endpoints/${ids['webhook-endpoint']}`),
      authorizationEndpoint: await read('/authorization-endpoint'),
      token: await read(`/tokens/${ids.token}`),
    };
  }

  before(async function () {
    gateway = await sharedGateway();
    sandboxes = sandboxUrls(gateway);
    partner = await registerPartner(gateway, 'body-required');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();

    const individual = ok(await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() }), 201, 'individual');
    ids.individual = individual._id;
    ids.card = ok(await api(gateway, partner, 'POST', `/individual/accounts/${individual._id}/cards/virtual`, { body: cardBody(individual.clientID) }), 201, 'card').cardKey;
    const transaction = ok(await api(gateway, partner, 'POST', `/simulate/cards/${ids.card}/transactions`, { body: { amount: 12.5, currency: 'EUR' } }), 201, 'transaction');
    ids.transaction = transaction._id;
    await waitFor('the transaction in the projection', async () => (await api(gateway, partner, 'GET', `/transactions/${ids.transaction}`)).status === 200);
    // A network token of the card (the sandbox's tokenization, approved): the token routes' :id.
    ids.token = ok(await api(gateway, partner, 'POST', `/simulate/cards/${ids.card}/tokenizations`, { body: { walletProvider: 'apple_pay' } }), 201, 'token')._id;
    ids.event = (await waitFor('an event of the partner', async () => (await api(gateway, partner, 'GET', '/events?limit=1')).body?.data?.[0]?.id as string | undefined))!;
    // Something to clear: a request read as {} would replace these with none.
    ok(await api(gateway, partner, 'PUT', `/cards/${ids.card}/spend-controls`, { body: { maxAmountPerTransaction: 100, blockedCountries: ['RU'] } }), 200, 'card controls');
    ok(await api(gateway, partner, 'PUT', '/spend-controls', { body: { blockedMccs: ['7995'] } }), 200, 'default controls');
    // Disabled once made: nothing is sent to them.
    ids['webhook-endpoint'] = ok(await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/hooks' } }), 201, 'webhook endpoint').id;
    ok(await api(gateway, partner, 'PATCH', `/webhooks/endpoints/${ids['webhook-endpoint']}`, { body: { status: 'disabled' } }), 200, 'webhook endpoint disabled');
    ok(await api(gateway, partner, 'POST', '/authorization-endpoint', { body: { url: 'http://127.0.0.1:9/decide' } }), 201, 'authorization endpoint');
    ok(await api(gateway, partner, 'PATCH', '/authorization-endpoint', { body: { status: 'disabled' } }), 200, 'authorization endpoint disabled');
  });

  after(async function () {
    await db?.end();
  });

  it('covers every operation of the catalog that takes a body (the spend controls and every other write)', function () {
    expect(BODY_TAKING).to.include.members(['set-card-spend-controls', 'set-spend-controls', 'create-individual', 'lock-card', 'check-card-issuing-fee', 'resend-event', 'simulate-transaction-expiry']);
    for (const name of OPERATION_NAMES) {
      const entry: Operation = OPERATIONS[name];
      if (['POST', 'PUT', 'PATCH'].includes(entry.method)) expect(BODY_TAKING, `${name} is a write: it takes a body`).to.include(name);
    }
    // Every path can be filled with a resource of the partner: an operation on a new kind fails here.
    for (const name of BODY_TAKING) expect(pathOf(name)).to.match(/^\/api\/partner\//);
  });

  it(`answers each of ${ABSENT_BODIES.length} bodiless shapes 400 body_required on every such operation, and nothing changes`, async function () {
    const before = await state();
    const refused: string[] = [];
    let n = 0;
    for (const name of BODY_TAKING) {
      const entry: Operation = OPERATIONS[name];
      const path = pathOf(name);
      const authorization = `Bearer ${await partner.token()}`;
      await Promise.all(
        ABSENT_BODIES.map(async (shape) => {
          const requestId = `${REQUEST_PREFIX}-${++n}`;
          const response = await rawRequest(gateway.baseUrl, entry.method, path, { authorization, 'x-request-id': requestId, 'idempotency-key': requestId }, shape);
          const what = `${name} (${entry.method} ${path}), ${shape.description}`;
          expect(response.status, `${what}: ${response.text}`).to.equal(400);
          expect(response.headers['content-type'], what).to.match(/^application\/problem\+json/);
          expect(response.body, what).to.deep.include({ code: 'body_required', status: 400, title: 'Request body required', requestId });
          refused.push(requestId);
        })
      );
    }
    expect(refused).to.have.length(BODY_TAKING.length * ABSENT_BODIES.length);

    expect(await state(), 'the resources and records read the same').to.deep.equal(before);
    const written = await db.query(
      `SELECT 'audit' AS kind, request_id FROM audit_log WHERE partner_id = $1 AND request_id LIKE $2
       UNION ALL SELECT 'event', request_id FROM partner_events WHERE partner_id = $1 AND request_id LIKE $2
       UNION ALL SELECT 'idempotency key', key FROM idempotency_keys WHERE partner_id = $1 AND key LIKE $2`,
      [partner.id, `${REQUEST_PREFIX}-%`]
    );
    expect(written.rows, 'no audit entry, event or Idempotency-Key claim').to.deep.equal([]);
    for (const [upstream, url] of Object.entries(sandboxes)) {
      const calls = ((await sandboxControl(url, 'GET', '/__sandbox/requests')) as { requestId: string | null; method: string; path: string }[]).filter((r) => r.requestId?.startsWith(`${REQUEST_PREFIX}-`));
      expect(calls.map((r) => `${r.method} ${r.path}`), `the ${upstream} sandbox was not called`).to.deep.equal([]);
    }
  });

  it('the same operations with a body are answered as before: {} reaches the schema (validation_failed where a field is required)', async function () {
    // One operation whose every field is optional, one that requires a field: the check only looks at whether a body came.
    const cleared = await api(gateway, partner, 'POST', `/cards/${ids.card}/pin/reset-tries`, { body: {} });
    expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
    const invalid = await api(gateway, partner, 'POST', `/cards/${ids.card}/lock`, { body: {} });
    expect([invalid.status, invalid.body.code]).to.deep.equal([400, 'validation_failed']);
    const textBody = await rawRequest(gateway.baseUrl, 'POST', `/api/partner/cards/${ids.card}/lock`, { authorization: `Bearer ${await partner.token()}` }, { description: 'text', framing: 'length', chunks: ['lock it'], contentType: 'text/plain' });
    expect([textBody.status, textBody.body.code], 'a body that is not JSON stays 415').to.deep.equal([415, 'unsupported_media_type']);
  });
});
