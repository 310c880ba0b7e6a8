import crypto from 'node:crypto';
import { expect } from 'chai';
import { GatewayError } from '../../../../gateway/errors';
import { applyTransaction, findTransaction } from '../../../../gateway/transactions/projection';
import { checkTransaction } from '../../../../gateway/transactions/validate';
import { openSandboxedServices, type InProcessServices, type SandboxedServices } from '../../../support/in-process';
import { insertToken } from './token-fixtures';

/**
 * A transaction the processor notifies with its `tokenReference` (docs/upstreams.md 10.8) on real
 * PostgreSQL: checked, projected with the gateway's token (`tokenId`, `walletProvider`, on every step
 * and in its events); one with the card itself is unchanged (no such fields).
 */
describe('tokens: the processor\'s transactions made with a token (projection)', function () {
  this.timeout(20_000);
  let world: SandboxedServices;
  let services: InProcessServices;

  before(async function () {
    world = await openSandboxedServices('transaction-token');
    services = world.services;
  });
  after(async function () {
    await world?.close();
  });

  const state = (cardId: string, tokenReference: string | undefined, version: number) =>
    checkTransaction({
      id: crypto.randomBytes(8).toString('hex'),
      cardId,
      accountId: null,
      amount: 12.5,
      currency: 'EUR',
      type: 'PURCHASE',
      status: version === 1 ? 'PENDING' : 'SETTLED',
      merchant: { name: 'Cafe', mcc: '5814', city: 'Berlin', country: 'DE' },
      createdAt: '2026-12-08T10:00:00.000Z',
      updatedAt: '2026-12-08T10:00:00.000Z',
      version,
      settledAmount: version === 1 ? null : 12.5,
      history: [
        { kind: 'authorization', amount: 12.5, at: '2026-12-08T10:00:00.000Z' },
        ...(version > 1 ? [{ kind: 'clearing', amount: 12.5, at: '2026-12-08T11:00:00.000Z' }] : []),
      ],
      ...(tokenReference === undefined ? {} : { tokenReference }),
    });

  it('carries tokenId and walletProvider on every step and in its events; a card purchase has neither', async function () {
    const issued = await world.activeCard('C-TXN-TOKEN');
    const t = await insertToken(services.db, undefined, { cardKey: issued.cardKey, partnerId: world.partnerId }, 'active', { walletProvider: 'samsung_pay' });
    const first = state(issued.cardKey, t.reference, 1);
    expect(await services.db.transaction((tx) => applyTransaction(tx, first, { via: 'reconciler' }))).to.equal('applied');
    const second = { ...state(issued.cardKey, t.reference, 2), id: first.id };
    expect(await services.db.transaction((tx) => applyTransaction(tx, second, { via: 'reconciler' }))).to.equal('applied');
    expect(await findTransaction(services.db, world.partnerId, first.id)).to.deep.include({ status: 'SETTLED', tokenId: t.id, walletProvider: 'samsung_pay' });
    const events = (await services.db.query<{ payload: string }>("SELECT payload FROM partner_events WHERE ordering_key = $1 AND type LIKE 'transaction.%' ORDER BY seq", [issued.cardKey])).rows.map((r) => JSON.parse(r.payload));
    expect(events.map((e) => [e.type, e.data.transaction.tokenId, e.data.transaction.walletProvider])).to.deep.equal([
      ['transaction.created', t.id, 'samsung_pay'],
      ['transaction.updated', t.id, 'samsung_pay'],
    ]);

    const plain = state(issued.cardKey, undefined, 1);
    await services.db.transaction((tx) => applyTransaction(tx, plain, { via: 'reconciler' }));
    const view = await findTransaction(services.db, world.partnerId, plain.id);
    expect(view).to.not.have.any.keys('tokenId', 'walletProvider');
  });

  it('a tokenReference that is not 1 to 100 visible ASCII is refused, naming it', function () {
    for (const bad of ['', 'a b', 'x'.repeat(101), 42]) {
      let err: unknown;
      try {
        state('CK1', bad as string, 1);
      } catch (e) {
        err = e;
      }
      expect(err, String(bad)).to.be.instanceOf(GatewayError);
      expect((err as GatewayError).invalidParams?.[0]?.name).to.equal('transaction.tokenReference');
    }
    expect((state('CK1', null as unknown as string, 1) as { tokenReference?: unknown }).tokenReference).to.equal(null);
  });
});
