import { expect } from 'chai';
import { GatewayError } from '../../../../gateway/errors';
import { newObjectId } from '../../../../gateway/ids';
import { createLogger } from '../../../../gateway/logging/logger';
import type { TokenStatus, TokenSuspendedBy } from '../../../../gateway/shapes/token';
import { changeTokenStatus, tokenRefusal, type TokenAction, type TokenOperationDeps } from '../../../../gateway/tokens/operations';
import { openSandboxedServices, type InProcessServices, type SandboxedServices } from '../../../support/in-process';
import { insertToken, ProcessorStandIn, tokenState } from './token-fixtures';

/**
 * A partner's suspend, resume and deactivate of a token (gateway/tokens/operations.ts,
 * `changeTokenStatus`) on real PostgreSQL: every cell of docs/tokens.md's routes table, with what
 * each answers, what it sends the processor and what it writes (the token, its history, its event,
 * the audit entry), and that a refusal sends and changes nothing.
 */
describe('tokens: a partner\'s change of a token (the routes\' table)', function () {
  this.timeout(30_000);
  let world: SandboxedServices;
  let services: InProcessServices;
  let processor: ProcessorStandIn;
  let deps: TokenOperationDeps;

  before(async function () {
    world = await openSandboxedServices('token-operations');
    services = world.services;
    processor = new ProcessorStandIn();
    deps = { db: services.db, processing: processor, log: createLogger({ level: 'silent' }) };
  });
  after(async function () {
    await world?.close();
  });

  /** An ACTIVE card (or one set to `statusCode`) with one token in the state of the column. */
  const tokenIn = async (state: { status: TokenStatus; suspendedBy?: TokenSuspendedBy; hold?: boolean }, statusCode = '00') => {
    const issued = await world.activeCard('C-TOKEN-OPS');
    if (statusCode !== '00') await services.db.query("UPDATE cards SET status = CASE $2 WHEN 'L1' THEN 'LOCKED' ELSE 'ACTIVE' END, status_code = $2 WHERE card_key = $1", [issued.cardKey, statusCode]);
    return insertToken(services.db, processor, { cardKey: issued.cardKey, partnerId: world.partnerId }, state.status, { suspendedBy: state.suspendedBy, hold: state.hold });
  };
  const order = (tokenId: string, action: TokenAction, operationId = newObjectId()) => {
    const requestId = `req-${newObjectId()}`;
    return { tokenId, partnerId: world.partnerId, action, operationId, operation: `token.${action}`, requestId, ctx: { requestId } };
  };
  /** Everything a refusal must leave as it was: the token's row, its events, its audit entries, the processor's calls. */
  const snapshot = async (tokenId: string, cardKey: string) => ({
    token: await tokenState(services.db, tokenId),
    events: (await services.db.query('SELECT count(*)::int AS n FROM partner_events WHERE ordering_key = $1', [cardKey])).rows[0].n,
    audit: (await services.db.query("SELECT count(*)::int AS n FROM audit_log WHERE target_id = $1 AND outcome = 'success'", [cardKey])).rows[0].n,
    calls: processor.calls.length,
  });
  const refused = async (promise: Promise<unknown>): Promise<GatewayError> => {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(GatewayError);
      return err as GatewayError;
    }
    throw new Error('expected a refusal');
  };
  const updatedEvents = async (cardKey: string) =>
    (await services.db.query<{ payload: string }>("SELECT payload FROM partner_events WHERE ordering_key = $1 AND type = 'token.updated' ORDER BY seq", [cardKey])).rows.map((r) => JSON.parse(r.payload));

  // The table's refusals: 409 token_transition_invalid (with tokenStatus), or card_not_active (with the card's status), nothing sent or written.
  const refusals: { action: TokenAction; state: { status: TokenStatus; suspendedBy?: TokenSuspendedBy; hold?: boolean }; statusCode?: string; code: string }[] = [
    { action: 'suspend', state: { status: 'requested' }, code: 'token_transition_invalid' },
    { action: 'suspend', state: { status: 'pending_verification' }, code: 'token_transition_invalid' },
    { action: 'suspend', state: { status: 'deactivated' }, code: 'token_transition_invalid' },
    { action: 'suspend', state: { status: 'declined' }, code: 'token_transition_invalid' },
    { action: 'resume', state: { status: 'requested' }, code: 'token_transition_invalid' },
    { action: 'resume', state: { status: 'pending_verification' }, code: 'token_transition_invalid' },
    { action: 'resume', state: { status: 'deactivated' }, code: 'token_transition_invalid' },
    { action: 'resume', state: { status: 'declined' }, code: 'token_transition_invalid' },
    { action: 'resume', state: { status: 'suspended', suspendedBy: 'partner' }, statusCode: 'L1', code: 'card_not_active' },
    { action: 'resume', state: { status: 'suspended', suspendedBy: 'card_state', hold: true }, statusCode: 'L1', code: 'card_not_active' },
    { action: 'deactivate', state: { status: 'deactivated' }, code: 'token_transition_invalid' },
    { action: 'deactivate', state: { status: 'declined' }, code: 'token_transition_invalid' },
  ];
  for (const { action, state, statusCode, code } of refusals) {
    it(`${action} of a ${state.status}${state.suspendedBy ? ` (${state.suspendedBy})` : ''} token${statusCode ? ` of a ${statusCode} card` : ''}: 409 ${code}, nothing sent or changed`, async function () {
      const t = await tokenIn(state, statusCode);
      const before = await snapshot(t.id, t.cardKey);
      const err = await refused(changeTokenStatus(deps, order(t.id, action)));
      expect(err.status).to.equal(409);
      expect(err.code).to.equal(code);
      if (code === 'token_transition_invalid') expect(err.extensions?.tokenStatus).to.equal(state.status);
      else expect(err.extensions).to.include({ cardStatus: 'LOCKED', statusCode: 'L1' });
      expect(await snapshot(t.id, t.cardKey)).to.deep.equal(before);
    });
  }

  it('suspend of an active token: 200 suspended by the partner, sent with the operation id and requestedBy partner, history, event and audit entry', async function () {
    const t = await tokenIn({ status: 'active' });
    const o = { ...order(t.id, 'suspend'), reason: 'holder asked' };
    const { token, queued } = await changeTokenStatus(deps, o);
    expect(token).to.include({ _id: t.id, status: 'suspended', suspendedBy: 'partner' });
    expect(queued).to.deep.equal([]);
    expect(processor.calls.at(-1)).to.deep.include({ kind: 'operation', reference: t.reference, action: 'suspend', operationId: o.operationId, body: { requestedBy: 'partner', reason: 'holder asked' } });
    expect(token.history.at(-1)).to.include({ status: 'suspended', by: 'partner', reason: 'holder asked' });
    const [event] = await updatedEvents(t.cardKey);
    expect([event.data.change, event.data.previousStatus, event.data.token.suspendedBy, event.requestId]).to.deep.equal(['suspended', 'active', 'partner', o.requestId]);
    const audit = (await services.db.query("SELECT details FROM audit_log WHERE target_id = $1 AND operation = 'token.suspend'", [t.cardKey])).rows;
    expect(audit.map((a) => a.details)).to.deep.equal([{ tokenId: t.id, from: 'active', to: 'suspended' }]);
  });

  it('suspend of a token the partner or the network suspended: 200 unchanged, no call and no event', async function () {
    for (const suspendedBy of ['partner', undefined] as const) {
      const t = await tokenIn({ status: 'suspended', suspendedBy });
      const calls = processor.calls.length;
      const { token } = await changeTokenStatus(deps, order(t.id, 'suspend'));
      expect(token.status).to.equal('suspended');
      expect(token.suspendedBy).to.equal(suspendedBy);
      expect(processor.calls.length).to.equal(calls);
      expect(await updatedEvents(t.cardKey)).to.deep.equal([]);
    }
  });

  it("suspend of a token the card's state suspended: it becomes the partner's (an event), its hold released, so the card's unlock leaves it suspended", async function () {
    const t = await tokenIn({ status: 'suspended', suspendedBy: 'card_state', hold: true }, 'L1');
    const { token } = await changeTokenStatus(deps, order(t.id, 'suspend'));
    expect(token).to.include({ status: 'suspended', suspendedBy: 'partner' });
    expect(await tokenState(services.db, t.id)).to.include({ card_state_hold: false, suspended_by: 'partner' });
    const [event] = await updatedEvents(t.cardKey);
    expect([event.data.change, event.data.previousStatus]).to.deep.equal(['suspended', 'suspended']);
  });

  it('resume of an active token: 200 unchanged, no call; of a suspended one on an ACTIVE card: 200 active', async function () {
    const active = await tokenIn({ status: 'active' });
    const calls = processor.calls.length;
    expect((await changeTokenStatus(deps, order(active.id, 'resume'))).token.status).to.equal('active');
    expect(processor.calls.length).to.equal(calls);
    for (const suspendedBy of ['partner', undefined, 'card_state'] as const) {
      const t = await tokenIn({ status: 'suspended', suspendedBy });
      const { token } = await changeTokenStatus(deps, order(t.id, 'resume'));
      expect(token, String(suspendedBy)).to.include({ status: 'active' });
      expect(token.suspendedBy).to.equal(undefined);
      const [event] = await updatedEvents(t.cardKey);
      expect(event.data.change).to.equal('resumed');
    }
  });

  it('deactivate from every status that is not final: 200 deactivated, final from then on', async function () {
    for (const state of [{ status: 'requested' }, { status: 'pending_verification' }, { status: 'active' }, { status: 'suspended', suspendedBy: 'partner' }, { status: 'suspended', suspendedBy: 'card_state', hold: true }] as const) {
      const t = await tokenIn(state);
      const { token } = await changeTokenStatus(deps, order(t.id, 'deactivate'));
      expect(token.status, state.status).to.equal('deactivated');
      expect(await tokenState(services.db, t.id)).to.include({ card_state_hold: false });
      const again = await refused(changeTokenStatus(deps, order(t.id, 'suspend')));
      expect(again.code).to.equal('token_transition_invalid');
    }
  });

  it("a retry with the same operation id is applied once at the processor, and answers the token's state", async function () {
    const t = await tokenIn({ status: 'active' });
    const o = order(t.id, 'suspend');
    await changeTokenStatus(deps, o);
    const again = await changeTokenStatus(deps, { ...o, requestId: `${o.requestId}-retry` });
    expect(again.token).to.include({ status: 'suspended', suspendedBy: 'partner' });
    expect(processor.tokens.get(t.reference)!.version, 'one change at the processor').to.equal(2);
    expect(await updatedEvents(t.cardKey)).to.have.length(1);
  });

  it('an unanswered call (timeout) is answered as it is and marks the token for the reconciler; nothing else changes', async function () {
    const t = await tokenIn({ status: 'active' });
    processor.failNext = new GatewayError('upstream_timeout', 'The card processing system did not answer in time', { extensions: { upstream: 'processing' } });
    const err = await refused(changeTokenStatus(deps, order(t.id, 'suspend')));
    expect(err.code).to.equal('upstream_timeout');
    const row = (await services.db.query('SELECT status, processor_check_due FROM tokens WHERE id = $1', [t.id])).rows[0];
    expect(row).to.deep.equal({ status: 'active', processor_check_due: true });
    expect(await updatedEvents(t.cardKey)).to.deep.equal([]);
  });

  it("the processor's refusal of a transition it holds otherwise (the token declined at its end): 409 token_transition_invalid; unknown to it: 404", async function () {
    const t = await tokenIn({ status: 'active' });
    processor.set(t.reference, 'declined');
    const err = await refused(changeTokenStatus(deps, order(t.id, 'suspend')));
    expect([err.status, err.code, err.extensions?.upstreamCode]).to.deep.equal([409, 'token_transition_invalid', 'TOKEN_TRANSITION_INVALID']);
    processor.tokens.delete(t.reference);
    const gone = await refused(changeTokenStatus(deps, order(t.id, 'deactivate')));
    expect([gone.status, gone.code]).to.deep.equal([404, 'not_found']);
    expect((await tokenState(services.db, t.id)).status).to.equal('active');
    expect(tokenRefusal(new Error('other'))).to.be.instanceOf(Error);
  });

  it("another partner's token, or none: 404 not_found, nothing sent", async function () {
    const t = await tokenIn({ status: 'active' });
    const calls = processor.calls.length;
    const err = await refused(changeTokenStatus(deps, { ...order(t.id, 'suspend'), partnerId: newObjectId() }));
    expect(err.code).to.equal('not_found');
    const none = await refused(changeTokenStatus(deps, order('tok_000000000000000000000000', 'suspend')));
    expect(none.code).to.equal('not_found');
    expect(processor.calls.length).to.equal(calls);
  });
});
