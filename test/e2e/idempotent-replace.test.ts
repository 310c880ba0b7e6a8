import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';

/**
 * Replace and re-issue retried with the same Idempotency-Key (issue 11, item 12): the first answer
 * retires the cardKey of the path, so the retry used to meet the ownership step's 404. The retry
 * now replays the first answer, once, for the partner that made it only.
 */
describe('e2e: replace and re-issue retried with the same Idempotency-Key replay the first answer', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let globex: TestPartner;
  let issuerUrl: string;
  let db: Client;
  let ada: any;

  before(async function () {
    // The run's shared gateway: every count here is of this file's partners' cards (issuer calls by
    // the card's path, rows by partner), so other files' traffic cannot change them.
    gateway = await sharedGateway();
    issuerUrl = sandboxUrls(gateway).issuer;
    acme = await registerPartner(gateway, 'acme-replay');
    globex = await registerPartner(gateway, 'globex-replay');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    ada = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() })).body;
  });

  after(async function () {
    await db?.end();
  });

  const issue = async (type: 'virtual' | 'physical') => {
    const created = await api(gateway, acme, 'POST', `/individual/accounts/${ada._id}/cards/${type}`, { body: cardBody(ada.clientID) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body;
  };
  const issuerCalls = async (path: string) => (await sandboxControl(issuerUrl, 'GET', `/__sandbox/requests?method=POST&path=${encodeURIComponent(path)}`)).length;
  const cardRows = async () => (await db.query('SELECT card_key, status_code FROM cards WHERE partner_id = $1 ORDER BY card_key', [acme.id])).rows;

  // After the first answer: a replaced card's old key is gone (404); a re-issued one is kept, closed.
  for (const operation of [
    { name: 'replace', type: 'physical' as const, status: 200, otherBody: { status: 404, code: 'not_found' }, noKey: { status: 404, code: 'not_found' } },
    { name: 'reissue', type: 'virtual' as const, status: 201, otherBody: { status: 409, code: 'idempotency_key_reused' }, noKey: { status: 409, code: 'invalid_transition' } },
  ]) {
    it(`${operation.name} with key K → ${operation.status} and a new cardKey; the retry with K replays the same answer without a second issuer ${operation.name}`, async function () {
      const card = await issue(operation.type);
      const key = `retry-${crypto.randomUUID()}`;
      const path = `/cards/${card.cardKey}/${operation.name}`;
      const body = { expDate: card.expDate, reason: 'damaged' };
      const first = await api(gateway, acme, 'POST', path, { body, headers: { 'idempotency-key': key } });
      expect(first.status, JSON.stringify(first.body)).to.equal(operation.status);
      expect(first.body.cardKey).to.be.a('string').and.not.equal(card.cardKey);
      const rowsAfterFirst = await cardRows();

      const retry = await api(gateway, acme, 'POST', path, { body, headers: { 'idempotency-key': key } });
      expect(retry.status, JSON.stringify(retry.body)).to.equal(operation.status);
      expect(retry.body).to.deep.equal(first.body);
      expect(retry.headers.get('idempotent-replayed')).to.equal('true');
      expect(await issuerCalls(`/cards/${card.cardKey}/${operation.name}`), `issuer ${operation.name} calls`).to.equal(1);
      expect(await cardRows(), 'nothing changed by the retry').to.deep.equal(rowsAfterFirst);

      // Only the same partner, the same key and the same request replay.
      const other = await api(gateway, globex, 'POST', path, { body, headers: { 'idempotency-key': key } });
      expect(other.status, 'another partner with the same key').to.be.oneOf([403, 404]);
      expect(other.headers.get('idempotent-replayed')).to.equal(null);
      expect(JSON.stringify(other.body)).to.not.include(first.body.cardKey);
      const otherBody = await api(gateway, acme, 'POST', path, { body: { ...body, reason: 'lost in the post' }, headers: { 'idempotency-key': key } });
      expect(otherBody.headers.get('idempotent-replayed'), 'another body with the same key').to.equal(null);
      expect(otherBody.body).to.include(operation.otherBody);
      const noKey = await api(gateway, acme, 'POST', path, { body });
      expect(noKey.body, 'without the key the operation runs again on the old cardKey').to.include(operation.noKey);
      expect(await issuerCalls(`/cards/${card.cardKey}/${operation.name}`)).to.equal(1);
    });
  }

  it('a re-issue whose attempt committed but died before its answer was recorded: the retry with K answers the new card, no second one', async function () {
    const card = await issue('virtual');
    const key = `crashed-${crypto.randomUUID()}`;
    const path = `/cards/${card.cardKey}/reissue`;
    const body = { expDate: card.expDate, reason: 'damaged' };
    const first = await api(gateway, acme, 'POST', path, { body, headers: { 'idempotency-key': key } });
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const rowsAfterFirst = await cardRows();
    // The process that ran it dies between the commit and recording the answer: the key is left in
    // progress, without an answer, its heartbeat stale, so the retry takes it over (same operation id).
    const lost = await db.query(
      `UPDATE idempotency_keys SET state = 'in_progress', heartbeat_at = now() - interval '1 hour', response_status = NULL, response_body = NULL, response_bytes = NULL, response_headers = NULL
        WHERE partner_id = $1 AND key = $2`,
      [acme.id, key]
    );
    expect(lost.rowCount).to.equal(1);

    // The issuer is briefly down for the retry: not an answer, so the key is released, not given a 409.
    await sandboxControl(issuerUrl, 'POST', '/__sandbox/faults', { method: 'POST', path, mode: 'status', status: 503, times: 1 });
    const during = await api(gateway, acme, 'POST', path, { body, headers: { 'idempotency-key': key } });
    expect(during.status, JSON.stringify(during.body)).to.be.at.least(500);

    const retry = await api(gateway, acme, 'POST', path, { body, headers: { 'idempotency-key': key } });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.cardKey, 'the card the first attempt made').to.equal(first.body.cardKey);
    expect(retry.headers.get('idempotent-replayed')).to.equal(null);
    expect(await cardRows(), 'no second card, nothing changed').to.deep.equal(rowsAfterFirst);
    const newCards = await sandboxControl(issuerUrl, 'GET', `/__sandbox/requests?method=POST&path=${encodeURIComponent(path)}`);
    expect(newCards.length, 'both retries asked the issuer under the same operation id').to.equal(3);
    const operationIds = newCards.map((r: { headers?: Record<string, string> }) => r.headers?.['idempotency-key']);
    expect(operationIds[0], 'the issuer call carries an operation id').to.be.a('string');
    expect(new Set(operationIds), 'one operation id').to.deep.equal(new Set([operationIds[0]]));
    // The answer is recorded now: a third try replays it.
    const third = await api(gateway, acme, 'POST', path, { body, headers: { 'idempotency-key': key } });
    expect(third.body.cardKey).to.equal(first.body.cardKey);
    expect(third.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('a key that has not completed a request is not replayed early: the first replace with it runs normally', async function () {
    const card = await issue('physical');
    const key = `fresh-${crypto.randomUUID()}`;
    const response = await api(gateway, acme, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate }, headers: { 'idempotency-key': key } });
    expect(response.status).to.equal(200);
    expect(response.headers.get('idempotent-replayed')).to.equal(null);
  });
});
