import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls, type ApiResponse } from '../support/api';
import { logsSettled, sharedGateway, type Gateway } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { signatureVerifies } from '../support/signatures';
import { runDatabaseUrl } from '../support/test-database';
import { waitFor } from '../support/wait';
import { TestReceiver, type Received } from '../support/webhook-receiver';

/** A token as the partner API answers it (docs/tokens.md "The Token"). */
interface Token {
  _id: string;
  cardKey: string;
  walletProvider: string;
  status: string;
  suspendedBy?: string;
  device: Record<string, unknown>;
  history: { status: string; at: string; by: string; reason?: string }[];
}

/**
 * Issue 35's tokenization decision and card-to-token cascade, end to end through the partner routes
 * on the run's shared gateway: the processing sandbox over real HTTP (the tokenizations and token
 * purchases are its simulations, the token operations its token service), real PostgreSQL, one
 * real receiver for the partner's webhooks and one for its decision endpoint (enrolled for
 * `tokenization.request` only). Every token is made by `POST /simulate/cards/{id}/tokenizations`.
 * The cases share one partner and the receivers, and run in order: the cascade's cases follow one
 * card through lock, unlock, temporary lock and the stolen report.
 */
describe('e2e: tokenization decisions and the card-to-token cascade', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let partner: TestPartner;
  let pg: Client;
  /** The partner's webhook endpoint (every event type). */
  let hooks: TestReceiver;
  /** The partner's decision endpoint, enrolled for tokenizations only. */
  let decisions: TestReceiver;
  let decisionSecret: string;
  let individual: { _id: string; clientID: string };

  const answer = (body: Record<string, unknown>) => {
    decisions.behaviour = { kind: 'respond', status: 200, body: JSON.stringify(body) };
  };
  const ok = (r: ApiResponse, status: number, what: string) => {
    expect(r.status, `${what}: ${JSON.stringify(r.body)}`).to.equal(status);
    return r.body;
  };
  const newCard = async (type: 'virtual' | 'physical' = 'virtual') =>
    ok(await api(gateway, partner, 'POST', `/individual/accounts/${individual._id}/cards/${type}`, { body: cardBody(individual.clientID) }), 201, `issue a ${type} card`) as {
      cardKey: string;
      expDate: string;
    };
  const cardChange = (card: { cardKey: string; expDate: string }, action: string, requestId: string) =>
    api(gateway, partner, 'POST', `/cards/${card.cardKey}/${action}`, {
      body: action.startsWith('restrict') ? { reason: 'customer call' } : { expDate: card.expDate, reason: 'customer call' },
      headers: { 'x-request-id': requestId },
    });
  const tokenize = async (cardKey: string, body: Record<string, unknown>) => ok(await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/tokenizations`, { body }), 201, 'tokenization') as Token;
  const tokenOf = async (id: string) => ok(await api(gateway, partner, 'GET', `/tokens/${id}`), 200, `GET /tokens/${id}`) as Token;
  /** Waits for the token to read as `want` (the processor's confirmation arrives through the outbox, after the card's 200). */
  const tokenBecomes = (id: string, want: (t: Token) => boolean, what: string) =>
    waitFor(`${id} ${what}`, async () => {
      const t = await tokenOf(id);
      return want(t) ? t : undefined;
    });
  const purchase = async (tokenId: string) => ok(await api(gateway, partner, 'POST', `/simulate/tokens/${tokenId}/authorizations`, { body: { amount: 9.5 } }), 201, 'token purchase');
  const suspend = async (tokenId: string) => ok(await api(gateway, partner, 'POST', `/tokens/${tokenId}/suspend`, { body: { reason: 'cardholder asked' } }), 200, 'partner suspend') as Token;
  /** The position of the first webhook matching `match` at the receiver (-1: none). */
  const at = (match: (e: Received['event']) => boolean) => hooks.received.findIndex((r) => match(r.event));
  const tokenUpdated = (tokenId: string, change: string) => (e: Received['event']) => e.type === 'token.updated' && e.data.token._id === tokenId && e.data.change === change;
  const statusChanged = (cardKey: string, status: string) => (e: Received['event']) => e.type === 'card.status_changed' && e.data.cardKey === cardKey && e.data.status === status;
  /** The token.updated webhooks of a token received from position `from` on. */
  const eventsOf = (tokenId: string, from: number) => hooks.received.slice(from).filter((r) => r.event.type === 'token.updated' && r.event.data.token._id === tokenId).map((r) => r.event.data.change);
  const arrived = (what: string, ...matches: ((e: Received['event']) => boolean)[]) =>
    hooks.waitFor(() => matches.every((m) => at(m) >= 0), 20_000, what);

  before(async function () {
    gateway = await sharedGateway();
    partner = await registerPartner(gateway, 'token-cascade');
    pg = new Client({ connectionString: runDatabaseUrl() });
    await pg.connect();
    [hooks, decisions] = await Promise.all([new TestReceiver().up(), new TestReceiver().up()]);
    const webhook = ok(await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url: hooks.url } }), 201, 'webhook endpoint');
    recordSecret('webhookSecret', webhook.secret);
    const endpoint = ok(await api(gateway, partner, 'POST', '/authorization-endpoint', { body: { url: decisions.url, requestTypes: ['tokenization.request'] } }), 201, 'decision endpoint');
    decisionSecret = endpoint.secret;
    recordSecret('webhookSecret', decisionSecret);
    expect(endpoint.requestTypes).to.deep.equal(['tokenization.request']);
    answer({ decision: 'approve' });
    individual = ok(await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() }), 201, 'individual');
  });
  after(async function () {
    await hooks?.close();
    await decisions?.close();
    await pg?.end();
  });

  describe('"A simulated tokenization is approved, declined by the partner, declined by card state, and sent to verification then activated with the code (which appears in no log line)."', function () {
    it('is approved by the enrolled endpoint, which received a signed tokenization.request carrying the card, the wallet and the device, never the PAN', async function () {
      const card = await newCard();
      const asked = decisions.received.length;
      const device = { type: 'watch', name: "Ada's Watch", ipCountry: 'PT' };
      const token = await tokenize(card.cardKey, { walletProvider: 'apple_pay', device });
      expect(token).to.deep.include({ cardKey: card.cardKey, walletProvider: 'apple_pay', status: 'active', device });
      expect(token.history).to.have.length(1);
      expect(token.history[0]).to.include({ status: 'active', by: 'partner' });
      expect(decisions.received.length - asked, 'one call to the endpoint').to.equal(1);
      const request = decisions.received.at(-1)!;
      expect(request.event.type).to.equal('tokenization.request');
      expect(request.event.id).to.match(/^treq_[0-9a-f]{24}$/);
      expect(request.event.partnerId).to.equal(partner.id);
      expect(request.headers['partner-gateway-event-type']).to.equal('tokenization.request');
      expect(signatureVerifies(request.headers['partner-gateway-signature'] as string, request.raw, [decisionSecret]), 'signed with the endpoint secret').to.equal(true);
      expect(signatureVerifies(request.headers['partner-gateway-signature'] as string, `${request.raw} `, [decisionSecret]), 'the signature covers the body').to.equal(false);
      const { tokenization, card: asCard } = request.event.data;
      expect(tokenization).to.deep.include({ tokenId: token._id, walletProvider: 'apple_pay', tokenRequestorId: '50110030273', device });
      expect(tokenization.networkVerdict.decision).to.equal('approve');
      expect(asCard).to.include({ cardKey: card.cardKey, status: 'ACTIVE' });
      const { cardNumber, cvv } = await sandboxControl(sandboxUrls(gateway).issuer, 'GET', `/__sandbox/cards/${card.cardKey}/secrets`);
      expect(cardNumber).to.match(/^[0-9]{16}$/);
      expect(request.raw.includes(cardNumber), 'the PAN in the request').to.equal(false);
      expect(request.raw).to.not.match(/"(cardNumber|pan|cvv|pin)"/i);
      expect(request.raw.includes(`"${cvv}"`)).to.equal(false);
      // The partner hears of the token on its webhook too.
      await arrived('token.created', (e) => e.type === 'token.created' && e.data.token._id === token._id);
      expect(hooks.received[at((e) => e.type === 'token.created' && e.data.token._id === token._id)].event.data.token).to.deep.equal(token);
    });

    it("is declined by the partner's endpoint answering {decision: decline, declineReason}: the token declined by partner, the endpoint's reason in the audit entry only", async function () {
      const card = await newCard();
      const partnerReason = 'device not seen before for this cardholder';
      answer({ decision: 'decline', declineReason: partnerReason });
      try {
        const asked = decisions.received.length;
        const token = await tokenize(card.cardKey, { walletProvider: 'google_pay' });
        expect(decisions.received.length - asked).to.equal(1);
        expect(decisions.received.at(-1)!.event.data.tokenization.tokenId).to.equal(token._id);
        expect(token).to.deep.include({ cardKey: card.cardKey, status: 'declined' });
        expect(token.history).to.deep.equal([{ status: 'declined', at: token.history[0].at, by: 'partner', reason: 'partner_declined' }]);
        expect(JSON.stringify(token)).to.not.include(partnerReason);
        const audit = await pg.query<{ details: Record<string, unknown> }>("SELECT details FROM audit_log WHERE target_id = $1 AND operation = 'card.token.decided'", [card.cardKey]);
        expect(audit.rows).to.have.length(1);
        expect(audit.rows[0].details).to.include({ tokenId: token._id, decision: 'decline', decidedBy: 'partner', declineReason: 'partner_declined', partnerReason });
        // A declined token is final and never usable.
        const resume = await api(gateway, partner, 'POST', `/tokens/${token._id}/resume`, { body: {} });
        expect([resume.status, resume.body.code]).to.deep.equal([409, 'token_transition_invalid']);
      } finally {
        answer({ decision: 'approve' });
      }
    });

    it("is declined by card state: a LOCKED card, and a physical card not yet activated while the partner's tokenizeBeforeActivation is off, before the endpoint is asked", async function () {
      const locked = await newCard();
      ok(await cardChange(locked, 'lock', 'tokenize-locked-lock'), 200, 'lock');
      const physical = await newCard('physical');
      const settings = await adminCall(gateway, 'GET', `/admin/partners/${partner.id}`);
      expect(settings.body.tokenizeBeforeActivation, 'the setting is off').to.equal(false);
      const asked = decisions.received.length;
      for (const [card, statusCode] of [[locked, 'L1'], [physical, 'I1']] as const) {
        const token = await tokenize(card.cardKey, { walletProvider: 'apple_pay' });
        expect(token, statusCode).to.deep.include({ cardKey: card.cardKey, status: 'declined' });
        expect(token.history, statusCode).to.deep.equal([{ status: 'declined', at: token.history[0].at, by: 'card_state', reason: 'card_locked' }]);
        const audit = await pg.query<{ details: Record<string, unknown> }>("SELECT details FROM audit_log WHERE target_id = $1 AND operation = 'card.token.decided'", [card.cardKey]);
        expect(audit.rows.map((r) => r.details.decidedBy), statusCode).to.deep.equal(['card_state']);
      }
      expect(decisions.received.length - asked, 'the endpoint was not asked').to.equal(0);
    });

    it('is sent to verification by the endpoint (require_verification), then activated with the code of the token.verification_code webhook; the code is in no log line', async function () {
      const card = await newCard();
      answer({ decision: 'require_verification' });
      let token: Token;
      try {
        token = await tokenize(card.cardKey, { walletProvider: 'samsung_pay', device: { type: 'phone', name: 'Galaxy' } });
      } finally {
        answer({ decision: 'approve' });
      }
      expect(token).to.deep.include({ cardKey: card.cardKey, status: 'pending_verification' });
      expect(token.history[0]).to.include({ status: 'pending_verification', by: 'partner' });
      // A purchase with a token waiting for its code is declined.
      const early = await purchase(token._id);
      expect(early).to.deep.include({ status: 'DECLINED', declineReason: 'token_inactive' });
      const [delivery] = (await hooks.waitFor((r) => r.some((x) => x.event.type === 'token.verification_code' && x.event.data.token._id === token._id), 20_000, 'the code')).filter(
        (x) => x.event.type === 'token.verification_code' && x.event.data.token._id === token._id
      );
      const code: string = delivery.event.data.code;
      expect(code).to.match(/^[0-9]{6}$/);
      expect(Date.parse(delivery.event.data.expiresAt) - Date.now()).to.be.within(8 * 60_000, 10 * 60_000 + 5_000);
      const verified = ok(await api(gateway, partner, 'POST', `/simulate/tokens/${token._id}/verify`, { body: { code } }), 200, 'verify') as Token;
      expect(verified).to.deep.include({ _id: token._id, status: 'active' });
      expect(verified.history.map((h) => [h.status, h.by])).to.deep.equal([
        ['pending_verification', 'partner'],
        ['active', 'verification'],
      ]);
      expect((await tokenOf(token._id)).status).to.equal('active');
      expect(await purchase(token._id)).to.deep.include({ status: 'PENDING', tokenId: token._id, walletProvider: 'samsung_pay' });
      await logsSettled(gateway);
      // Standalone: not inside a longer run of digits or letters (an epoch timestamp, a hex id).
      const standalone = new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`);
      const hits = gateway.output().split('\n').filter((line) => standalone.test(line));
      expect(hits, 'log lines holding the code').to.deep.equal([]);
      const stored = await pg.query("SELECT 1 FROM tokens t WHERE t.id = $1 AND t::text LIKE '%' || $2 || '%'", [token._id, code]);
      expect(stored.rowCount, 'the code in the token row').to.equal(0);
    });
  });

  describe('the cascade, e2e: lock, unlock, temporary lock and restrict as stolen, on one card', function () {
    let card: { cardKey: string; expDate: string };
    /** Two active tokens and one the partner suspended itself. */
    let apple: Token;
    let google: Token;
    let own: Token;

    before(async function () {
      card = await newCard();
      apple = await tokenize(card.cardKey, { walletProvider: 'apple_pay' });
      google = await tokenize(card.cardKey, { walletProvider: 'google_pay' });
      own = await tokenize(card.cardKey, { walletProvider: 'merchant' });
      expect([apple.status, google.status, own.status]).to.deep.equal(['active', 'active', 'active']);
      own = await suspend(own._id);
      expect(own).to.deep.include({ status: 'suspended', suspendedBy: 'partner' });
    });

    it('"lock → tokens suspended (suspendedBy: card_state), a token purchase declined card_locked": "From the moment the card\'s change has answered 200, an authorization with any of its tokens is decided by the card\'s new state"', async function () {
      const lock = await cardChange(card, 'lock', 'cascade-lock');
      expect(lock.status, JSON.stringify(lock.body)).to.equal(200);
      // No waiting: the purchase right after the 200 is decided by the card's row.
      const declined = await purchase(apple._id);
      expect(declined).to.deep.include({ status: 'DECLINED', declineReason: 'card_locked', tokenId: apple._id, walletProvider: 'apple_pay' });
      expect(declined.authorization).to.deep.include({ decidedBy: 'card_state', rule: 'card.status.LOCKED' });
      for (const t of [apple, google]) {
        const suspended = await tokenBecomes(t._id, (x) => x.status === 'suspended', 'suspended by the lock');
        expect(suspended).to.deep.include({ status: 'suspended', suspendedBy: 'card_state', cardKey: card.cardKey });
        expect(suspended.history.at(-1)).to.deep.include({ status: 'suspended', by: 'card_state', reason: 'card LOCKED' });
      }
      // The token the partner had suspended stays the partner's.
      const mine = await tokenOf(own._id);
      expect(mine).to.deep.include({ status: 'suspended', suspendedBy: 'partner' });
      expect(mine.history).to.deep.equal(own.history);
      // The events in order at the receiver: the card's change, then its tokens'.
      await arrived('the lock and its tokens', statusChanged(card.cardKey, 'LOCKED'), tokenUpdated(apple._id, 'suspended'), tokenUpdated(google._id, 'suspended'));
      const lockAt = at(statusChanged(card.cardKey, 'LOCKED'));
      for (const t of [apple, google]) {
        const i = at(tokenUpdated(t._id, 'suspended'));
        expect(i, `${t.walletProvider}'s token.updated after card.status_changed`).to.be.greaterThan(lockAt);
        expect(hooks.received[i].event).to.deep.include({ requestId: 'cascade-lock' });
        expect(hooks.received[i].event.data).to.deep.include({ previousStatus: 'active', change: 'suspended' });
        expect(hooks.received[i].event.data.token).to.deep.include({ status: 'suspended', suspendedBy: 'card_state' });
      }
      expect(eventsOf(own._id, lockAt), 'no event for the partner-suspended token').to.deep.equal([]);
      expect(await purchase(google._id)).to.deep.include({ status: 'DECLINED', declineReason: 'card_locked' });
    });

    it('"unlock → only those tokens resume": the partner-suspended one stays suspended with suspendedBy: partner', async function () {
      ok(await cardChange(card, 'unlock', 'cascade-unlock'), 200, 'unlock');
      for (const t of [apple, google]) {
        const resumed = await tokenBecomes(t._id, (x) => x.status === 'active', 'resumed by the unlock');
        expect(resumed).to.not.have.property('suspendedBy');
        expect(resumed.history.map((h) => [h.status, h.by]).slice(-3)).to.deep.equal([
          ['active', 'partner'],
          ['suspended', 'card_state'],
          ['active', 'card_state'],
        ]);
      }
      await arrived('the unlock and its tokens', statusChanged(card.cardKey, 'ACTIVE'), tokenUpdated(apple._id, 'resumed'), tokenUpdated(google._id, 'resumed'));
      const unlockAt = at(statusChanged(card.cardKey, 'ACTIVE'));
      expect(at(tokenUpdated(apple._id, 'resumed'))).to.be.greaterThan(unlockAt);
      expect(at(tokenUpdated(google._id, 'resumed'))).to.be.greaterThan(unlockAt);
      expect(await purchase(apple._id)).to.deep.include({ status: 'PENDING', tokenId: apple._id });
      const mine = await tokenOf(own._id);
      expect(mine).to.deep.include({ status: 'suspended', suspendedBy: 'partner' });
      expect(mine.history).to.deep.equal(own.history);
      expect(eventsOf(own._id, unlockAt), 'no event for the partner-suspended token').to.deep.equal([]);
      expect(await purchase(own._id)).to.deep.include({ status: 'DECLINED', declineReason: 'token_inactive' });
    });

    it('temporary lock behaves as lock: the active tokens suspended by card_state, a purchase declined card_locked', async function () {
      ok(await cardChange(card, 'temporary-lock', 'cascade-temporary-lock'), 200, 'temporary lock');
      expect(await purchase(google._id)).to.deep.include({ status: 'DECLINED', declineReason: 'card_locked' });
      for (const t of [apple, google]) {
        const suspended = await tokenBecomes(t._id, (x) => x.status === 'suspended', 'suspended by the temporary lock');
        expect(suspended).to.deep.include({ suspendedBy: 'card_state' });
        expect(suspended.history.at(-1)).to.deep.include({ status: 'suspended', by: 'card_state', reason: 'card TEMP_LOCKED' });
      }
      expect(await tokenOf(own._id)).to.deep.include({ status: 'suspended', suspendedBy: 'partner' });
    });

    it('"restrict as stolen → all deactivated", the partner-suspended one too, and a further resume gets 409 token_transition_invalid', async function () {
      ok(await cardChange(card, 'restrict/stolen', 'cascade-stolen'), 200, 'restrict as stolen');
      expect(await purchase(apple._id)).to.deep.include({ status: 'DECLINED', declineReason: 'card_inactive' });
      for (const t of [apple, google, own]) {
        const gone = await tokenBecomes(t._id, (x) => x.status === 'deactivated', 'deactivated by the stolen report');
        expect(gone).to.not.have.property('suspendedBy');
        expect(gone.history.at(-1)).to.deep.include({ status: 'deactivated', by: 'card_state', reason: 'card STOLEN' });
      }
      await arrived('the stolen report and its tokens', statusChanged(card.cardKey, 'STOLEN'), tokenUpdated(apple._id, 'deactivated'), tokenUpdated(google._id, 'deactivated'), tokenUpdated(own._id, 'deactivated'));
      const stolenAt = at(statusChanged(card.cardKey, 'STOLEN'));
      for (const t of [apple, google, own]) expect(at(tokenUpdated(t._id, 'deactivated'))).to.be.greaterThan(stolenAt);
      for (const t of [apple, own]) {
        const resume = await api(gateway, partner, 'POST', `/tokens/${t._id}/resume`, { body: {} });
        expect([resume.status, resume.body.code, resume.body.tokenStatus]).to.deep.equal([409, 'token_transition_invalid', 'deactivated']);
      }
      expect(await tokenOf(apple._id)).to.deep.include({ status: 'deactivated' });
    });
  });

  it('"replace → the active tokens belong to the new card, with their events in order": card.created first, then each token.updated card_updated; they follow the new card\'s state', async function () {
    const old = await newCard('physical');
    ok(await cardChange(old, 'activate', 'replace-activate'), 200, 'activate');
    const apple = await tokenize(old.cardKey, { walletProvider: 'apple_pay' });
    const google = await tokenize(old.cardKey, { walletProvider: 'google_pay' });
    const own = await suspend((await tokenize(old.cardKey, { walletProvider: 'merchant' }))._id);
    answer({ decision: 'require_verification' });
    let pending: Token;
    try {
      pending = await tokenize(old.cardKey, { walletProvider: 'apple_pay', device: { type: 'tablet' } });
    } finally {
      answer({ decision: 'approve' });
    }
    expect([apple.status, google.status, own.status, pending.status]).to.deep.equal(['active', 'active', 'suspended', 'pending_verification']);

    const replaced = await api(gateway, partner, 'POST', `/cards/${old.cardKey}/replace`, {
      body: { expDate: `06/${new Date().getUTCFullYear() + 5}`, reason: 'damaged' },
      headers: { 'x-request-id': 'cascade-replace' },
    });
    expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
    const fresh = { cardKey: replaced.body.cardKey as string, expDate: replaced.body.expDate as string };
    expect(fresh.cardKey).to.not.equal(old.cardKey);
    expect(replaced.body).to.include({ status: 'LOCKED', statusCode: 'I1' });

    // The move is the gateway's own record, written before the 200.
    const listed = ok(await api(gateway, partner, 'GET', `/cards/${fresh.cardKey}/tokens`), 200, 'the new card\'s tokens').data as Token[];
    expect(listed.map((t) => t._id).sort()).to.deep.equal([apple._id, google._id, own._id].sort());
    for (const t of listed) expect(t.cardKey).to.equal(fresh.cardKey);
    expect(listed.find((t) => t._id === own._id)).to.deep.include({ status: 'suspended', suspendedBy: 'partner' });
    const oldTokens = await api(gateway, partner, 'GET', `/cards/${old.cardKey}/tokens`);
    expect(oldTokens.status, 'the old card is gone').to.equal(404);
    const searched = ok(await api(gateway, partner, 'GET', `/tokens?cardKey=${old.cardKey}`), 200, 'search by the old key').data as Token[];
    expect(searched.map((t) => t._id), 'only the pending one stays with the old card').to.deep.equal([pending._id]);
    for (const t of [apple, google, own]) {
      const moved = await tokenOf(t._id);
      expect(moved.history.find((h) => h.reason === 'card replaced'), `${t.walletProvider}: the move in the history`).to.deep.include({ status: t.status, by: 'card_state' });
    }

    // The events at the receiver: the new card's card.created, then each moved token's card_updated.
    const created = (e: Received['event']) => e.type === 'card.created' && e.data.card.cardKey === fresh.cardKey;
    await arrived('the replacement and its moves', created, ...[apple, google, own].map((t) => tokenUpdated(t._id, 'card_updated')));
    const createdAt = at(created);
    expect(hooks.received[createdAt].event.data).to.deep.include({ reason: 'replaced', previousCardKey: old.cardKey });
    for (const t of [apple, google, own]) {
      const i = at(tokenUpdated(t._id, 'card_updated'));
      expect(i, `${t.walletProvider}'s card_updated after card.created`).to.be.greaterThan(createdAt);
      expect(hooks.received[i].event).to.deep.include({ requestId: 'cascade-replace' });
      expect(hooks.received[i].event.data).to.deep.include({ previousStatus: t.status });
      expect(hooks.received[i].event.data.token).to.deep.include({ cardKey: fresh.cardKey, status: t.status });
    }
    // The pending verification was for the old card: deactivated.
    expect(await tokenBecomes(pending._id, (x) => x.status === 'deactivated', 'deactivated by the replacement')).to.deep.include({ cardKey: old.cardKey });

    // The new physical card is not activated (and the partner's setting is off): its state holds the
    // moved active tokens, and a purchase with them is decided by it.
    expect(await purchase(apple._id)).to.deep.include({ status: 'DECLINED', declineReason: 'card_locked', cardKey: fresh.cardKey });
    for (const t of [apple, google]) {
      expect(await tokenBecomes(t._id, (x) => x.status === 'suspended', 'held by the new card')).to.deep.include({ suspendedBy: 'card_state', cardKey: fresh.cardKey });
    }
    await arrived('the new card holding its tokens', tokenUpdated(apple._id, 'suspended'), tokenUpdated(google._id, 'suspended'));
    for (const t of [apple, google]) expect(at(tokenUpdated(t._id, 'suspended'))).to.be.greaterThan(at(tokenUpdated(t._id, 'card_updated')));
    ok(await cardChange(fresh, 'activate', 'replace-activate-new'), 200, 'activate the new card');
    for (const t of [apple, google]) await tokenBecomes(t._id, (x) => x.status === 'active' && x.cardKey === fresh.cardKey, 'resumed by the activation');
    expect(await tokenOf(own._id)).to.deep.include({ status: 'suspended', suspendedBy: 'partner', cardKey: fresh.cardKey });
    expect(await purchase(google._id)).to.deep.include({ status: 'PENDING', cardKey: fresh.cardKey, tokenId: google._id });
  });
  it('"Replace or re-issue": a re-issue moves the active and suspended tokens to the new card (ACTIVE: they stay usable), each with a token.updated card_updated after the new card\'s card.created; the old card is CLOSED but its tokens are not deactivated', async function () {
    const old = await newCard();
    const [active, held] = [await tokenize(old.cardKey, { walletProvider: 'apple_pay' }), await tokenize(old.cardKey, { walletProvider: 'samsung_pay' })];
    await suspend(held._id);
    const reissued = await api(gateway, partner, 'POST', `/cards/${old.cardKey}/reissue`, { body: { expDate: `06/${new Date().getUTCFullYear() + 5}`, reason: 'expiry' }, headers: { 'x-request-id': 'cascade-reissue' } });
    const fresh = ok(reissued, 201, 're-issue') as { cardKey: string; status: string };
    expect(fresh.status).to.equal('ACTIVE');
    for (const [t, status] of [[active, 'active'], [held, 'suspended']] as const) {
      expect(await tokenBecomes(t._id, (x) => x.cardKey === fresh.cardKey, 'moved to the re-issued card')).to.deep.include({ status, cardKey: fresh.cardKey });
    }
    expect(await tokenOf(held._id)).to.deep.include({ suspendedBy: 'partner' });
    const created = (e: Received['event']) => e.type === 'card.created' && e.data.card.cardKey === fresh.cardKey;
    await arrived('the re-issue and its moves', created, tokenUpdated(active._id, 'card_updated'), tokenUpdated(held._id, 'card_updated'));
    for (const t of [active, held]) {
      expect(at(tokenUpdated(t._id, 'card_updated')), 'after card.created').to.be.greaterThan(at(created));
      expect(eventsOf(t._id, 0)).to.not.include('deactivated');
    }
    expect(await purchase(active._id)).to.deep.include({ status: 'PENDING', cardKey: fresh.cardKey, tokenId: active._id });
  });

  it('"OpenAPI covers every new event": each token event the receiver got (token.created, token.updated, token.verification_code) is valid against its webhook in the served document', async function () {
    const document = (await (await fetch(`${gateway.baseUrl}/api/partner/openapi.json`)).json()) as { webhooks: Record<string, any>; components: { schemas: unknown } };
    const id = 'https://partner-gateway.dev/openapi.json';
    const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
    addFormats(ajv);
    ajv.addSchema({ $id: id, components: { schemas: document.components.schemas } });
    const tokenEvents = hooks.received.map((r) => r.event).filter((e) => e.type.startsWith('token.'));
    expect(new Set(tokenEvents.map((e) => e.type))).to.deep.equal(new Set(['token.created', 'token.updated', 'token.verification_code']));
    for (const event of tokenEvents) {
      const validate = ajv.getSchema(`${id}${document.webhooks[event.type].post.requestBody.content['application/json'].schema.$ref}`)!;
      expect(validate(event), `${event.type}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    }
  });
});
