import { expect } from 'chai';
import { Database } from '../../../../gateway/db/database';
import { migrate } from '../../../../gateway/db/migrate';
import { HISTORY_COUNT_CAP, pageOfIndividualHistory } from '../../../../gateway/db/paging';
import { createLogger } from '../../../../gateway/logging/logger';
import { pagination } from '../../../../gateway/http/pagination';
import { runDatabaseUrl } from '../../../support/test-database';

/**
 * An individual's history pages (audit log, card status history): `total` exact up to
 * HISTORY_COUNT_CAP and a lower bound past it, `hasMore` exact at any depth (docs/pagination.md),
 * on real PostgreSQL.
 */
describe('unit: db/paging, an individual\'s history with a capped total', function () {
  let db: Database;
  const partnerId = 'ab'.repeat(12);
  const few = 'c1'.repeat(12);
  const many = 'c2'.repeat(12);

  before(async function () {
    const log = createLogger({ level: 'silent' });
    db = new Database(runDatabaseUrl(), { max: 2, log });
    await migrate(db, log);
    await db.query(`INSERT INTO partners (id, name, issuer) VALUES ($1, 'paging', 'https://paging.example') ON CONFLICT DO NOTHING`, [partnerId]);
    const add = (individualId: string, n: number) =>
      db.query(
        `INSERT INTO audit_log (partner_id, individual_id, operation, target_type, target_id, outcome, created_at)
         SELECT $1, $2::char(24), 'test.paging', 'individual', $2::text, 'success', now() - make_interval(secs => g) FROM generate_series(1, $3) AS g`,
        [partnerId, individualId, n]
      );
    await add(few, 5);
    await add(many, HISTORY_COUNT_CAP + 5);
  });
  after(async function () {
    await db?.query('DELETE FROM audit_log WHERE individual_id = ANY($1)', [[few, many]]);
    await db?.close();
  });

  const page = (individualId: string, p: number, limit: number) => pageOfIndividualHistory<{ created_at: Date }>(db, 'audit_log', 'created_at', individualId, { page: p, limit });

  it('counts exactly below the cap, with hasMore where a later page holds rows', async function () {
    const first = await page(few, 1, 2);
    expect(first).to.deep.include({ total: 5, capped: false, hasMore: true });
    expect(first.rows).to.have.length(2);
    expect(await page(few, 3, 2)).to.deep.include({ total: 5, capped: false, hasMore: false });
    expect((await page(few, 3, 2)).rows).to.have.length(1);
    expect(pagination({ page: 3, limit: 2 }, 5), 'an exact total says hasMore itself').to.deep.equal({ page: 3, limit: 2, total: 5, totalPages: 3, hasMore: false });
  });

  it('past the cap: total is the cap (a lower bound), hasMore stays exact to the last page', async function () {
    const first = await page(many, 1, 100);
    expect(first).to.deep.include({ total: HISTORY_COUNT_CAP, capped: true, hasMore: true });
    // Page 10 of 100 ends at the cap: the 5 rows past it are on page 11, which hasMore says.
    expect(await page(many, 10, 100)).to.deep.include({ total: HISTORY_COUNT_CAP, capped: true, hasMore: true });
    const last = await page(many, 11, 100);
    expect(last).to.deep.include({ capped: true, hasMore: false });
    expect(last.rows).to.have.length(5);
    // Newest first across the pages.
    const times = [...first.rows, ...last.rows].map((r) => r.created_at.getTime());
    expect(times).to.deep.equal([...times].sort((a, b) => b - a));
  });
});
