import crypto from 'node:crypto';
import { expect } from 'chai';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { openServices, type InProcessServices } from '../support/in-process';
import { makeKeyPair } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { createOwnDatabase, type RunDatabase } from '../support/test-database';

/**
 * The retention a gateway runs at start and every 10 minutes (gateway/serve.ts): with
 * NOTIFICATIONS_RETENTION_DAYS=5 it forgets the notifications received before, still answers a
 * recent one's repeat as a duplicate on its listener, and removes the webhook endpoints deleted
 * before WEBHOOKS_EVENT_RETENTION_DAYS.
 */
describe('e2e: a gateway deletes expired notifications and deleted endpoints at start', function () {
  this.timeout(60_000);
  const processingSecret = crypto.randomBytes(32).toString('base64url');
  let own: RunDatabase;
  let services: InProcessServices;
  let gateway: GatewayProcess;
  const oldIds = Array.from({ length: 5 }, () => `ntf_${crypto.randomBytes(12).toString('hex')}`);
  const recentId = `ntf_${crypto.randomBytes(12).toString('hex')}`;
  let expiredEndpoint: string;
  let recentEndpoint: string;

  const count = async (sql: string, params: unknown[] = []) => Number((await services.db.query<{ n: string }>(sql, params)).rows[0].n);

  before(async () => {
    recordSecret('notifySecret', processingSecret);
    own = await createOwnDatabase();
    services = await openServices(undefined, { databaseUrl: own.url });
    const partnerId = (await services.partners.create({ name: 'retention-e2e', issuer: 'https://retention-e2e.example', publicKey: makeKeyPair().publicPem }))._id;
    await services.db.query(
      `INSERT INTO upstream_notifications (upstream, id, type, outcome, card_key, received_at)
       SELECT 'processing', id, 'transaction.created', 'unknown_card', 'CK-GONE', now() - interval '6 days' FROM unnest($1::text[]) AS id`,
      [oldIds]
    );
    await services.db.query(
      `INSERT INTO upstream_notifications (upstream, id, type, outcome, card_key, received_at) VALUES ('processing', $1, 'transaction.created', 'unknown_card', 'CK-GONE', now() - interval '4 days')`,
      [recentId]
    );
    for (const [label, days] of [['expired', 31], ['recent', 29]] as const) {
      const endpoint = (await services.webhooks.endpoints.create(partnerId, { url: `https://hooks.example/${label}` }))!;
      await services.webhooks.endpoints.delete(partnerId, endpoint.id);
      await services.db.query('UPDATE webhook_endpoints SET deleted_at = now() - make_interval(days => $2) WHERE id = $1', [endpoint.id, days]);
      if (label === 'expired') expiredEndpoint = endpoint.id;
      else recentEndpoint = endpoint.id;
    }
    gateway = await startGatewayProcess({ databaseUrl: own.url, env: { NOTIFICATIONS_RETENTION_DAYS: '5', PROCESSING_NOTIFY_SECRET: processingSecret } });
  });
  after(async () => {
    await gateway?.stop();
    await services?.close();
    await own?.drop();
  });

  const logLine = async (msg: string) => {
    const until = Date.now() + 20_000;
    for (;;) {
      const line = gateway.logLines().find((l) => l.msg === msg);
      if (line) return line;
      if (Date.now() > until) throw new Error(`no "${msg}" line:\n${gateway.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('logs and deletes the notifications older than NOTIFICATIONS_RETENTION_DAYS, keeps the recent one', async () => {
    const line = await logLine('expired upstream notifications deleted');
    expect(line).to.include({ deleted: oldIds.length, retentionDays: 5 });
    expect(await count('SELECT count(*) AS n FROM upstream_notifications WHERE id = ANY($1)', [oldIds])).to.equal(0);
    expect(await count('SELECT count(*) AS n FROM upstream_notifications WHERE id = $1', [recentId])).to.equal(1);
  });

  it('answers a repeat of the recent notification on its listener as a duplicate', async () => {
    const raw = JSON.stringify({
      id: recentId,
      type: 'transaction.created',
      occurredAt: new Date().toISOString(),
      transaction: { id: 'tx-retention', cardId: 'CK-GONE', accountId: null, amount: 1, currency: 'EUR', type: 'PURCHASE', status: 'PENDING', merchant: { name: 'M', mcc: '5411', city: 'C', country: 'DE' }, createdAt: new Date().toISOString() },
    });
    const t = Math.floor(Date.now() / 1000);
    const response = await fetch(`${gateway.notifyUrl}/upstream-notifications/processing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstream-notification-id': recentId, 'upstream-signature': `t=${t},v1=${crypto.createHmac('sha256', processingSecret).update(`${t}.${raw}`).digest('hex')}` },
      body: raw,
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(body)).to.equal(200);
    expect(body).to.deep.include({ duplicate: true });
  });

  it('removes the endpoint deleted more than WEBHOOKS_EVENT_RETENTION_DAYS (30) ago, keeps the one deleted 29 days ago', async () => {
    const line = await logLine('deleted webhook endpoints past retention removed');
    expect(line).to.include({ endpoints: 1, retentionDays: 30 });
    expect(await count('SELECT count(*) AS n FROM webhook_endpoints WHERE id = $1', [expiredEndpoint])).to.equal(0);
    expect(await count('SELECT count(*) AS n FROM webhook_endpoints WHERE id = $1', [recentEndpoint])).to.equal(1);
    expect(gateway.logLines().filter((l) => l.msg === 'retention pass failed')).to.deep.equal([]);
  });
});
