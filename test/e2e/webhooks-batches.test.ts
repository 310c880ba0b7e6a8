import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { emitEvent, type EventCard } from '../../gateway/outbox/partner-events';
import { api } from '../support/api';
import { FAST_WEBHOOKS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { waitFor } from '../support/wait';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { createOwnDatabase, type RunDatabase } from '../support/test-database';

/**
 * Batched claims and completions (issue 22, docs/webhooks.md): two gateways on one database claim
 * and complete a backlog of several cards' events in batches; per card the receiver gets them in
 * order, every event once, never more than WEBHOOKS_ENDPOINT_CONCURRENCY at once across both, and
 * every delivery has exactly one attempt recorded.
 */
/**
 * `total` card.updated events over `cards` card keys (`<prefix>-card-<n>`, round-robin), each
 * nickname `<card key>#<i>` so that the receiver can check per-card order, written in one
 * transaction: the whole backlog is due at once, as after an outage.
 */
async function emitBacklog(db: Client, partnerId: string, prefix: string, cards: number, total: number): Promise<void> {
  await db.query('BEGIN');
  for (let i = 0; i < total; i++) {
    const cardKey = `${prefix}-card-${i % cards}`;
    const card = { cardKey, nickname: `${cardKey}#${i}` } as EventCard;
    await emitEvent(db, { type: 'card.updated', partnerId, cardKey, data: { cardKey, changed: ['nickname'], card } });
  }
  await db.query('COMMIT');
}

/** A new partner of `gateway` named `name`, with a webhook endpoint at `url` (its secret recorded for the log scan). */
async function partnerWithEndpoint(gateway: GatewayProcess, name: string, url: string): Promise<TestPartner> {
  const partner = await registerPartner(gateway, name);
  const created = await api(gateway, partner, 'POST', '/webhooks/endpoints', { body: { url } });
  expect(created.status).to.equal(201);
  recordSecret('webhookSecret', created.body.secret);
  return partner;
}

/** One delivery as the receiver got it: the event, its card, its number there, and the status answered. */
interface Arrival {
  id: string;
  card: string;
  n: number;
  status: number;
}

/**
 * A loopback webhook receiver: records every delivery as it arrives (the card and number from the
 * nickname `<card key>#<n>`) and answers it as `answer` says, given the nickname and how many have
 * arrived: a status (200 by default), at once or after `afterMs`. `maxOpen` is the most deliveries
 * it held unanswered at once.
 */
async function startReceiver(answer: (nickname: string, received: number) => { status?: number; afterMs?: number } = () => ({})) {
  const arrivals: Arrival[] = [];
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const nickname = String(event.data.card.nickname);
      const [card, n] = nickname.split('#');
      const { status = 200, afterMs } = answer(nickname, arrivals.length + 1);
      arrivals.push({ id: event.id, card, n: Number(n), status });
      const reply = () => {
        open--;
        res.writeHead(status).end();
      };
      if (afterMs === undefined) reply();
      else setTimeout(reply, afterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    maxOpen: () => maxOpen,
    close(): void {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('e2e: webhook deliveries claimed and completed in batches', function () {
  this.timeout(120_000);

  it('two gateways, one with prepared statements off (DATABASE_PREPARED_STATEMENTS=false: the step written in full), drain 600 events of 6 cards: per-card order, each event once, the endpoint limit across both, one attempt row per delivery', async function () {
    const own = await createOwnDatabase();
    // A short wait, so that deliveries overlap and the limit is seen.
    const receiver = await startReceiver(() => ({ afterMs: 2 }));
    const { url, arrivals } = receiver;
    const gateways: GatewayProcess[] = [];
    const db = new Client({ connectionString: own.url });
    try {
      const env = { ...FAST_WEBHOOKS, WEBHOOKS_ENDPOINT_CONCURRENCY: '8' };
      gateways.push(await startGatewayProcess({ databaseUrl: own.url, env }));
      gateways.push(await startGatewayProcess({ databaseUrl: own.url, env: { ...env, DATABASE_PREPARED_STATEMENTS: 'false' } }));
      const partner = await partnerWithEndpoint(gateways[0], 'acme-batches', url);
      await db.connect();
      const cards = 6;
      const total = 600;
      await emitBacklog(db, partner.id, 'batch', cards, total);
      const deadline = Date.now() + 90_000;
      while (arrivals.length < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(arrivals, 'arrivals').to.have.length(total);
      expect(new Set(arrivals.map((a) => a.id)).size, 'distinct events').to.equal(total);
      for (let c = 0; c < cards; c++) {
        const ofCard = arrivals.filter((a) => a.card === `batch-card-${c}`).map((a) => a.n);
        expect(ofCard, `card ${c} in order`).to.deep.equal([...ofCard].sort((a, b) => a - b));
        expect(ofCard).to.have.length(total / cards);
      }
      expect(receiver.maxOpen(), 'deliveries open at once').to.be.at.most(8);
      // Completions are written just after the answer: wait for the last ones.
      let states: { state: string; n: number }[] = [];
      for (let i = 0; i < 100; i++) {
        states = (await db.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM webhook_deliveries GROUP BY state')).rows;
        if (states.length === 1 && states[0].state === 'delivered') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(states).to.deep.equal([{ state: 'delivered', n: total }]);
      const attempts = await db.query<{ n: number; ones: number; delivered: number; distinct: number }>(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE attempt = 1)::int AS ones, count(*) FILTER (WHERE outcome = 'delivered')::int AS delivered,
                count(DISTINCT delivery_id)::int AS distinct FROM webhook_attempts`
      );
      expect(attempts.rows[0]).to.deep.equal({ n: total, ones: total, delivered: total, distinct: total });
      const endpoint = await db.query('SELECT consecutive_failures, last_attempt_at IS NOT NULL AS attempted FROM webhook_endpoints');
      expect(endpoint.rows[0]).to.deep.equal({ consecutive_failures: 0, attempted: true });
    } finally {
      await db.end().catch(() => undefined);
      for (const g of gateways) await g.stop();
      receiver.close();
      await own.drop();
    }
  });

  /**
   * One database and one gateway (FAST_WEBHOOKS, the default endpoint limit of 4) reached through a
   * TCP link that one test cuts. Each test has its own partner, endpoint, receiver and cards, and
   * reads only their rows; the order matters where noted: the limit test counts every in_flight row
   * (first, on an empty database), and the poisoned step's deliveries stay poisoned (last).
   */
  describe('one gateway (and a second one where a test starts it) on one database', function () {
    let own: RunDatabase;
    let link: TcpProxy;
    let gateway: GatewayProcess;

    before(async function () {
      own = await createOwnDatabase();
      const direct = new URL(own.url);
      link = await startTcpProxy({ host: decodeURIComponent(direct.hostname), port: Number(direct.port || 5432) });
      const viaLink = new URL(own.url);
      viaLink.hostname = '127.0.0.1';
      viaLink.port = String(link.port);
      gateway = await startGatewayProcess({ databaseUrl: viaLink.toString(), env: FAST_WEBHOOKS });
    });

    after(async function () {
      await gateway?.stop();
      await link?.close();
      await own?.drop();
    });

    it('two gateways, 40 cards, the default limit of 4: never more than 4 open at once at the receiver nor in_flight in PostgreSQL, per-card order, each event once', async function () {
      // Answered after a short wait (or at once), so that sends overlap and end at varied times.
      const receiver = await startReceiver((_, received) => (received % 3 === 0 ? {} : { afterMs: 1 + (received % 4) }));
      const { url, arrivals } = receiver;
      let second: GatewayProcess | undefined;
      const db = new Client({ connectionString: own.url });
      const watcher = new Client({ connectionString: own.url });
      let watching = true;
      let maxInFlight = 0;
      try {
        // The default WEBHOOKS_ENDPOINT_CONCURRENCY (4), far fewer than the cards with due events.
        second = await startGatewayProcess({ databaseUrl: own.url, env: FAST_WEBHOOKS });
        const partner = await partnerWithEndpoint(gateway, 'acme-limit', url);
        await db.connect();
        await watcher.connect();
        const cards = 40;
        const total = 800;
        await emitBacklog(db, partner.id, 'limit', cards, total);
        // The claims held in PostgreSQL, read over and over while the backlog drains.
        const watch = (async () => {
          while (watching) {
            const row = await watcher.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'in_flight'`);
            maxInFlight = Math.max(maxInFlight, row.rows[0].n);
          }
        })();
        const deadline = Date.now() + 90_000;
        while (arrivals.length < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        watching = false;
        await watch;
        expect(arrivals, 'arrivals').to.have.length(total);
        expect(new Set(arrivals.map((a) => a.id)).size, 'distinct events').to.equal(total);
        for (let c = 0; c < cards; c++) {
          const ofCard = arrivals.filter((a) => a.card === `limit-card-${c}`).map((a) => a.n);
          expect(ofCard, `card ${c} in order`).to.deep.equal([...ofCard].sort((a, b) => a - b));
        }
        expect(receiver.maxOpen(), 'deliveries open at once at the receiver').to.be.at.most(4);
        expect(maxInFlight, 'deliveries in_flight at once in PostgreSQL').to.be.at.most(4);
        expect(maxInFlight, 'the limit was reached (the test can see a breach)').to.equal(4);
      } finally {
        watching = false;
        await db.end().catch(() => undefined);
        await watcher.end().catch(() => undefined);
        await second?.stop();
        receiver.close();
      }
    });

    it('a failed attempt holds its card: the step that records it as retrying claims none of that card\'s later events, other cards go on', async function () {
      // Every attempt as it arrives, with the status answered: one event fails once.
      const failOnce = new Set<string>(['hold-card-1#4']);
      const receiver = await startReceiver((nickname) => ({ status: failOnce.delete(nickname) ? 500 : 200 }));
      const { url, arrivals } = receiver;
      const db = new Client({ connectionString: own.url });
      try {
        const partner = await partnerWithEndpoint(gateway, 'acme-hold', url);
        await db.connect();
        const cards = 3;
        const total = 60;
        await emitBacklog(db, partner.id, 'hold', cards, total);
        const deadline = Date.now() + 60_000;
        while (arrivals.filter((a) => a.status === 200).length < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        const delivered = arrivals.filter((a) => a.status === 200);
        expect(delivered, 'delivered').to.have.length(total);
        expect(new Set(delivered.map((a) => a.id)).size).to.equal(total);
        // Card 1: #1, then #4 refused, then #4 again (after its backoff), and only then #7 and the rest.
        const ofCard1 = arrivals.filter((a) => a.card === 'hold-card-1').map((a) => `${a.n}:${a.status}`);
        expect(ofCard1.slice(0, 4)).to.deep.equal(['1:200', '4:500', '4:200', '7:200']);
        expect(ofCard1).to.have.length(total / cards + 1);
        for (let c = 0; c < cards; c++) {
          const ofCard = delivered.filter((a) => a.card === `hold-card-${c}`).map((a) => a.n);
          expect(ofCard, `card ${c} in order`).to.deep.equal([...ofCard].sort((a, b) => a - b));
        }
        // The other cards did not wait for card 1's retry (its backoff is at least 100 ms).
        const refused = arrivals.findIndex((a) => a.status === 500);
        const retried = arrivals.findIndex((a) => a.card === 'hold-card-1' && a.n === 4 && a.status === 200);
        expect(arrivals.slice(refused, retried).filter((a) => a.card !== 'hold-card-1').length, 'other cards delivered meanwhile').to.be.greaterThan(0);
        const attempts = await db.query<{ attempt: number; outcome: string; http_status: number }>(
          `SELECT a.attempt, a.outcome, a.http_status FROM webhook_attempts a JOIN partner_events e ON e.id = a.event_id
            WHERE e.payload::jsonb #>> '{data,card,nickname}' = 'hold-card-1#4' ORDER BY a.attempt`
        );
        expect(attempts.rows).to.deep.equal([
          { attempt: 1, outcome: 'retrying', http_status: 500 },
          { attempt: 2, outcome: 'delivered', http_status: 200 },
        ]);
      } finally {
        await db.end().catch(() => undefined);
        receiver.close();
      }
    });

    it("survives the network to its database dropping mid-step: the process stays up, every event arrives in card order", async function () {
      const receiver = await startReceiver(() => ({ afterMs: 2 }));
      const { url, arrivals } = receiver;
      const db = new Client({ connectionString: own.url });
      try {
        const partner = await partnerWithEndpoint(gateway, 'acme-cut', url);
        await db.connect();
        const cards = 4;
        const total = 200;
        await emitBacklog(db, partner.id, 'cut', cards, total);
        // While the backlog drains: hold the dispatcher's claim lock, so that a step waits for it on a
        // checked-out connection, and drop the network then: the sockets close with no word from the
        // server (that client's 'error'; a server's pg_terminate_backend is answered to the query first).
        await waitFor('40 arrivals', () => arrivals.length >= 40 || undefined, 60_000, 5);
        await db.query('BEGIN');
        await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('webhook-dispatch-claims', 0))`);
        const waiting = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%webhook-dispatch-claims%'`;
        await waitFor('a step waiting for the claim lock', async () => ((await db.query(waiting)).rowCount ?? 0) > 0 || undefined, 30_000, 5);
        await link.cut();
        // The server does not notice the dropped client while its backend waits: ended here, so that
        // its step rolls back rather than committing claims nobody reads (they would wait out their lease).
        await db.query(`SELECT pg_terminate_backend(pid) FROM (${waiting}) AS w`);
        await db.query('COMMIT');
        await link.restore();
        await waitFor('every event', () => new Set(arrivals.map((a) => a.id)).size >= total || undefined, 90_000);
        expect(gateway.child.exitCode, 'the gateway process is still up').to.equal(null);
        for (let c = 0; c < cards; c++) {
          // First arrivals per card in order (a delivery whose completion was cut is sent again: at least once).
          const seen = new Set<string>();
          const ofCard = arrivals.filter((a) => a.card === `cut-card-${c}` && !seen.has(a.id) && seen.add(a.id)).map((a) => a.n);
          expect(ofCard, `card ${c} in order`).to.deep.equal([...ofCard].sort((a, b) => a - b));
          expect(ofCard).to.have.length(total / cards);
        }
        const answered = await api(gateway, partner, 'GET', '/me');
        expect(answered.status, 'the gateway still answers').to.equal(200);
      } finally {
        await db.end().catch(() => undefined);
        receiver.close();
      }
    });

    it("an attempt that cannot be recorded holds back only its own step's deliveries: after repeated failed steps they are given up (sent again after their lease), and the process claims again", async function () {
      const receiver = await startReceiver();
      const { url, arrivals } = receiver;
      const db = new Client({ connectionString: own.url });
      try {
        const poisoned = await partnerWithEndpoint(gateway, 'acme-poisoned', url);
        const other = await partnerWithEndpoint(gateway, 'acme-other', url);
        await db.connect();
        // A fault no retry mends: recording an attempt of the poisoned card's events fails (as a
        // constraint a new error kind broke would), and with it every step that carries it.
        await db.query(`CREATE FUNCTION poison_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF EXISTS (SELECT 1 FROM partner_events e WHERE e.id = NEW.event_id AND e.ordering_key = 'poison-card-0') THEN
              RAISE EXCEPTION 'this attempt cannot be recorded';
            END IF;
            RETURN NEW;
          END $$`);
        await db.query('CREATE TRIGGER poison_attempt BEFORE INSERT ON webhook_attempts FOR EACH ROW EXECUTE FUNCTION poison_attempt()');
        // Only log lines written from now on: the gateway has run the tests before this one.
        const earlier = gateway.logLines().length;
        await emitBacklog(db, poisoned.id, 'poison', 1, 3);
        await waitFor('a "given up" error line', () => gateway.logLines().slice(earlier).find((l) => l.level === 'error' && typeof l.msg === 'string' && l.msg.includes('given up')), 5000, 20);
        // Long before the given-up deliveries' leases (21.5 s) run out, the process claims again:
        // another partner's events, written now, are all delivered, in order.
        await emitBacklog(db, other.id, 'other', 4, 40);
        await waitFor("the other partner's 40 events", () => new Set(arrivals.filter((a) => a.card.startsWith('other-')).map((a) => a.id)).size === 40 || undefined, 15_000, 20);
        for (let c = 0; c < 4; c++) {
          const ofCard = arrivals.filter((a) => a.card === `other-card-${c}`).map((a) => a.n);
          expect(ofCard, `card ${c} in order`).to.deep.equal([...ofCard].sort((a, b) => a - b));
        }
        expect(gateway.child.exitCode).to.equal(null);
      } finally {
        await db.end().catch(() => undefined);
        receiver.close();
      }
    });
  });
});
