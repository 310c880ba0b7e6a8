import { expect } from 'chai';
import type { QueryResult, QueryResultRow } from 'pg';
import { listAuditForIndividual } from '../../../gateway/audit/audit-log';
import { listActiveCardsOfIndividual, listStatusHistoryOfIndividual } from '../../../gateway/cards/card-store';
import { searchCards } from '../../../gateway/cards/card-search';
import { Database, type Queryable } from '../../../gateway/db/database';
import { migrate } from '../../../gateway/db/migrate';
import { IndividualStore } from '../../../gateway/individuals/individual-store';
import { createLogger } from '../../../gateway/logging/logger';
import { createOwnDatabase, runDatabaseUrl, type RunDatabase } from '../../support/test-database';

/** Rows of each kind of the small partner; the large one holds {@link GROWTH} times as many. */
const SMALL = 1_000;
const GROWTH = 5;
/** How much more a statement of the large partner may read than the same statement of the small one. */
const MAX_RATIO = 1.5;

/** One statement a route ran, as sent. */
interface Sent {
  text: string;
  params: unknown[];
}

/** A Queryable that runs each statement and keeps it, so the test can explain what a route sent. */
class Recorder implements Queryable {
  readonly sent: Sent[] = [];
  constructor(private readonly db: Queryable) {}
  query<R extends QueryResultRow = QueryResultRow>(text: string, params: unknown[] = []): Promise<QueryResult<R>> {
    this.sent.push({ text, params });
    return this.db.query<R>(text, params);
  }
}

/** What a plan's scans read (`Actual Rows` × `Actual Loops` of every node that reads a relation) and its buffers. */
function readOf(plan: Record<string, any>): { rows: number; buffers: number } {
  let rows = 0;
  const walk = (node: Record<string, any>) => {
    if (typeof node['Relation Name'] === 'string' || typeof node['Index Name'] === 'string') rows += (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return { rows, buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0) };
}

/**
 * Issue 33's guard: no list route's SQL reads rows in proportion to the partner's data. Two partners
 * on real PostgreSQL, a small one with 1,000 individuals, cards (of one individual), audit entries
 * and status-history entries (of that individual), and a large one with five times as many; each
 * route's statements, as its store sends them, are run under `EXPLAIN (ANALYZE, BUFFERS)` for both,
 * and the rows the large partner's scans read may be at most 1.5 times the small one's. A `count(*)`
 * over the partner's rows, a list without a bound or an index that does not serve the order reads
 * five times as many and fails. (A card search, `GET /cards?search=`, keeps a count capped at
 * 10,000 matches by design: docs/card-search.md.)
 *
 * On PostgreSQL it seeds a database of its own and drops it after: deleting its 12,000 users and
 * cards from the run's database meant a foreign-key check per row against tables the rest of the
 * run fills, longer than a statement may take on a loaded machine.
 */
describe('unit: list routes read the same at 1,000 and 5,000 rows of a partner (EXPLAIN ANALYZE)', function () {
  this.timeout(60_000);
  let db: Database;
  let own: RunDatabase | undefined;
  const partners = { small: 'f1'.repeat(12), large: 'f2'.repeat(12) };
  const individualOf = (p: string) => `${p.slice(0, 20)}0001`;

  before(async function () {
    const log = createLogger({ level: 'silent' });
    own = process.env.TEST_DB === 'embedded' ? undefined : await createOwnDatabase();
    db = new Database(own?.url ?? runDatabaseUrl(), { max: 2, log });
    await migrate(db, log);
    for (const [size, partnerId] of [[SMALL, partners.small], [SMALL * GROWTH, partners.large]] as const) {
      const individualId = individualOf(partnerId);
      await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO partners (id, name, issuer) VALUES ($1, 'flat cost', 'https://flat.example')`, [partnerId]);
        // Individuals, complete (their counter kept by migration 025's triggers); the first is the measured one.
        await tx.query(
          `INSERT INTO users (id, partner_id, email, first_name, last_name)
           SELECT substr($1 || lpad(to_hex(g), 8, '0'), 1, 24), $2, 'flat@example.com', 'Flat', 'Cost' FROM generate_series(1, $3) AS g`,
          [partnerId.slice(0, 16), partnerId, size]
        );
        await tx.query(
          `INSERT INTO individual_onboardings (id, partner_id, user_id, client_id, personal_info, address, application_status, dashboard_status, provisioning, created_at)
           SELECT substr($1 || lpad(to_hex(g), 4, '0'), 1, 24), $2, substr($3 || lpad(to_hex(g), 8, '0'), 1, 24), 'client-' || g,
                  '{"firstName":"Flat","lastName":"Cost"}'::jsonb, '{}'::jsonb, 'APPROVED', 'ACTIVE', 'complete', now() - make_interval(secs => g)
             FROM generate_series(1, $4) AS g`,
          [partnerId.slice(0, 20), partnerId, partnerId.slice(0, 16), size]
        );
        // The measured individual's cards, half of them ACTIVE, and its history.
        await tx.query(
          `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, card_mask, type, status, status_code, currency, product_code,
                              holder_client_code, exp_date, created_at, updated_at)
           SELECT 'CK' || upper(substr(md5($1 || g), 1, 16)), $1, 'individual', $2, $2, '5355 70** **** ' || lpad((g % 10000)::text, 4, '0'), 'virtual',
                  CASE WHEN g % 2 = 0 THEN 'ACTIVE' ELSE 'LOCKED' END, CASE WHEN g % 2 = 0 THEN '00' ELSE 'L1' END, 'EUR', 'P-STD', 'client-1', '12/2030',
                  now() - make_interval(secs => g), now()
             FROM generate_series(1, $3) AS g`,
          [partnerId, individualId, size]
        );
        await tx.query(
          `INSERT INTO audit_log (partner_id, individual_id, operation, target_type, target_id, outcome, created_at)
           SELECT $1, $2::char(24), 'card.nickname.update', 'individual', $2::text, 'success', now() - make_interval(secs => g) FROM generate_series(1, $3) AS g`,
          [partnerId, individualId, size]
        );
        await tx.query(
          `INSERT INTO card_status_history (card_key, partner_id, individual_id, old_status, new_status, old_status_code, new_status_code, operation, created_at)
           SELECT 'CK' || upper(substr(md5($1 || g), 1, 16)), $1, $2, 'ACTIVE', 'LOCKED', '00', 'L1', 'card.lock', now() - make_interval(secs => g) FROM generate_series(1, $3) AS g`,
          [partnerId, individualId, size]
        );
      });
    }
    await db.query('ANALYZE individual_onboardings, partner_individual_counts, cards, card_counts, audit_log, card_status_history');
  });
  after(async function () {
    if (own) {
      await db?.close();
      await own.drop();
      return;
    }
    if (!db) return;
    // The embedded run's one database is shared: this test's partners go.
    await db.transaction(async (tx) => {
      for (const partnerId of Object.values(partners)) {
        for (const table of ['card_status_history', 'audit_log', 'card_search_links', 'cards', 'card_counts', 'individual_onboardings', 'users', 'partner_individual_counts']) {
          await tx.query(`DELETE FROM ${table} WHERE partner_id = $1`, [partnerId]);
        }
        await tx.query('DELETE FROM card_search_terms WHERE partner_id = $1', [partnerId]);
        await tx.query('DELETE FROM partners WHERE id = $1', [partnerId]);
      }
    });
    await db.close();
  });

  /** The statements a route sends for a partner, each with what its plan read. */
  const explained = async (route: (q: Queryable, partnerId: string, individualId: string) => Promise<unknown>, partnerId: string) => {
    const recorder = new Recorder(db);
    await route(recorder, partnerId, individualOf(partnerId));
    const plans: { text: string; rows: number; buffers: number }[] = [];
    for (const { text, params } of recorder.sent) {
      const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: Record<string, any> }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params);
      plans.push({ text: text.replace(/\s+/g, ' ').slice(0, 120), ...readOf(rows[0]['QUERY PLAN'][0].Plan) });
    }
    return plans;
  };

  const routes: [string, (q: Queryable, partnerId: string, individualId: string) => Promise<unknown>][] = [
    ['GET /individual/accounts (the count and the first page)', (q, p) => new IndividualStore(q as Database).list(p, { page: 1, limit: 20 })],
    ['GET /me (the newest 100)', (q, p) => new IndividualStore(q as Database).page(p, { page: 1, limit: 100 })],
    ['GET /individual/accounts/{id}/cards (its active cards, the default page)', (q, _p, i) => listActiveCardsOfIndividual(q, i, { page: 1, limit: 100 })],
    ['GET /individual/accounts/{id}/audit-logs (the capped count and the first page)', (q, _p, i) => listAuditForIndividual(q, i, { page: 1, limit: 20 })],
    ['GET /individual/accounts/{id}/card-status-history (the capped count and the first page)', (q, _p, i) => listStatusHistoryOfIndividual(q, i, { page: 1, limit: 20 })],
    ['GET /cards (the first page and its exact total)', (q, p) => searchCards(q, { partnerId: p }, { page: 1, limit: 20 })],
    ['GET /cards?status=ACTIVE', (q, p) => searchCards(q, { partnerId: p, status: 'ACTIVE' }, { page: 1, limit: 20 })],
  ];
  for (const [name, route] of routes) {
    it(name, async function () {
      const small = await explained(route, partners.small);
      const large = await explained(route, partners.large);
      expect(large.map((p) => p.text)).to.deep.equal(small.map((p) => p.text));
      small.forEach((s, i) => {
        const l = large[i];
        expect(l.rows, `${s.text}\n  reads ${s.rows} rows (${s.buffers} buffers) at ${SMALL}, ${l.rows} (${l.buffers}) at ${SMALL * GROWTH}`).to.be.at.most(Math.max(s.rows * MAX_RATIO, s.rows + 16));
      });
    });
  }
});
