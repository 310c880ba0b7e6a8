import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { Database } from '../../gateway/db/database';
import { migrate } from '../../gateway/db/migrate';
import { createLogger, type Logger } from '../../gateway/logging/logger';
import { IndividualStore } from '../../gateway/individuals/individual-store';
import { VerifiedTokenCache } from '../../policies/es512-jwt/verified-token-cache';
import { FailedAuthLimiter, type FailedAuthLimits } from '../../policies/es512-jwt/failed-auth-limiter';
import { OutboxDeliverer } from '../../gateway/outbox/outbox';
import { OwnershipCache } from '../../policies/ownership/ownership-cache';
import { PartnerStore } from '../../gateway/partners/partner-store';
import { createUpstreamClients, type UpstreamClients } from '../../gateway/upstreams';
import { setServices } from '../../gateway/services';
import { readSettings } from '../../gateway/settings';
import { jsonBody } from '../../gateway/http/body';
import { notFound, problemHandler } from '../../gateway/http/problem';
import { requestContext } from '../../gateway/http/request-context';
import { runDatabaseUrl } from './test-database';

/** Real PostgreSQL (the run's database, migrated) and the services policies need. */
export interface InProcessServices {
  db: Database;
  partners: PartnerStore;
  individuals: IndividualStore;
  clients: UpstreamClients;
  ownership: OwnershipCache;
  outbox: OutboxDeliverer;
  tokenCache: VerifiedTokenCache;
  authFailures: FailedAuthLimiter;
  log: Logger;
  close(): Promise<void>;
}

/** Opens the run's database, migrates it and publishes the gateway services for in-process policy tests. */
export async function openServices(
  upstreams = { issuer: 'http://127.0.0.1:9', processing: 'http://127.0.0.1:9', accounts: 'http://127.0.0.1:9' },
  options: { ownershipTtlMs?: number; timeoutMs?: number; authFailureLimits?: FailedAuthLimits; log?: Logger } = {}
): Promise<InProcessServices> {
  const log = options.log ?? createLogger({ level: 'silent' });
  const db = new Database(runDatabaseUrl(), { max: 4, log });
  await migrate(db, log);
  const partners = new PartnerStore(db);
  const individuals = new IndividualStore(db);
  const clients = createUpstreamClients(upstreams, { timeoutMs: options.timeoutMs ?? 2000, log });
  const ownership = new OwnershipCache({ ttlMs: options.ownershipTtlMs ?? 30_000 });
  const outbox = new OutboxDeliverer(db, clients, log);
  const tokenCache = new VerifiedTokenCache();
  partners.onChange((partnerId) => tokenCache.evictPartner(partnerId));
  const authFailures = new FailedAuthLimiter(options.authFailureLimits);
  setServices({ settings: readSettings({}), log, db, partners, individuals, upstreams, clients, ownership, outbox, tokenCache, authFailures });
  return {
    db,
    partners,
    individuals,
    clients,
    ownership,
    outbox,
    tokenCache,
    authFailures,
    log,
    close: async () => {
      clients.close();
      await db.close();
    },
  };
}

/** A server running the given middlewares the way the partner app does (context, body, 404, problems). */
export async function serve(middlewares: RequestHandler[], log: Logger, path = '/probe'): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(requestContext(log, 'test'));
  app.use(jsonBody());
  app.get(path, ...middlewares);
  app.use(notFound());
  app.use(problemHandler(log));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
