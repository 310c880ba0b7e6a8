import crypto from 'node:crypto';
import { expect } from 'chai';
import { Database } from '../../gateway/db/database';
import { migrate } from '../../gateway/db/migrate';
import { createLogger } from '../../gateway/logging/logger';
import { DECLINE_REASON_CODES, statusAfter } from '../../gateway/upstreams/partner-transaction';
import type { TransactionStep } from '../../contracts/upstreams';
import { seedShape, seedTransactions } from '../../scripts/seed-transactions';
import { runDatabaseUrl } from '../support/test-database';

/**
 * scripts/seed-transactions (the data of `npm run bench:transactions`): rows the gateway's own
 * lifecycle rules accept, owned by cards, individuals and tenants that exist, in the announced mix.
 */
describe('seed-transactions: 4,000 transactions for one partner', function () {
  this.timeout(60_000);
  const log = createLogger({ level: 'silent' });
  const partnerId = crypto.randomBytes(12).toString('hex');
  const COUNT = 4000;
  let db: Database;
  interface Row {
    id: string;
    card_key: string;
    individual_id: string | null;
    tenant_id: string | null;
    authorization_id: string;
    amount: string;
    currency: string;
    type: string;
    status: string;
    settled_amount: string | null;
    decline_reason: string | null;
    related_transaction_id: string | null;
    history: TransactionStep[];
    version: number;
    created_at: Date;
    updated_at: Date;
    merchant: Record<string, string>;
  }
  let rows: Row[];

  before(async function () {
    db = new Database(runDatabaseUrl(), { max: 2, log });
    await migrate(db, log);
    const result = await seedTransactions(db, { partnerId, count: COUNT, batchSize: 1500 });
    const shape = seedShape(COUNT);
    expect(result).to.deep.equal({ transactions: COUNT, cards: shape.cards, individuals: shape.individuals, tenants: shape.tenants });
    rows = (await db.query<Row>('SELECT * FROM card_transactions WHERE partner_id = $1 ORDER BY created_at', [partnerId])).rows;
  });
  after(async function () {
    await db?.close();
  });

  it('spreads 1,000,000 transactions over 20,000 cards of about 7,000 individuals and 4 tenants', function () {
    expect(seedShape(1_000_000)).to.deep.equal({ cards: 20_000, individualCards: 16_000, individuals: 7000, tenants: 4 });
    expect(seedShape(1)).to.include({ cards: 5, tenants: 1 });
  });

  it('inserts every transaction once, with 24-hex ids growing with created_at, over the last 365 days', function () {
    expect(rows).to.have.length(COUNT);
    expect(new Set(rows.map((r) => r.id)).size).to.equal(COUNT);
    for (const r of rows) expect(r.id).to.match(/^[0-9a-f]{24}$/);
    expect(rows.map((r) => r.id)).to.deep.equal([...rows.map((r) => r.id)].sort());
    const yearAgo = Date.now() - 366 * 86_400_000;
    for (const r of rows) {
      expect(r.created_at.getTime()).to.be.within(yearAgo, Date.now());
      expect(r.updated_at.getTime(), r.id).to.be.within(r.created_at.getTime(), Date.now());
    }
  });

  it('writes a history the gateway reads as the row status, version its length, a decline reason exactly on DECLINED', function () {
    for (const r of rows) {
      expect(statusAfter(r.history), `${r.id} ${r.status} ${JSON.stringify(r.history)}`).to.equal(r.status);
      expect(r.version).to.equal(r.history.length);
      expect(new Date(r.history[r.history.length - 1].at).getTime()).to.be.closeTo(r.updated_at.getTime(), 1);
      for (const step of r.history) expect(step.amount).to.equal(Number(r.amount));
      if (r.status === 'DECLINED') expect(DECLINE_REASON_CODES).to.include(r.decline_reason);
      else expect(r.decline_reason).to.equal(null);
      expect(r.settled_amount === null ? null : Number(r.settled_amount)).to.equal(r.status === 'SETTLED' ? Number(r.amount) : null);
      expect(r.related_transaction_id !== null, r.id).to.equal(r.type === 'REFUND' && r.id !== rows[0].id);
      expect(Object.keys(r.merchant).sort()).to.deep.equal(['city', 'country', 'mcc', 'name']);
    }
  });

  it('draws the announced shares of status, type, currency and owner', function () {
    const share = (test: (r: Row) => boolean) => rows.filter(test).length / rows.length;
    expect(share((r) => r.status === 'SETTLED')).to.be.closeTo(0.85, 0.03);
    expect(share((r) => r.status === 'PENDING')).to.be.closeTo(0.05, 0.015);
    expect(share((r) => r.status === 'DECLINED')).to.be.closeTo(0.04, 0.015);
    expect(share((r) => r.type === 'PURCHASE')).to.be.closeTo(0.8, 0.03);
    expect(share((r) => r.type === 'REFUND')).to.be.closeTo(0.08, 0.02);
    expect(rows.filter((r) => r.type === 'REFUND').every((r) => r.status === 'SETTLED')).to.equal(true);
    expect(share((r) => r.currency === 'EUR')).to.be.closeTo(0.88, 0.03);
    expect(share((r) => r.individual_id === null)).to.be.closeTo(0.2, 0.04);
    for (const r of rows) expect(r.individual_id === null, r.id).to.equal(r.tenant_id !== null);
  });

  it('belongs to cards that exist, with the same owner, of individuals and tenants that exist', async function () {
    const orphans = await db.query(
      `SELECT t.id FROM card_transactions t
       LEFT JOIN cards c ON c.card_key = t.card_key AND c.partner_id = t.partner_id
         AND c.individual_id IS NOT DISTINCT FROM t.individual_id AND c.tenant_id IS NOT DISTINCT FROM t.tenant_id
       LEFT JOIN individual_onboardings i ON i.id = t.individual_id AND i.partner_id = t.partner_id
       LEFT JOIN b2b_tenants b ON b.id = t.tenant_id AND b.partner_id = t.partner_id
       WHERE t.partner_id = $1 AND (c.card_key IS NULL OR (t.individual_id IS NOT NULL AND i.id IS NULL) OR (t.tenant_id IS NOT NULL AND b.id IS NULL))`,
      [partnerId]
    );
    expect(orphans.rows).to.deep.equal([]);
  });

  it('adds new transactions on a second run for the same partner', async function () {
    await seedTransactions(db, { partnerId, count: 100 });
    const total = await db.query<{ n: string }>('SELECT count(*) AS n FROM card_transactions WHERE partner_id = $1', [partnerId]);
    expect(Number(total.rows[0].n)).to.equal(COUNT + 100);
  });
});
