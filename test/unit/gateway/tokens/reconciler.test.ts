import crypto from 'node:crypto';
import { expect } from 'chai';
import { GatewayError } from '../../../../gateway/errors';
import { createLogger } from '../../../../gateway/logging/logger';
import { applyToken } from '../../../../gateway/tokens/apply';
import type { TokenChanges, UpstreamToken } from '../../../../gateway/tokens/contract-stub';
import { reconcileTokens, type TokenFeedClient } from '../../../../gateway/tokens/reconciler';
import { findToken, tokenByReference } from '../../../../gateway/tokens/store';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { addCard, eventsOf, newPartner, upstreamToken, type PartnerFixture } from './fixtures';

/**
 * The processor's token reads as upstreams.md 10.7 describes them, in memory: the change feed (an
 * opaque `<boot>.<sequence>` cursor, `nextCursor` always present, the same position when nothing is
 * new) and `GET /tokens/{ref}` (404 `TOKEN_NOT_FOUND`, which the processing client maps to
 * `not_found`). The gateway's side is real: PostgreSQL, applyToken, the cursor table.
 */
class ProcessorTokens implements TokenFeedClient {
  readonly changes: UpstreamToken[] = [];
  readonly tokens = new Map<string, UpstreamToken>();
  readonly boot = crypto.randomBytes(4).toString('hex');
  reads = 0;

  change(token: UpstreamToken): void {
    this.tokens.set(token.tokenReference, token);
    this.changes.push(token);
  }

  async tokenChanges(_ctx: unknown, after: string | undefined, limit: number): Promise<TokenChanges> {
    const start = after?.startsWith(`${this.boot}.`) ? Number(after.slice(this.boot.length + 1)) : 0;
    const data = this.changes.slice(start, start + limit);
    return { data, nextCursor: `${this.boot}.${start + data.length}` };
  }

  async getToken(_ctx: unknown, reference: string): Promise<UpstreamToken> {
    this.reads += 1;
    const token = this.tokens.get(reference);
    if (!token) throw new GatewayError('not_found', 'TOKEN_NOT_FOUND');
    return token;
  }
}

describe('unit: the token reconciler (gateway/tokens/reconciler.ts)', function () {
  this.timeout(30_000);
  const silent = createLogger({ level: 'silent' });
  let services: InProcessServices;
  let partner: PartnerFixture;

  before(async function () {
    services = await openServices();
    partner = await newPartner(services, 'reconcile');
  });
  after(async function () {
    await services?.close();
  });

  const source = () => `http://processing-${crypto.randomBytes(4).toString('hex')}.example`;
  const pass = (processing: ProcessorTokens, from: string) => reconcileTokens({ db: services.db, processing, log: silent, source: from });

  it("takes over a lost notification: the feed's newer state is applied with its event, the cursor stored, and the next pass reads on from there", async function () {
    const cardKey = await addCard(services.db, partner);
    const processor = new ProcessorTokens();
    const t = upstreamToken(cardKey);
    await services.db.transaction((tx) => applyToken(tx, t, { via: 'notification', notificationId: `ntf_${t.tokenReference}` }));
    processor.change(t);
    // The network suspended it; its notification was lost (notify: drop).
    processor.change({ ...t, status: 'suspended', version: 2 });
    const from = source();
    expect(await pass(processor, from)).to.deep.include({ read: 2, applied: 1, skipped: 0 });
    const held = (await tokenByReference(services.db, t.tokenReference))!;
    expect(held.status).to.equal('suspended');
    const updates = (await eventsOf(services.db, partner.partnerId, 'token.updated')).filter((e) => e.data.token._id === held.id);
    expect(updates.map((e) => e.data.change)).to.deep.equal(['suspended']);
    expect((await services.db.query('SELECT cursor FROM token_feed_cursors WHERE source = $1', [from])).rows[0].cursor).to.equal(`${processor.boot}.2`);
    expect(await pass(processor, from), 'nothing new').to.deep.include({ read: 0, applied: 0 });
    // A token the gateway never heard of (its token.created lost too) is created from the feed.
    const unseen = upstreamToken(cardKey, { walletProvider: 'merchant', device: { type: 'other' } });
    processor.change(unseen);
    expect(await pass(processor, from)).to.deep.include({ read: 1, applied: 1 });
    expect((await tokenByReference(services.db, unseen.tokenReference))!.wallet_provider).to.equal('merchant');
  });

  it('passes over a state it cannot apply (logged) and applies the ones after it; a state it holds already changes nothing', async function () {
    const cardKey = await addCard(services.db, partner);
    const processor = new ProcessorTokens();
    const held = upstreamToken(cardKey);
    await services.db.transaction((tx) => applyToken(tx, held, { via: 'reconciler' }));
    processor.change(held);
    processor.change({ ...upstreamToken(cardKey), status: 'paused' as never });
    const next = upstreamToken(cardKey);
    processor.change(next);
    const events = (await eventsOf(services.db, partner.partnerId)).length;
    expect(await pass(processor, source())).to.deep.include({ read: 3, applied: 1, skipped: 1 });
    expect(await eventsOf(services.db, partner.partnerId)).to.have.length(events + 1);
    expect(await tokenByReference(services.db, next.tokenReference)).to.not.equal(undefined);
  });

  it('two passes at once (two instances) apply each state once: one event', async function () {
    const cardKey = await addCard(services.db, partner);
    const processor = new ProcessorTokens();
    const t = upstreamToken(cardKey);
    processor.change(t);
    const results = await Promise.all([pass(processor, source()), pass(processor, source())]);
    expect(results.map((r) => r.applied).reduce((a, b) => a + b)).to.equal(1);
    const held = (await tokenByReference(services.db, t.tokenReference))!;
    expect((await eventsOf(services.db, partner.partnerId, 'token.created')).filter((e) => e.data.token._id === held.id)).to.have.length(1);
  });

  it("reads each token a partner's operation left unknown (processor_check_due), applies what the processor holds and clears the mark; a token the processor does not know is cleared too", async function () {
    const cardKey = await addCard(services.db, partner);
    const processor = new ProcessorTokens();
    const t = upstreamToken(cardKey);
    const { token } = await services.db.transaction((tx) => applyToken(tx, t, { via: 'reconciler' }));
    // The partner's suspend timed out; the processor had applied it (the feed has not shown it yet).
    await services.db.query('UPDATE tokens SET processor_check_due = true WHERE id = $1', [token!._id]);
    processor.tokens.set(t.tokenReference, { ...t, status: 'suspended', version: 2 });
    const gone = upstreamToken(cardKey);
    const { token: goneToken } = await services.db.transaction((tx) => applyToken(tx, gone, { via: 'reconciler' }));
    await services.db.query('UPDATE tokens SET processor_check_due = true WHERE id = $1', [goneToken!._id]);
    const result = await pass(processor, source());
    expect(result.checked).to.be.at.least(2);
    expect((await findToken(services.db, token!._id))!.status).to.equal('suspended');
    expect((await findToken(services.db, goneToken!._id))!.status, 'unknown at the processor: left as it is').to.equal('active');
    const due = await services.db.query('SELECT id FROM tokens WHERE processor_check_due AND id = ANY($1::text[])', [[token!._id, goneToken!._id]]);
    expect(due.rowCount).to.equal(0);
  });
});
