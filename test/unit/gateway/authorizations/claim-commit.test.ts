import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { newEndpointHints } from '../../../../gateway/authorizations/card-hints';
import { CLAIM_COMMIT_COLUMN } from '../../../../gateway/authorizations/claim';
import { decideAuthorization, type AuthorizationRequest } from '../../../../gateway/authorizations/decide';
import { Database } from '../../../../gateway/db/database';
import { createLogger } from '../../../../gateway/logging/logger';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';
import { runDatabaseUrl } from '../../../support/test-database';

/**
 * The claim of an authorization id, with a decision endpoint, commits without waiting for its WAL
 * flush; the decision's recording, and everything after on the same connection, waits for it
 * (docs/authorizations.md, "Exactly once"; docs/performance.md, "Authorization decisions"). Real PostgreSQL: whether a
 * commit waited for its flush shows in the WAL's flush position right after it. The server's own
 * `synchronous_commit` may be anything: the probe connection sets `on` for itself, and the
 * connections the decision used are compared with their own default (pg_settings' `reset_val`).
 */
describe('the authorization claim commits without waiting for its WAL flush, the recording waits', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  let client: Client;
  /** The decision's database with named prepared statements, as the gateway runs on PostgreSQL by default. */
  let preparedDb: Database;

  before(async function () {
    services = await openServices();
    preparedDb = new Database(runDatabaseUrl(), { max: 4, log: createLogger({ level: 'silent' }), namedStatements: true });
    client = new Client({ connectionString: runDatabaseUrl() });
    await client.connect();
    // Whatever the server's default: this connection's commits are synchronous unless relaxed.
    await client.query('SET synchronous_commit = on');
    await client.query('CREATE TABLE IF NOT EXISTS claim_commit_probe (n integer)');
  });
  after(async function () {
    await client?.query('DROP TABLE IF EXISTS claim_commit_probe');
    await client?.end();
    await preparedDb?.close();
    await services?.close();
  });

  /**
   * Runs `column` in an autocommit statement that writes a row (as the claim does), then says
   * whether the WAL was flushed past that write as soon as the statement returned. `name`: sent as
   * a named prepared statement (parsed once, then executed), as the gateway sends the claim.
   */
  const flushedAtOnce = async (column: string, name?: string): Promise<boolean> => {
    const text = `WITH written AS (INSERT INTO claim_commit_probe VALUES (1) RETURNING 1)
       SELECT ${column}, (SELECT count(*) FROM written) AS n, pg_current_wal_insert_lsn()::text AS lsn`;
    const { rows } = await client.query<{ lsn: string }>(name === undefined ? text : { name, text });
    const { rows: flushed } = await client.query<{ done: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS done', [rows[0]!.lsn]);
    return flushed[0]!.done;
  };

  for (const prepared of [false, true]) {
    it(`the claim column relaxes its own statement's commit only (${prepared ? 'a named prepared statement, executed again and again' : 'unnamed statements'}): without it every commit is flushed before it returns, and the connection stays synchronous`, async function () {
      const relaxed: boolean[] = [];
      const plain: boolean[] = [];
      for (let i = 0; i < 20; i++) {
        relaxed.push(await flushedAtOnce(CLAIM_COMMIT_COLUMN, prepared ? 'probe-relaxed' : undefined));
        plain.push(await flushedAtOnce('1 AS plain', prepared ? 'probe-plain' : undefined));
      }
      // Another session's synchronous commit may flush past a relaxed one at once; not all 20 times.
      expect(relaxed.filter((done) => !done).length, 'relaxed commits not yet flushed when they returned').to.be.above(0);
      expect(plain.every((done) => done), 'synchronous commits flushed when they returned').to.equal(true);
      expect((await client.query('SHOW synchronous_commit')).rows[0], 'the session setting is untouched').to.deep.equal({ synchronous_commit: 'on' });
    });
  }

  for (const prepared of [false, true]) {
  it(`a decision with a partner endpoint sends its claim with the column and its recording without (${prepared ? 'named prepared statements, the default on PostgreSQL' : 'unnamed statements, DATABASE_PREPARED_STATEMENTS=false'}); afterwards every connection of the pool commits as its default says`, async function () {
    const partner = await services.partners.create({ name: `claim-commit-${prepared ? 'named' : 'unnamed'}`, issuer: 'https://claim-commit.example', publicKey: makeKeyPair().publicPem });
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
    const db = prepared ? preparedDb : services.db;
    expect(db.namedStatements).to.equal(prepared);
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

    // Every pooled connection (held at once, so each is a different one) commits as its default
    // (the server's, the role's or the database's: reset_val) says: the claim left no trace on it.
    const held = await Promise.all(Array.from({ length: 4 }, () => db.pool.connect()));
    try {
      for (const c of held) {
        const { rows } = await c.query<{ now: string; baseline: string }>("SELECT current_setting('synchronous_commit') AS now, reset_val AS baseline FROM pg_settings WHERE name = 'synchronous_commit'");
        expect(rows[0]!.now, 'the connection\'s synchronous_commit is its default again').to.equal(rows[0]!.baseline);
      }
    } finally {
      for (const c of held) c.release();
    }
  });
  }
});
