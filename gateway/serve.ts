import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveAdminToken } from './admin/admin-token';
import { createAdminApi } from './admin/admin-api';
import { Database } from './db/database';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded';
import { migrate } from './db/migrate';
import { createPartnerApp } from './http/partner-app';
import { expressServer } from './http/express-server';
import type { Logger } from './logging/logger';
import { startReconciler } from './individuals/reconciler';
import { startCardReconciler } from './cards/card-sync';
import { startSearchLinks } from './cards/search-links';
import { startTransactionReconciler } from './transactions/reconciler';
import { openDecisionTrace, startTraceMonitors, traceNow, tracing } from './authorizations/decision-trace';
import { CLOCK_SKEW_BOUND_MS } from './authorizations/deadline';
import { createAuthorizationDecider } from './authorizations/decider';
import { createTokenizationDecider } from './tokens/decider';
import { startTokenReconciler } from './tokens/reconciler';
import { deleteExpiredTokenizations } from './tokens/retention';
import { scrubExpiredCodes } from './tokens/verification';
import { deleteExpiredDecisions } from './authorizations/recording-statements';
import { beyondBound, measureClockOffset } from './db/clock-offset';
import { deleteExpiredEvents } from './outbox/event-log';
import { every } from './background/every';
import { startRetention } from './background/retention';
import { KeyClaimStore, OPERATOR_KEYS, PARTNER_KEYS } from './idempotency/key-claims';
import { deleteExpiredEndpoints } from './webhooks/endpoint-store';
import { deleteExpiredNotifications } from './inbound/apply';
import { secretKeyringFrom } from './outbound/secret-box';
import { prepareSecretStorage, sealStoredSecrets, warnIfSecretsUnencrypted } from './webhooks/secret-storage';
import { TOKEN_EVICTION_TOPIC } from '../policies/es512-jwt/cluster-eviction';
import { createGatewayServices } from './compose-services';
import { OwnListeners } from './outbound';
import { onClusterBroadcast } from './cluster/broadcast';
import { configAdminRoutes } from './runtime/config-admin-routes';
import { buildInitialConfig } from './runtime/config-candidate';
import { ConfigReloader } from './runtime/config-reloader';
import { createNotificationsApp } from './inbound/notifications-app';
import { notificationSecrets } from './inbound/secrets';
import { databaseClockOffset, metricsRoute, recordConfigReload, trackGatewayState, trackWebhookBacklog } from './metrics';
import type { UpstreamUrls } from './upstreams';
import type { Settings } from './settings';
import type { Sandboxes } from '../sandbox';
import type { LoadedGateway } from './runtime/express-gateway';

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** The host part of a URL to a listener on `host` (a wildcard listens on loopback too). */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Serves a configuration that passed the boot guards ({@link startGateway} checked it): opens the
 * database and migrates it, starts the sandbox upstreams that are not configured, builds the
 * pipelines of the checked configuration and listens. Throws (and leaves nothing running) when any
 * step fails.
 */
/** A running gateway: its listeners and how to stop it. */
export interface RunningGateway {
  port: number;
  adminPort: number;
  /** Port of the upstream-notification listener; undefined when it is not started (no secret, not sandbox mode). */
  notifyPort?: number;
  upstreams: UpstreamUrls;
  database: 'postgres' | 'embedded';
  close(): Promise<void>;
}

export async function serveCheckedGateway(settings: Settings, log: Logger, { runtime, initial }: LoadedGateway, options: { announce?: boolean } = {}): Promise<RunningGateway> {
  const cleanups: (() => Promise<void>)[] = [];
  let closing: Promise<void> | undefined;
  // Idempotent: a cluster worker may be told to stop twice (signal and primary disconnect).
  const cleanup = () => {
    closing ??= (async () => {
      for (const fn of cleanups.reverse()) await fn().catch((err: unknown) => log.warn({ err }, 'shutdown step failed'));
    })();
    return closing;
  };
  try {
    let databaseUrl = settings.databaseUrl;
    let embedded: EmbeddedPostgres | undefined;
    if (!databaseUrl) {
      embedded = await startEmbeddedPostgres(settings.dataDir, log, 2);
      cleanups.push(() => embedded!.stop());
      databaseUrl = embedded.url;
    }
    // pglite-socket interleaves the extended-protocol messages of concurrent connections (a Bind of
    // one lands on another's Parse), so the embedded database gets exactly one pooled connection:
    // queries queue in the pool instead. Transactions never wait on a second connection, so one suffices.
    const db = new Database(databaseUrl, { max: embedded ? 1 : settings.databasePoolMax, log, namedStatements: !embedded && settings.databasePreparedStatements });
    cleanups.push(() => db.close());
    await migrate(db, log);
    // Webhook secrets at rest (docs/webhooks.md, "Storage of secrets"): refused here when secrets are
    // encrypted under a key not configured; with the key, plaintext and previous-key rows are
    // encrypted under the current one (safe with several instances starting at once).
    const keyring = secretKeyringFrom(settings);
    await prepareSecretStorage(db, keyring, log);
    if (options.announce !== false) warnIfSecretsUnencrypted(settings, log);

    let sandboxes: Sandboxes | undefined;
    if (!settings.issuerUrl || !settings.processingUrl || !settings.accountsUrl) {
      // Loaded only when needed: a production gateway with real upstreams never loads sandbox code.
      const { startSandboxes } = await import('../sandbox');
      sandboxes = await startSandboxes();
      cleanups.push(() => sandboxes!.close());
    }
    const upstreams: UpstreamUrls = {
      issuer: settings.issuerUrl ?? sandboxes!.issuer.url,
      processing: settings.processingUrl ?? sandboxes!.processing.url,
      accounts: settings.accountsUrl ?? sandboxes!.accounts.url,
    };
    for (const name of ['issuer', 'processing', 'accounts'] as const) {
      const configured = settings[`${name}Url`];
      if (!configured) log.warn({ upstream: name, url: upstreams[name] }, 'upstream not configured: using the sandbox');
    }
    // The listeners no partner URL may point at, in any mode (gateway/outbound/own-listeners.ts): the
    // upstreams, the database and Redis on this host (the embedded sandboxes and PostgreSQL), the ports configured
    // for the partner and admin listeners now (a registration could otherwise arrive between two
    // listens), and every port actually listened on once it is known (port 0 picks one).
    const ownListeners = new OwnListeners();
    for (const name of ['issuer', 'processing', 'accounts'] as const) ownListeners.addUrl(`${name} upstream`, upstreams[name]);
    // The gateway's own database and Redis, when on this host: no partner URL is sent to them either.
    ownListeners.addUrl('database', databaseUrl);
    if (settings.redisUrl) ownListeners.addUrl('Redis', settings.redisUrl);
    ownListeners.add('partner API', settings.port);
    ownListeners.add('admin API', settings.adminPort);

    const composed = createGatewayServices({ settings, log, db, upstreams, changeFeedUrl: embedded ? undefined : databaseUrl, ownListeners });
    cleanups.push(() => composed.close());
    const services = composed.services;
    const { partners, individuals, clients, ownership, outbox, tokenCache } = services;
    // This process answers its cluster's token-eviction broadcasts (WORKERS > 1) with its cache.
    onClusterBroadcast(TOKEN_EVICTION_TOPIC, (partnerId) => {
      if (typeof partnerId === 'string') tokenCache.evictPartner(partnerId);
    });
    trackGatewayState({ db, ownership, tokenCache });
    // The bytes loadAndCheck read and checked, built by the hot-reload code path: the hash reported
    // by GET /admin/config is that of the bytes that serve.
    const initialConfig = await buildInitialConfig(initial, runtime, services);
    // Pending individuals older than two upstream timeouts were left by a stopped process.
    const stopReconciler = startReconciler(
      { individuals, clients, ownership, log },
      { intervalMs: 60_000, olderThanMs: settings.upstreamTimeoutMs * 2 + 10_000 }
    );
    cleanups.push(async () => stopReconciler());
    // Cards the issuer changed without us knowing (a status change that timed out after the issuer
    // applied it, a replace whose follow-up read failed) are brought to the issuer's state.
    const stopCardReconciler = startCardReconciler(
      { db, clients, log, cardState: services.cardState, deliver: (ids) => outbox.deliver(ids).then(() => undefined, () => undefined) },
      { intervalMs: settings.cardReconcileIntervalMs, batch: settings.cardReconcileBatch }
    );
    cleanups.push(async () => stopCardReconciler());
    // The card list's search links (migration 022): cards written before the migration are linked
    // in batches (one instance at a time, the others skip), then values no card holds are pruned
    // every 10 minutes. Searches read the cards table until the backfill is done.
    const stopSearchLinks = startSearchLinks(db, log, { intervalMs: 60_000, pruneEveryMs: 10 * 60_000 });
    cleanups.push(async () => stopSearchLinks());
    // Transaction states whose notification was lost are read from the processor's change feed.
    const stopTransactionReconciler = startTransactionReconciler(
      { db, processing: clients.processing, log, source: upstreams.processing },
      settings.transactionReconcileIntervalMs
    );
    cleanups.push(async () => stopTransactionReconciler());
    // Token states whose notification was lost, and tokens a partner's operation left unknown, are
    // read from the processor (docs/upstreams.md 10.7). The processing client's token reads are part
    // A's (issue 35): until a client has them, there is nothing to read.
    const stopTokenReconciler = startTokenReconciler({ db, processing: clients.processing, log, source: upstreams.processing }, settings.tokenReconcileIntervalMs);
    cleanups.push(async () => stopTokenReconciler());
    const stopOutbox = outbox.start(5_000);
    cleanups.push(async () => stopOutbox());
    // Every instance sends webhooks; the deliveries' leases in PostgreSQL share the work.
    services.webhooks.dispatcher.start();
    trackWebhookBacklog((top) => services.webhooks.dispatcher.backlog(top));
    cleanups.push(async () => trackWebhookBacklog(undefined));
    cleanups.push(() => services.webhooks.dispatcher.stop());
    // Retention, at start and every 10 minutes, by every instance (each delete is batched and idempotent):
    // the event log (its deliveries and attempts cascade), then deleted webhook endpoints, both after
    // WEBHOOKS_EVENT_RETENTION_DAYS, the notifications' dedupe log after NOTIFICATIONS_RETENTION_DAYS,
    // and the partners' and operators' idempotency keys once they expired (ttlHours; 24 h for operators).
    const stopRetention = startRetention(
      log,
      [
        { what: 'partner events', message: 'expired partner events deleted', run: async () => ({ deleted: await deleteExpiredEvents(db, settings.eventRetentionDays) }), fields: { retentionDays: settings.eventRetentionDays } },
        { what: 'deleted webhook endpoints', message: 'deleted webhook endpoints past retention removed', run: () => deleteExpiredEndpoints(db, settings.eventRetentionDays), fields: { retentionDays: settings.eventRetentionDays } },
        { what: 'upstream notifications', message: 'expired upstream notifications deleted', run: async () => ({ deleted: await deleteExpiredNotifications(db, settings.notificationRetentionDays) }), fields: { retentionDays: settings.notificationRetentionDays } },
        { what: 'authorization decisions', message: 'expired authorization decisions deleted', run: async () => ({ deleted: await deleteExpiredDecisions(db, settings.notificationRetentionDays) }), fields: { retentionDays: settings.notificationRetentionDays } },
        { what: 'tokenization decisions', message: 'expired tokenization decisions and verification attempts deleted', run: () => deleteExpiredTokenizations(db, settings.notificationRetentionDays), fields: { retentionDays: settings.notificationRetentionDays } },
        // A verification code is kept in its event only while it can be used (docs/tokens.md, "What is stored").
        { what: 'expired verification codes', message: 'expired verification codes removed from their events', run: async () => ({ scrubbed: await scrubExpiredCodes(db) }) },
        {
          what: 'idempotency keys',
          message: 'expired idempotency keys deleted',
          run: async () => ({ partners: await new KeyClaimStore(db, PARTNER_KEYS).deleteExpired(), operators: await new KeyClaimStore(db, OPERATOR_KEYS).deleteExpired() }),
        },
      ],
      { intervalMs: 10 * 60_000 }
    );
    cleanups.push(async () => stopRetention());
    if (keyring) {
      // Secrets an instance without the key wrote meanwhile (a rolling restart that sets it) are
      // encrypted within 10 minutes, not only at this instance's next start.
      const stopSealing = every(
        10 * 60_000,
        async () => {
          const pass = await sealStoredSecrets(db, keyring, log);
          if (pass.sealed || pass.resealed) log.info({ keyId: keyring.currentId, ...pass }, 'webhook secrets encrypted at rest');
        },
        log,
        'webhook secret encryption pass failed'
      );
      cleanups.push(async () => stopSealing());
    }

    const { token: adminToken, source } = resolveAdminToken(settings.adminToken, settings.dataDir);
    if (source === 'file') log.warn({ file: `${settings.dataDir}/admin-token` }, 'ADMIN_TOKEN not set: using the generated token in this file');

    const partnerApp = createPartnerApp(initialConfig.router, log);
    const reloader = new ConfigReloader({
      runtime,
      services,
      log,
      initial: initialConfig,
      apply: (router) => partnerApp.setPipelines(router),
      onOutcome: (outcome) => {
        if (outcome.result !== 'unchanged') recordConfigReload(outcome.result);
      },
    });
    cleanups.push(async () => reloader.close());
    if (settings.configWatch) reloader.watch();
    const partnerServer = expressServer(partnerApp.app, { keepAliveTimeout: 65_000, headersTimeout: 20_000, requestTimeout: 30_000 });
    const configRoutes = configAdminRoutes(reloader, log);
    const adminServer = expressServer(
      createAdminApi({
        partners,
        adminToken,
        log,
        webhookEndpoints: services.webhooks.endpoints,
        authorizationEndpoints: services.authorizationEndpoints,
        // A claimed admin idempotency key outlives the longest status change (two issuer calls) before a retry may take it over.
        cards: { db, clients, keyLeaseSeconds: Math.ceil((2 * settings.upstreamTimeoutMs) / 1000) + 10, cardState: services.cardState, deliver: (ids) => outbox.deliver(ids).then(() => undefined, () => undefined) },
        extraRoutes: (app) => {
          configRoutes(app);
          metricsRoute(app);
        },
      })
    );
    // The upstreams' notifications (docs/upstreams.md, section 9) on a listener of their own: never the
    // partner port, and not the admin one, whose token an upstream must never hold.
    const notifySecrets = notificationSecrets(settings);
    let notifyPort: number | undefined;
    if (notifySecrets.issuer.length > 0 || notifySecrets.processing.length > 0) {
      const deps = { db, clients, log, cardState: services.cardState, deliver: (ids: string[]) => outbox.deliver(ids).then(() => undefined, () => undefined) };
      // The processor's authorization requests, answered before AUTHORIZATION_DEADLINE_MS (docs/authorizations.md).
      const authorizations = createAuthorizationDecider({ db, authorizationEndpoints: services.authorizationEndpoints }, settings, log);
      // And its tokenization and verification requests, before TOKENIZATION_DEADLINE_MS (docs/tokens.md, "The decision").
      const tokenizations = createTokenizationDecider({ db, authorizationEndpoints: services.authorizationEndpoints }, settings, log);
      const notifyServer = expressServer(createNotificationsApp(deps, notifySecrets, authorizations, tokenizations), { headersTimeout: 20_000, requestTimeout: 30_000 });
      // The decisions' commit-by fence allows for CLOCK_SKEW_BOUND_MS between this process's clock and
      // the database's (docs/authorizations.md, "Deadline"): measured at start and every minute.
      const stopClockProbe = every(
        60_000,
        async () => {
          const offset = await measureClockOffset(db);
          databaseClockOffset.set(offset.offsetMs / 1000);
          if (beyondBound(offset, CLOCK_SKEW_BOUND_MS)) {
            log.error(
              { offsetMs: Math.round(offset.offsetMs), uncertaintyMs: Math.round(offset.uncertaintyMs), boundMs: CLOCK_SKEW_BOUND_MS },
              "the database's clock and this gateway's differ by more than authorization decisions allow: synchronize both (NTP)"
            );
          }
        },
        log,
        'database clock offset probe failed',
        { immediately: true }
      );
      cleanups.push(() => stopClockProbe());
      if (settings.authorizationTraceFile) {
        // The diagnostic of docs/performance.md "Diagnostics: the decision trace and GC tracing" (AUTHORIZATION_TRACE_FILE): opened now, ended at
        // shutdown (after the listener, whose last decisions it records); each request's arrival, before the app's own work.
        log.warn({ file: settings.authorizationTraceFile }, 'AUTHORIZATION_TRACE_FILE is set: a line per authorization decision is written (a diagnostic, not for production)');
        const trace = openDecisionTrace(settings.authorizationTraceFile, log);
        cleanups.push(() => trace.close());
        startTraceMonitors();
        notifyServer.prependListener('request', (req: http.IncomingMessage) => {
          if (tracing()) (req as { traceRequestAt?: number }).traceRequestAt = traceNow();
        });
      }
      notifyPort = await listen(notifyServer, settings.notificationsPort, settings.notificationsHost);
      ownListeners.add('upstream notifications', notifyPort);
      cleanups.push(() => closeServer(notifyServer, 2_000));
      sandboxes?.setNotifyTarget({ url: `http://${urlHost(settings.notificationsHost)}:${notifyPort}`, issuerSecret: notifySecrets.issuer[0], processingSecret: notifySecrets.processing[0] });
    }
    const port = await listen(partnerServer, settings.port, settings.host);
    ownListeners.add('partner API', port);
    cleanups.push(() => closeServer(partnerServer, 10_000));
    const adminPort = await listen(adminServer, settings.adminPort, settings.adminHost);
    ownListeners.add('admin API', adminPort);
    cleanups.push(() => closeServer(adminServer, 2_000));

    log.info(
      { port, host: settings.host, adminPort, adminHost: settings.adminHost, notifyPort, database: embedded ? 'embedded' : 'postgres', upstreams, sandboxMode: settings.sandboxMode },
      options.announce === false ? 'worker ready' : 'gateway ready'
    );
    return { port, adminPort, notifyPort, upstreams, database: embedded ? 'embedded' : 'postgres', close: cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
