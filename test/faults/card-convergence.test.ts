import { expect } from 'chai';
import { Client } from 'pg';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, sandboxControl } from '../support/api';
import { cardFixture } from '../support/card-fixture';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { startTamperingUpstream, type TamperingUpstream } from '../support/tampering-upstream';

const UPSTREAM_TIMEOUT_MS = 1000;
/** The reconciling gateway's interval (CARD_RECONCILE_INTERVAL_MS); the other keeps the default 60 s. */
const RECONCILE_INTERVAL_MS = 300;

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * An issuer that applies a status change and answers after the gateway gave up (504): our record
 * must come to the issuer's status, by the next access to the card or by the card reconciler within
 * one interval plus the pass (docs/reliability.md, "Cards converge with the issuer").
 */
describe('faults: a status change the issuer applied after our timeout converges', function () {
  this.timeout(90_000);
  let sandboxes: Sandboxes;
  let tamper: TamperingUpstream;
  let reconciling: GatewayProcess;
  let quiet: GatewayProcess;
  const dbs: Client[] = [];

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip(); // counts rows of a private PostgreSQL database
    sandboxes = await startSandboxes();
    tamper = await startTamperingUpstream(sandboxes.issuer.url);
    const env = {
      ...HIGH_RATE_LIMITS,
      ISSUER_URL: tamper.url,
      PROCESSING_URL: sandboxes.processing.url,
      ACCOUNTS_URL: sandboxes.accounts.url,
      UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
    };
    [reconciling, quiet] = await Promise.all([
      startGatewayProcess({ ownDatabase: true, env: { ...env, CARD_RECONCILE_INTERVAL_MS: String(RECONCILE_INTERVAL_MS) } }),
      startGatewayProcess({ ownDatabase: true, env }),
    ]);
    for (const gateway of [reconciling, quiet]) {
      const db = new Client({ connectionString: gateway.databaseUrl });
      await db.connect();
      dbs.push(db);
    }
  });
  after(async function () {
    for (const db of dbs) await db.end();
    await Promise.all([reconciling?.stop(), quiet?.stop()]);
    await tamper?.close();
    await sandboxes?.close();
  });
  afterEach(() => tamper?.clear());

  /** Locks `card` through `gateway` while the issuer's answer is held past the timeout: 504, the issuer at L1, us at 00. */
  async function lockThatTimesOut(gateway: GatewayProcess, partner: TestPartner, db: Client, card: any): Promise<void> {
    expect(card.statusCode).to.equal('00');
    tamper.tampers.push({ method: 'POST', path: `/cards/${card.cardKey}/status`, delayMs: UPSTREAM_TIMEOUT_MS * 3 });
    const locked = await api(gateway, partner, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate, reason: 'timeout test' } });
    expect(locked.status, JSON.stringify(locked.body)).to.equal(504);
    expect(locked.body).to.include({ code: 'upstream_timeout', upstream: 'issuer' });
    const atIssuer = await sandboxControl(sandboxes.issuer.url, 'GET', `/cards/${card.cardKey}`);
    expect(atIssuer.statusCode, 'the issuer applied the lock').to.equal('L1');
  }

  const history = async (db: Client, cardKey: string) =>
    (await db.query('SELECT operation, old_status_code, new_status_code, reason FROM card_status_history WHERE card_key = $1 ORDER BY id', [cardKey])).rows;

  it('the card reconciler takes the issuer status over within one interval plus its pass, recorded as an issuer-side change', async function () {
    const db = dbs[0];
    const partner = await registerPartner(reconciling, 'converge-reconciler');
    const { virtualCard: card } = await cardFixture(reconciling, partner, sandboxes.issuer.url);
    await lockThatTimesOut(reconciling, partner, db, card);

    // Bound (docs/reliability.md): one interval plus a pass of at most CARD_RECONCILE_BATCH reads,
    // the due card first; waited for with a generous deadline, not timed.
    const statusCode = await eventually(
      'our record at the issuer status',
      async () => {
        const row = (await db.query('SELECT status_code FROM cards WHERE card_key = $1', [card.cardKey])).rows[0];
        return row.status_code === 'L1' ? row.status_code : undefined;
      },
      RECONCILE_INTERVAL_MS + 2 * UPSTREAM_TIMEOUT_MS + 10_000
    );
    expect(statusCode).to.equal('L1');
    expect((await history(db, card.cardKey)).slice(-1)).to.deep.equal([
      { operation: 'card.issuer-sync', old_status_code: '00', new_status_code: 'L1', reason: 'issuer-side change' },
    ]);
    const audit = await db.query("SELECT outcome, details FROM audit_log WHERE target_id = $1 AND operation = 'card.issuer-sync'", [card.cardKey]);
    expect(audit.rows).to.deep.equal([{ outcome: 'success', details: { from: '00', to: 'L1', source: 'issuer' } }]);
    // The partner's event: the code its timed-out lock asked for, written by the reconciler (no request id).
    const events = await db.query<{ payload: string }>("SELECT payload FROM partner_events WHERE ordering_key = $1 AND type = 'card.status_changed'", [card.cardKey]);
    expect(events.rows.map((r) => JSON.parse(r.payload))).to.deep.equal([
      {
        ...JSON.parse(events.rows[0].payload),
        data: { cardKey: card.cardKey, previousStatus: 'ACTIVE', status: 'LOCKED', statusCode: 'L1', previousStatusCode: '00', source: 'partner', reason: null },
      },
    ]);
    expect(JSON.parse(events.rows[0].payload)).to.not.have.property('requestId');
    const status = await api(reconciling, partner, 'GET', `/cards/${card.cardKey}/status`);
    expect(status.body).to.deep.include({ status: 'LOCKED', statusCode: 'L1' });
  });

  it('the next status change reads the issuer first: unlock right after the timed-out lock succeeds, and history shows both', async function () {
    const db = dbs[1];
    const partner = await registerPartner(quiet, 'converge-next-access');
    const { virtualCard: card } = await cardFixture(quiet, partner, sandboxes.issuer.url);
    await lockThatTimesOut(quiet, partner, db, card);
    expect((await db.query('SELECT status_code FROM cards WHERE card_key = $1', [card.cardKey])).rows[0].status_code, 'not repaired yet (reconciler every 60 s)').to.equal('00');

    tamper.clear();
    // A temporary lock is allowed from 00 but not from L1: the gateway reads the issuer first, sees
    // L1 and refuses it itself (no issuer call); unlock is then allowed.
    const tempLock = await api(quiet, partner, 'POST', `/cards/${card.cardKey}/temporary-lock`, { body: { expDate: card.expDate } });
    expect(tempLock.status, JSON.stringify(tempLock.body)).to.equal(409);
    expect(tempLock.body).to.include({ code: 'invalid_transition', statusCode: 'L1' }).and.not.have.property('upstream');
    const unlocked = await api(quiet, partner, 'POST', `/cards/${card.cardKey}/unlock`, { body: { expDate: card.expDate } });
    expect(unlocked.status, JSON.stringify(unlocked.body)).to.equal(200);
    expect(unlocked.body).to.deep.equal({ cardKey: card.cardKey, status: 'ACTIVE', statusCode: '00' });
    expect((await history(db, card.cardKey)).slice(-2).map((h) => [h.operation, h.old_status_code, h.new_status_code])).to.deep.equal([
      ['card.issuer-sync', '00', 'L1'],
      ['card.unlock', 'L1', '00'],
    ]);
    expect((await sandboxControl(sandboxes.issuer.url, 'GET', `/cards/${card.cardKey}`)).statusCode).to.equal('00');
  });
});
