import crypto from 'node:crypto';
import { expect } from 'chai';
import { Database } from '../../../gateway/db/database';
import { applyIssuerNotification, applyProcessingNotification, deleteExpiredNotifications, type ProcessingNotification } from '../../../gateway/inbound/apply';
import { createLogger } from '../../../gateway/logging/logger';
import { deleteExpiredEvents } from '../../../gateway/outbox/event-log';
import { deleteExpiredDecisions } from '../../../gateway/authorizations/recording-statements';
import { emitEvent } from '../../../gateway/outbox/partner-events';
import { readSettings } from '../../../gateway/settings';
import { deleteExpiredEndpoints } from '../../../gateway/webhooks/endpoint-store';
import { makeKeyPair } from '../../support/partners';
import { openServices, type InProcessServices } from '../../support/in-process';
import { createOwnDatabase, type RunDatabase } from '../../support/test-database';

/**
 * Retention of the tables that grew forever (docs/events.md "Retention"): the upstream notifications'
 * dedupe log and deleted webhook endpoints with their deliveries and attempts, on real PostgreSQL, in
 * a database of this file's own (the deletes are global: another file's rows must not count here).
 */
describe('retention: upstream notifications and deleted webhook endpoints', function () {
  this.timeout(60_000);
  let own: RunDatabase;
  let services: InProcessServices;
  let partnerId: string;
  let tenantId: string;

  const count = async (sql: string, params: unknown[] = []) => Number((await services.db.query<{ n: string }>(sql, params)).rows[0].n);
  const ntf = () => `ntf_${crypto.randomBytes(12).toString('hex')}`;
  const insertNotifications = async (n: number, ageDays: number, upstream: 'issuer' | 'processing' = 'processing') => {
    const ids = Array.from({ length: n }, ntf);
    await services.db.query(
      `INSERT INTO upstream_notifications (upstream, id, type, outcome, card_key, received_at)
       SELECT $1, id, 'transaction.created', 'applied', 'CK-RET', now() - make_interval(days => $3) FROM unnest($2::text[]) AS id`,
      [upstream, ids, ageDays]
    );
    return ids;
  };
  const ageNotification = (upstream: string, id: string, days: number) =>
    services.db.query('UPDATE upstream_notifications SET received_at = now() - make_interval(days => $3) WHERE upstream = $1 AND id = $2', [upstream, id, days]);
  const newCard = async () => {
    const cardKey = `CKRET${crypto.randomBytes(6).toString('hex').toUpperCase()}`;
    await services.db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date)
       VALUES ($1, $2, 'b2b', $3, $3, '535500******0001', 'virtual', 'ACTIVE', '00', 'EUR', 'P-BIZ', '12/2030')`,
      [cardKey, partnerId, tenantId]
    );
    return cardKey;
  };
  const transactionNotification = (cardKey: string): ProcessingNotification => ({
    id: ntf(),
    type: 'transaction.created',
    occurredAt: new Date().toISOString(),
    transaction: { id: crypto.randomBytes(12).toString('hex'), cardId: cardKey, accountId: '12345678', amount: 4.2, currency: 'EUR', type: 'PURCHASE', status: 'PENDING', merchant: { name: 'Shop', mcc: '5411', city: 'Berlin', country: 'DE' }, createdAt: new Date().toISOString() },
  });
  const transactionEvents = (cardKey: string) => count("SELECT count(*) AS n FROM partner_events WHERE type = 'transaction.created' AND ordering_key = $1", [cardKey]);

  before(async () => {
    own = await createOwnDatabase();
    services = await openServices(undefined, { databaseUrl: own.url });
    partnerId = (await services.partners.create({ name: 'retention', issuer: 'https://retention.example', publicKey: makeKeyPair().publicPem }))._id;
    tenantId = crypto.randomBytes(12).toString('hex');
    await services.db.query("INSERT INTO b2b_tenants (id, partner_id, name) VALUES ($1, $2, 'Retention Ltd')", [tenantId, partnerId]);
  });
  after(async () => {
    await services?.close();
    await own?.drop();
  });

  describe('the notifications dedupe log (NOTIFICATIONS_RETENTION_DAYS)', function () {
    it('defaults to 7 days, at least 2 (it must outlive the upstreams\' 24 h retry window), configurable', function () {
      expect(readSettings({}).notificationRetentionDays).to.equal(7);
      expect(readSettings({ NOTIFICATIONS_RETENTION_DAYS: '30' }).notificationRetentionDays).to.equal(30);
      expect(() => readSettings({ NOTIFICATIONS_RETENTION_DAYS: '3' })).to.throw(/NOTIFICATIONS_RETENTION_DAYS must be an integer from 4 to 3650/);
    });

    it('deletes the rows received before the period, keeps the recent ones; again deletes nothing', async () => {
      await services.db.query('DELETE FROM upstream_notifications');
      const old = [...(await insertNotifications(3, 8)), ...(await insertNotifications(2, 30, 'issuer'))];
      const recent = [...(await insertNotifications(2, 6)), ...(await insertNotifications(1, 0, 'issuer'))];
      expect(await deleteExpiredNotifications(services.db, 7)).to.equal(old.length);
      const left = (await services.db.query<{ id: string }>('SELECT id FROM upstream_notifications')).rows.map((r) => r.id);
      expect(left.sort()).to.deep.equal([...recent].sort());
      expect(await deleteExpiredNotifications(services.db, 7), 'idempotent').to.equal(0);
    });

    it('a processing notification replayed within the period is still a duplicate: one transaction.created', async () => {
      const cardKey = await newCard();
      const n = transactionNotification(cardKey);
      expect(await applyProcessingNotification(services.db, n)).to.equal('applied');
      await ageNotification('processing', n.id, 6);
      await deleteExpiredNotifications(services.db, 7);
      expect(await applyProcessingNotification(services.db, n), 'the replay 6 days later').to.equal(undefined);
      expect(await transactionEvents(cardKey)).to.equal(1);

      // Past the period the row goes (and with it the memory of the id: the period must outlive the upstream's retries).
      await ageNotification('processing', n.id, 8);
      expect(await deleteExpiredNotifications(services.db, 7)).to.be.at.least(1);
      expect(await count('SELECT count(*) AS n FROM upstream_notifications WHERE id = $1', [n.id])).to.equal(0);
    });

    it('an issuer notification replayed within the period is a duplicate before the issuer is asked', async () => {
      // Applied 6 days ago; the in-process services have no issuer (a call would fail), so only the log answers.
      const id = (await insertNotifications(1, 6, 'issuer'))[0];
      await deleteExpiredNotifications(services.db, 7);
      const replay = { id, type: 'card.status_changed' as const, occurredAt: new Date().toISOString(), cardKey: 'CK-RET', previousStatusCode: '00', statusCode: 'S5', reason: null };
      const outcome = await applyIssuerNotification({ db: services.db, clients: services.clients, log: createLogger({ level: 'silent' }), deliver: async () => undefined }, replay);
      expect(outcome).to.equal(undefined);
    });

    it('authorization decisions: the decided ones and abandoned claims older than the period go; recent ones and live claims stay', async () => {
      await services.db.query('DELETE FROM authorization_decisions');
      const insert = (id: string, state: 'deciding' | 'decided', ageDays: number, leaseHours = -24) =>
        services.db.query(
          `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, decision, lease_until, created_at)
           VALUES ($1, $1, 'CK-RET', $2, 'token', CASE WHEN $2 = 'decided' THEN '{"approved":true,"decidedBy":"approved"}'::jsonb END,
                   now() + make_interval(hours => $4), now() - make_interval(days => $3))`,
          [id, state, ageDays, leaseHours]
        );
      await insert('auth_old_1', 'decided', 8);
      await insert('auth_old_2', 'decided', 30);
      await insert('auth_recent', 'decided', 6);
      await insert('auth_abandoned', 'deciding', 9);
      await insert('auth_live', 'deciding', 9, 1);
      expect(await deleteExpiredDecisions(services.db, 7)).to.equal(3);
      const left = (await services.db.query<{ authorization_id: string }>('SELECT authorization_id FROM authorization_decisions ORDER BY 1')).rows.map((r) => r.authorization_id);
      expect(left).to.deep.equal(['auth_live', 'auth_recent']);
      expect(await deleteExpiredDecisions(services.db, 7), 'idempotent').to.equal(0);
    });

    it('in batches, from several instances at once: every old row goes exactly once, no recent one', async () => {
      await services.db.query('DELETE FROM upstream_notifications');
      await insertNotifications(2_500, 10);
      await insertNotifications(500, 3, 'issuer');
      const log = createLogger({ level: 'silent' });
      const instances = [new Database(own.url, { max: 1, log }), new Database(own.url, { max: 1, log }), new Database(own.url, { max: 1, log })];
      try {
        const counts = await Promise.all(instances.map((db) => deleteExpiredNotifications(db, 7, 200)));
        expect(counts.reduce((a, b) => a + b, 0)).to.equal(2_500);
      } finally {
        await Promise.all(instances.map((db) => db.close()));
      }
      expect(await count('SELECT count(*) AS n FROM upstream_notifications')).to.equal(500);
      expect(await count("SELECT count(*) AS n FROM upstream_notifications WHERE received_at < now() - interval '7 days'")).to.equal(0);
    });
  });

  describe('deleted webhook endpoints (WEBHOOKS_EVENT_RETENTION_DAYS)', function () {
    /** An endpoint of the partner with one event delivered to it (one delivery, two attempts). */
    const endpointWithHistory = async (label: string) => {
      const endpoint = (await services.webhooks.endpoints.create(partnerId, { url: `https://hooks.example/${label}`, events: ['card.updated'] }))!;
      const cardKey = await newCard();
      const event = await services.db.transaction((tx) =>
        emitEvent(tx, { type: 'card.updated', partnerId, cardKey, data: { cardKey, changed: ['nickname'], card: {} as never } })
      );
      // The partner's other enabled endpoints got it too: each endpoint here keeps only its own event's delivery.
      await services.db.query('DELETE FROM webhook_deliveries WHERE event_seq = $1 AND endpoint_id <> $2', [event.seq, endpoint.id]);
      const delivery = (await services.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND event_seq = $2', [endpoint.id, event.seq])).rows[0];
      expect(delivery, 'the event was fanned out to the endpoint').to.not.equal(undefined);
      await services.db.query("UPDATE webhook_deliveries SET state = 'delivered', attempts = 2, finished_at = now() WHERE id = $1", [delivery.id]);
      await services.db.query(
        `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, attempted_at, outcome, http_status, error)
         VALUES ($1, $2, $3, 'card.updated', 1, now(), 'retrying', 503, 'http_status'), ($1, $2, $3, 'card.updated', 2, now(), 'delivered', 200, NULL)`,
        [delivery.id, endpoint.id, event.id]
      );
      return { id: endpoint.id, eventSeq: event.seq };
    };
    const remove = async (id: string, daysAgo: number) => {
      expect(await services.webhooks.endpoints.delete(partnerId, id)).to.equal(true);
      await services.db.query('UPDATE webhook_endpoints SET deleted_at = now() - make_interval(days => $2) WHERE id = $1', [id, daysAgo]);
    };
    const history = async (id: string) => ({
      endpoint: await count('SELECT count(*) AS n FROM webhook_endpoints WHERE id = $1', [id]),
      deliveries: await count('SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1', [id]),
      attempts: await count('SELECT count(*) AS n FROM webhook_attempts WHERE endpoint_id = $1', [id]),
    });

    it('an endpoint deleted before the period goes with its deliveries and attempts; one deleted since, and live ones, keep theirs', async () => {
      const expired = await endpointWithHistory('expired');
      const recent = await endpointWithHistory('recent');
      const live = await endpointWithHistory('live');
      await remove(expired.id, 31);
      await remove(recent.id, 29);
      // The expired endpoint's events are still in the event log (written days after its deletion in
      // no real case, but this makes the purge's own delete of its deliveries visible).
      expect(await history(expired.id)).to.deep.equal({ endpoint: 1, deliveries: 1, attempts: 2 });

      const removed = await deleteExpiredEndpoints(services.db, 30);
      expect(removed).to.deep.equal({ endpoints: 1, deliveries: 1 });
      expect(await history(expired.id)).to.deep.equal({ endpoint: 0, deliveries: 0, attempts: 0 });
      expect(await count('SELECT count(*) AS n FROM webhook_endpoint_secrets WHERE endpoint_id = $1', [expired.id])).to.equal(0);
      expect(await history(recent.id), 'deleted 29 days ago').to.deep.equal({ endpoint: 1, deliveries: 1, attempts: 2 });
      expect(await history(live.id), 'live').to.deep.equal({ endpoint: 1, deliveries: 1, attempts: 2 });
      expect((await services.webhooks.endpoints.attempts(partnerId, live.id, { limit: 10 })).data).to.have.length(2);
      expect(await services.webhooks.endpoints.get(partnerId, live.id)).to.include({ id: live.id, status: 'enabled' });
      expect(await deleteExpiredEndpoints(services.db, 30), 'idempotent').to.deep.equal({ endpoints: 0, deliveries: 0 });
      await services.db.query('DELETE FROM webhook_deliveries WHERE endpoint_id = ANY($1)', [[recent.id, live.id]]);
    });

    it('an endpoint whose deliveries already went with their events is removed too; several instances remove it once', async () => {
      const endpoints = [await endpointWithHistory('gone-a'), await endpointWithHistory('gone-b'), await endpointWithHistory('gone-c')];
      for (const endpoint of endpoints) {
        await remove(endpoint.id, 40);
        await services.db.query("UPDATE partner_events SET created_at = now() - interval '41 days' WHERE seq = $1", [endpoint.eventSeq]);
      }
      // The event retention takes the events, their deliveries and their attempts (cascade).
      expect(await deleteExpiredEvents(services.db, 30)).to.be.at.least(3);
      for (const endpoint of endpoints) expect(await history(endpoint.id)).to.deep.equal({ endpoint: 1, deliveries: 0, attempts: 0 });

      const log = createLogger({ level: 'silent' });
      const instances = [new Database(own.url, { max: 1, log }), new Database(own.url, { max: 1, log })];
      try {
        const results = await Promise.all(instances.map((db) => deleteExpiredEndpoints(db, 30, 1)));
        expect(results.reduce((sum, r) => sum + r.endpoints, 0)).to.equal(3);
      } finally {
        await Promise.all(instances.map((db) => db.close()));
      }
      for (const endpoint of endpoints) expect((await history(endpoint.id)).endpoint).to.equal(0);
    });

    it('the cascades the retention relies on are indexed (a batch would otherwise scan the attempts once per delivery)', async () => {
      const indexes = (await services.db.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename IN ('webhook_attempts', 'webhook_deliveries')")).rows.map((r) => r.indexdef);
      expect(indexes.some((d) => /ON public\.webhook_attempts USING btree \(delivery_id\)$/.test(d)), indexes.join('\n')).to.equal(true);
      expect(indexes.some((d) => /ON public\.webhook_deliveries USING btree \(endpoint_id\)$/.test(d)), indexes.join('\n')).to.equal(true);
    });
  });
});
