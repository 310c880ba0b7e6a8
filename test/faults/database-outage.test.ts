import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { runDatabaseUrl } from '../support/test-database';
import { waitFor } from '../support/wait';

type Operation = 'nickname' | 'lock' | 'unlock';

/** One request of the load and what the gateway answered. */
interface Outcome {
  worker: number;
  operation: Operation;
  requestId: string;
  nickname?: string;
  startedAt: number;
  status: number;
  code?: string;
  retryAfter: string | null;
}

const CONCURRENCY = 8;
/** Each worker cycles over its own card: nickname, lock, nickname, unlock (every transition allowed). */
const CYCLE: Operation[] = ['nickname', 'lock', 'nickname', 'unlock'];

/**
 * PostgreSQL goes away and comes back while mixed writes run at concurrency 8: the partner gets
 * 503 `database_unavailable` problems while it is down, service resumes without a restart, and
 * every write the gateway acknowledged (2xx) is in the database with its audit entry.
 */
describe('faults: PostgreSQL stopped and started during a load of writes', function () {
  this.timeout(120_000);
  let proxy: TcpProxy;
  let gateway: GatewayProcess;
  let partner: TestPartner;
  let db: Client;
  const cards: { cardKey: string; expDate: string }[] = [];

  before(async function () {
    if (process.env.TEST_DB === 'embedded') this.skip(); // the link to cut is the one to a real PostgreSQL server
    const direct = new URL(runDatabaseUrl());
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(direct.toString());
    viaProxy.port = String(proxy.port);
    gateway = await startGatewayProcess({ env: { ...HIGH_RATE_LIMITS, DATABASE_URL: viaProxy.toString() } });
    partner = await registerPartner(gateway, 'db-outage');
    db = new Client({ connectionString: runDatabaseUrl() });
    await db.connect();
    const ada = (await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() })).body;
    for (let i = 0; i < CONCURRENCY; i++) {
      const card = await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID) });
      expect(card.status).to.equal(201);
      cards.push(card.body);
    }
  });

  after(async function () {
    await db?.end();
    await gateway?.stop();
    await proxy?.close();
  });

  it('answers 503 while it is down, recovers without a restart, and loses no acknowledged write', async function () {
    const outcomes: Outcome[] = [];
    const pid = gateway.child.pid;
    let stop = false;
    let down: { from: number; to: number } | undefined;

    async function worker(index: number): Promise<void> {
      const card = cards[index];
      for (let i = 0; !stop && gateway.child.exitCode === null; i++) {
        const operation = CYCLE[i % CYCLE.length];
        const requestId = `db-outage-w${index}-${i}`;
        const nickname = operation === 'nickname' ? `w${index}-${i}` : undefined;
        const startedAt = Date.now();
        const headers = { 'x-request-id': requestId };
        let response;
        try {
          response =
            operation === 'nickname'
              ? await api(gateway, partner, 'PATCH', `/cards/${card.cardKey}/nickname`, { body: { nickname }, headers })
              : await api(gateway, partner, 'POST', `/cards/${card.cardKey}/${operation}`, { body: { expDate: card.expDate, reason: 'outage load' }, headers });
        } catch (err) {
          // No HTTP answer at all (the connection was closed): recorded as status 0.
          outcomes.push({ worker: index, operation, requestId, nickname, startedAt, status: 0, code: String((err as Error).cause ?? err), retryAfter: null });
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        outcomes.push({ worker: index, operation, requestId, nickname, startedAt, status: response.status, code: response.body?.code, retryAfter: response.headers.get('retry-after') });
        // A refused client backs off a little, as Retry-After asks (without flooding the log meanwhile).
        if (response.status === 503) await new Promise((r) => setTimeout(r, 50));
      }
    }

    const load = Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => worker(i)));
    /** Whether every worker had `n` outcomes started after `since` that `match`. */
    const everyWorker = (n: number, since: number, match: (o: Outcome) => boolean) =>
      Array.from({ length: CONCURRENCY }, (_, w) => outcomes.filter((o) => o.worker === w && o.startedAt > since && match(o)).length >= n).every(Boolean);
    const exited = () => gateway.child.exitCode !== null;
    // The load runs before the cut: every worker had three acknowledged writes.
    await waitFor('every worker acknowledged before the cut', () => everyWorker(3, 0, (o) => o.status < 300) || exited(), 30_000).catch(() => undefined);
    const cutAt = Date.now();
    await proxy.cut();
    // PostgreSQL stays away until the load was refused (503) twice per worker while it was down; the
    // assertions below say what went wrong if that never came.
    const refusedSinceCut = () => outcomes.filter((o) => o.startedAt >= cutAt && o.status === 503).length;
    await waitFor('refusals during the outage', () => refusedSinceCut() >= 2 * CONCURRENCY || exited(), 20_000).catch(() => undefined);
    await proxy.restore();
    down = { from: cutAt, to: Date.now() };
    // Keep the load on until every worker had three acknowledged writes after the restore (deadline 30 s).
    const recovered = () => everyWorker(3, down!.to, (o) => o.status < 300);
    await waitFor('every worker acknowledged after the restore', () => recovered() || exited(), 30_000, 100).catch(() => undefined);
    stop = true;
    await load;

    const crash = gateway
      .output()
      .split('\n')
      .filter((line) => !line.startsWith('{') && line.trim() !== '')
      .slice(0, 12)
      .join('\n');
    expect(gateway.child.exitCode, `the gateway process exited during the outage:\n${crash}`).to.equal(null);
    expect(gateway.child.pid).to.equal(pid);
    expect(recovered(), 'every worker wrote again after the restore').to.equal(true);

    const acknowledged = outcomes.filter((o) => o.status >= 200 && o.status < 300);
    const refused = outcomes.filter((o) => o.status >= 300);
    const during = outcomes.filter((o) => o.startedAt >= down!.from && o.startedAt < down!.to);
    expect(during.filter((o) => o.status === 503).length, 'requests made while PostgreSQL was down got 503').to.be.greaterThan(0);
    const unexpected = refused.filter((o) => o.status !== 503 || o.code !== 'database_unavailable' || o.retryAfter !== '1');
    expect(unexpected.map((o) => `${o.requestId} ${o.operation} → ${o.status} ${o.code}`), 'every refusal is 503 database_unavailable with Retry-After: 1').to.deep.equal([]);

    // Every acknowledged write is stored, with exactly one audit entry (and a history entry for status changes).
    const ids = outcomes.map((o) => o.requestId);
    const audit = await db.query<{ request_id: string; n: number }>(
      "SELECT request_id, count(*)::int AS n FROM audit_log WHERE partner_id = $1 AND outcome = 'success' AND request_id = ANY($2) GROUP BY request_id",
      [partner.id, ids]
    );
    const audited = new Map(audit.rows.map((r) => [r.request_id, r.n]));
    const history = new Set(
      (await db.query<{ request_id: string }>('SELECT request_id FROM card_status_history WHERE partner_id = $1 AND request_id = ANY($2)', [partner.id, ids])).rows.map((r) => r.request_id)
    );
    const lost = acknowledged.filter((o) => audited.get(o.requestId) !== 1 || (o.operation !== 'nickname' && !history.has(o.requestId)));
    expect(lost.map((o) => o.requestId), 'acknowledged writes without their rows').to.deep.equal([]);

    // The stored nickname is the last acknowledged one, or one of the writes attempted after it
    // (a commit whose acknowledgement the outage swallowed is applied but not acknowledged: allowed).
    for (let w = 0; w < CONCURRENCY; w++) {
      const mine = outcomes.filter((o) => o.worker === w && o.operation === 'nickname');
      const lastAcknowledged = mine.map((o) => o.status < 300).lastIndexOf(true);
      const allowed = mine.slice(lastAcknowledged).map((o) => o.nickname);
      const stored = (await db.query('SELECT nickname FROM cards WHERE card_key = $1', [cards[w].cardKey])).rows[0].nickname;
      expect(allowed, `card ${w}`).to.include(stored);
    }
    const appliedUnacknowledged = refused.filter((o) => audited.has(o.requestId)).length;
    // Reported, not asserted (docs/reliability.md, open points): a status change the issuer applied
    // whose local transaction then failed leaves the issuer and our record apart until the next change.
    let diverged = 0;
    for (const card of cards) {
      const issuer = await sandboxControl(sandboxUrls(gateway).issuer, 'GET', `/cards/${card.cardKey}`);
      const local = (await db.query('SELECT status_code FROM cards WHERE card_key = $1', [card.cardKey])).rows[0].status_code;
      if (issuer.statusCode !== local) diverged += 1;
    }
    process.stdout.write(
      `      database outage: ${outcomes.length} writes, ${acknowledged.length} acknowledged (all found), ${refused.length} answered 503 (${during.length} made while down), ${appliedUnacknowledged} applied without acknowledgement, ${diverged} of ${cards.length} cards left with another status at the issuer\n`
    );
  });
});
