import { expect } from 'chai';
import { syncCardWithIssuer } from '../../../../gateway/cards/card-sync';
import { applyStatusChange, type StatusChangeActor } from '../../../../gateway/cards/status-change';
import { OPERATOR_STATUS_CHANGES, OPERATIONS, operatorStatusChange, type StatusChangeOperationName } from '../../../../gateway/catalog';
import { newObjectId } from '../../../../gateway/ids';
import type { Sandboxes } from '../../../../sandbox';
import { openSandboxedServices, type InProcessServices, type SandboxedServices } from '../../../support/in-process';

/**
 * The status change shared by the partner routes and the operator's admin route
 * (gateway/cards/status-change.ts), over real PostgreSQL and a real issuer sandbox.
 */
describe('cards: applyStatusChange (one status change for partners and operators)', function () {
  this.timeout(20_000);
  let sandboxes: Sandboxes;
  let services: InProcessServices;

  let world: SandboxedServices;

  before(async function () {
    world = await openSandboxedServices('status-change');
    ({ sandboxes, services } = world);
  });
  after(async function () {
    await world?.close();
  });

  /** An ACTIVE card the issuer and we both hold. */
  const activeCard = (): Promise<{ cardKey: string; expDate: string }> => world.activeCard('C-STATUS');
  const operator = (operation: string, requestId = `op-${newObjectId()}`): StatusChangeActor => ({
    source: 'operator',
    operation,
    requestId,
    eventNamesRequest: false,
    auditDetails: { source: 'operator' },
  });
  const written = async (cardKey: string) => ({
    card: (await services.db.query('SELECT status, status_code, issuer_check_due, issuer_check_source, issuer_check_target FROM cards WHERE card_key = $1', [cardKey])).rows[0],
    history: (await services.db.query('SELECT operation, old_status_code, new_status_code, reason, request_id FROM card_status_history WHERE card_key = $1 ORDER BY id', [cardKey])).rows,
    audit: (await services.db.query('SELECT operation, outcome, details, request_id FROM audit_log WHERE target_id = $1 ORDER BY id', [cardKey])).rows,
    events: (await services.db.query<{ payload: string }>('SELECT payload FROM partner_events WHERE ordering_key = $1 ORDER BY seq', [cardKey])).rows.map((r) => JSON.parse(r.payload)),
  });
  /** The issuer's next status call for the card hangs (applying nothing) until the client's timeout. */
  const issuerHangsOnce = (cardKey: string) =>
    fetch(`${sandboxes.issuer.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'POST', path: `/cards/${cardKey}/status`, mode: 'timeout', times: 1 }),
    });
  /** An ACTIVE card whose next issuer status call hangs past the timeout, and an operator's order for it. */
  async function orderThatTimesOut(name: StatusChangeOperationName, operation: string, reason: string, requestId: string) {
    const card = await activeCard();
    await issuerHangsOnce(card.cardKey);
    const order = { cardKey: card.cardKey, change: OPERATIONS[name].statusChange, issuerBody: { reason }, operationId: newObjectId(), actor: operator(operation), ctx: { requestId } };
    return { card, order };
  }
  const issuerCalls = async (cardKey: string) => ((await (await fetch(`${sandboxes.issuer.url}/__sandbox/requests?method=POST&path=/cards/${cardKey}/status`)).json()) as any[]);

  it('every operator status is made by the partner status change that sets it', function () {
    for (const [status, name] of Object.entries(OPERATOR_STATUS_CHANGES)) {
      expect(OPERATIONS[name].statusChange.status, name).to.equal(status);
      expect(operatorStatusChange(status as keyof typeof OPERATOR_STATUS_CHANGES)).to.equal(OPERATIONS[name]);
    }
  });

  it('writes the actor into history, audit and event: an operator\'s event has source operator and names no request; a partner\'s names its request', async function () {
    const card = await activeCard();
    const operationId = newObjectId();
    const result = await applyStatusChange(services, {
      cardKey: card.cardKey,
      change: OPERATIONS['lock-card'].statusChange,
      issuerBody: { reason: 'fraud team' },
      operationId,
      actor: operator('admin.card.lock', 'op-1'),
      ctx: { requestId: 'op-1' },
    });
    expect(result).to.deep.equal({ cardKey: card.cardKey, status: 'LOCKED', statusCode: 'L1' });
    const [call] = await issuerCalls(card.cardKey);
    expect(call.headers['idempotency-key']).to.equal(operationId);
    expect(call.body, 'the card\'s expDate, which the issuer requires for a lock').to.deep.equal({ action: 'lock', expDate: card.expDate, reason: 'fraud team' });

    await applyStatusChange(services, {
      cardKey: card.cardKey,
      change: OPERATIONS['unlock-card'].statusChange,
      issuerBody: { expDate: card.expDate, reason: 'holder asked' },
      operationId: newObjectId(),
      actor: { source: 'partner', operation: 'card.unlock', requestId: 'partner-1', eventNamesRequest: true },
      ctx: { requestId: 'partner-1' },
    });
    const state = await written(card.cardKey);
    expect(state.history).to.deep.equal([
      { operation: 'admin.card.lock', old_status_code: '00', new_status_code: 'L1', reason: 'fraud team', request_id: 'op-1' },
      { operation: 'card.unlock', old_status_code: 'L1', new_status_code: '00', reason: 'holder asked', request_id: 'partner-1' },
    ]);
    expect(state.audit).to.deep.equal([
      { operation: 'admin.card.lock', outcome: 'success', details: { from: '00', to: 'L1', source: 'operator' }, request_id: 'op-1' },
      { operation: 'card.unlock', outcome: 'success', details: { from: 'L1', to: '00' }, request_id: 'partner-1' },
    ]);
    expect(state.events.map((e) => [e.data.source, e.data.statusCode, e.data.reason, e.requestId])).to.deep.equal([
      ['operator', 'L1', 'fraud team', undefined],
      ['partner', '00', 'holder asked', 'partner-1'],
    ]);
  });

  it('a throw of inTransaction rolls the whole local change back (what the operator route does when its key was taken over)', async function () {
    const card = await activeCard();
    const before = await written(card.cardKey);
    let error: unknown;
    try {
      await applyStatusChange(services, {
        cardKey: card.cardKey,
        change: OPERATIONS['restrict-card-closed'].statusChange,
        issuerBody: { reason: 'closing' },
        operationId: newObjectId(),
        actor: operator('admin.card.restrict.closed'),
        ctx: { requestId: 'rollback' },
        inTransaction: async () => {
          throw new Error('claim lost');
        },
      });
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).to.equal('claim lost');
    expect(await issuerCalls(card.cardKey), 'the issuer was called').to.have.length(1);
    expect(await written(card.cardKey)).to.deep.equal(before);
  });

  it('an operator\'s call whose outcome is unknown marks the card; the code it asked for, found later, is the operator\'s change', async function () {
    const { card, order } = await orderThatTimesOut('restrict-card-fraud', 'admin.card.restrict.fraud', 'confirmed fraud', 'unknown-outcome');
    const error = await applyStatusChange(services, order).then(() => undefined, (err: any) => err);
    expect(error?.code).to.equal('upstream_timeout');
    const marked = await written(card.cardKey);
    expect(marked.card).to.deep.equal({ status: 'ACTIVE', status_code: '00', issuer_check_due: true, issuer_check_source: 'operator', issuer_check_target: 'S5' });
    expect(marked.audit.map((a) => [a.operation, a.outcome, a.details])).to.deep.equal([['admin.card.restrict.fraud', 'failure', { reason: 'upstream_timeout' }]]);

    // Suppose the issuer did apply it (the same operation id, as a retry would send it): the sync attributes it to the operator.
    await services.clients.issuer.changeStatus({ requestId: 'test' }, card.cardKey, { action: 'fraud', reason: 'confirmed fraud' }, order.operationId);
    expect(await syncCardWithIssuer(services, card.cardKey, 'sync')).to.equal('repaired');
    const synced = await written(card.cardKey);
    expect(synced.card).to.include({ status: 'FRAUD', status_code: 'S5', issuer_check_due: false });
    expect(synced.events.map((e) => [e.data.source, e.data.statusCode])).to.deep.equal([['operator', 'S5']]);
  });

  it('a retry with the same operation id after an unknown outcome the issuer did apply answers the change, not 409 (close: CLOSED is not a state a close starts from)', async function () {
    const { card, order } = await orderThatTimesOut('restrict-card-closed', 'admin.card.restrict.closed', 'closing', 'close-timeout');
    const first = await applyStatusChange(services, order).then(() => undefined, (err: any) => err);
    expect(first?.code).to.equal('upstream_timeout');
    // The issuer did apply it (as the same operation id would have it applied once).
    await services.clients.issuer.changeStatus({ requestId: 'test' }, card.cardKey, { action: 'closed', reason: 'closing' }, order.operationId);
    const issuerCallsBefore = (await issuerCalls(card.cardKey)).length;

    // A fresh request (not a retry) is refused: the card is CLOSED.
    const fresh = await applyStatusChange(services, { ...order, operationId: newObjectId(), ctx: { requestId: 'fresh' } }).then(() => undefined, (err: any) => err);
    expect(fresh?.code).to.equal('invalid_transition');
    // The retry of the same operation answers the change the first attempt made.
    const retried = await applyStatusChange(services, { ...order, resumed: true, ctx: { requestId: 'close-retry' } });
    expect(retried).to.include({ status: 'CLOSED', statusCode: 'S4' });
    const after = await written(card.cardKey);
    expect(after.card).to.include({ status: 'CLOSED', status_code: 'S4', issuer_check_due: false });
    expect(after.events.map((e) => [e.data.source, e.data.statusCode]), 'one event, written when the change was found').to.deep.equal([['operator', 'S4']]);
    expect((await issuerCalls(card.cardKey)).length - issuerCallsBefore, 'the retry calls the issuer once more, with the same operation id (answered as a replay)').to.equal(1);
  });

  it('refuses a transition the table does not allow before any issuer call: 409 invalid_transition naming the card\'s status', async function () {
    const card = await activeCard();
    await applyStatusChange(services, {
      cardKey: card.cardKey,
      change: OPERATIONS['restrict-card-closed'].statusChange,
      issuerBody: { reason: 'closed' },
      operationId: newObjectId(),
      actor: operator('admin.card.restrict.closed'),
      ctx: { requestId: 'close' },
    });
    const before = { calls: (await issuerCalls(card.cardKey)).length, state: await written(card.cardKey) };
    let error: any;
    try {
      await applyStatusChange(services, {
        cardKey: card.cardKey,
        change: OPERATIONS['unlock-card'].statusChange,
        issuerBody: { reason: 'reopen' },
        operationId: newObjectId(),
        actor: operator('admin.card.unlock'),
        ctx: { requestId: 'reopen' },
      });
    } catch (err) {
      error = err;
    }
    expect(error.code).to.equal('invalid_transition');
    expect(error.extensions).to.deep.equal({ cardStatus: 'CLOSED', statusCode: 'S4' });
    expect((await issuerCalls(card.cardKey)).length).to.equal(before.calls);
    expect(await written(card.cardKey)).to.deep.equal(before.state);
  });
});
