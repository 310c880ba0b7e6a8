import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';

/** Creations in all, and how many run at once. */
const CREATIONS = 1_000;
const AT_ONCE = 50;

/**
 * Issue 33: every count the API states as exact stays exact after 1,000 concurrent creations with
 * a tenth of them failing upstream (the accounts sandbox's `SANDBOX-FAIL`: 502, the onboarding
 * rolled back by its compensation) and a twentieth retried with their Idempotency-Key (a replay, no
 * second individual): the individual list's `count` (docs/individuals.md, "Listing and
 * pagination") equals the individuals created, which a scan of the rows confirms; then the card
 * list's exact totals (docs/card-search.md, "Total") after 200 card issuances at once, a tenth
 * refused by the issuer. On the run's shared gateway.
 */
describe('e2e: exact counts after 1,000 concurrent creations, a tenth failing upstream', function () {
  this.timeout(120_000);
  let gateway: Gateway;
  let partner: TestPartner;
  let db: Client;

  before(async function () {
    gateway = await sharedGateway();
    partner = await registerPartner(gateway, 'exact-counts');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
  });
  after(async function () {
    await db?.end();
  });

  /** The individuals the first test created: id → clientID. */
  const created = new Map<string, string>();

  it('the individual list\'s count equals the individuals created, whatever failed or was retried', async function () {
    const statuses = new Map<number, number>();
    let replays = 0;
    let next = 0;
    const create = async (i: number) => {
      const key = crypto.randomUUID();
      const body = individualBody(i % 10 === 3 ? { lastName: 'SANDBOX-FAIL' } : {});
      const answer = await api(gateway, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 201) created.set(answer.body._id, answer.body.clientID);
      // A retry of the same request (a client that did not see the answer): the stored answer, no second individual.
      if (i % 20 === 7 && answer.status === 201) {
        const again = await api(gateway, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
        expect(again.status).to.equal(201);
        expect(again.body._id).to.equal(answer.body._id);
        replays += 1;
      }
    };
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        for (let i = next++; i < CREATIONS; i = next++) await create(i);
      })
    );
    expect(Object.fromEntries(statuses), 'a tenth failed upstream, every other one created').to.deep.equal({ 201: CREATIONS * 0.9, 502: CREATIONS * 0.1 });
    expect(replays).to.equal(CREATIONS / 20);
    expect(created.size).to.equal(CREATIONS * 0.9);

    const listed = await api(gateway, partner, 'GET', '/individual/accounts?limit=1');
    expect(listed.body.count, 'the list\'s count').to.equal(created.size);
    const scanned = await db.query<{ complete: string; pending: string }>(
      `SELECT count(*) FILTER (WHERE provisioning = 'complete') AS complete, count(*) FILTER (WHERE provisioning = 'pending') AS pending
         FROM individual_onboardings WHERE partner_id = $1`,
      [partner.id]
    );
    expect(scanned.rows[0]).to.deep.equal({ complete: String(created.size), pending: '0' });
  });

  it('the card list\'s total, with and without a status, equals the cards issued: 200 at once over those individuals, a tenth failing at the issuer', async function () {
    const issuer = sandboxUrls(gateway).issuer;
    // The issuer refuses the cards embossed FAIL.CARD, 20 of them (a fault that ends by itself: other tests share this sandbox).
    await sandboxControl(issuer, 'POST', '/__sandbox/faults', { method: 'POST', path: '/cards', mode: 'status', status: 500, times: CREATIONS / 50, bodyIncludes: 'FAIL.CARD' });
    const owners = [...created].slice(0, 40);
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = next++; i < CREATIONS / 5; i = next++) {
          const [individualId, clientId] = owners[i % owners.length];
          const failing = i % 10 === 3;
          const type = i % 4 === 0 ? 'physical' : 'virtual';
          const answer = await api(gateway, partner, 'POST', `/individual/accounts/${individualId}/cards/${type}`, { body: cardBody(clientId, failing ? { embossedName: 'FAIL.CARD' } : {}) });
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        }
      })
    );
    expect(Object.fromEntries(statuses), 'a tenth failed at the issuer, every other one issued').to.deep.equal({ 201: 180, 502: 20 });
    const scanned = await db.query<{ status: string; type: string; n: number }>('SELECT status, type, count(*)::int AS n FROM cards WHERE partner_id = $1 GROUP BY 1, 2', [partner.id]);
    const scan = (filter: (r: { status: string; type: string }) => boolean) => scanned.rows.filter(filter).reduce((n, r) => n + r.n, 0);
    expect(scan(() => true)).to.equal(180);
    for (const [query, expected] of [
      ['', scan(() => true)],
      ['&status=ACTIVE', scan((r) => r.status === 'ACTIVE')],
      ['&type=physical', scan((r) => r.type === 'physical')],
      ['&status=LOCKED&type=physical', scan((r) => r.status === 'LOCKED' && r.type === 'physical')],
    ] as const) {
      const listed = await api(gateway, partner, 'GET', `/cards?limit=1${query}`);
      expect(listed.body.pagination.total, `GET /cards?limit=1${query}`).to.equal(expected);
      expect(listed.headers.get('x-total-capped')).to.equal(null);
    }
  });
});
