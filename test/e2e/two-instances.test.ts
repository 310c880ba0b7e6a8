import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { SANDBOX_TOKEN_REQUESTOR_IDS, TOKENIZATION_REQUEST_PATH, startSandboxes, upstreamSignature, type Sandboxes } from '../../sandbox';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { sharedGateway, startGatewayProcess, type Gateway, type GatewayProcess } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { waitFor } from '../support/wait';
import { TestReceiver } from '../support/webhook-receiver';

/** A short ownership cache (docs/ownership.md) so that the cross-instance window is quick to observe. */
const OWNERSHIP_CACHE_TTL_MS = 1000;
/** A short token reconciler interval (docs/upstreams.md 10.7), so that a lost token notification is taken over quickly. */
const TOKEN_RECONCILE_INTERVAL_MS = 200;
/** The processing system's notification secret: its signed requests and notifications reach both instances. */
const PROCESSING_SECRET = crypto.randomBytes(32).toString('base64url');

describe('e2e: two gateway instances on one PostgreSQL', function () {
  this.timeout(60_000);
  let a: GatewayProcess;
  let b: GatewayProcess;
  let sandboxes: Sandboxes;

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip(); // LISTEN/NOTIFY needs real PostgreSQL; the embedded database serves one instance
    // Both instances talk to the same upstreams, as in production.
    sandboxes = await startSandboxes();
    recordSecret('notifySecret', PROCESSING_SECRET);
    const env = {
      OWNERSHIP_CACHE_TTL_MS: String(OWNERSHIP_CACHE_TTL_MS),
      ISSUER_URL: sandboxes.issuer.url,
      PROCESSING_URL: sandboxes.processing.url,
      ACCOUNTS_URL: sandboxes.accounts.url,
      // The processor's tokenization requests and token notifications, on each instance's listener.
      PROCESSING_NOTIFY_SECRET: PROCESSING_SECRET,
      // The partner's decision endpoint is a receiver on 127.0.0.1 (outside sandbox mode).
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      TOKEN_RECONCILE_INTERVAL_MS: String(TOKEN_RECONCILE_INTERVAL_MS),
    };
    [a, b] = await Promise.all([startGatewayProcess({ env }), startGatewayProcess({ env })]);
    // The processing sandbox asks and notifies A (the issuer's notifications keep queueing, unsent).
    sandboxes.setNotifyTarget({ url: a.notifyUrl!, processingSecret: PROCESSING_SECRET });
  });
  after(async function () {
    await Promise.all([a?.stop(), b?.stop()]);
    await sandboxes?.close();
  });

  const me = async (gateway: GatewayProcess, token: string) =>
    (await fetch(`${gateway.baseUrl}/api/partner/me`, { headers: { authorization: `Bearer ${token}` } })).status;

  async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      if (await check()) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('condition not met in time');
  }

  it('refuses a cached token on every instance once its key is revoked or its partner disabled on one', async function () {
    const partner = await registerPartner(a, 'two-instances');
    const token = await partner.token({ ttlSeconds: 300 });
    expect(await me(a, token)).to.equal(200);
    expect(await me(b, token), 'verified and cached on B').to.equal(200);

    await adminCall(a, 'PATCH', `/admin/partners/${partner.id}`, { status: 'disabled' });
    expect(await me(a, token), 'refused at once on A').to.equal(401);
    const waited = await eventually(async () => (await me(b, token)) === 401);
    expect(waited).to.be.below(5000);

    await adminCall(a, 'PATCH', `/admin/partners/${partner.id}`, { status: 'active' });
    await eventually(async () => (await me(b, token)) === 200);
    await adminCall(b, 'DELETE', `/admin/partners/${partner.id}/keys/${encodeURIComponent(partner.kid)}`);
    expect(await me(b, token)).to.equal(401);
    await eventually(async () => (await me(a, token)) === 401);
  });
  it('replace through A: the new cardKey works through B at once, the old one is refused by both within OWNERSHIP_CACHE_TTL_MS', async function () {
    const partner = await registerPartner(a, 'two-instances-cards');
    const ada = (await api(a, partner, 'POST', '/individual/accounts', { body: individualBody() })).body;
    const issued = await api(a, partner, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) });
    expect(issued.status).to.equal(201);
    const old = issued.body;
    // B reads the card: its ownership cache now holds the old key as the partner's.
    expect((await api(b, partner, 'GET', `/cards/${old.cardKey}/status`)).status).to.equal(200);

    const replaced = await api(a, partner, 'POST', `/cards/${old.cardKey}/replace`, { body: { expDate: old.expDate, reason: 'two instances' } });
    expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
    const replacedAt = Date.now();
    const fresh = replaced.body;
    expect(fresh.cardKey).to.not.equal(old.cardKey);

    // The new key through B, at once: status, activation (a new physical card is I1), nickname.
    expect((await api(b, partner, 'GET', `/cards/${fresh.cardKey}/status`)).body).to.deep.equal({ cardKey: fresh.cardKey, status: 'LOCKED', statusCode: 'I1' });
    const activated = await api(b, partner, 'POST', `/cards/${fresh.cardKey}/activate`, { body: { expDate: fresh.expDate } });
    expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
    expect(activated.body.status).to.equal('ACTIVE');
    expect((await api(b, partner, 'PATCH', `/cards/${fresh.cardKey}/nickname`, { body: { nickname: 'via B' } })).body.nickname).to.equal('via B');

    // The old key: refused by A at once (it invalidated its cache) ...
    const onA = await api(a, partner, 'GET', `/cards/${old.cardKey}/status`);
    expect(onA.status).to.equal(404);
    expect(onA.body).to.include({ code: 'not_found' }).and.not.have.property('upstream');

    // ... and by B once its cached owner expires. Until then B may still accept the key as the
    // partner's, but never with a 2xx: the issuer (replace retires the old key) or our record refuses it.
    const issuer = sandboxUrls(b).issuer;
    expect(issuer).to.equal(sandboxUrls(a).issuer);
    const deadline = replacedAt + OWNERSHIP_CACHE_TTL_MS + 5000;
    let refusedByOwnership: any;
    while (!refusedByOwnership && Date.now() < deadline) {
      const read = await api(b, partner, 'GET', `/cards/${old.cardKey}/status`);
      const write = await api(b, partner, 'PATCH', `/cards/${old.cardKey}/nickname`, { body: { nickname: 'stale' } });
      for (const response of [read, write]) expect(response.status, JSON.stringify(response.body)).to.equal(404);
      if (read.body.upstream === undefined) refusedByOwnership = read;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(refusedByOwnership, `B still looked the old key up at the issuer ${OWNERSHIP_CACHE_TTL_MS + 5000} ms after the replace`).to.not.equal(undefined);

    // From then on the old key never reaches the issuer through either instance.
    await sandboxControl(issuer, 'DELETE', '/__sandbox/requests');
    for (const gateway of [a, b]) {
      for (const [method, path, body] of [
        ['GET', `/cards/${old.cardKey}`, undefined],
        ['POST', `/cards/${old.cardKey}/lock`, { expDate: old.expDate }],
        ['PATCH', `/cards/${old.cardKey}/nickname`, { nickname: 'stale' }],
      ] as const) {
        const response = await api(gateway, partner, method, path, { body });
        expect(response.status, `${method} ${path}`).to.equal(404);
        expect(response.body.code).to.equal('not_found');
      }
    }
    const reached = await sandboxControl(issuer, 'GET', `/__sandbox/requests?path=/cards/${old.cardKey}*`);
    expect(reached, 'the issuer was not asked about the old key').to.deep.equal([]);
    expect((await api(b, partner, 'GET', `/cards/${fresh.cardKey}`)).body).to.include({ cardKey: fresh.cardKey, nickname: 'via B', status: 'ACTIVE' });
  });

  /**
   * Network tokens, once per id (issue 35; docs/upstreams.md 10.3, 10.5, 10.7): the processor's
   * tokenization request and a token notification arriving at both instances at once, each applied
   * once; and a token change whose notification the processor lost, taken over by the token
   * reconciler of the instances (both read the processing sandbox's change feed every
   * TOKEN_RECONCILE_INTERVAL_MS). The partner's decision endpoint is a real receiver enrolled for
   * `tokenization.request`.
   */
  describe('network tokens, once per id across both instances', function () {
    let partner: TestPartner;
    let cardKey: string;
    let receiver: TestReceiver;
    let pg: Client;

    /** The processing system's signed POST of `body` to `gateway`'s notification listener (docs/upstreams.md 6.10, 9). */
    const fromProcessor = async (gateway: GatewayProcess, path: string, body: { id: string }) => {
      const raw = JSON.stringify(body);
      const response = await fetch(`${gateway.notifyUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'upstream-notification-id': body.id, 'upstream-signature': upstreamSignature(PROCESSING_SECRET, raw) },
        body: raw,
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };
    /** A tokenization request (10.3) for an Apple Pay token of `cardId`, with a new tokenization id and token reference; the network approves. */
    const tokenizationRequest = (cardId: string) => {
      const id = `tkz_${crypto.randomBytes(12).toString('hex')}`;
      const at = new Date().toISOString();
      return {
        id,
        type: 'tokenization.request',
        occurredAt: at,
        tokenization: {
          id,
          tokenReference: `tref_${crypto.randomBytes(12).toString('hex')}`,
          cardId,
          walletProvider: 'apple_pay',
          tokenRequestorId: SANDBOX_TOKEN_REQUESTOR_IDS.apple_pay,
          last4: '4821',
          tokenExpDate: '11/2029',
          device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' },
          networkVerdict: { decision: 'approve', riskScore: 2, reasons: [] },
          at,
        },
      };
    };
    /** The decision endpoint answers `answer` from now on, after `delayMs`. */
    const endpointAnswers = (answer: Record<string, unknown>, delayMs = 0) => {
      receiver.behaviour = { kind: 'respond', status: 200, body: JSON.stringify(answer), delayMs };
    };
    /** The `tokenization.request`s the endpoint received about tokenization `id`. */
    const askedAbout = (id: string) => receiver.received.filter((r) => r.event.type === 'tokenization.request' && r.event.data.tokenization.id === id);
    /** The partner's events of `type` about the token `tokenId`. */
    const eventsOf = async (type: string, tokenId: string) => {
      const listed = await api(b, partner, 'GET', `/events?type=${type}&limit=100`);
      expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
      return (listed.body.data as any[]).filter((e) => e.data.token._id === tokenId);
    };
    const tokenIdOf = async (tokenReference: string) => (await pg.query<{ id: string }>('SELECT id FROM tokens WHERE processor_ref = $1', [tokenReference])).rows.map((r) => r.id);

    before(async function () {
      receiver = await new TestReceiver().up();
      pg = new Client({ connectionString: a.databaseUrl });
      await pg.connect();
      partner = await registerPartner(a, 'two-instances-tokens');
      const individual = (await api(a, partner, 'POST', '/individual/accounts', { body: individualBody() })).body;
      const card = await api(a, partner, 'POST', `/individual/accounts/${individual._id}/cards/virtual`, { body: cardBody(individual.clientID) });
      expect(card.status, JSON.stringify(card.body)).to.equal(201);
      cardKey = card.body.cardKey;
      const endpoint = await api(a, partner, 'POST', '/authorization-endpoint', { body: { url: receiver.url, requestTypes: ['tokenization.request'] } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
      recordSecret('webhookSecret', endpoint.body.secret);
    });
    after(async function () {
      await receiver?.close();
      await pg?.end();
    });

    it('a tokenization request sent 10 times at once, 5 to each instance: one partner call, one decision, one token, one token.created, the same answer to all', async function () {
      const request = tokenizationRequest(cardKey);
      // The endpoint approves after 200 ms: every repeat arrives while the first request is deciding.
      endpointAnswers({ decision: 'approve' }, 200);
      const answering = Promise.all(Array.from({ length: 10 }, (_, i) => fromProcessor(i % 2 === 0 ? a : b, TOKENIZATION_REQUEST_PATH, request)));
      await receiver.waitFor(() => askedAbout(request.id).length > 0, 5000, 'the tokenization.request');
      // A second call would be declined: ten approvals mean the endpoint's one answer was everyone's.
      endpointAnswers({ decision: 'decline', declineReason: 'asked twice' });
      const answers = await answering;
      expect(answers).to.deep.equal(Array.from({ length: 10 }, () => ({ status: 200, body: { decision: 'approve' } })));
      expect(askedAbout(request.id), 'one tokenization.request to the partner').to.have.length(1);

      const decisions = (await pg.query<{ state: string; token_id: string; decision: Record<string, unknown> }>('SELECT state, token_id, decision FROM tokenization_decisions WHERE tokenization_id = $1', [request.id])).rows;
      expect(decisions, 'one decision').to.have.length(1);
      expect(decisions[0].state).to.equal('decided');
      expect(decisions[0].decision).to.deep.include({ decision: 'approve', decidedBy: 'partner' });
      const tokens = (await pg.query<{ id: string; status: string }>('SELECT id, status FROM tokens WHERE tokenization_id = $1 OR processor_ref = $2', [request.id, request.tokenization.tokenReference])).rows;
      expect(tokens, 'one token').to.deep.equal([{ id: decisions[0].token_id, status: 'active' }]);
      expect(askedAbout(request.id)[0].event.data.tokenization.tokenId, 'the partner was told the token it got').to.equal(tokens[0].id);
      const created = await eventsOf('token.created', tokens[0].id);
      expect(created, 'one token.created').to.have.length(1);
      expect(created[0].data.token).to.deep.include({ _id: tokens[0].id, cardKey, walletProvider: 'apple_pay', status: 'active' });
    });

    it('a token.updated notification sent to both instances at once is applied once: one change in the history, one token.updated', async function () {
      endpointAnswers({ decision: 'approve' });
      const request = tokenizationRequest(cardKey);
      expect(await fromProcessor(a, TOKENIZATION_REQUEST_PATH, request)).to.deep.equal({ status: 200, body: { decision: 'approve' } });
      const [tokenId] = await tokenIdOf(request.tokenization.tokenReference);
      const t = request.tokenization;
      const at = new Date().toISOString();
      // The network suspends the token (the device reported lost): the processor's notification, with its own id, as of version 2.
      const notification = {
        id: `ntf_${crypto.randomBytes(12).toString('hex')}`,
        type: 'token.updated',
        occurredAt: at,
        change: 'suspended',
        reason: 'device_lost',
        token: {
          tokenReference: t.tokenReference,
          cardKey,
          tokenizationId: t.id,
          walletProvider: t.walletProvider,
          tokenRequestorId: t.tokenRequestorId,
          last4: t.last4,
          tokenExpDate: t.tokenExpDate,
          device: t.device,
          status: 'suspended',
          version: 2,
          createdAt: t.at,
          updatedAt: at,
        },
      };
      const answers = await Promise.all([a, b].map((gateway) => fromProcessor(gateway, '/upstream-notifications/processing', notification)));
      expect(answers.map((r) => r.status), JSON.stringify(answers)).to.deep.equal([200, 200]);
      expect(answers.map((r) => r.body.outcome).sort(), 'one applied it, the other found it a duplicate').to.deep.equal(['applied', 'duplicate']);

      const token = (await api(b, partner, 'GET', `/tokens/${tokenId}`)).body;
      expect(token.status).to.equal('suspended');
      expect(token.history.map((h: { status: string }) => h.status), 'one change').to.deep.equal(['active', 'suspended']);
      expect(token.history[1]).to.include({ by: 'network', reason: 'device_lost' });
      const updated = await eventsOf('token.updated', tokenId);
      expect(updated, 'one token.updated').to.have.length(1);
      expect(updated[0].data).to.deep.include({ previousStatus: 'active', change: 'suspended' });
      expect(updated[0].data.token).to.deep.include({ _id: tokenId, status: 'suspended' });
      const recorded = await pg.query("SELECT outcome FROM upstream_notifications WHERE upstream = 'processing' AND id = $1", [notification.id]);
      expect(recorded.rows).to.deep.equal([{ outcome: 'applied' }]);
    });

    it('a token change whose notification the processor lost is applied by the token reconciler: the new status and one token.updated', async function () {
      endpointAnswers({ decision: 'approve' });
      const processing = sandboxes.processing.url;
      // The whole tokenization at the processor: A decides it (the endpoint approves), the token.created is delivered.
      const made = await sandboxControl(processing, 'POST', '/__sandbox/tokenizations', { cardId: cardKey, walletProvider: 'google_pay' });
      expect(made.decision, JSON.stringify(made)).to.deep.equal({ decision: 'approve' });
      const reference = made.token.tokenReference as string;
      const [tokenId] = await tokenIdOf(reference);
      expect((await api(b, partner, 'GET', `/tokens/${tokenId}`)).body).to.deep.include({ status: 'active', walletProvider: 'google_pay' });

      // The wallet's device reported lost at the network: suspended at the processor, its notification lost (the change feed has it).
      const changed = await sandboxControl(processing, 'POST', `/__sandbox/tokens/${reference}/network-status`, { status: 'suspended', reason: 'device_lost', notify: 'drop' });
      expect(changed, JSON.stringify(changed)).to.deep.include({ tokenReference: reference, status: 'suspended' });
      const suspended = await waitFor(
        'the token reconciler to apply the suspension',
        async () => {
          const token = (await api(b, partner, 'GET', `/tokens/${tokenId}`)).body;
          return token.status === 'suspended' && token;
        },
        10_000
      );
      expect(suspended.history.map((h: { status: string }) => h.status)).to.deep.equal(['active', 'suspended']);
      expect(suspended.history[1]).to.include({ by: 'network' });

      // Two more passes of the reconcilers (each stores the feed's cursor), which must not apply it again.
      const cursorStoredAt = async () => (await pg.query<{ updated_at: Date }>('SELECT updated_at FROM token_feed_cursors WHERE source = $1', [processing])).rows[0]?.updated_at.getTime();
      let last = await cursorStoredAt();
      expect(last, 'the reconcilers store their cursor under the processing URL').to.be.a('number');
      for (let pass = 0; pass < 2; pass++) {
        const before = last!;
        last = await waitFor('a further pass of the token reconciler', async () => {
          const at = await cursorStoredAt();
          return at !== undefined && at > before && at;
        });
      }
      const audited = await pg.query<{ via: string }>("SELECT details->>'via' AS via FROM audit_log WHERE operation = 'card.token.updated' AND details->>'tokenId' = $1", [tokenId]);
      expect(audited.rows, 'applied by the reconciler, once').to.deep.equal([{ via: 'reconciler' }]);
      const updated = await eventsOf('token.updated', tokenId);
      expect(updated, 'one token.updated').to.have.length(1);
      expect(updated[0].data).to.deep.include({ previousStatus: 'active', change: 'suspended' });
      expect(await eventsOf('token.created', tokenId), "one token.created (the decision's; the processor's token.created changed nothing)").to.have.length(1);
    });
  });
});

/**
 * Ownership after replace or re-issue, with the default 30 s ownership cache: the change is
 * announced on the PostgreSQL change feed in the transaction of the change, so the other instance
 * forgets the old and new keys at once instead of serving its cached owner until the TTL.
 */
describe('e2e: two gateway instances, ownership changes seen through the change feed', function () {
  this.timeout(60_000);
  /** The run's shared gateway (default ownership cache, the run's database). */
  let a: Gateway;
  /** A second instance on the same database and the same upstreams: A's sandboxes. */
  let b: GatewayProcess;
  /** Far below the default 30 s TTL that served the old owner before the feed carried ownership changes. */
  const FEED_DEADLINE_MS = 2000;

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip();
    a = await sharedGateway();
    const upstreams = sandboxUrls(a);
    b = await startGatewayProcess({ env: { ISSUER_URL: upstreams.issuer, PROCESSING_URL: upstreams.processing, ACCOUNTS_URL: upstreams.accounts } });
  });
  after(async function () {
    await b?.stop();
  });

  /** Reads `path` on B until our own ownership check refuses it (404 without `upstream`); every answer meanwhile is a 404. */
  async function refusedByOwnershipOnB(partner: any, path: string): Promise<void> {
    const deadline = Date.now() + FEED_DEADLINE_MS;
    for (;;) {
      const read = await api(b, partner, 'GET', path);
      expect(read.status, JSON.stringify(read.body)).to.equal(404);
      if (read.body.upstream === undefined) return;
      if (Date.now() > deadline) throw new Error(`B still looked ${path} up at the issuer ${FEED_DEADLINE_MS} ms after the change (cached owner)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  for (const operation of ['replace', 'reissue'] as const) {
    it(`${operation} through A: B serves the new cardKey and refuses the old one itself at once, not after its cache TTL`, async function () {
      const partner = await registerPartner(a, `two-instances-feed-${operation}`);
      const ada = (await api(a, partner, 'POST', '/individual/accounts', { body: individualBody() })).body;
      const issued = await api(a, partner, 'POST', `/individual/accounts/${ada._id}/cards/${operation === 'replace' ? 'physical' : 'virtual'}`, { body: cardBody(ada.clientID) });
      expect(issued.status).to.equal(201);
      const old = issued.body;
      // B caches the old key's owner (30 s by default).
      expect((await api(b, partner, 'GET', `/cards/${old.cardKey}/status`)).status).to.equal(200);

      const changed = await api(a, partner, 'POST', `/cards/${old.cardKey}/${operation}`, { body: { expDate: old.expDate, reason: 'feed' } });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(operation === 'replace' ? 200 : 201);
      const fresh = changed.body;
      expect((await api(b, partner, 'GET', `/cards/${fresh.cardKey}/status`)).status, 'the new key through B').to.equal(200);
      if (operation === 'replace') {
        await refusedByOwnershipOnB(partner, `/cards/${old.cardKey}/status`);
      } else {
        // A re-issued card stays ours, CLOSED: B reads it from our record as S4 and refuses a lock itself.
        const lock = await api(b, partner, 'POST', `/cards/${old.cardKey}/lock`, { body: { expDate: old.expDate } });
        expect(lock.status, JSON.stringify(lock.body)).to.equal(409);
        expect(lock.body).to.include({ code: 'invalid_transition', statusCode: 'S4' });
      }
    });
  }
});
