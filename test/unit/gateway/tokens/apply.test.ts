import { expect } from 'chai';
import { GatewayError } from '../../../../gateway/errors';
import { applyTokenNotification } from '../../../../gateway/inbound/apply';
import { newTokenId } from '../../../../gateway/ids';
import { applyToken, type TokenOrigin } from '../../../../gateway/tokens/apply';
import type { UpstreamToken } from '../../../../gateway/tokens/contract-stub';
import { cardTokens, findToken, tokenByReference } from '../../../../gateway/tokens/store';
import { checkTokenNotification } from '../../../../gateway/tokens/validate';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { addCard, auditOf, eventsOf, newPartner, upstreamToken, type PartnerFixture } from './fixtures';

/**
 * applyToken (gateway/tokens/apply.ts) on real PostgreSQL: the processor's token states applied by
 * version (newer only; repeats and late ones change nothing), with their history, audit entries
 * and token.created / token.updated events; the notification path applied once per id.
 */
describe('unit: applying the processor\'s token states (gateway/tokens/apply.ts)', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  let partner: PartnerFixture;
  const reconciler: TokenOrigin = { via: 'reconciler' };

  before(async function () {
    services = await openServices();
    partner = await newPartner(services, 'apply');
  });
  after(async function () {
    await services?.close();
  });

  const apply = (t: UpstreamToken, origin: TokenOrigin = reconciler) => services.db.transaction((tx) => applyToken(tx, t, origin));

  it('a token the gateway does not hold is recorded as the processor holds it: token.created, card.token.received, history by network, never the reference', async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey);
    const { outcome, token } = await apply(t, { via: 'notification', notificationId: 'ntf_created_1' });
    expect(outcome).to.equal('applied');
    expect(token!._id).to.match(/^tok_[0-9a-f]{24}$/);
    expect(token).to.deep.include({ cardKey, walletProvider: 'apple_pay', tokenRequestorId: '50110030273', last4: '4821', tokenExpDate: '11/2029', status: 'active' });
    expect(token).to.not.have.property('suspendedBy');
    expect(token!.device).to.deep.equal({ type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' });
    expect(token!.history).to.have.length(1);
    expect(token!.history[0]).to.include({ status: 'active', by: 'network' });
    expect(JSON.stringify(token)).to.not.contain(t.tokenReference);
    const created = (await eventsOf(services.db, partner.partnerId, 'token.created')).filter((e) => e.data.token._id === token!._id);
    expect(created).to.have.length(1);
    expect(created[0].data.token).to.deep.equal(token);
    const audit = (await auditOf(services.db, partner.partnerId, 'card.token.received')).filter((a) => a.details.tokenId === token!._id);
    expect(audit).to.have.length(1);
    expect(audit[0]).to.include({ target_id: cardKey, request_id: 'notify-ntf_created_1' });
    expect(audit[0].details).to.include({ via: 'notification', notificationId: 'ntf_created_1', status: 'active', version: 1 });
    expect(await cardTokens(services.db, partner.partnerId, cardKey)).to.deep.equal([token]);
    expect(await findToken(services.db, token!._id, partner.partnerId)).to.deep.equal(token);
    expect(await findToken(services.db, token!._id, '0'.repeat(24)), "another partner's read").to.equal(undefined);
  });

  it('the same state again, or an older one after a newer, changes nothing and writes no event', async function () {
    const cardKey = await addCard(services.db, partner);
    const v1 = upstreamToken(cardKey);
    const first = await apply(v1);
    const v3 = { ...v1, status: 'suspended' as const, version: 3 };
    expect((await apply(v3)).outcome).to.equal('applied');
    const before = await eventsOf(services.db, partner.partnerId);
    expect((await apply(v1)).outcome, 'the first state again').to.equal('unchanged');
    expect((await apply({ ...v1, status: 'active', version: 2 })).outcome, 'a late state').to.equal('unchanged');
    expect((await apply(v3)).outcome, 'the newest state again').to.equal('unchanged');
    expect(await eventsOf(services.db, partner.partnerId)).to.have.length(before.length);
    const held = (await findToken(services.db, first.token!._id))!;
    expect(held.status).to.equal('suspended');
    expect(held.history.map((h) => h.status)).to.deep.equal(['active', 'suspended']);
  });

  it('each newer change is one token.updated {token, previousStatus, change}, in order: suspended, resumed, deactivated; the network\'s suspension has no suspendedBy', async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey);
    const { token } = await apply(t);
    await apply({ ...t, status: 'suspended', version: 2 }, { via: 'notification', notificationId: 'ntf_s', reason: 'device_lost' });
    const suspended = (await findToken(services.db, token!._id))!;
    expect(suspended.status).to.equal('suspended');
    expect(suspended).to.not.have.property('suspendedBy');
    expect(suspended.history[1]).to.include({ status: 'suspended', by: 'network', reason: 'device_lost' });
    await apply({ ...t, status: 'active', version: 3 });
    await apply({ ...t, status: 'deactivated', version: 4 });
    const updates = (await eventsOf(services.db, partner.partnerId, 'token.updated')).filter((e) => e.data.token._id === token!._id);
    expect(updates.map((e) => [e.data.previousStatus, e.data.change, e.data.token.status])).to.deep.equal([
      ['active', 'suspended', 'suspended'],
      ['suspended', 'resumed', 'active'],
      ['active', 'deactivated', 'deactivated'],
    ]);
  });

  it('a requested token the network sends to verification is a token.updated verification_required, then activated', async function () {
    const cardKey = await addCard(services.db, partner);
    const t = { ...upstreamToken(cardKey), status: 'requested' as const };
    const { token } = await apply(t);
    await apply({ ...t, status: 'pending_verification', version: 2 });
    await apply({ ...t, status: 'active', version: 3 });
    const updates = (await eventsOf(services.db, partner.partnerId, 'token.updated')).filter((e) => e.data.token._id === token!._id);
    expect(updates.map((e) => [e.data.previousStatus, e.data.change, e.data.token.status])).to.deep.equal([
      ['requested', 'verification_required', 'pending_verification'],
      ['pending_verification', 'activated', 'active'],
    ]);
    expect((await findToken(services.db, token!._id))!.history.map((h) => h.status)).to.deep.equal(['requested', 'pending_verification', 'active']);
  });

  it("the processor's report of an operation the gateway sent, arriving before the operation's answer is applied, is that operation's change: one history entry by it, one event with its request id", async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey);
    const { token } = await apply(t);
    const pending = { action: 'suspend', to: 'suspended', by: 'partner', requestId: 'req-suspend-1', reason: 'customer asked', at: Date.now() };
    await services.db.query('UPDATE tokens SET operation_pending = $2::jsonb WHERE id = $1', [token!._id, JSON.stringify(pending)]);
    const suspended = { ...t, status: 'suspended' as const, version: 2 };
    // The notification first, then the operation's own answer (the same state).
    expect((await apply(suspended, { via: 'notification', notificationId: 'ntf_op_1', reason: 'operation' })).outcome).to.equal('applied');
    expect((await apply(suspended, { via: 'operation', requestId: 'req-suspend-1', by: 'partner', reason: 'customer asked' })).outcome).to.equal('unchanged');
    const held = (await findToken(services.db, token!._id))!;
    expect(held).to.deep.include({ status: 'suspended', suspendedBy: 'partner' });
    expect(held.history.slice(1)).to.have.length(1);
    expect(held.history[1]).to.include({ status: 'suspended', by: 'partner', reason: 'customer asked' });
    const updates = (await eventsOf(services.db, partner.partnerId, 'token.updated')).filter((e) => e.data.token._id === token!._id);
    expect(updates.map((e) => [e.data.change, e.data.token.suspendedBy, e.requestId])).to.deep.equal([['suspended', 'partner', 'req-suspend-1']]);
    expect((await services.db.query('SELECT operation_pending FROM tokens WHERE id = $1', [token!._id])).rows[0].operation_pending, 'the mark, cleared').to.equal(null);
    // A mark of another status, or one past its life, does not attribute a report.
    await services.db.query('UPDATE tokens SET operation_pending = $2::jsonb WHERE id = $1', [token!._id, JSON.stringify({ ...pending, action: 'deactivate', to: 'deactivated', at: Date.now() - 11 * 60_000 })]);
    await apply({ ...t, status: 'active', version: 3 }, { via: 'notification', notificationId: 'ntf_op_2' });
    await apply({ ...t, status: 'deactivated', version: 4 }, { via: 'reconciler' });
    const after = (await findToken(services.db, token!._id))!;
    expect(after.history.slice(2).map((h) => [h.status, h.by])).to.deep.equal([['active', 'network'], ['deactivated', 'network']]);
  });

  it('a newer version with nothing partners see (an operation\'s own notification) moves the version only: no history entry, no event', async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey);
    const { token } = await apply(t);
    const events = (await eventsOf(services.db, partner.partnerId)).length;
    expect((await apply({ ...t, version: 2 })).outcome).to.equal('unchanged');
    expect((await tokenByReference(services.db, t.tokenReference))!.version).to.equal(2);
    expect((await findToken(services.db, token!._id))!.history).to.have.length(1);
    expect(await eventsOf(services.db, partner.partnerId)).to.have.length(events);
    // A new device name is a change partners see: device_updated, without a history entry.
    await apply({ ...t, version: 3, device: { type: 'phone', name: 'New name' } });
    const last = (await eventsOf(services.db, partner.partnerId, 'token.updated')).pop()!;
    expect(last.data).to.deep.include({ change: 'device_updated', previousStatus: 'active' });
    expect(last.data.token.device).to.deep.equal({ type: 'phone', name: 'New name' });
    expect(last.data.token.history).to.have.length(1);
  });

  it("who holds a suspension: the card's state (its hold), then the partner's own suspend at the same version is a change (suspendedBy partner), which the card's later hold does not undo", async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey);
    const { token } = await apply(t);
    await services.db.query('UPDATE tokens SET card_state_hold = true WHERE id = $1', [token!._id]);
    const byCard = await apply({ ...t, status: 'suspended', version: 2 }, { via: 'operation', requestId: 'req-lock', by: 'card_state' });
    expect(byCard.token).to.deep.include({ status: 'suspended', suspendedBy: 'card_state' });
    // The processor answers a suspend of a suspended token unchanged, at the same version.
    const byPartner = await apply({ ...t, status: 'suspended', version: 2 }, { via: 'operation', requestId: 'req-suspend', by: 'partner', reason: 'lost phone' });
    expect(byPartner.outcome).to.equal('applied');
    expect(byPartner.token).to.deep.include({ status: 'suspended', suspendedBy: 'partner' });
    const last = (await eventsOf(services.db, partner.partnerId, 'token.updated')).pop()!;
    expect(last).to.deep.include({ requestId: 'req-suspend' });
    expect(last.data).to.deep.include({ change: 'suspended', previousStatus: 'suspended' });
    expect(byPartner.token!.history.at(-1)).to.include({ status: 'suspended', by: 'partner', reason: 'lost phone' });
    // The cascade's suspend again (a later lock) keeps the partner's.
    const again = await apply({ ...t, status: 'suspended', version: 2 }, { via: 'operation', requestId: 'req-lock-2', by: 'card_state' });
    expect(again.outcome).to.equal('unchanged');
    expect(again.token!.suspendedBy).to.equal('partner');
    // The same state from the network (not the gateway's operation) at the same version is not applied.
    expect((await apply({ ...t, status: 'suspended', version: 2 }, reconciler)).outcome).to.equal('unchanged');
  });

  it('a token of a card the gateway does not hold: unknown_card, nothing written', async function () {
    const t = upstreamToken('CK_NOT_OURS_1');
    expect((await apply(t)).outcome).to.equal('unknown_card');
    expect(await tokenByReference(services.db, t.tokenReference)).to.equal(undefined);
  });

  it('the stand-in\'s declined token, told first, takes the id its tokenization claim drew, with reason stand_in', async function () {
    const cardKey = await addCard(services.db, partner);
    const tokenizationId = `tkz_apply_${Date.now()}`;
    const drawn = newTokenId();
    await services.db.query(
      `INSERT INTO tokenization_decisions (tokenization_id, token_id, card_key, state, claim_token, lease_until) VALUES ($1, $2, $3, 'deciding', 'x', now())`,
      [tokenizationId, drawn, cardKey]
    );
    const { token } = await apply(upstreamToken(cardKey, { tokenizationId, status: 'declined' }), { via: 'notification', notificationId: 'ntf_standin' });
    expect(token!._id).to.equal(drawn);
    expect(token!.history[0]).to.include({ status: 'declined', by: 'network', reason: 'stand_in' });
  });

  it('a notification repeated (or sent by two deliveries at once) is one change and one event; its row says duplicate', async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey);
    const body = { id: `ntf_once_${Date.now()}`, type: 'token.created', occurredAt: new Date().toISOString(), token: t };
    const n = checkTokenNotification(body);
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map(() => applyTokenNotification(services.db, n)));
    expect(outcomes.filter((o) => o === 'applied')).to.have.length(1);
    expect(outcomes.filter((o) => o === undefined)).to.have.length(4);
    const held = (await tokenByReference(services.db, t.tokenReference))!;
    expect((await eventsOf(services.db, partner.partnerId, 'token.created')).filter((e) => e.data.token._id === held.id)).to.have.length(1);
    // The same state in another notification (another id): recorded, nothing applied.
    const other = checkTokenNotification({ ...body, id: `${body.id}_b` });
    expect(await applyTokenNotification(services.db, other)).to.equal('unchanged');
  });

  it('concurrent writers of one new token (the notification, the reconciler, the operation\'s answer) make one token and one token.created', async function () {
    const cardKey = await addCard(services.db, partner);
    const t = upstreamToken(cardKey);
    const results = await Promise.all([0, 1, 2, 3, 4, 5].map(() => apply(t)));
    expect(results.filter((r) => r.outcome === 'applied')).to.have.length(1);
    const held = (await tokenByReference(services.db, t.tokenReference))!;
    expect(new Set(results.map((r) => r.token!._id))).to.deep.equal(new Set([held.id]));
    expect((await eventsOf(services.db, partner.partnerId, 'token.created')).filter((e) => e.data.token._id === held.id)).to.have.length(1);
  });

  it('the notification check refuses what the columns could not hold, and a card number anywhere', function () {
    const good = { id: 'ntf_1', type: 'token.updated', occurredAt: new Date().toISOString(), change: 'suspended', token: upstreamToken('CK1') };
    expect(() => checkTokenNotification(good)).to.not.throw();
    const bad: Array<[string, Record<string, unknown>]> = [
      ['type', { ...good, type: 'token.deleted' }],
      ['change', { ...good, change: 'paused' }],
      ['token.status', { ...good, token: { ...good.token, status: 'paused' } }],
      ['token.version', { ...good, token: { ...good.token, version: 0 } }],
      ['token.last4', { ...good, token: { ...good.token, last4: '48211' } }],
      ['token.tokenRequestorId', { ...good, token: { ...good.token, tokenRequestorId: '5011003027' } }],
      ['token.tokenExpDate', { ...good, token: { ...good.token, tokenExpDate: '13/2029' } }],
      ['token.walletProvider', { ...good, token: { ...good.token, walletProvider: 'paypal' } }],
      ['token.device.type', { ...good, token: { ...good.token, device: { type: 'car' } } }],
      ['token.device.name', { ...good, token: { ...good.token, device: { type: 'phone', name: 'card 5355 7099 9999 9994' } } }],
      ['token.tokenReference', { ...good, token: { ...good.token, tokenReference: '5355709999999994' } }],
    ];
    for (const [name, body] of bad) {
      let refused: unknown;
      try {
        checkTokenNotification(body);
      } catch (err) {
        refused = err;
      }
      expect(refused, name).to.be.instanceOf(GatewayError);
      expect((refused as GatewayError).code, name).to.equal('validation_failed');
      expect((refused as GatewayError).invalidParams?.[0]?.name, name).to.equal(name);
    }
  });
});
