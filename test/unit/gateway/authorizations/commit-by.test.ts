import { expect } from 'chai';
import { CLOCK_SKEW_BOUND_MS, COMMIT_RESERVE_MS, commitByOf } from '../../../../gateway/authorizations/deadline';
import { Database } from '../../../../gateway/db/database';
import { beyondBound, measureClockOffset } from '../../../../gateway/db/clock-offset';
import { createLogger } from '../../../../gateway/logging/logger';
import { migrate } from '../../../../gateway/db/migrate';
import { runDatabaseUrl } from '../../../support/test-database';

/**
 * The commit-by fence of the authorization decisions (migration 024, docs/authorizations.md
 * "Deadline"): the database refuses a recording past the instant it carries, read on its own clock
 * whenever the statement runs, and the gateway measures how far that clock is from its own.
 */
describe('unit: authorizations/commit-by fence (migration 024) and the database clock offset', function () {
  let db: Database;
  before(async () => {
    const log = createLogger({ level: 'silent' });
    db = new Database(runDatabaseUrl(), { max: 2, log });
    // The run's database is migrated by the shared gateway as it boots: not awaited by unit tests.
    await migrate(db, log);
  });
  after(async () => {
    await db?.close();
  });
  const instant = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();
  const code = async (statement: Promise<unknown>) => statement.then(() => 'none', (err: { code?: string }) => err.code);

  it('the instant is the answer-by less the commit reserve and the clock-skew bound', () => {
    expect(commitByOf(10_000)).to.equal(10_000 - COMMIT_RESERVE_MS - CLOCK_SKEW_BOUND_MS);
    expect(COMMIT_RESERVE_MS + CLOCK_SKEW_BOUND_MS, 'the fence is well before the answer').to.equal(100);
  });

  it('authorization_recorded_by: true before the instant (and lock_timeout set to what is left), PGW01 past it or with the claim lost; a statement that inserted nothing is let through', async () => {
    const { rows } = await db.transaction((tx) =>
      tx.query<{ ok: boolean; lock_timeout: string }>("SELECT authorization_recorded_by(1::bigint, 1::bigint, $1::timestamptz) AS ok, current_setting('lock_timeout') AS lock_timeout", [instant(5_000)])
    );
    expect(rows[0].ok).to.equal(true);
    const leftMs = Number(rows[0].lock_timeout.replace(/ms$/, ''));
    expect(leftMs, rows[0].lock_timeout).to.be.within(3_000, 5_000);
    expect(await code(db.query('SELECT authorization_recorded_by(1::bigint, 1::bigint, $1::timestamptz)', [instant(-1)])), 'past the instant').to.equal('PGW01');
    expect(await code(db.query('SELECT authorization_recorded_by(1::bigint, 0::bigint, $1::timestamptz)', [instant(5_000)])), 'the claim another request\'s').to.equal('PGW01');
    expect(await code(db.query('SELECT authorization_recorded_by(0::bigint, 0::bigint, $1::timestamptz)', [instant(-1)])), 'nothing inserted: nothing to refuse').to.equal('none');
  });

  it('authorization_before and authorization_ms_left read the database\'s clock when the statement runs, not when it was sent', async () => {
    expect(await code(db.query('SELECT authorization_before($1::timestamptz)', [instant(5_000)]))).to.equal('none');
    expect(await code(db.query('SELECT authorization_before($1::timestamptz)', [instant(-1)]))).to.equal('PGW01');
    // A statement that starts in time and reaches the check late (here: it sleeps first) is refused.
    expect(await code(db.query('SELECT pg_sleep(0.3), authorization_before($1::timestamptz)', [instant(150)])), 'the check runs after the sleep').to.equal('PGW01');
    const left = (await db.query<{ ms: number }>('SELECT authorization_ms_left($1::timestamptz) AS ms', [instant(2_000)])).rows[0].ms;
    expect(left).to.be.within(1_500, 2_000);
    expect((await db.query<{ ms: number }>('SELECT authorization_ms_left($1::timestamptz) AS ms', [instant(-5_000)])).rows[0].ms, 'at least 1 ms').to.equal(1);
  });

  it('measures the database clock\'s offset over one round trip (the same machine: within the bound)', async () => {
    const offset = await measureClockOffset(db);
    expect(Math.abs(offset.offsetMs), JSON.stringify(offset)).to.be.below(CLOCK_SKEW_BOUND_MS);
    expect(offset.uncertaintyMs).to.be.at.least(0);
    expect(beyondBound(offset, CLOCK_SKEW_BOUND_MS)).to.equal(false);
  });

  it('reads an offset as the answer at the round trip\'s midpoint, and calls it past the bound only when the uncertainty cannot explain it', async () => {
    const times = [1_000, 1_020];
    const fake = { query: async () => ({ rows: [{ at: '1080' }] }) } as unknown as Database;
    const offset = await measureClockOffset(fake, () => times.shift()!);
    expect(offset).to.deep.equal({ offsetMs: 70, uncertaintyMs: 10 });
    for (const [measured, bound, beyond] of [
      [{ offsetMs: 70, uncertaintyMs: 10 }, 50, true],
      [{ offsetMs: -70, uncertaintyMs: 10 }, 50, true],
      [{ offsetMs: 70, uncertaintyMs: 25 }, 50, false],
      [{ offsetMs: 50, uncertaintyMs: 0 }, 50, false],
      [{ offsetMs: -51, uncertaintyMs: 0 }, 50, true],
    ] as const) {
      expect(beyondBound(measured, bound), JSON.stringify(measured)).to.equal(beyond);
    }
  });
});
