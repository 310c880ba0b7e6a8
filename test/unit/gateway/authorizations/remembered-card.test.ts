import crypto from 'node:crypto';
import { expect } from 'chai';
import { newEndpointHints, type EndpointHints } from '../../../../gateway/authorizations/card-hints';
import { DecisionTooLate } from '../../../../gateway/authorizations/deadline';
import { decideAuthorization, type AuthorizationRequest, type DecisionChecks } from '../../../../gateway/authorizations/decide';
import { Database } from '../../../../gateway/db/database';
import { createLogger } from '../../../../gateway/logging/logger';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';
import { runDatabaseUrl } from '../../../support/test-database';

/**
 * A card this process decided before, whose partner had no decision endpoint, is decided on what
 * was read then and recorded in one statement, which writes only when the card (owner, status), its
 * controls and the partner's lack of an endpoint are still what was read (docs/authorizations.md,
 * "Round trips"). Real PostgreSQL; the statements the decision sends are seen on their way.
 */
describe('a card decided before in this process: one statement, checked against the card as it stands', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  /** The database with named prepared statements, as the gateway runs on PostgreSQL by default. */
  let preparedDb: Database;

  before(async function () {
    services = await openServices();
    preparedDb = new Database(runDatabaseUrl(), { max: 4, log: createLogger({ level: 'silent' }), namedStatements: true });
  });
  after(async function () {
    await preparedDb?.close();
    await services?.close();
  });

  /** The names of the statements `db` sends, and the database wrapper that records them. */
  const spy = (db: Database) => {
    const sent: string[] = [];
    const named = db.named.bind(db);
    const statement = db.statement.bind(db);
    const query = db.query.bind(db);
    const spied = Object.assign(Object.create(db) as Database, {
      named: (name: string, text: string, params: unknown[]) => (sent.push(name), named(name, text, params)),
      statement: (build: Parameters<Database['statement']>[0]) =>
        statement(() => {
          const built = build();
          sent.push(built.name ?? 'unnamed');
          return built;
        }),
      query: ((text: string, params?: unknown[]) => (sent.push('query'), query(text, params))) as Database['query'],
    });
    return { sent, db: spied };
  };

  const newCard = async () => {
    const partner = await services.partners.create({ name: `remembered-${crypto.randomBytes(4).toString('hex')}`, issuer: 'https://remembered.example', publicKey: makeKeyPair().publicPem });
    const tenantId = (await services.partners.addTenant(partner._id, 'Fleet'))._id;
    const cardKey = `CKRM${crypto.randomBytes(7).toString('hex').toUpperCase()}`;
    await services.db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date)
       VALUES ($1, $2, 'b2b', $3, $3, '5355 70** **** 0001', 'virtual', 'ACTIVE', '00', 'EUR', 'P-STD', '09/2030')`,
      [cardKey, partner._id, tenantId]
    );
    return { partnerId: partner._id, cardKey };
  };

  const purchase = (cardKey: string, mcc = '5411'): AuthorizationRequest => ({
    id: `auth_${crypto.randomBytes(8).toString('hex')}`,
    transactionId: crypto.randomBytes(12).toString('hex'),
    cardId: cardKey,
    amount: 12,
    currency: 'EUR',
    type: 'PURCHASE',
    merchant: { name: 'Shop', mcc, city: 'Berlin', country: 'DE' },
    at: new Date().toISOString(),
  });

  /** Decides `request` with `hints`, and says which statements it sent and what stands in the database for its id. */
  const decide = async (hints: EndpointHints, request: AuthorizationRequest, checks: DecisionChecks = {}, on: Database = services.db) => {
    const { sent, db } = spy(on);
    const decision = await decideAuthorization({ db, log: createLogger({ level: 'silent' }), checks, endpointHints: hints }, request, Date.now() + 1700);
    const rows = await services.db.query<{ decisions: string; transactions: string; status: string | null }>(
      `SELECT (SELECT count(*) FROM authorization_decisions WHERE authorization_id = $1) AS decisions,
              (SELECT count(*) FROM card_transactions WHERE id = $2) AS transactions,
              (SELECT status FROM card_transactions WHERE id = $2) AS status`,
      [request.id, request.transactionId]
    );
    return { decision, sent, stands: rows.rows[0]! };
  };

  it('decides the card again in one statement, and records what the two statements did the first time', async function () {
    const { cardKey } = await newCard();
    const hints = newEndpointHints();
    const first = await decide(hints, purchase(cardKey));
    expect(first.decision).to.deep.include({ approved: true, decidedBy: 'approved' });
    expect(first.sent).to.deep.equal(['authorization-claim', 'authorization-record-with-claim']);
    for (let i = 0; i < 3; i++) {
      const again = await decide(hints, purchase(cardKey));
      expect(again.decision).to.deep.include({ approved: true, decidedBy: 'approved' });
      expect(again.sent).to.deep.equal(['authorization-record-remembered']);
      expect(again.stands).to.deep.equal({ decisions: '1', transactions: '1', status: 'PENDING' });
    }
  });

  it('a card locked since: the remembered statement writes nothing, and the decision is card_locked from a fresh read', async function () {
    const { cardKey } = await newCard();
    const hints = newEndpointHints();
    expect((await decide(hints, purchase(cardKey))).decision).to.deep.include({ approved: true });
    await services.db.query("UPDATE cards SET status = 'LOCKED' WHERE card_key = $1", [cardKey]);
    const locked = await decide(hints, purchase(cardKey));
    expect(locked.decision).to.deep.include({ approved: false, declineReason: 'card_locked', decidedBy: 'card_state' });
    expect(locked.sent).to.deep.equal(['authorization-record-remembered', 'authorization-claim', 'authorization-record-with-claim']);
    expect(locked.stands).to.deep.equal({ decisions: '1', transactions: '1', status: 'DECLINED' });
    // Remembered locked now: the next one is one statement again, and still declined.
    const again = await decide(hints, purchase(cardKey));
    expect(again.decision).to.deep.include({ approved: false, declineReason: 'card_locked' });
    expect(again.sent).to.deep.equal(['authorization-record-remembered']);
    // Unlocked: the remembered lock no longer holds, the purchase is approved.
    await services.db.query("UPDATE cards SET status = 'ACTIVE' WHERE card_key = $1", [cardKey]);
    const unlocked = await decide(hints, purchase(cardKey));
    expect(unlocked.decision).to.deep.include({ approved: true });
    expect(unlocked.sent).to.deep.equal(['authorization-record-remembered', 'authorization-claim', 'authorization-record-with-claim']);
  });

  it("controls set since (the card's or the partner's default): the new controls decide", async function () {
    const { partnerId, cardKey } = await newCard();
    const hints = newEndpointHints();
    expect((await decide(hints, purchase(cardKey))).decision).to.deep.include({ approved: true });
    await services.db.query(`INSERT INTO spend_controls (partner_id, card_key, controls) VALUES ($1, $2, '{"blockedMccs": ["5411"]}')`, [partnerId, cardKey]);
    const blocked = await decide(hints, purchase(cardKey));
    expect(blocked.decision).to.deep.include({ approved: false, declineReason: 'mcc_blocked', decidedBy: 'spend_controls', rule: 'card.blockedMccs' });
    expect(blocked.stands).to.deep.equal({ decisions: '1', transactions: '1', status: 'DECLINED' });
    // The partner's default, set since the card's controls were remembered.
    const other = purchase(cardKey, '5812');
    expect((await decide(hints, other)).decision).to.deep.include({ approved: true });
    await services.db.query(`INSERT INTO spend_controls (partner_id, card_key, controls) VALUES ($1, NULL, '{"maxAmountPerTransaction": 5}')`, [partnerId]);
    const capped = await decide(hints, purchase(cardKey, '5812'));
    expect(capped.decision).to.deep.include({ approved: false, declineReason: 'amount_exceeded', rule: 'partner.maxAmountPerTransaction' });
    expect(capped.sent[0]).to.equal('authorization-record-remembered');
    expect(capped.sent).to.have.length(3);
  });

  it('a decision endpoint enrolled since: the partner is asked', async function () {
    const { partnerId, cardKey } = await newCard();
    const hints = newEndpointHints();
    expect((await decide(hints, purchase(cardKey))).decision).to.deep.include({ approved: true, decidedBy: 'approved' });
    expect(await services.authorizationEndpoints.endpoints.create(partnerId, { url: 'https://decide.remembered.example/decide' })).to.not.equal(undefined);
    let asked = 0;
    const checks: DecisionChecks = {
      partnerEndpoint: async () => ({
        ask: async () => {
          asked += 1;
          return { kind: 'answered', approved: false, declineReason: 'insufficient_funds', latencyMs: 0 };
        },
      }),
    };
    const declined = await decide(hints, purchase(cardKey), checks);
    expect(declined.decision).to.deep.include({ approved: false, declineReason: 'partner_declined', decidedBy: 'partner' });
    expect(asked).to.equal(1);
    expect(declined.sent[0]).to.equal('authorization-record-remembered');
    expect(declined.stands).to.deep.equal({ decisions: '1', transactions: '1', status: 'DECLINED' });
    // The card is remembered with its endpoint now: no remembered statement.
    const next = await decide(hints, purchase(cardKey), checks);
    expect(next.sent).to.not.include('authorization-record-remembered');
    expect(asked).to.equal(2);
  });

  it('a repeat of a decided id on a remembered card answers the recorded decision and writes nothing', async function () {
    const { cardKey } = await newCard();
    const hints = newEndpointHints();
    const request = purchase(cardKey);
    expect((await decide(hints, request)).decision).to.deep.include({ approved: true });
    await services.db.query("UPDATE cards SET status = 'LOCKED' WHERE card_key = $1", [cardKey]);
    // Remember the locked card, then repeat the first id: its approval stands.
    await decide(hints, purchase(cardKey));
    const repeat = await decide(hints, request);
    expect(repeat.decision).to.deep.include({ approved: true, decidedBy: 'approved' });
    expect(repeat.stands).to.deep.equal({ decisions: '1', transactions: '1', status: 'PENDING' });
  });
  for (const prepared of [false, true]) {
    it(`controls with lists, decimal amounts and velocity rules are remembered and checked equal: one statement (${prepared ? 'named prepared statements' : 'unnamed statements'}), and PUT {} since is seen`, async function () {
      const { partnerId, cardKey } = await newCard();
      await services.db.query(`INSERT INTO spend_controls (partner_id, card_key, controls) VALUES ($1, NULL, $2::jsonb)`, [
        partnerId,
        JSON.stringify({ maxAmountPerTransaction: 500.25, blockedCountries: ['RU'], velocity: [{ window: '24h', maxAmount: 1000.5 }] }),
      ]);
      await services.db.query(`INSERT INTO spend_controls (partner_id, card_key, controls) VALUES ($1, $2, $3::jsonb)`, [
        partnerId,
        cardKey,
        JSON.stringify({ allowedMccs: ['5411', '5812'], allowedCountries: ['DE', 'FR'], velocity: [{ window: '1h', maxCount: 50 }, { window: '7d', maxCount: 500, maxAmount: 9999.99 }] }),
      ]);
      const hints = newEndpointHints();
      const db = prepared ? preparedDb : services.db;
      expect((await decide(hints, purchase(cardKey), {}, db)).sent).to.deep.equal(['authorization-claim', 'authorization-record-with-claim']);
      for (let i = 0; i < 3; i++) {
        const again = await decide(hints, purchase(cardKey), {}, db);
        expect(again.decision).to.deep.include({ approved: true, decidedBy: 'approved' });
        expect(again.sent, 'the remembered controls compare equal to the stored ones').to.deep.equal(['authorization-record-remembered']);
      }
      const outside = await decide(hints, purchase(cardKey, '7995'), {}, db);
      expect(outside.decision).to.deep.include({ approved: false, declineReason: 'mcc_blocked', rule: 'card.allowedMccs' });
      expect(outside.sent).to.deep.equal(['authorization-record-remembered']);
      // The card's own controls cleared (PUT {} deletes the row): the allow list no longer applies.
      await services.db.query('DELETE FROM spend_controls WHERE partner_id = $1 AND card_key = $2', [partnerId, cardKey]);
      const cleared = await decide(hints, purchase(cardKey, '7995'), {}, db);
      expect(cleared.decision).to.deep.include({ approved: true });
      expect(cleared.sent).to.deep.equal(['authorization-record-remembered', 'authorization-claim', 'authorization-record-with-claim']);
    });
  }

  it("the card's individual or tenant changed since: the remembered statement writes nothing, the transaction is the new owner's", async function () {
    const { partnerId, cardKey } = await newCard();
    const hints = newEndpointHints();
    expect((await decide(hints, purchase(cardKey))).decision).to.deep.include({ approved: true });
    const otherTenant = (await services.partners.addTenant(partnerId, 'Other fleet'))._id;
    await services.db.query('UPDATE cards SET tenant_id = $2 WHERE card_key = $1', [cardKey, otherTenant]);
    const request = purchase(cardKey);
    const moved = await decide(hints, request);
    expect(moved.decision).to.deep.include({ approved: true });
    expect(moved.sent).to.deep.equal(['authorization-record-remembered', 'authorization-claim', 'authorization-record-with-claim']);
    const { rows } = await services.db.query<{ tenant_id: string }>('SELECT tenant_id FROM card_transactions WHERE id = $1', [request.transactionId]);
    expect(rows[0]!.tenant_id).to.equal(otherTenant);
  });

  it('a transaction recorded before the decision (a stand-in) on a remembered card: what stands is answered, nothing written twice', async function () {
    const { cardKey } = await newCard();
    const hints = newEndpointHints();
    const first = purchase(cardKey);
    expect((await decide(hints, first)).decision).to.deep.include({ approved: true });
    // Another id whose transaction id is the first one's: the transaction exists already.
    const request = { ...purchase(cardKey), transactionId: first.transactionId };
    const again = await decide(hints, request);
    expect(again.decision).to.deep.include({ approved: true });
    expect(again.sent[0]).to.equal('authorization-record-remembered');
    expect(again.stands).to.deep.include({ transactions: '1', status: 'PENDING' });
    const { rows } = await services.db.query<{ n: string }>("SELECT count(*) AS n FROM audit_log WHERE operation = 'card.authorization.decided' AND details->>'transactionId' = $1", [first.transactionId]);
    expect(rows[0]!.n, 'one audit entry for the one transaction').to.equal('1');
  });

  it('a repeat of a decided id on a remembered card takes no card lock: it is answered while another session holds the lock', async function () {
    const { cardKey } = await newCard();
    const hints = newEndpointHints();
    const request = purchase(cardKey);
    expect((await decide(hints, request)).decision).to.deep.include({ approved: true });
    expect((await decide(hints, purchase(cardKey))).sent).to.deep.equal(['authorization-record-remembered']);
    const holder = await services.db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended('auth:' || $1::text, 0))", [cardKey]);
      const { sent, db } = spy(services.db);
      const started = Date.now();
      // A short budget: waiting for the held lock would end in DecisionTooLate.
      const decision = await decideAuthorization({ db, log: createLogger({ level: 'silent' }), checks: {}, endpointHints: hints }, request, Date.now() + 600);
      expect(decision).to.deep.include({ approved: true, decidedBy: 'approved' });
      expect(Date.now() - started).to.be.below(500);
      expect(sent[0]).to.equal('authorization-record-remembered');
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });
  it('the budget spent once the reads are back (the injected clock past the commit-by instant): DecisionTooLate, no recording sent, nothing recorded', async function () {
    const { cardKey } = await newCard();
    let at = Date.now();
    const now = () => at;
    const answerBy = at + 1700;
    const { sent, db } = spy(services.db);
    // The clock jumps to the answer's instant as the claim statement's answer comes back: no sleep.
    const named = db.named.bind(db);
    const slowDb = Object.assign(Object.create(db) as Database, {
      named: async (name: string, text: string, params: unknown[]) => {
        const result = await named(name, text, params);
        at = answerBy;
        return result;
      },
    });
    const request = purchase(cardKey);
    const outcome = await decideAuthorization({ db: slowDb, log: createLogger({ level: 'silent' }), checks: {}, endpointHints: newEndpointHints({ now }), now }, request, answerBy).then(
      (decision) => ({ decision }),
      (err: unknown) => ({ err })
    );
    expect(outcome).to.have.property('err').that.is.instanceOf(DecisionTooLate).with.property('byDatabase', false);
    expect(sent, 'the recording is not sent past the commit-by instant').to.deep.equal(['authorization-claim']);
    const { rows } = await services.db.query<{ decisions: string; transactions: string }>(
      'SELECT (SELECT count(*) FROM authorization_decisions WHERE authorization_id = $1) AS decisions, (SELECT count(*) FROM card_transactions WHERE id = $2) AS transactions',
      [request.id, request.transactionId]
    );
    expect(rows[0]).to.deep.equal({ decisions: '0', transactions: '0' });
  });

  it("a commit that would wait past the deadline for the card's velocity ledger (taken at commit) fails instead: too late, nothing recorded", async function () {
    const { cardKey } = await newCard();
    const hints = newEndpointHints();
    expect((await decide(hints, purchase(cardKey))).decision).to.deep.include({ approved: true });
    const decisionLock = await services.db.pool.connect();
    const ledgerLock = await services.db.pool.connect();
    const request = purchase(cardKey);
    try {
      // The card's decision lock, held 200 ms (the gate waits for it), and its ledger lock, held 500 ms (the commit would wait for it).
      await decisionLock.query('BEGIN');
      await decisionLock.query("SELECT pg_advisory_xact_lock(hashtextextended('auth:' || $1::text, 0))", [cardKey]);
      await ledgerLock.query('BEGIN');
      expect((await ledgerLock.query('SELECT 1 FROM card_velocity_locks WHERE card_key = $1 FOR UPDATE', [cardKey])).rowCount).to.equal(1);
      const started = Date.now();
      const answerBy = started + 400;
      const releases = [
        new Promise((resolve) => setTimeout(resolve, 200)).then(() => decisionLock.query('ROLLBACK')),
        new Promise((resolve) => setTimeout(resolve, 500)).then(() => ledgerLock.query('ROLLBACK')),
      ];
      const outcome = await decideAuthorization({ db: services.db, log: createLogger({ level: 'silent' }), checks: {}, endpointHints: hints }, request, answerBy).then(
        (decision) => ({ decision, at: Date.now() }),
        (err: unknown) => ({ err, at: Date.now() })
      );
      await Promise.all(releases);
      expect(outcome, 'no decision past its deadline').to.have.property('err').that.is.instanceOf(DecisionTooLate);
      expect(outcome.at, 'failed before the answer was due').to.be.below(answerBy);
    } finally {
      decisionLock.release();
      ledgerLock.release();
    }
    const { rows } = await services.db.query<{ n: string }>('SELECT count(*) AS n FROM card_transactions WHERE id = $1', [request.transactionId]);
    expect(rows[0]!.n, 'nothing recorded').to.equal('0');
  });
});
