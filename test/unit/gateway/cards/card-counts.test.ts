import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { cardCounterQuery, countCards, type CardCountFilter } from '../../../../gateway/cards/card-counts';
import { CARD_STATUSES, type CardStatus } from '../../../../gateway/cards/card-status';
import { seedCards } from '../../../../scripts/seed-cards';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { createOwnDatabase, type RunDatabase } from '../../../support/test-database';

describe('unit: cards/card-counts cardCounterQuery', function () {
  const P = 'aaaaaaaaaaaaaaaaaaaaaaaa';
  const table: { filter: CardCountFilter; where: string; values: unknown[] }[] = [
    { filter: { partnerId: P }, where: 'partner_id = $1', values: [P] },
    { filter: { partnerId: P, status: 'ACTIVE' }, where: 'partner_id = $1 AND status = $2', values: [P, 'ACTIVE'] },
    { filter: { partnerId: P, type: 'physical' }, where: 'partner_id = $1 AND type = $2', values: [P, 'physical'] },
    { filter: { partnerId: P, status: 'FRAUD', type: 'virtual' }, where: 'partner_id = $1 AND status = $2 AND type = $3', values: [P, 'FRAUD', 'virtual'] },
  ];
  for (const { filter, where, values } of table) {
    it(`sums the slots of ${JSON.stringify({ ...filter, partnerId: undefined })}`, function () {
      expect(cardCounterQuery(filter)).to.deep.equal({ text: `SELECT coalesce(sum(cards), 0)::bigint AS n FROM card_counts WHERE ${where}`, values });
    });
  }
});

describe('unit: cards/card-counts on PostgreSQL: card_counts exact in the card write’s transaction (migration 026)', function () {
  this.timeout(120_000);
  // Several connections at once need PostgreSQL: PGlite is one session (those tests skip there).
  const embedded = process.env.TEST_DB === 'embedded';
  let own: RunDatabase | undefined;
  let services: InProcessServices;
  const A = crypto.randomBytes(12).toString('hex');
  const B = crypto.randomBytes(12).toString('hex');
  const TYPES = [undefined, 'virtual', 'physical'] as const;

  /** Every status and type, alone, together and neither: the counter against a count(*) of the cards. */
  async function expectExact(partner: string): Promise<void> {
    const reference = (await services.db.query<{ status: string; type: string; n: number }>('SELECT status, type, count(*)::int AS n FROM cards WHERE partner_id = $1 GROUP BY 1, 2', [partner])).rows;
    for (const status of [undefined, ...CARD_STATUSES]) {
      for (const type of TYPES) {
        const exact = reference.filter((r) => (status === undefined || r.status === status) && (type === undefined || r.type === type)).reduce((sum, r) => sum + r.n, 0);
        expect(await countCards(services.db, { partnerId: partner, status, type }), JSON.stringify({ status, type })).to.equal(exact);
      }
    }
  }
  async function someKeys(partner: string, where: string, n: number): Promise<string[]> {
    const rows = await services.db.query<{ card_key: string }>(`SELECT card_key FROM cards WHERE partner_id = $1 AND ${where} ORDER BY card_key LIMIT ${n}`, [partner]);
    expect(rows.rows).to.have.length(n);
    return rows.rows.map((r) => r.card_key);
  }
  /** New cards copied from `templates` (their owners exist), with a fresh key and the status and type given. */
  const INSERT_COPIES =
    `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date, embossed_name, nickname, created_at)
     SELECT card_key || $2, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, $3, $4, status_code, currency, product_code, exp_date, embossed_name, nickname, now()
     FROM cards WHERE card_key = ANY($1)`;
  const pick = <T>(values: readonly T[]): T => values[crypto.randomInt(values.length)]!;

  before(async function () {
    own = embedded ? undefined : await createOwnDatabase();
    services = await openServices(undefined, own ? { databaseUrl: own.url } : {});
    // One INSERT … SELECT of every card (the seed's statements hold up to 100,000 rows).
    await seedCards(services.db, { partnerId: A, count: 3000, batchSize: 3000 });
    await seedCards(services.db, { partnerId: B, count: 500 });
  });
  after(async function () {
    await services?.close();
    await own?.drop();
  });

  it('counts each status and type, alone and together, as a count(*) of the cards, through statements of thousands of rows', async function () {
    await expectExact(A);
    await expectExact(B);
    const bulk = embedded ? 2000 : 20_000;
    await seedCards(services.db, { partnerId: A, count: bulk, batchSize: bulk });
    await expectExact(A);
    await expectExact(B);
  });

  it('stays exact after writes rolled back: a transaction, a savepoint, a statement that fails', async function () {
    const db = services.db;
    const client = await db.pool.connect();
    let failed = true;
    try {
      const keys = await someKeys(A, `status = 'ACTIVE'`, 20);
      await client.query('BEGIN');
      await client.query(INSERT_COPIES, [keys.slice(0, 10), 'R1', 'physical', 'LOST']);
      await client.query(`UPDATE cards SET status = 'STOLEN' WHERE card_key = ANY($1)`, [keys.slice(10)]);
      await client.query('DELETE FROM cards WHERE card_key = ANY($1)', [keys.slice(0, 3).map((k) => `${k}R1`)]);
      await client.query('ROLLBACK');
      await expectExact(A);

      await client.query('BEGIN');
      await client.query(INSERT_COPIES, [keys.slice(0, 5), 'R2', 'virtual', 'FRAUD']);
      await client.query('SAVEPOINT undone');
      await client.query(INSERT_COPIES, [keys.slice(5, 10), 'R3', 'virtual', 'FRAUD']);
      await client.query(`UPDATE cards SET status = 'CLOSED' WHERE card_key = ANY($1)`, [keys.slice(10, 15)]);
      await client.query('ROLLBACK TO SAVEPOINT undone');
      await client.query(`UPDATE cards SET status = 'LOCKED' WHERE card_key = ANY($1)`, [keys.slice(15)]);
      await client.query('COMMIT');
      await expectExact(A);

      // An insert whose second row breaks the primary key: the statement, its trigger's counts with it, undone.
      await client.query(INSERT_COPIES, [[keys[1]], 'R4', 'physical', 'ACTIVE']);
      const err = await client.query(INSERT_COPIES, [[keys[0], keys[1]], 'R4', 'physical', 'ACTIVE']).then(
        () => undefined,
        (e: unknown) => e as { code?: string }
      );
      expect(err?.code).to.equal('23505');
      await expectExact(A);
      failed = false;
    } finally {
      client.release(failed);
    }
  });

  it('never makes a card write wait for another transaction’s count: two open transactions of one partner, status and type add to two slots', async function () {
    if (embedded) this.skip();
    const db = services.db;
    const [first, second] = await someKeys(A, `status = 'ACTIVE' AND type = 'virtual'`, 2);
    const one = await db.pool.connect();
    const two = await db.pool.connect();
    let failed = true;
    try {
      const pid = (await two.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await one.query('BEGIN');
      await one.query(`UPDATE cards SET status = 'TEMP_LOCKED' WHERE card_key = $1`, [first]);
      await two.query('BEGIN');
      let settled = false;
      const write = two.query(`UPDATE cards SET status = 'TEMP_LOCKED' WHERE card_key = $1`, [second]).finally(() => (settled = true));
      // The first transaction stays open: the second write must end without waiting for it.
      const deadline = Date.now() + 10_000;
      while (!settled) {
        const waiting = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid]);
        expect(waiting.rows[0].n, 'the second card write waits for the first transaction').to.equal(0);
        if (Date.now() > deadline) throw new Error('the second card write did not end');
        await new Promise((resolve) => setImmediate(resolve));
      }
      await write;
      await two.query('COMMIT');
      await one.query('COMMIT');
      failed = false;
    } finally {
      one.release(failed);
      two.release(failed);
    }
    await expectExact(A);
  });

  it('stays exact under concurrent inserts, status changes, deletes and rollbacks from several connections', async function () {
    if (embedded) this.skip();
    const templatesA = await someKeys(A, 'true', 200);
    const templatesB = await someKeys(B, 'true', 50);
    const statuses: CardStatus[] = ['ACTIVE', 'LOCKED', 'TEMP_LOCKED', 'FRAUD'];
    const types = ['virtual', 'physical'] as const;
    const failures: Error[] = [];
    const worker = async (n: number, client: Client) => {
      const mine: string[] = [];
      for (let i = 0; i < 40; i++) {
        const templates = i % 4 === 3 ? templatesB : templatesA;
        const suffix = `C${n}x${i}`;
        const rollBack = i % 7 === 6;
        await client.query('BEGIN');
        try {
          switch (i % 5) {
            case 0:
            case 1: {
              const copies = [pick(templates), pick(templates), pick(templates)].filter((k, j, all) => all.indexOf(k) === j);
              await client.query(INSERT_COPIES, [copies, suffix, pick(types), pick(statuses)]);
              if (!rollBack) mine.push(...copies.map((k) => `${k}${suffix}`));
              break;
            }
            case 2:
              await client.query(`UPDATE cards SET status = $2 WHERE card_key = $1`, [pick(templates), pick(statuses)]);
              break;
            case 3:
              // Two statements of one transaction: a new card, then a status change.
              const copy = pick(templates);
              await client.query(INSERT_COPIES, [[copy], suffix, pick(types), pick(statuses)]);
              if (!rollBack) mine.push(`${copy}${suffix}`);
              await client.query(`UPDATE cards SET status = $2, type = $3 WHERE card_key = $1`, [pick(templates), pick(statuses), pick(types)]);
              break;
            default:
              if (mine.length > 0) await client.query('DELETE FROM cards WHERE card_key = $1', [mine.splice(crypto.randomInt(mine.length), 1)[0]]);
          }
          await client.query(rollBack ? 'ROLLBACK' : 'COMMIT');
        } catch (err) {
          failures.push(err as Error);
          await client.query('ROLLBACK');
        }
      }
    };
    // Six connections of their own (the services' pool holds four).
    const clients = Array.from({ length: 6 }, () => new Client({ connectionString: own!.url }));
    try {
      await Promise.all(clients.map((client) => client.connect()));
      await Promise.all(clients.map((client, n) => worker(n, client)));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
    expect(failures.map((e) => e.message), 'no card write failed (no deadlock, no lock timeout)').to.deep.equal([]);
    await expectExact(A);
    await expectExact(B);
  });

  it('counts every card again after writes its triggers did not see (card_counts_recount)', async function () {
    const db = services.db;
    await db.query(`UPDATE card_counts SET cards = cards + 7 WHERE partner_id = $1`, [A]);
    await db.query(`DELETE FROM card_counts WHERE partner_id = $1 AND status = 'ACTIVE'`, [B]);
    const counted = Number((await db.query<{ n: string }>('SELECT card_counts_recount() AS n')).rows[0].n);
    expect(counted).to.equal(Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM cards')).rows[0].n));
    await expectExact(A);
    await expectExact(B);
  });
});
