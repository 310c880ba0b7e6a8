import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { STALE_AFTER_SECONDS } from '../../policies/idempotency/claim-keeper';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, cardBody, individualBody, sandboxControl, type ApiResponse } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner } from '../support/partners';
import { startTamperingUpstream, type TamperingUpstream } from '../support/tampering-upstream';
import { createOwnDatabase, type RunDatabase } from '../support/test-database';
import { waitFor } from '../support/wait';

interface UpstreamAccount {
  onboardingId: string;
  individual: { firstName: string; lastName: string };
}

/**
 * Issue 12, items 1 and 2: one upstream operation id per partner operation, stored with the
 * Idempotency-Key before the upstream call and carried by every retry (the onboarding id of an
 * account creation, the issuer's Idempotency-Key of a card creation). The upstreams deduplicate
 * on it, so a retry after a crash or a timeout resumes the operation instead of doing it again.
 * The sandboxes run in this process: they outlive the gateway's SIGKILL and count what was created.
 */
describe('e2e: one upstream operation id per partner operation, reused by every retry', function () {
  this.timeout(180_000);
  let sandboxes: Sandboxes;
  let issuer: TamperingUpstream;
  let accounts: TamperingUpstream;
  let own: RunDatabase;
  let db: Client;
  const gateways: GatewayProcess[] = [];

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip(); // two processes on one database: real PostgreSQL
    sandboxes = await startSandboxes();
    issuer = await startTamperingUpstream(sandboxes.issuer.url);
    accounts = await startTamperingUpstream(sandboxes.accounts.url);
    own = await createOwnDatabase();
    db = new Client({ connectionString: own.url });
    await db.connect();
  });

  afterEach(function () {
    issuer?.clear();
    accounts?.clear();
  });

  after(async function () {
    await db?.end();
    for (const gateway of gateways) await gateway.stop();
    await issuer?.close();
    await accounts?.close();
    await sandboxes?.close();
    await own?.drop();
  });

  async function start(env: Record<string, string> = {}): Promise<GatewayProcess> {
    const gateway = await startGatewayProcess({
      databaseUrl: own.url,
      env: { ...HIGH_RATE_LIMITS, ISSUER_URL: issuer.url, PROCESSING_URL: sandboxes.processing.url, ACCOUNTS_URL: accounts.url, ...env },
    });
    gateways.push(gateway);
    return gateway;
  }

  let shortTimeout: Promise<GatewayProcess> | undefined;
  /** The gateway of the timeout cases (UPSTREAM_TIMEOUT_MS=1000), started once: each case has its own partner. */
  function shortTimeoutGateway(): Promise<GatewayProcess> {
    shortTimeout ??= start({ UPSTREAM_TIMEOUT_MS: '1000' });
    return shortTimeout;
  }

  async function upstreamAccounts(lastName: string): Promise<UpstreamAccount[]> {
    const all = (await sandboxControl(sandboxes.accounts.url, 'GET', '/__sandbox/accounts')) as UpstreamAccount[];
    return all.filter((a) => a.individual.lastName === lastName);
  }

  async function issuerCards(clientCode: string): Promise<{ cardKey: string; embossedName: string }[]> {
    return (await sandboxControl(sandboxes.issuer.url, 'GET', `/__sandbox/cards?clientCode=${clientCode}`)) as { cardKey: string; embossedName: string }[];
  }

  it('SIGKILL during 16 concurrent creations (8 individuals, 8 virtual cards, each its own key), restart, retry every key: exactly one of each, here and upstream, and the retries run as soon as the claims are taken over', async function () {
    const first = await start();
    const partner = await registerPartner(first, 'opid-killed');
    const holder = (await api(first, partner, 'POST', '/individual/accounts', { body: individualBody({ lastName: 'Holder' }) })).body;
    expect(holder.clientID).to.be.a('string');
    const lastName = `Killed${crypto.randomBytes(3).toString('hex')}`;
    const creations = [
      ...Array.from({ length: 8 }, (_, i) => ({
        key: `kill-ind-${i}-${crypto.randomUUID()}`,
        path: '/individual/accounts',
        body: individualBody({ firstName: `Person${i}`, lastName }),
      })),
      ...Array.from({ length: 8 }, (_, i) => ({
        key: `kill-card-${i}-${crypto.randomUUID()}`,
        path: `/individual/accounts/${holder._id}/cards/virtual`,
        body: cardBody(holder.clientID, { embossedName: `KILLED-CARD-${String.fromCharCode(65 + i)}` }),
      })),
    ];
    // The upstreams do the work at once, then hold their answers back: the gateway dies after the
    // upstream applied every operation and before it recorded any of them.
    accounts.tampers.push({ method: 'POST', path: '/accounts', delayMs: 60_000 });
    issuer.tampers.push({ method: 'POST', path: '/cards', delayMs: 60_000 });
    const lost = creations.map((c) => api(first, partner, 'POST', c.path, { body: c.body, headers: { 'idempotency-key': c.key } }).catch((err: Error) => err));
    await waitFor('every upstream call', async () => accounts.tampered.length + issuer.tampered.length >= creations.length).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${accounts.tampered.length} account and ${issuer.tampered.length} card calls; ${JSON.stringify(await Promise.race([Promise.all(lost.slice(8, 9)), new Promise((r) => setTimeout(() => r('pending'), 100))]))}`);
    });
    first.child.kill('SIGKILL');
    for (const answer of await Promise.all(lost)) expect(answer).to.be.instanceOf(Error);
    accounts.clear();
    issuer.clear();
    expect(await upstreamAccounts(lastName), 'the upstream created every account before the kill').to.have.length(8);
    expect(await issuerCards(holder.clientID), 'the issuer created every card before the kill').to.have.length(8);

    // The killed gateway holds all 16 claims, and their heartbeat stopped with it. A claim is taken
    // over once its heartbeat is STALE_AFTER_SECONDS old: the heartbeats are moved that far into the
    // past here instead of waiting for it (the wait itself, 409 while the heartbeat is fresh, then
    // the takeover, is timed in idempotency-takeover.test.ts).
    const aged = await db.query(
      `UPDATE idempotency_keys SET heartbeat_at = heartbeat_at - make_interval(secs => $3)
        WHERE partner_id = $1 AND key = ANY($2) AND state = 'in_progress' RETURNING claimed_by`,
      [partner.id, creations.map((c) => c.key), STALE_AFTER_SECONDS + 1]
    );
    expect(aged.rowCount, 'every key still claimed').to.equal(creations.length);
    expect(aged.rows.filter((r) => !String(r.claimed_by).includes(`:${first.child.pid}:`)), 'every claim held by the killed gateway').to.deep.equal([]);

    const second = await start();
    const restarted = Date.now();
    const answers = await Promise.all(
      creations.map((c) =>
        waitFor(
          `the retry of ${c.key}`,
          async () => {
            const r = await api(second, partner, 'POST', c.path, { body: c.body, headers: { 'idempotency-key': c.key } });
            return r.status === 409 && r.body.code === 'idempotency_in_progress' ? undefined : { r, at: Date.now() };
          },
          60_000
        )
      )
    );
    const slowest = Math.max(...answers.map((a) => a.at - restarted));
    console.log(`      retries answered at most ${(slowest / 1000).toFixed(1)} s after the restart (claims aged past ${STALE_AFTER_SECONDS} s without heartbeat)`);
    for (const { r } of answers) expect(r.status, JSON.stringify(r.body)).to.equal(201);

    // Exactly one of each, on our side and upstream: no duplicate, no orphan.
    const individuals = answers.slice(0, 8).map((a) => a.r as ApiResponse);
    const upstream = await upstreamAccounts(lastName);
    expect(upstream, 'one upstream account per individual').to.have.length(8);
    expect(upstream.map((a) => a.onboardingId).sort()).to.deep.equal(individuals.map((r) => r.body._id).sort());
    const ours = await db.query('SELECT provisioning, count(*)::int AS n FROM individual_onboardings WHERE partner_id = $1 AND personal_info->>\'lastName\' = $2 GROUP BY 1', [partner.id, lastName]);
    expect(ours.rows, 'one complete individual each, nothing pending').to.deep.equal([{ provisioning: 'complete', n: 8 }]);
    const users = await db.query('SELECT count(*)::int AS n FROM users WHERE partner_id = $1 AND last_name = $2', [partner.id, lastName]);
    expect(users.rows[0].n).to.equal(8);

    const cards = answers.slice(8).map((a) => a.r as ApiResponse);
    const atIssuer = await issuerCards(holder.clientID);
    expect(atIssuer, 'one issuer card per card creation').to.have.length(8);
    expect(atIssuer.map((c) => c.cardKey).sort()).to.deep.equal(cards.map((r) => r.body.cardKey).sort());
    const stored = await db.query('SELECT count(*)::int AS n FROM cards WHERE partner_id = $1 AND individual_id = $2', [partner.id, holder._id]);
    expect(stored.rows[0].n, 'one card row each').to.equal(8);

    // Every later retry replays the answer it got.
    const replay = await api(second, partner, 'POST', creations[0].path, { body: creations[0].body, headers: { 'idempotency-key': creations[0].key } });
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.body).to.deep.equal(individuals[0].body);
  });

  it('a create-individual whose accounts call times out after the upstream created the account, retried with the same key: one upstream account, one individual', async function () {
    const short = await shortTimeoutGateway();
    const partner = await registerPartner(short, 'opid-timeout');
    const lastName = `Timeout${crypto.randomBytes(3).toString('hex')}`;
    const body = individualBody({ lastName });
    const key = `timeout-${crypto.randomUUID()}`;
    accounts.tampers.push({ method: 'POST', path: '/accounts', delayMs: 3_000 });
    const timedOut = await api(short, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
    expect(timedOut.status, JSON.stringify(timedOut.body)).to.equal(504);
    expect(timedOut.body.code).to.equal('upstream_timeout');
    expect(await upstreamAccounts(lastName), 'the upstream did the work').to.have.length(1);
    const pending = await db.query("SELECT count(*)::int AS n FROM individual_onboardings WHERE partner_id = $1 AND provisioning = 'pending'", [partner.id]);
    expect(pending.rows[0].n, 'the pending record stays for the retry').to.equal(1);
    accounts.clear();

    const retry = await api(short, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    const upstream = await upstreamAccounts(lastName);
    expect(upstream, 'still one upstream account').to.have.length(1);
    expect(upstream[0].onboardingId).to.equal(retry.body._id);
    const ours = await db.query('SELECT provisioning, count(*)::int AS n FROM individual_onboardings WHERE partner_id = $1 GROUP BY 1', [partner.id]);
    expect(ours.rows, 'one individual, nothing pending').to.deep.equal([{ provisioning: 'complete', n: 1 }]);
    const list = await api(short, partner, 'GET', '/individual/accounts?limit=100');
    expect(list.body.count).to.equal(1);
  });

  it('a card issue whose issuer call timed out, retried while the issuer still runs the first call (409 IDEMPOTENCY_IN_PROGRESS): that answer does not complete the key, and the next retry gets the one card', async function () {
    const short = await shortTimeoutGateway();
    const partner = await registerPartner(short, 'opid-in-progress');
    const holder = (await api(short, partner, 'POST', '/individual/accounts', { body: individualBody({ lastName: 'InProgress' }) })).body;
    const path = `/individual/accounts/${holder._id}/cards/virtual`;
    const body = cardBody(holder.clientID);
    const key = `in-progress-${crypto.randomUUID()}`;
    issuer.tampers.push({ method: 'POST', path: '/cards', delayMs: 3_000 });
    const timedOut = await api(short, partner, 'POST', path, { body, headers: { 'idempotency-key': key } });
    expect(timedOut.status, JSON.stringify(timedOut.body)).to.equal(504);
    expect(await issuerCards(holder.clientID), 'the issuer did the work').to.have.length(1);
    issuer.clear();

    // The issuer still runs the first call of this operation id (docs/upstreams.md, "Operation ids").
    issuer.tampers.push({ method: 'POST', path: '/cards', answer: { status: 409, body: { errorCode: 'IDEMPOTENCY_IN_PROGRESS', message: 'A request with this Idempotency-Key is still running' } } });
    const early = await api(short, partner, 'POST', path, { body, headers: { 'idempotency-key': key } });
    expect(issuer.tampered, 'the retry reached the issuer').to.have.length(1);
    const row = await db.query('SELECT state FROM idempotency_keys WHERE partner_id = $1 AND key = $2', [partner.id, key]);
    expect(row.rows[0].state, 'the key is released, not completed with the in-progress answer').to.equal('released');
    expect(early.status, JSON.stringify(early.body)).to.equal(409);
    expect(early.body.code).to.equal('idempotency_in_progress');
    expect(early.body.upstreamCode).to.equal('IDEMPOTENCY_IN_PROGRESS');
    expect(early.headers.get('retry-after')).to.equal('1');
    issuer.clear();

    const retry = await api(short, partner, 'POST', path, { body, headers: { 'idempotency-key': key } });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.headers.get('idempotent-replayed')).to.equal(null);
    const atIssuer = await issuerCards(holder.clientID);
    expect(atIssuer, 'one card at the issuer').to.have.length(1);
    expect(retry.body.cardKey).to.equal(atIssuer[0].cardKey);
    const stored = await db.query('SELECT count(*)::int AS n FROM cards WHERE partner_id = $1 AND individual_id = $2', [partner.id, holder._id]);
    expect(stored.rows[0].n, 'one card row').to.equal(1);
  });

  it('a create-individual whose accounts call timed out, retried with the same key and refused by a 503: the pending record the first attempt left stays (the upstream may hold its account), and the next retry completes it', async function () {
    const short = await shortTimeoutGateway();
    const partner = await registerPartner(short, 'opid-refused-retry');
    const lastName = `Refused${crypto.randomBytes(3).toString('hex')}`;
    const body = individualBody({ lastName });
    const key = `refused-retry-${crypto.randomUUID()}`;
    accounts.tampers.push({ method: 'POST', path: '/accounts', delayMs: 3_000 });
    const timedOut = await api(short, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
    expect(timedOut.status, JSON.stringify(timedOut.body)).to.equal(504);
    const upstream = await upstreamAccounts(lastName);
    expect(upstream, 'the upstream created the account').to.have.length(1);
    accounts.clear();

    accounts.tampers.push({ method: 'POST', path: '/accounts', answer: { status: 503, body: { errorCode: 'SERVICE_UNAVAILABLE', message: 'The service is unavailable' } } });
    const refused = await api(short, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
    expect(accounts.tampered, 'the retry reached the accounts service').to.have.length(1);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(502);
    expect(refused.body.upstreamCode).to.equal('SERVICE_UNAVAILABLE');
    const pending = await db.query("SELECT id FROM individual_onboardings WHERE partner_id = $1 AND provisioning = 'pending'", [partner.id]);
    expect(pending.rows.map((r) => r.id), 'the pending record of the upstream account stays for a retry or the reconciler').to.deep.equal([upstream[0].onboardingId]);
    accounts.clear();

    const retry = await api(short, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body._id).to.equal(upstream[0].onboardingId);
    expect(await upstreamAccounts(lastName), 'still one upstream account').to.have.length(1);
  });

  it('a replace whose issuer call times out after the issuer replaced the card, retried with the same key: the retry gets that successor (not 404), one successor at the issuer', async function () {
    const short = await shortTimeoutGateway();
    const partner = await registerPartner(short, 'opid-replace');
    const holder = (await api(short, partner, 'POST', '/individual/accounts', { body: individualBody({ lastName: 'Replaced' }) })).body;
    const card = (await api(short, partner, 'POST', `/individual/accounts/${holder._id}/cards/physical`, { body: cardBody(holder.clientID) })).body;
    expect(card.cardKey).to.be.a('string');
    const key = `replace-${crypto.randomUUID()}`;
    issuer.tampers.push({ method: 'POST', path: `/cards/${card.cardKey}/replace`, delayMs: 3_000 });
    const timedOut = await api(short, partner, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate }, headers: { 'idempotency-key': key } });
    expect(timedOut.status, JSON.stringify(timedOut.body)).to.equal(504);
    const atIssuer = await issuerCards(holder.clientID);
    expect(atIssuer.map((c) => c.cardKey), 'the issuer replaced the card').to.not.include(card.cardKey);
    expect(atIssuer).to.have.length(1);
    issuer.clear();

    const retry = await api(short, partner, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate }, headers: { 'idempotency-key': key } });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(200);
    expect(retry.body.cardKey).to.equal(atIssuer[0].cardKey);
    expect(await issuerCards(holder.clientID), 'one successor, no second replace').to.have.length(1);
    const usable = await api(short, partner, 'GET', `/cards/${retry.body.cardKey}`);
    expect(usable.status).to.equal(200);
  });
});
