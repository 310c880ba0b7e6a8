import { expect } from 'chai';
import { completeReplacement, syncCardWithIssuer } from '../../../../gateway/cards/card-sync';
import { applyStatusChange, type StatusChangeDeps } from '../../../../gateway/cards/status-change';
import { insertCard } from '../../../../gateway/cards/card-store';
import { OPERATIONS, type StatusChangeOperationName } from '../../../../gateway/catalog';
import { newObjectId } from '../../../../gateway/ids';
import { createLogger } from '../../../../gateway/logging/logger';
import { createTokenCascade, tokenCourse } from '../../../../gateway/tokens/cascade';
import { deliverTokenOperation, tokenOutboxHandlers } from '../../../../gateway/tokens/operations';
import { OutboxDeliverer } from '../../../../gateway/outbox/outbox';
import { cardBody } from '../../../support/api';
import { waitFor } from '../../../support/wait';
import { openSandboxedServices, type InProcessServices, type SandboxedServices } from '../../../support/in-process';
import { insertToken, ProcessorStandIn, queued, tokenState } from './token-fixtures';

/**
 * The cascade (docs/tokens.md "The cascade"; gateway/tokens/cascade.ts) on real PostgreSQL and the
 * real issuer sandbox: every row of the cascade table, made by the card changes that make it
 * (applyStatusChange for partners and operators, card-sync for the issuer's own, completeReplacement
 * for a replacement), each asserted in what the change's own transaction committed (holds, moves,
 * the operations queued in the outbox) and, delivered, in the tokens' states and events.
 */
describe('tokens: the cascade of a card change to its tokens', function () {
  this.timeout(30_000);
  let world: SandboxedServices;
  let services: InProcessServices;
  let processor: ProcessorStandIn;
  let deps: StatusChangeDeps;
  const log = createLogger({ level: 'silent' });

  before(async function () {
    world = await openSandboxedServices('token-cascade');
    services = world.services;
    processor = new ProcessorStandIn();
    // No delivery after the commit: each test reads what the change's transaction queued, then delivers it itself.
    deps = { db: services.db, clients: services.clients, log, cardState: createTokenCascade() };
  });
  after(async function () {
    await world?.close();
  });

  const card = async () => {
    const issued = await world.activeCard('C-CASCADE');
    return { cardKey: issued.cardKey, expDate: issued.expDate, partnerId: world.partnerId };
  };
  const change = (cardKey: string, name: StatusChangeOperationName, requestId = `req-${newObjectId()}`) =>
    applyStatusChange(deps, {
      cardKey,
      change: OPERATIONS[name].statusChange,
      issuerBody: { reason: name },
      operationId: newObjectId(),
      actor: { source: 'partner', operation: OPERATIONS[name].audit!, requestId, eventNamesRequest: true },
      ctx: { requestId },
    }).then(() => requestId);
  const deliver = async (requestId: string) => {
    for (const message of await queued(services.db, requestId)) {
      if (message.kind === 'processing.token_operation') await deliverTokenOperation({ db: services.db, processing: processor, log }, { requestId }, message.payload);
    }
  };
  const tokenEvents = async (cardKey: string) =>
    (await services.db.query<{ payload: string }>("SELECT payload FROM partner_events WHERE ordering_key = $1 AND type LIKE 'token.%' ORDER BY seq", [cardKey])).rows.map((r) => JSON.parse(r.payload));

  it('what a card status code means for its tokens (ACTIVE, I1 with and without the setting, locks, final reports)', function () {
    expect(['00', 'I1', 'L1', 'T1', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6'].map((code) => tokenCourse(code, false))).to.deep.equal([
      'usable', 'hold', 'hold', 'hold', 'hold', 'deactivate', 'deactivate', 'deactivate', 'deactivate', 'deactivate',
    ]);
    expect(tokenCourse('I1', true)).to.equal('usable');
  });

  it('a lock holds exactly the active tokens in its own transaction and queues their suspension; delivered, they are suspended by card_state with their events', async function () {
    const c = await card();
    const active1 = await insertToken(services.db, processor, c, 'active');
    const active2 = await insertToken(services.db, processor, c, 'active');
    const byPartner = await insertToken(services.db, processor, c, 'suspended', { suspendedBy: 'partner' });
    const pending = await insertToken(services.db, processor, c, 'pending_verification');
    const requestId = await change(c.cardKey, 'lock-card');

    expect((await tokenState(services.db, active1.id)).card_state_hold).to.equal(true);
    expect((await tokenState(services.db, active2.id)).card_state_hold).to.equal(true);
    expect((await tokenState(services.db, byPartner.id)).card_state_hold).to.equal(false);
    expect((await tokenState(services.db, pending.id)).card_state_hold).to.equal(false);
    // The status stays the processor's until it answers.
    expect((await tokenState(services.db, active1.id)).status).to.equal('active');
    const ops = await queued(services.db, requestId);
    expect(ops.map((o) => [o.kind, o.payload.tokenId, o.payload.tokenReference, o.payload.action, o.payload.requestedBy, o.payload.reason])).to.have.deep.members([
      ['processing.token_operation', active1.id, active1.reference, 'suspend', 'card_state', 'card LOCKED'],
      ['processing.token_operation', active2.id, active2.reference, 'suspend', 'card_state', 'card LOCKED'],
    ]);
    expect(new Set(ops.map((o) => o.payload.operationId)).size, 'one operation id each').to.equal(2);

    await deliver(requestId);
    for (const t of [active1, active2]) {
      const state = await tokenState(services.db, t.id);
      expect(state.status).to.equal('suspended');
      expect(state.suspended_by).to.equal('card_state');
      expect(state.history.at(-1)).to.include({ status: 'suspended', by: 'card_state', reason: 'card LOCKED' });
    }
    const events = await tokenEvents(c.cardKey);
    expect(events.map((e) => [e.type, e.data.token._id, e.data.change, e.data.previousStatus, e.data.token.suspendedBy, e.requestId])).to.have.deep.members([
      ['token.updated', active1.id, 'suspended', 'active', 'card_state', requestId],
      ['token.updated', active2.id, 'suspended', 'active', 'card_state', requestId],
    ]);
    // Ordered after the card's own event.
    const all = (await services.db.query<{ type: string }>('SELECT type FROM partner_events WHERE ordering_key = $1 ORDER BY seq', [c.cardKey])).rows.map((r) => r.type);
    expect(all).to.deep.equal(['card.status_changed', 'token.updated', 'token.updated']);
  });

  it('unlock resumes exactly the tokens the lock held; one the partner suspended (before or since) stays suspended', async function () {
    const c = await card();
    const active = await insertToken(services.db, processor, c, 'active');
    const byPartner = await insertToken(services.db, processor, c, 'suspended', { suspendedBy: 'partner' });
    const byNetwork = await insertToken(services.db, processor, c, 'suspended');
    const lock = await change(c.cardKey, 'lock-card');
    await deliver(lock);
    // The partner suspends a held token while the card is locked: it is theirs from then on.
    const laterByPartner = await insertToken(services.db, processor, c, 'suspended', { suspendedBy: 'partner', hold: true });

    const unlock = await change(c.cardKey, 'unlock-card');
    const ops = await queued(services.db, unlock);
    expect(ops.map((o) => [o.payload.tokenId, o.payload.action])).to.deep.equal([[active.id, 'resume']]);
    for (const t of [active, byPartner, byNetwork, laterByPartner]) expect((await tokenState(services.db, t.id)).card_state_hold, t.id).to.equal(false);

    await deliver(unlock);
    expect(await tokenState(services.db, active.id)).to.include({ status: 'active', suspended_by: null });
    expect(await tokenState(services.db, byPartner.id)).to.include({ status: 'suspended', suspended_by: 'partner' });
    expect(await tokenState(services.db, byNetwork.id)).to.include({ status: 'suspended', suspended_by: null });
    expect(await tokenState(services.db, laterByPartner.id)).to.include({ status: 'suspended', suspended_by: 'partner' });
    const resumed = (await tokenEvents(c.cardKey)).filter((e) => e.data.change === 'resumed');
    expect(resumed.map((e) => [e.data.token._id, e.requestId])).to.deep.equal([[active.id, unlock]]);
  });

  it('a temporary lock then a restrict (S1) hold once: the second change queues nothing more', async function () {
    const c = await card();
    const active = await insertToken(services.db, processor, c, 'active');
    const first = await change(c.cardKey, 'temporary-lock-card');
    expect((await queued(services.db, first)).map((o) => o.payload.action)).to.deep.equal(['suspend']);
    const second = await change(c.cardKey, 'restrict-card');
    expect(await queued(services.db, second)).to.deep.equal([]);
    expect((await tokenState(services.db, active.id)).card_state_hold).to.equal(true);
  });

  it('a lock right after an unlock (its resumption not applied yet) holds the token again; the overtaken resumption is not sent', async function () {
    const c = await card();
    const t = await insertToken(services.db, processor, c, 'active');
    await deliver(await change(c.cardKey, 'lock-card'));
    const unlock = await change(c.cardKey, 'unlock-card');
    const relock = await change(c.cardKey, 'lock-card');
    expect((await queued(services.db, relock)).map((o) => [o.payload.tokenId, o.payload.action])).to.deep.equal([[t.id, 'suspend']]);
    const callsBefore = processor.calls.length;
    await deliver(unlock);
    expect(processor.calls.length, 'the resumption a later lock overtook is not sent').to.equal(callsBefore);
    await deliver(relock);
    expect(await tokenState(services.db, t.id)).to.include({ status: 'suspended', suspended_by: 'card_state', card_state_hold: true });
  });

  it('a restrict as stolen deactivates every token that is not final, whatever holds it', async function () {
    const c = await card();
    const tokens = await Promise.all([
      insertToken(services.db, processor, c, 'active'),
      insertToken(services.db, processor, c, 'suspended', { suspendedBy: 'partner' }),
      insertToken(services.db, processor, c, 'requested'),
      insertToken(services.db, processor, c, 'pending_verification'),
    ]);
    const final = [await insertToken(services.db, processor, c, 'declined'), await insertToken(services.db, processor, c, 'deactivated')];
    const requestId = await change(c.cardKey, 'restrict-card-stolen');
    const ops = await queued(services.db, requestId);
    expect(ops.map((o) => o.payload.tokenId)).to.have.members(tokens.map((t) => t.id));
    expect(ops.every((o) => o.payload.action === 'deactivate' && o.payload.reason === 'card STOLEN')).to.equal(true);
    await deliver(requestId);
    for (const t of tokens) expect((await tokenState(services.db, t.id)).status, t.id).to.equal('deactivated');
    expect((await tokenState(services.db, final[0].id)).status).to.equal('declined');
    const deactivated = (await tokenEvents(c.cardKey)).filter((e) => e.data.change === 'deactivated');
    expect(deactivated).to.have.length(4);
  });

  it("an issuer-side lock found by card-sync cascades the same (the card's followers change in the sync's transaction)", async function () {
    const c = await card();
    const t = await insertToken(services.db, processor, c, 'active');
    await services.clients.issuer.changeStatus({ requestId: 'test' }, c.cardKey, { action: 'lock', expDate: c.expDate }, newObjectId());
    const requestId = `issuer-sync-${newObjectId()}`;
    expect(await syncCardWithIssuer(deps, c.cardKey, requestId)).to.equal('repaired');
    expect((await queued(services.db, requestId)).map((o) => [o.payload.tokenId, o.payload.action])).to.deep.equal([[t.id, 'suspend']]);
    expect((await tokenState(services.db, t.id)).card_state_hold).to.equal(true);
  });

  it('a replacement moves the active and suspended tokens to the new card (events after card.created, in order), deactivates the pending ones, queues one move after card_created, and holds the moved active ones for a new card not activated yet', async function () {
    const issued = await services.clients.issuer.createCard({ requestId: 'test' }, { type: 'physical', ...(cardBody('C-CASCADE-R') as any) });
    await insertCard(services.db, { ...issued, partnerId: world.partnerId, individualId: world.individualId, status: 'ACTIVE', statusCode: '00', holderClientCode: issued.holderClientCode, embossedName: null });
    const old = { cardKey: issued.cardKey, partnerId: world.partnerId };
    const active = await insertToken(services.db, processor, old, 'active');
    const byPartner = await insertToken(services.db, processor, old, 'suspended', { suspendedBy: 'partner' });
    const pending = await insertToken(services.db, processor, old, 'pending_verification');
    const declined = await insertToken(services.db, processor, old, 'declined');

    const { cardKey: newKey } = await services.clients.issuer.replace({ requestId: 'test' }, issued.cardKey, { expDate: issued.expDate });
    await services.db.query('UPDATE cards SET card_key = $2, replaced_from = $1, issuer_check_due = true WHERE card_key = $1', [issued.cardKey, newKey]);
    const fresh = await services.clients.issuer.getCard({ requestId: 'test' }, newKey);
    const requestId = `replace-${newObjectId()}`;
    const context = { oldKey: issued.cardKey, newKey, oldStatus: 'ACTIVE' as const, oldStatusCode: '00', partnerId: world.partnerId, individualId: world.individualId, reason: null, requestId };
    const done = await services.db.transaction((tx) => completeReplacement(tx, fresh, context, deps.cardState));
    expect(fresh.statusCode, 'the sandbox makes a new physical card not activated yet').to.equal('I1');

    expect(await tokenState(services.db, active.id)).to.include({ card_key: newKey, status: 'active', card_state_hold: true });
    expect(await tokenState(services.db, byPartner.id)).to.include({ card_key: newKey, status: 'suspended', suspended_by: 'partner' });
    expect(await tokenState(services.db, pending.id)).to.include({ card_key: issued.cardKey });
    expect(await tokenState(services.db, declined.id)).to.include({ card_key: issued.cardKey });
    expect((await tokenState(services.db, active.id)).history.at(-1)).to.include({ status: 'active', by: 'card_state', reason: 'card replaced' });

    const messages = (await services.db.query<{ id: string; kind: string; payload: any }>('SELECT id, kind, payload FROM outbox_events WHERE id = ANY($1::bigint[]) ORDER BY id', [done.outboxIds])).rows;
    expect(messages.map((m) => [m.kind, m.payload.action ?? m.payload.reason, m.payload.tokenId ?? m.payload.toCardKey])).to.deep.equal([
      ['processing.card_created', undefined, undefined],
      ['processing.token_move', 'replaced', newKey],
      ['processing.token_operation', 'deactivate', pending.id],
      ['processing.token_operation', 'suspend', active.id],
    ]);
    expect(messages[1].payload.cardKey).to.equal(issued.cardKey);

    const events = (await services.db.query<{ type: string; payload: string }>('SELECT type, payload FROM partner_events WHERE ordering_key = $1 ORDER BY seq', [newKey])).rows.map((r) => JSON.parse(r.payload));
    expect(events.map((e) => e.type)).to.deep.equal(['card.created', 'token.updated', 'token.updated']);
    expect(events.slice(1).map((e) => [e.data.token._id, e.data.change, e.data.token.cardKey, e.requestId])).to.have.deep.members([
      [active.id, 'card_updated', newKey, requestId],
      [byPartner.id, 'card_updated', newKey, requestId],
    ]);

    // Delivered through the outbox with the token handlers: the move, the deactivation and the hold converge at the processor.
    const outbox = new OutboxDeliverer(services.db, services.clients, log, tokenOutboxHandlers({ db: services.db, processing: processor, log }));
    await outbox.deliver(done.outboxIds.slice(1));
    expect(processor.tokens.get(active.reference)).to.include({ cardKey: newKey, status: 'suspended' });
    expect(processor.tokens.get(pending.reference)).to.include({ status: 'deactivated' });
    expect(await tokenState(services.db, active.id)).to.include({ status: 'suspended', suspended_by: 'card_state' });
    expect(await tokenState(services.db, pending.id)).to.include({ status: 'deactivated' });
    expect((await services.db.query("SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1::bigint[]) AND delivered_at IS NOT NULL", [done.outboxIds.slice(1)])).rows[0].n).to.equal(3);

    // The new card's activation resumes the token its state held.
    const activation = await change(newKey, 'activate-card');
    expect((await queued(services.db, activation)).map((o) => [o.payload.tokenId, o.payload.action])).to.deep.equal([[active.id, 'resume']]);
  });

  it("the processor's final refusal of a cascade operation (409) is not retried: the token is read and applied as the processor holds it", async function () {
    const c = await card();
    const t = await insertToken(services.db, processor, c, 'active');
    // The network deactivated it meanwhile, and its notification has not arrived.
    processor.set(t.reference, 'deactivated');
    const requestId = await change(c.cardKey, 'lock-card');
    const outbox = new OutboxDeliverer(services.db, services.clients, log, tokenOutboxHandlers({ db: services.db, processing: processor, log }));
    const ids = (await queued(services.db, requestId)).map((o) => o.id);
    expect(await outbox.deliver(ids)).to.deep.equal({ delivered: 1, failed: 0 });
    expect(await tokenState(services.db, t.id)).to.include({ status: 'deactivated', card_state_hold: false });
  });

  it('an unanswered cascade operation stays queued for the background deliverer, which sends it with the same operation id', async function () {
    const c = await card();
    const t = await insertToken(services.db, processor, c, 'active');
    const requestId = await change(c.cardKey, 'lock-card');
    const outbox = new OutboxDeliverer(services.db, services.clients, log, tokenOutboxHandlers({ db: services.db, processing: processor, log }));
    const [message] = await queued(services.db, requestId);
    processor.failNext = new Error('socket hang up');
    expect(await outbox.deliver([message.id])).to.deep.equal({ delivered: 0, failed: 1 });
    expect((await tokenState(services.db, t.id)).status).to.equal('active');
    // The next attempt (its backoff made due now).
    await services.db.query('UPDATE outbox_events SET next_attempt_at = now() WHERE id = $1', [message.id]);
    expect(await outbox.deliver([message.id])).to.deep.equal({ delivered: 1, failed: 0 });
    const sent = processor.calls.filter((call) => call.reference === t.reference && call.kind === 'operation');
    expect(sent.map((call) => call.operationId)).to.deep.equal([message.payload.operationId, message.payload.operationId]);
    expect((await tokenState(services.db, t.id)).status).to.equal('suspended');
  });

  it("a lock's answer does not wait for the token service: its followers' operations are delivered after the commit", async function () {
    const c = await card();
    const t = await insertToken(services.db, processor, c, 'active');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const outbox = new OutboxDeliverer(services.db, services.clients, log, tokenOutboxHandlers({ db: services.db, processing: processor, log }));
    const withDelivery: StatusChangeDeps = { ...deps, deliver: async (ids) => held.then(() => outbox.deliver(ids)).then(() => undefined) };
    const requestId = `req-${newObjectId()}`;
    const result = await applyStatusChange(withDelivery, {
      cardKey: c.cardKey,
      change: OPERATIONS['lock-card'].statusChange,
      issuerBody: {},
      operationId: newObjectId(),
      actor: { source: 'partner', operation: 'card.lock', requestId, eventNamesRequest: true },
      ctx: { requestId },
    });
    expect(result.statusCode, 'answered while the delivery is held').to.equal('L1');
    expect((await tokenState(services.db, t.id)).status).to.equal('active');
    release();
    await waitFor('the token suspended after the commit', async () => (await tokenState(services.db, t.id)).status === 'suspended', 5000);
  });
});
