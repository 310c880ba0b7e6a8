import crypto from 'node:crypto';
import { expect } from 'chai';
import { decideAuthorization, type AuthorizationRequest } from '../../../../gateway/authorizations/decide';
import { checkAuthorizationToken } from '../../../../gateway/authorizations/decision';
import { newEndpointHints } from '../../../../gateway/authorizations/card-hints';
import { saveSpendControls } from '../../../../gateway/authorizations/spend-controls';
import { completeReplacement } from '../../../../gateway/cards/card-sync';
import { insertCard } from '../../../../gateway/cards/card-store';
import { applyStatusChange, type StatusChangeDeps } from '../../../../gateway/cards/status-change';
import { OPERATIONS } from '../../../../gateway/catalog';
import { GatewayError } from '../../../../gateway/errors';
import { newObjectId } from '../../../../gateway/ids';
import { createLogger } from '../../../../gateway/logging/logger';
import { createTokenCascade } from '../../../../gateway/tokens/cascade';
import { cardBody } from '../../../support/api';
import { openSandboxedServices, type InProcessServices, type SandboxedServices } from '../../../support/in-process';
import { insertToken, tokenState } from '../tokens/token-fixtures';

/**
 * Purchases made with a network token (docs/upstreams.md 10.8; docs/tokens.md "Transactions and
 * spend controls"), decided on real PostgreSQL by the decision's own statements: the card read
 * through the token, so that from the moment a card change has committed (its 200) a purchase with
 * any of its tokens is decided by the card's new state, before the processor confirms anything;
 * the token's own state; the wallet lists; the token on the recorded transaction.
 */
describe('authorizations: purchases with a network token', function () {
  this.timeout(30_000);
  let world: SandboxedServices;
  let services: InProcessServices;
  let cardDeps: StatusChangeDeps;
  const log = createLogger({ level: 'silent' });

  before(async function () {
    world = await openSandboxedServices('token-purchases');
    services = world.services;
    // The cascade in the card change's transaction, its operations left undelivered: the processor holds every token active.
    cardDeps = { db: services.db, clients: services.clients, log, cardState: createTokenCascade() };
  });
  after(async function () {
    await world?.close();
  });

  const purchase = (cardId: string, reference: string, walletProvider: 'apple_pay' | 'google_pay' = 'apple_pay'): AuthorizationRequest => ({
    id: `auth_${crypto.randomBytes(8).toString('hex')}`,
    transactionId: crypto.randomBytes(12).toString('hex'),
    cardId,
    amount: 25,
    currency: 'EUR',
    type: 'PURCHASE',
    merchant: { name: 'Cafe', mcc: '5814', city: 'Berlin', country: 'DE' },
    at: new Date().toISOString(),
    token: { reference, walletProvider },
  });
  const decide = (request: AuthorizationRequest) => decideAuthorization({ db: services.db, log, checks: {}, endpointHints: newEndpointHints() }, request, Date.now() + 1700);
  const recorded = async (transactionId: string) =>
    (await services.db.query('SELECT card_key, status, decline_reason, token_id, wallet_provider, decided_by FROM card_transactions WHERE id = $1', [transactionId])).rows[0];
  const lock = (cardKey: string) =>
    applyStatusChange(cardDeps, {
      cardKey,
      change: OPERATIONS['lock-card'].statusChange,
      issuerBody: {},
      operationId: newObjectId(),
      actor: { source: 'partner', operation: 'card.lock', requestId: `lock-${newObjectId()}`, eventNamesRequest: true },
      ctx: { requestId: 'lock' },
    });

  it('approved with an active token: the transaction carries the token and its wallet', async function () {
    const issued = await world.activeCard('C-TOKEN-BUY');
    const t = await insertToken(services.db, undefined, { cardKey: issued.cardKey, partnerId: world.partnerId }, 'active', { walletProvider: 'google_pay' });
    const request = purchase(issued.cardKey, t.reference, 'google_pay');
    expect(await decide(request)).to.deep.equal({ approved: true, decidedBy: 'approved' });
    expect(await recorded(request.transactionId)).to.deep.include({ status: 'PENDING', token_id: t.id, wallet_provider: 'google_pay' });
    const event = (await services.db.query<{ payload: string }>("SELECT payload FROM partner_events WHERE ordering_key = $1 AND type = 'transaction.created'", [issued.cardKey])).rows;
    expect(event).to.have.length(1);
  });

  it('from the commit of a lock on (its 200), a purchase with any of its tokens is declined card_locked, though the processor has not suspended them yet', async function () {
    const issued = await world.activeCard('C-TOKEN-BUY');
    const t = await insertToken(services.db, undefined, { cardKey: issued.cardKey, partnerId: world.partnerId }, 'active');
    await lock(issued.cardKey);
    expect((await tokenState(services.db, t.id)).status, 'the token still active: nothing delivered').to.equal('active');
    const request = purchase(issued.cardKey, t.reference);
    expect(await decide(request)).to.deep.equal({ approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' });
    expect(await recorded(request.transactionId)).to.deep.include({ status: 'DECLINED', decline_reason: 'card_locked', token_id: t.id });
  });

  it("a token the partner suspended, or one the gateway does not hold: token_inactive, decided by token_state", async function () {
    const issued = await world.activeCard('C-TOKEN-BUY');
    const t = await insertToken(services.db, undefined, { cardKey: issued.cardKey, partnerId: world.partnerId }, 'suspended', { suspendedBy: 'partner' });
    const request = purchase(issued.cardKey, t.reference);
    expect(await decide(request)).to.deep.equal({ approved: false, declineReason: 'token_inactive', decidedBy: 'token_state', rule: 'token.status.suspended.partner' });
    expect(await recorded(request.transactionId)).to.deep.include({ status: 'DECLINED', decline_reason: 'token_inactive', token_id: t.id });
    const unknown = purchase(issued.cardKey, `tref_${crypto.randomBytes(12).toString('hex')}`);
    expect(await decide(unknown)).to.deep.include({ approved: false, declineReason: 'token_inactive', rule: 'token.unknown' });
    expect(await recorded(unknown.transactionId)).to.deep.include({ token_id: null, card_key: issued.cardKey });
  });

  it("the wallet lists of the card's spend controls decline a token of a blocked wallet; the card itself still pays", async function () {
    const issued = await world.activeCard('C-TOKEN-BUY');
    const t = await insertToken(services.db, undefined, { cardKey: issued.cardKey, partnerId: world.partnerId }, 'active', { walletProvider: 'google_pay' });
    await saveSpendControls(services.db, world.partnerId, issued.cardKey, { allowedWalletProviders: ['apple_pay'] });
    expect(await decide(purchase(issued.cardKey, t.reference, 'google_pay'))).to.deep.equal({
      approved: false,
      declineReason: 'wallet_provider_blocked',
      decidedBy: 'spend_controls',
      rule: 'card.allowedWalletProviders',
    });
    const { token: _none, ...withCard } = purchase(issued.cardKey, t.reference);
    expect(await decide(withCard)).to.deep.equal({ approved: true, decidedBy: 'approved' });
  });

  it('a moved token is decided by its new card even when the processor still names the old one; an I1 card only with tokenizeBeforeActivation', async function () {
    const issued = await services.clients.issuer.createCard({ requestId: 'test' }, { type: 'physical', ...(cardBody('C-TOKEN-MOVE') as any) });
    await insertCard(services.db, { ...issued, partnerId: world.partnerId, individualId: world.individualId, status: 'ACTIVE', statusCode: '00', holderClientCode: issued.holderClientCode, embossedName: null });
    const t = await insertToken(services.db, undefined, { cardKey: issued.cardKey, partnerId: world.partnerId }, 'active');
    const { cardKey: newKey } = await services.clients.issuer.replace({ requestId: 'test' }, issued.cardKey, { expDate: issued.expDate });
    await services.db.query('UPDATE cards SET card_key = $2, replaced_from = $1, issuer_check_due = true WHERE card_key = $1', [issued.cardKey, newKey]);
    const fresh = await services.clients.issuer.getCard({ requestId: 'test' }, newKey);
    const context = { oldKey: issued.cardKey, newKey, oldStatus: 'ACTIVE' as const, oldStatusCode: '00', partnerId: world.partnerId, individualId: world.individualId, reason: null, requestId: `replace-${newObjectId()}` };
    await services.db.transaction((tx) => completeReplacement(tx, fresh, context, cardDeps.cardState));
    expect((await tokenState(services.db, t.id)).card_key).to.equal(newKey);

    const first = purchase(issued.cardKey, t.reference);
    expect(await decide(first), 'the new card is I1: locked until activated').to.deep.equal({ approved: false, declineReason: 'card_locked', decidedBy: 'card_state', rule: 'card.status.LOCKED' });
    await services.db.query('UPDATE partners SET tokenize_before_activation = true WHERE id = $1', [world.partnerId]);
    try {
      const second = purchase(issued.cardKey, t.reference);
      // The token is held by the new card's state (suspended at the processor soon); the card, usable for tokens now, judges it.
      expect(await decide(second)).to.deep.equal({ approved: true, decidedBy: 'approved' });
      expect(await recorded(second.transactionId)).to.deep.include({ token_id: t.id });
    } finally {
      await services.db.query('UPDATE partners SET tokenize_before_activation = false WHERE id = $1', [world.partnerId]);
    }
  });

  it("the request's authorization.token is checked: an object of reference (1 to 100 visible ASCII) and walletProvider, nothing else", function () {
    expect(checkAuthorizationToken(undefined)).to.equal(undefined);
    expect(checkAuthorizationToken({ reference: 'tref_1', walletProvider: 'samsung_pay' })).to.deep.equal({ reference: 'tref_1', walletProvider: 'samsung_pay' });
    for (const bad of [null, 'tref_1', [], {}, { reference: '', walletProvider: 'apple_pay' }, { reference: 'x'.repeat(101), walletProvider: 'apple_pay' }, { reference: 'a b', walletProvider: 'apple_pay' }, { reference: 'tref_1', walletProvider: 'paypal' }, { reference: 'tref_1', walletProvider: 'apple_pay', pan: '1' }]) {
      let err: unknown;
      try {
        checkAuthorizationToken(bad);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(bad)).to.be.instanceOf(GatewayError);
      expect((err as GatewayError).code).to.equal('validation_failed');
      expect((err as GatewayError).invalidParams?.[0]?.name).to.equal('authorization.token');
    }
  });
});
