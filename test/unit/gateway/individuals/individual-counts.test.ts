import { expect } from 'chai';
import { Database } from '../../../../gateway/db/database';
import { createLogger } from '../../../../gateway/logging/logger';
import { individualBody } from '../../../support/api';
import { makeKeyPair } from '../../../support/partners';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { runDatabaseUrl } from '../../../support/test-database';
import type { IndividualCreateBody } from '../../../../gateway/schemas/individual-create';

/**
 * The exact number of a partner's individuals (the individual list's `count`), kept by the triggers
 * of migration 025 in the transaction of every change it counts, checked against `count(*)` on real
 * PostgreSQL: through the store's own saga (pending, completed or discarded), rolled-back
 * completions, bulk statements, deletions, and many connections at once.
 */
describe('unit: individuals/partner individual counts (migration 025)', function () {
  this.timeout(60_000);
  let services: InProcessServices;
  /** A pool of its own, for concurrent transactions on many connections (many slots). */
  let wide: Database;
  let partnerId: string;

  before(async function () {
    services = await openServices();
    wide = new Database(runDatabaseUrl(), { max: 20, log: createLogger({ level: 'silent' }) });
    partnerId = (await services.partners.create({ name: 'counts', issuer: 'https://counts.example', publicKey: makeKeyPair().publicPem }))._id;
  });
  after(async function () {
    await wide?.close();
    await services?.close();
  });

  const body = () => individualBody() as unknown as IndividualCreateBody;
  /** What the list answers as `count`, and what a scan of the rows says. */
  const counts = async () => {
    const listed = (await services.individuals.list(partnerId, { page: 1, limit: 1 })).count;
    const scanned = Number((await services.db.query<{ n: string }>("SELECT count(*) AS n FROM individual_onboardings WHERE partner_id = $1 AND provisioning = 'complete'", [partnerId])).rows[0].n);
    return { listed, scanned };
  };
  const complete = (onboardingId: string) =>
    services.individuals.complete(onboardingId, { accountId: `acc-${onboardingId}`, clientId: `cl-${onboardingId}` }, async () => undefined);

  it('counts completions only: a pending onboarding does not count, a discarded one never did, a completed one does once', async function () {
    const before = (await counts()).listed;
    const kept = await services.individuals.createPending(partnerId, body());
    const dropped = await services.individuals.createPending(partnerId, body());
    expect((await counts()).listed, 'pending: invisible, uncounted').to.equal(before);
    await complete(kept.onboardingId);
    expect(await services.individuals.discardPending(dropped.onboardingId)).to.equal(true);
    // Completing again (a retry that finds it complete) changes nothing.
    expect(await complete(kept.onboardingId)).to.equal(undefined);
    expect(await counts()).to.deep.equal({ listed: before + 1, scanned: before + 1 });
  });

  it('a completion rolled back (its audit entry failed) takes its count with it', async function () {
    const before = (await counts()).listed;
    const pending = await services.individuals.createPending(partnerId, body());
    let failed = false;
    await services.individuals
      .complete(pending.onboardingId, { accountId: 'acc-rolled-back', clientId: 'cl-rolled-back' }, async () => {
        throw new Error('the audit entry could not be written');
      })
      .catch(() => (failed = true));
    expect(failed).to.equal(true);
    expect(await counts()).to.deep.equal({ listed: before, scanned: before });
  });

  it('a bulk statement counts once per partner, and a deletion (retention, a user\'s removal cascading) uncounts', async function () {
    const before = (await counts()).listed;
    // 300 completed onboardings in one statement, with their users.
    await services.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO users (id, partner_id, email, first_name, last_name)
         SELECT substr(md5('bulk-user-' || $1 || g), 1, 24), $1, 'bulk@example.com', 'Bulk', 'User' FROM generate_series(1, 300) AS g`,
        [partnerId]
      );
      await tx.query(
        `INSERT INTO individual_onboardings (id, partner_id, user_id, personal_info, address, application_status, dashboard_status, provisioning)
         SELECT substr(md5('bulk-onboarding-' || $1 || g), 1, 24), $1, substr(md5('bulk-user-' || $1 || g), 1, 24), '{}'::jsonb, '{}'::jsonb, 'APPROVED', 'ACTIVE', 'complete'
           FROM generate_series(1, 300) AS g`,
        [partnerId]
      );
    });
    expect(await counts()).to.deep.equal({ listed: before + 300, scanned: before + 300 });
    await services.db.query(`DELETE FROM users WHERE id IN (SELECT substr(md5('bulk-user-' || $1 || g), 1, 24) FROM generate_series(1, 100) AS g)`, [partnerId]);
    await services.db.query(`DELETE FROM individual_onboardings WHERE id IN (SELECT substr(md5('bulk-onboarding-' || $1 || g), 1, 24) FROM generate_series(101, 150) AS g)`, [partnerId]);
    expect(await counts()).to.deep.equal({ listed: before + 150, scanned: before + 150 });
  });

  it('stays exact under 200 creations on 20 connections at once, a tenth of them failing (discarded) and some completions rolled back', async function () {
    const before = (await counts()).listed;
    const individuals = new (services.individuals.constructor as new (db: Database) => typeof services.individuals)(wide);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const pending = await individuals.createPending(partnerId, body());
        if (i % 10 === 0) return (await individuals.discardPending(pending.onboardingId)) ? 'discarded' : 'lost';
        if (i % 10 === 5) {
          const rolledBack = await individuals
            .complete(pending.onboardingId, { accountId: `acc-${i}`, clientId: `cl-${i}` }, async () => {
              throw new Error('rolled back');
            })
            .then(() => false, () => true);
          // The saga then discards it, as after any failure.
          await individuals.discardPending(pending.onboardingId);
          return rolledBack ? 'rolled back' : 'not rolled back';
        }
        return (await individuals.complete(pending.onboardingId, { accountId: `acc-${i}`, clientId: `cl-${i}` }, async () => undefined)) ? 'complete' : 'not complete';
      })
    );
    expect(outcomes.filter((o) => o === 'complete')).to.have.length(160);
    expect(outcomes.filter((o) => o === 'discarded')).to.have.length(20);
    expect(outcomes.filter((o) => o === 'rolled back')).to.have.length(20);
    expect(await counts()).to.deep.equal({ listed: before + 160, scanned: before + 160 });
    // The partner's count is spread over the slots of the connections that wrote it (at most 16).
    const slots = (await services.db.query<{ n: string }>('SELECT count(*) AS n FROM partner_individual_counts WHERE partner_id = $1', [partnerId])).rows[0].n;
    expect(Number(slots)).to.be.within(2, 16);
  });
});
