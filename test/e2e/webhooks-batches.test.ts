import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { emitEvent, type EventCard } from '../../gateway/outbox/partner-events';
import { api } from '../support/api';
import { FAST_WEBHOOKS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { createOwnDatabase } from '../support/test-database';

/**
 * Batched claims and completions (issue 22, docs/webhooks.md): two gateways on one database claim
 * and complete a backlog of several cards' events in batches; per card the receiver gets them in
 * order, every event once, never more than WEBHOOKS_ENDPOINT_CONCURRENCY at once across both, and
 * every delivery has exactly one attempt recorded.
 */
describe('e2e: webhook deliveries claimed and completed in batches', function () {
  this.timeout(120_000);

  it('two gateways drain 600 events of 6 cards: per-card order, each event once, the endpoint limit across both, one attempt row per delivery', async function () {
    const own = await createOwnDatabase();
    const arrivals: { id: string; card: string; n: number }[] = [];
    let open = 0;
    let maxOpen = 0;
    const server = http.createServer((req, res) => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const [card, n] = String(event.data.card.nickname).split('#');
        arrivals.push({ id: event.id, card, n: Number(n) });
        // A short wait, so that deliveries overlap and the limit is seen.
        setTimeout(() => {
          open--;
          res.writeHead(200).end();
        }, 2);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const gateways: GatewayProcess[] = [];
    const db = new Client({ connectionString: own.url });
    try {
      const env = { ...FAST_WEBHOOKS, WEBHOOKS_ENDPOINT_CONCURRENCY: '8' };
      gateways.push(await startGatewayProcess({ databaseUrl: own.url, env }));
      gateways.push(await startGatewayProcess({ databaseUrl: own.url, env }));
      const partner = await registerPartner(gateways[0], 'acme-batches');
      const created = await api(gateways[0], partner, 'POST', '/webhooks/endpoints', { body: { url } });
      expect(created.status).to.equal(201);
      recordSecret('webhookSecret', created.body.secret);
      await db.connect();
      const cards = 6;
      const total = 600;
      // One transaction: the whole backlog is due at once, as after an outage.
      await db.query('BEGIN');
      for (let i = 0; i < total; i++) {
        const cardKey = `batch-card-${i % cards}`;
        const card = { cardKey, nickname: `${cardKey}#${i}` } as EventCard;
        await emitEvent(db, { type: 'card.updated', partnerId: partner.id, cardKey, data: { cardKey, changed: ['nickname'], card } });
      }
      await db.query('COMMIT');
      const deadline = Date.now() + 90_000;
      while (arrivals.length < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(arrivals, 'arrivals').to.have.length(total);
      expect(new Set(arrivals.map((a) => a.id)).size, 'distinct events').to.equal(total);
      for (let c = 0; c < cards; c++) {
        const ofCard = arrivals.filter((a) => a.card === `batch-card-${c}`).map((a) => a.n);
        expect(ofCard, `card ${c} in order`).to.deep.equal([...ofCard].sort((a, b) => a - b));
        expect(ofCard).to.have.length(total / cards);
      }
      expect(maxOpen, 'deliveries open at once').to.be.at.most(8);
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
      server.closeAllConnections();
      server.close();
      await own.drop();
    }
  });
});
