import { expect } from 'chai';
import { Client } from 'pg';
import { readMigrations } from '../../../../gateway/db/migrate';
import { createRunDatabase, type RunDatabase } from '../../../support/test-database';

/**
 * Migration 004 (issue 11 item 7): audit and status-history entries written before it get a
 * random public id too, so no partner ever sees the internal platform-wide sequence.
 */
describe('unit: migration 004 gives existing history entries random public ids', function () {
  let database: RunDatabase;
  let client: Client;

  before(async function () {
    database = await createRunDatabase('pgw_m004');
    client = new Client({ connectionString: database.url });
    await client.connect();
  });

  after(async function () {
    await client?.end();
    await database?.drop();
  });

  it('fills public_id for every older row (creation second + 8 random bytes), unique and not null', async function () {
    const migrations = readMigrations();
    const m004 = migrations.findIndex((m) => m.version === '004');
    expect(m004, 'migration 004 exists').to.be.at.least(0);
    for (const m of migrations.slice(0, m004)) await client.query(m.sql);

    const partner = 'aaaaaaaaaaaaaaaaaaaaaaaa';
    await client.query("INSERT INTO partners (id, name, issuer) VALUES ($1, 'old', 'https://old.example')", [partner]);
    const created = '2025-03-01T10:00:00Z';
    for (let i = 0; i < 50; i++) {
      await client.query(
        "INSERT INTO audit_log (partner_id, operation, target_type, target_id, outcome, created_at) VALUES ($1, 'individual.create', 'individual', 'x', 'success', $2)",
        [partner, created]
      );
      await client.query(
        "INSERT INTO card_status_history (card_key, partner_id, new_status, new_status_code, operation, created_at) VALUES ('CK1', $1, 'ACTIVE', '00', 'card.issue', $2)",
        [partner, created]
      );
    }

    await client.query(migrations[m004].sql);

    const prefix = Math.floor(Date.parse(created) / 1000).toString(16);
    for (const table of ['audit_log', 'card_status_history']) {
      const ids = (await client.query<{ public_id: string }>(`SELECT public_id FROM ${table}`)).rows.map((r) => r.public_id);
      expect(ids).to.have.length(50);
      for (const id of ids) {
        expect(id).to.match(/^[0-9a-f]{24}$/);
        expect(id.slice(0, 8)).to.equal(prefix);
      }
      expect(new Set(ids.map((id) => id.slice(8))).size, `${table}: the random parts differ`).to.equal(50);
      const nullInsert = await client
        .query(`INSERT INTO ${table} (partner_id, operation, ${table === 'audit_log' ? "target_type, target_id, outcome) VALUES ($1, 'o', 't', 'x', 'success')" : "card_key, new_status, new_status_code) VALUES ($1, 'o', 'CK', 'ACTIVE', '00')"}`, [partner])
        .then(() => 'inserted', (err: Error) => err.message);
      // An instance still on the previous version (a rolling deploy) writes no public id: the default gives one.
      expect(nullInsert, 'a row written without a public id gets one').to.equal('inserted');
      const latest = (await client.query<{ public_id: string }>(`SELECT public_id FROM ${table} ORDER BY id DESC LIMIT 1`)).rows[0].public_id;
      expect(latest).to.match(/^[0-9a-f]{24}$/);
    }
  });
});
