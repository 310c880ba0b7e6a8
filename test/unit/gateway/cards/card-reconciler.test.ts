import { expect } from 'chai';
import { completeReplacement, markIssuerCheckDue, reconcileCards, syncCardWithIssuer } from '../../../../gateway/cards/card-sync';
import { insertCard } from '../../../../gateway/cards/card-store';
import type { Sandboxes } from '../../../../sandbox';
import { cardBody } from '../../../support/api';
import { openSandboxedServices, type InProcessServices, type SandboxedServices } from '../../../support/in-process';
import { createOwnDatabase, type RunDatabase } from '../../../support/test-database';

/** The card reconciler over real PostgreSQL and a real issuer sandbox (gateway/cards/card-sync.ts). */
describe('cards: reconciler bringing our card records to the issuer', function () {
  let sandboxes: Sandboxes;
  let services: InProcessServices;
  let partnerId: string;
  let individualId: string;

  let world: SandboxedServices;
  let own: RunDatabase;

  before(async function () {
    // 10 s for the issuer's answers, not the 2 s of in-process services: a pass whose issuer call
    // timed out counts the card as failed, which a machine busy with the rest of the suite made
    // happen once (1 repaired of 2 checked). No test here waits for a timeout.
    // A database of its own: a pass reads every due card of the database, and the run's shared one
    // holds other test files' cards marked due meanwhile (one took a slot of a batch of 2 once).
    own = await createOwnDatabase();
    world = await openSandboxedServices('card-reconcile', { upstreamTimeoutMs: 10_000 }, own.url);
    ({ sandboxes, services, partnerId, individualId } = world);
  });
  after(async function () {
    await world?.close();
    await own?.drop();
  });

  /** A card the issuer holds, recorded by us as ACTIVE `00`, then locked at the issuer only (`L1`), marked due. */
  async function driftedCard(): Promise<string> {
    const issued = await world.activeCard('C-RECONCILE');
    await services.clients.issuer.changeStatus({ requestId: 'test' }, issued.cardKey, { action: 'lock', expDate: issued.expDate });
    await services.db.query('UPDATE cards SET issuer_check_due = true WHERE card_key = $1', [issued.cardKey]);
    return issued.cardKey;
  }
  const eventsOf = async (key: string) =>
    (await services.db.query<{ payload: string }>('SELECT payload FROM partner_events WHERE ordering_key = $1 ORDER BY seq', [key])).rows.map((r) => JSON.parse(r.payload));
  const codeOf = async (key: string) => (await services.db.query('SELECT status_code, issuer_check_due FROM cards WHERE card_key = $1', [key])).rows[0];
  const syncHistory = async (key: string) =>
    (await services.db.query("SELECT old_status_code, new_status_code FROM card_status_history WHERE card_key = $1 AND operation = 'card.issuer-sync'", [key])).rows;

  it('reads at most one batch per pass, cards marked due first, and takes the issuer status over with history and audit', async function () {
    const keys = [await driftedCard(), await driftedCard(), await driftedCard()];
    const first = await reconcileCards(services, 2);
    expect(first.failed, 'no card failed (the issuer answered)').to.deep.equal([]);
    expect(first.checked).to.equal(2);
    expect(first.repaired).to.have.length(2);
    for (const key of first.repaired) expect(keys).to.include(key);
    const left = keys.filter((k) => !first.repaired.includes(k));
    expect(await codeOf(left[0]), 'beyond the batch: next pass').to.deep.equal({ status_code: '00', issuer_check_due: true });

    const second = await reconcileCards(services, 2);
    expect(second.repaired).to.include(left[0]);
    for (const key of keys) {
      expect(await codeOf(key)).to.deep.equal({ status_code: 'L1', issuer_check_due: false });
      expect(await syncHistory(key)).to.deep.equal([{ old_status_code: '00', new_status_code: 'L1' }]);
      const audit = await services.db.query("SELECT details FROM audit_log WHERE target_id = $1 AND operation = 'card.issuer-sync'", [key]);
      expect(audit.rows.map((r) => r.details)).to.deep.equal([{ from: '00', to: 'L1', source: 'issuer' }]);
    }
  });

  it('two concurrent syncs of one card (two instances) record the issuer-side change once', async function () {
    const key = await driftedCard();
    const outcomes = await Promise.all([syncCardWithIssuer(services, key, 'a'), syncCardWithIssuer(services, key, 'b')]);
    expect(outcomes.sort()).to.deep.equal(['repaired', 'unchanged']);
    expect(await syncHistory(key)).to.have.length(1);
    const events = (await eventsOf(key)).filter((e) => e.type === 'card.status_changed');
    expect(events, 'one event, the issuer\'s').to.have.length(1);
    expect(events[0].data).to.deep.include({ previousStatusCode: '00', statusCode: 'L1', source: 'issuer' });
    expect(events[0]).to.not.have.property('requestId');
  });

  it('a code the partner asked for in a call with no answer is the partner\'s change; another code is the issuer\'s', async function () {
    const asked = await driftedCard();
    await markIssuerCheckDue(services.db, asked, { source: 'partner', target: 'L1' });
    const other = await driftedCard();
    await markIssuerCheckDue(services.db, other, { source: 'partner', target: 'S1' });
    expect(await syncCardWithIssuer(services, asked, 'a')).to.equal('repaired');
    expect(await syncCardWithIssuer(services, other, 'b')).to.equal('repaired');
    expect((await eventsOf(asked))[0].data.source).to.equal('partner');
    expect((await eventsOf(other))[0].data.source).to.equal('issuer');
    const marks = await services.db.query('SELECT issuer_check_source, issuer_check_target FROM cards WHERE card_key = ANY($1)', [[asked, other]]);
    expect(marks.rows, 'cleared once settled').to.deep.equal([
      { issuer_check_source: null, issuer_check_target: null },
      { issuer_check_source: null, issuer_check_target: null },
    ]);
  });

  it('leaves a card the issuer does not know as it is', async function () {
    const issued = await services.clients.issuer.createCard({ requestId: 'test' }, { type: 'virtual', ...(cardBody('C-RECONCILE') as any) });
    const unknownKey = `${issued.cardKey}X`;
    await insertCard(services.db, { ...issued, cardKey: unknownKey, partnerId, individualId, status: 'ACTIVE', statusCode: '00', holderClientCode: issued.holderClientCode, embossedName: null });
    expect(await syncCardWithIssuer(services, unknownKey, 'test')).to.equal('missing');
    expect((await codeOf(unknownKey)).status_code).to.equal('00');
  });

  it('completes a replacement once when the handler and a sync race: the second gets the card and writes nothing', async function () {
    const issued = await services.clients.issuer.createCard({ requestId: 'test' }, { type: 'physical', ...(cardBody('C-RECONCILE') as any) });
    await insertCard(services.db, { ...issued, partnerId, individualId, status: 'LOCKED', statusCode: issued.statusCode, holderClientCode: issued.holderClientCode, embossedName: null });
    const { cardKey: newKey } = await services.clients.issuer.replace({ requestId: 'test' }, issued.cardKey, { expDate: issued.expDate });
    await services.db.query('UPDATE cards SET card_key = $2, replaced_from = $1, issuer_check_due = true WHERE card_key = $1', [issued.cardKey, newKey]);
    const fresh = await services.clients.issuer.getCard({ requestId: 'test' }, newKey);
    const context = { oldKey: issued.cardKey, newKey, oldStatus: 'LOCKED' as const, oldStatusCode: issued.statusCode, partnerId, individualId, reason: null, requestId: 'race' };
    const first = await services.db.transaction((tx) => completeReplacement(tx, fresh, context));
    const second = await services.db.transaction((tx) => completeReplacement(tx, fresh, context));
    expect(first.outboxId).to.be.a('string');
    expect(second.outboxId, 'already completed: nothing queued').to.equal(null);
    expect(second.card.cardKey).to.equal(newKey);
    const count = async (sql: string) => (await services.db.query(sql, [newKey])).rows[0].n;
    expect(await count("SELECT count(*)::int AS n FROM card_status_history WHERE card_key = $1 AND operation = 'card.replace'")).to.equal(1);
    expect(await count("SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'cardKey' = $1 AND kind = 'processing.card_created'")).to.equal(1);
    const created = await eventsOf(newKey);
    expect(created.map((e) => [e.type, e.data.reason, e.data.previousCardKey, e.requestId])).to.deep.equal([['card.created', 'replaced', issued.cardKey, 'race']]);
  });

  it('reads only the cards marked due: a card with nothing pending costs no issuer call', async function () {
    const key = await driftedCard();
    await services.db.query('UPDATE cards SET issuer_check_due = false WHERE card_key = $1', [key]);
    const reads = async () => ((await (await fetch(`${sandboxes.issuer.url}/__sandbox/requests?method=GET&path=/cards/${key}`)).json()) as unknown[]).length;
    const before = await reads();
    const pass = await reconcileCards(services, 100);
    expect(pass.repaired).to.not.include(key);
    expect(await reads(), 'not due: not read at the issuer').to.equal(before);
    expect((await codeOf(key)).status_code, 'left for the next access or an issuer notification').to.equal('00');
  });
});
