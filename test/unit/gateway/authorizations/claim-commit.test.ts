import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { CLAIM_COMMIT_COLUMN, decideAuthorization, newEndpointHints, type AuthorizationRequest } from '../../../../gateway/authorizations/decide';
import { createLogger } from '../../../../gateway/logging/logger';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';
import { runDatabaseUrl } from '../../../support/test-database';

/**
 * The claim of an authorization id, with a decision endpoint, commits without waiting for its WAL
 * flush; the decision's recording, and everything after on the same connection, waits for it
 * (docs/authorizations.md, "Exactly once"; docs/performance.md, "Run K"). Real PostgreSQL: whether a
 * commit waited for its flush shows in the WAL's flush position right after it.
 */
describe('the authorization claim commits without waiting for its WAL flush, the recording waits', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  let client: Client;

  before(async function () {
    services = await openServices();
    client = new Client({ connectionString: runDatabaseUrl() });
    await client.connect();
    await client.query('CREATE TABLE IF NOT EXISTS claim_commit_probe (n integer)');
  });
  after(async function () {
    await client?.query('DROP TABLE IF EXISTS claim_commit_probe');
    await client?.end();
    await services?.close();
  });

  /**
   * Runs `column` in an autocommit statement that writes a row (as the claim does), then says
   * whether the WAL was flushed past that write as soon as the statement returned.
   */
  const flushedAtOnce = async (column: string): Promise<boolean> => {
    const { rows } = await client.query<{ lsn: string }>(
      `WITH written AS (INSERT INTO claim_commit_probe VALUES (1) RETURNING 1)
       SELECT ${column}, (SELECT count(*) FROM written) AS n, pg_current_wal_insert_lsn()::text AS lsn`
    );
    const { rows: flushed } = await client.query<{ done: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS done', [rows[0]!.lsn]);
    return flushed[0]!.done;
  };

  it('the claim column relaxes its own statement\'s commit only: without it every commit is flushed before it returns, and the connection stays synchronous', async function () {
    const relaxed: boolean[] = [];
    const plain: boolean[] = [];
    for (let i = 0; i < 20; i++) {
      relaxed.push(await flushedAtOnce(CLAIM_COMMIT_COLUMN));
      plain.push(await flushedAtOnce('1 AS plain'));
    }
    // Another session's synchronous commit may flush past a relaxed one at once; not all 20 times.
    expect(relaxed.filter((done) => !done).length, 'relaxed commits not yet flushed when they returned').to.be.above(0);
    expect(plain.every((done) => done), 'synchronous commits flushed when they returned').to.equal(true);
    expect((await client.query('SHOW synchronous_commit')).rows[0]).to.deep.equal({ synchronous_commit: 'on' });
  });

  it('a decision with a partner endpoint sends its claim with the column and its recording without; afterwards every connection of the pool commits synchronously', async function () {
    const partner = await services.partners.create({ name: 'claim-commit', issuer: 'https://claim-commit.example', publicKey: makeKeyPair().publicPem });
    const tenantId = (await services.partners.addTenant(partner._id, 'Fleet'))._id;
    const cardKey = `CKCC${crypto.randomBytes(7).toString('hex').toUpperCase()}`;
    await services.db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date)
       VALUES ($1, $2, 'b2b', $3, $3, '5355 70** **** 0001', 'virtual', 'ACTIVE', '00', 'EUR', 'P-STD', '09/2030')`,
      [cardKey, partner._id, tenantId]
    );
    expect(await services.authorizationEndpoints.endpoints.create(partner._id, { url: 'https://decide.claim-commit.example/decide' })).to.not.equal(undefined);

    // What the decision sends, seen on its way to PostgreSQL (the statements still run there).
    const sent: { kind: 'named' | 'statement'; name?: string; text: string }[] = [];
    const db = services.db;
    const named = db.named.bind(db);
    const statement = db.statement.bind(db);
    const spied = Object.assign(Object.create(db) as typeof db, {
      named: (name: string, text: string, params: unknown[]) => (sent.push({ kind: 'named', name, text }), named(name, text, params)),
      statement: (build: Parameters<typeof db.statement>[0]) =>
        statement(() => {
          const built = build();
          sent.push({ kind: 'statement', ...(built.name === undefined ? {} : { name: built.name }), text: built.text });
          return built;
        }),
    });
    /** Whether the claim row was visible to another session while the partner was asked. */
    let claimSeen: unknown;
    const at = new Date().toISOString();
    const id = `auth_${crypto.randomBytes(8).toString('hex')}`;
    const request: AuthorizationRequest = {
      id,
      transactionId: crypto.randomBytes(12).toString('hex'),
      cardId: cardKey,
      amount: 12,
      currency: 'EUR',
      type: 'PURCHASE',
      merchant: { name: 'Shop', mcc: '5411', city: 'Berlin', country: 'DE' },
      at,
    };
    const decision = await decideAuthorization(
      {
        db: spied,
        log: createLogger({ level: 'silent' }),
        endpointHints: newEndpointHints(),
        checks: {
          partnerEndpoint: async () => ({
            ask: async () => {
              claimSeen = (await client.query('SELECT state FROM authorization_decisions WHERE authorization_id = $1', [id])).rows[0];
              return { kind: 'answered', approved: true, latencyMs: 0 };
            },
          }),
        },
      },
      request,
      Date.now() + 1700
    );
    expect(decision).to.deep.include({ approved: true, decidedBy: 'partner' });
    expect(claimSeen, 'the claim, committed before the call, is seen by another session').to.deep.equal({ state: 'deciding' });
    const claims = sent.filter((s) => s.kind === 'named' && s.name!.startsWith('authorization-claim'));
    const recordings = sent.filter((s) => s.kind === 'statement' && s.name === 'authorization-record');
    expect(claims, JSON.stringify(sent.map((s) => s.name))).to.have.length(1);
    expect(claims[0]!.text).to.contain(CLAIM_COMMIT_COLUMN);
    expect(recordings).to.have.length(1);
    expect(recordings[0]!.text).to.not.contain('synchronous_commit');
    expect((await client.query("SELECT state FROM authorization_decisions WHERE authorization_id = $1", [id])).rows[0]).to.deep.equal({ state: 'decided' });

    // Every pooled connection (held at once, so each is a different one) commits synchronously.
    const held = await Promise.all(Array.from({ length: 4 }, () => db.pool.connect()));
    try {
      for (const c of held) expect((await c.query('SHOW synchronous_commit')).rows[0]).to.deep.equal({ synchronous_commit: 'on' });
    } finally {
      for (const c of held) c.release();
    }
  });
});
