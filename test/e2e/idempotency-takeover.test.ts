import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, individualBody, sandboxControl } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { startTamperingUpstream, type TamperingUpstream } from '../support/tampering-upstream';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { createOwnDatabase, type RunDatabase } from '../support/test-database';
import { waitFor } from '../support/wait';

/**
 * The claim's lease (`IDEMPOTENCY_STALE_AFTER_SECONDS`, default 10 s) shortened to 3 s: the holder
 * then heartbeats every 600 ms, and a claim whose process died is taken over 3 s later. The
 * sequences below (held while fresh, free after) are the same at any lease.
 */
const LEASE_SECONDS = 3;

/**
 * Both scenarios run on one database, one set of upstreams and one gateway (reached through a
 * TCP proxy that the outage cuts): the takeover scenario starts only the gateway it kills.
 */
describe('e2e: idempotency keys whose holder met an outage or died', function () {
  let sandboxes: Sandboxes;
  let accounts: TamperingUpstream;
  let proxy: TcpProxy;
  let own: RunDatabase;
  let gateway: GatewayProcess;
  const env = () => ({ ...HIGH_RATE_LIMITS, IDEMPOTENCY_STALE_AFTER_SECONDS: String(LEASE_SECONDS), ISSUER_URL: sandboxes.issuer.url, PROCESSING_URL: sandboxes.processing.url, ACCOUNTS_URL: accounts.url });

  before(async function () {
    // The link to cut is the one to a real PostgreSQL server, and two processes share one database.
    if (process.env.TEST_DB === 'embedded') this.skip();
    this.timeout(60_000);
    sandboxes = await startSandboxes();
    accounts = await startTamperingUpstream(sandboxes.accounts.url);
    own = await createOwnDatabase();
    const direct = new URL(own.url);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(own.url);
    viaProxy.port = String(proxy.port);
    gateway = await startGatewayProcess({ env: { ...env(), DATABASE_URL: viaProxy.toString() } });
  });

  after(async function () {
    await gateway?.stop();
    await proxy?.close();
    await accounts?.close();
    await sandboxes?.close();
    await own?.drop();
  });

  /**
   * Issue 12, item 2 (outage part): a 5xx caused by a database outage could not release its key
   * (releasing needs the database), which then blocked every retry with 409 for the 120 s of the
   * abandoned-claim takeover. The release is now retried by the claim's holder until the database
   * is back, so a retry runs again within a heartbeat of the recovery.
   */
  describe('e2e: a key whose release met a PostgreSQL outage is free soon after the recovery', function () {
    this.timeout(90_000);
    let partner: TestPartner;
    let db: Client;

    before(async function () {
      partner = await registerPartner(gateway, 'once-outage');
      db = new Client({ connectionString: own.url });
      await db.connect();
    });

    after(async function () {
      await db?.end();
    });

    it('a create-individual answered 503 during the outage: its key is released after the recovery, and the retry runs (not 409 for 120 s)', async function () {
      const key = `outage-${crypto.randomUUID()}`;
      const body = individualBody({ firstName: 'Outage' });
      const call = () => api(gateway, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
      // The upstream creates the account; its answer reaches the gateway only once the database is cut off.
      const answerHeld = accounts.hold('POST', '/accounts');
      const first = call();
      await Promise.race([answerHeld.arrived, first]);
      await proxy.cut();
      answerHeld.release();
      const answer = await first;
      expect(answer.status, JSON.stringify(answer.body)).to.equal(503);
      expect(answer.body.code).to.equal('database_unavailable');
      const held = await db.query('SELECT state FROM idempotency_keys WHERE partner_id = $1 AND key = $2', [partner.id, key]);
      expect(held.rows.map((r) => r.state), 'the release could not reach the database').to.deep.equal(['in_progress']);
      await proxy.restore();

      // Well under the 120 s takeover: the holder's next tick releases the key (the row stays, marked
      // released, so that the retry carries the same operation id: migration 008).
      await waitFor('the key released', async () => {
        const row = await db.query('SELECT state FROM idempotency_keys WHERE partner_id = $1 AND key = $2', [partner.id, key]);
        return row.rowCount === 0 || row.rows[0].state === 'released';
      }, 30_000);
      const retry = await waitFor('a retry that runs', async () => {
        const r = await call();
        return r.status === 503 ? undefined : r; // the pool may still be reconnecting
      });
      expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
      expect(retry.headers.get('idempotent-replayed')).to.equal(null);
      // The upstream created the account before the outage; the retry carried the same onboarding id.
      const upstream = (await sandboxControl(sandboxes.accounts.url, 'GET', '/__sandbox/accounts')) as { individual: { firstName: string } }[];
      expect(upstream.filter((a) => a.individual.firstName === 'Outage'), 'one upstream account').to.have.length(1);
      expect(retry.body._id).to.be.a('string');
    });
  });

  /**
   * Issue 12, item 2 (takeover): a claim whose process died used to block retries with 409 for
   * 120 s. Its heartbeat now stops with the process, and the claim is taken over once the heartbeat
   * is older than the lease (IDEMPOTENCY_STALE_AFTER_SECONDS).
   */
  describe('e2e: a key claimed by a killed gateway is taken over once its heartbeat stops', function () {
    this.timeout(120_000);
    let killed: GatewayProcess | undefined;

    after(async function () {
      await killed?.stop();
    });

    it('SIGKILL during a create-individual, restart, retry with the same key: 409 while the heartbeat is fresh, then the retry runs (not after 120 s)', async function () {
      // The gateway that retries (the one of this file, on the same database) runs before the kill:
      // no boot eats the claim's freshness window that the first assertion checks.
      const second = gateway;
      const first = (killed = await startGatewayProcess({ databaseUrl: own.url, env: env() }));
      const partner = await registerPartner(first, 'once-killed');
      // Never released: the gateway dies while its upstream call is in flight (the retry's call passes).
      const answerHeld = accounts.hold('POST', '/accounts');
      const key = `killed-${crypto.randomUUID()}`;
      const body = individualBody({ firstName: 'Killed' });
      const lost = api(first, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } }).catch((err: Error) => err);
      await Promise.race([answerHeld.arrived, lost]);
      first.child.kill('SIGKILL');
      expect(await lost).to.be.instanceOf(Error);

      const call = () => api(second, partner, 'POST', '/individual/accounts', { body, headers: { 'idempotency-key': key } });
      const early = await call();
      expect(early.status, 'right after the kill the claim is still fresh').to.equal(409);
      expect(early.body.code).to.equal('idempotency_in_progress');
      const taken = await waitFor('a retry that runs', async () => {
        const r = await call();
        return r.status === 409 ? undefined : r;
        // Well under the former 120 s. Every 200 ms: the claim goes stale LEASE_SECONDS after the
        // kill, and each retry is a signed request the gateway verifies and tries to claim.
      }, 60_000, 200);
      expect(taken.status, JSON.stringify(taken.body)).to.equal(201);
    });
  });
});
