import { expect } from 'chai';
import { reconcilePendingIndividuals } from '../../../../gateway/individuals/reconciler';
import { startSandboxes, type Sandboxes } from '../../../../sandbox';
import { individualBody } from '../../../support/api';
import { makeKeyPair } from '../../../support/partners';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { createOwnDatabase } from '../../../support/test-database';
import type { IndividualCreateBody } from '../../../../gateway/schemas/individual-create';

describe('individuals: reconciler of onboardings left pending by a stopped process', function () {
  let sandboxes: Sandboxes;
  let services: InProcessServices;
  let partnerId: string;
  let own: Awaited<ReturnType<typeof createOwnDatabase>>;

  before(async function () {
    sandboxes = await startSandboxes();
    // A database of its own: a pass reads every stale pending onboarding, and the run's gateways
    // reconcile the run's database with their own sandboxes (which never saw these accounts), so on
    // the shared database another pass could settle this test's records first.
    own = await createOwnDatabase();
    services = await openServices({ issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url }, { databaseUrl: own.url });
    partnerId = (await services.partners.create({ name: 'reconcile', issuer: 'https://reconcile.example', publicKey: makeKeyPair().publicPem }))._id;
  });
  after(async function () {
    await services?.close();
    await sandboxes?.close();
    await own?.drop();
  });

  const body = () => individualBody() as unknown as IndividualCreateBody;
  const state = async (id: string) =>
    (await services.db.query<{ provisioning: string; client_id: string | null }>('SELECT provisioning, client_id FROM individual_onboardings WHERE id = $1', [id])).rows[0];

  it('completes one the upstream created, deletes one it never saw, and leaves one it cannot check', async function () {
    const created = await services.individuals.createPending(partnerId, body());
    const account = await services.clients.accounts.createAccount({ requestId: 'test' }, { ...individualBody(), partnerId, onboardingId: created.onboardingId } as never);
    const orphan = await services.individuals.createPending(partnerId, body());
    const fresh = await services.individuals.createPending(partnerId, body());
    await services.db.query("UPDATE individual_onboardings SET created_at = now() - interval '10 minutes', updated_at = now() - interval '10 minutes' WHERE id = ANY($1)", [[created.onboardingId, orphan.onboardingId]]);

    const result = await reconcilePendingIndividuals(services, 60_000);
    expect(result.completed).to.include(created.onboardingId);
    expect(result.discarded).to.include(orphan.onboardingId);
    expect(result.completed).to.not.include(fresh.onboardingId);
    expect(await state(created.onboardingId)).to.deep.equal({ provisioning: 'complete', client_id: account.clientId });
    expect(await state(orphan.onboardingId)).to.equal(undefined);
    expect((await services.db.query('SELECT count(*)::int AS n FROM users WHERE id = $1', [orphan.userId])).rows[0].n).to.equal(0);
    expect(await state(fresh.onboardingId), 'too young to judge').to.deep.include({ provisioning: 'pending' });
    const audit = await services.db.query('SELECT operation, details FROM audit_log WHERE individual_id = $1', [created.onboardingId]);
    expect(audit.rows[0]).to.deep.include({ operation: 'individual.create' });
    expect(audit.rows[0].details.reconciled).to.equal(true);
    // Its individual.created event, in the completing transaction: the account as GET answers it, no partner request named.
    const events = await services.db.query<{ payload: string }>("SELECT payload FROM partner_events WHERE type = 'individual.created' AND payload::jsonb #>> '{data,individual,_id}' = $1", [created.onboardingId]);
    expect(events.rows).to.have.length(1);
    const event = JSON.parse(events.rows[0].payload);
    expect(event).to.not.have.property('requestId');
    expect(event.data.individual).to.deep.equal(await services.individuals.get(created.onboardingId));
    expect(await services.db.query("SELECT 1 FROM partner_events WHERE payload::jsonb #>> '{data,individual,_id}' = $1", [orphan.onboardingId]), 'none for the discarded one').to.have.property('rowCount', 0);

    await services.db.query("UPDATE individual_onboardings SET created_at = now() - interval '10 minutes', updated_at = now() - interval '10 minutes' WHERE id = $1", [fresh.onboardingId]);
    await fetch(`${sandboxes.accounts.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/accounts', mode: 'status', status: 500, times: 0 }),
    });
    try {
      const blocked = await reconcilePendingIndividuals(services, 60_000);
      expect(blocked.failed).to.include(fresh.onboardingId);
      expect(await state(fresh.onboardingId), 'kept for the next pass').to.deep.include({ provisioning: 'pending' });
    } finally {
      await fetch(`${sandboxes.accounts.url}/__sandbox/faults`, { method: 'DELETE' });
    }
    const later = await reconcilePendingIndividuals(services, 60_000);
    expect(later.discarded).to.include(fresh.onboardingId);
  });

  it('does not discard a pending record that a retry took up after it was listed as stale (its updated_at is fresh again)', async function () {
    const pending = await services.individuals.createPending(partnerId, body());
    // Listed as stale by a pass, then a retry of the same operation refreshes it before the pass deletes it.
    expect(await services.individuals.discardPending(pending.onboardingId, 60_000), 'fresh: kept').to.equal(false);
    expect((await state(pending.onboardingId)).provisioning).to.equal('pending');
    await services.db.query("UPDATE individual_onboardings SET updated_at = now() - interval '10 minutes' WHERE id = $1", [pending.onboardingId]);
    expect(await services.individuals.discardPending(pending.onboardingId, 60_000), 'stale: discarded').to.equal(true);
    expect(await state(pending.onboardingId)).to.equal(undefined);
  });
});
