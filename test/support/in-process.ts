import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { Database } from '../../gateway/db/database';
import { migrate } from '../../gateway/db/migrate';
import { createLogger, type Logger } from '../../gateway/logging/logger';
import { PartnerStore } from '../../gateway/partners/partner-store';
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
  log: Logger;
  close(): Promise<void>;
}

/** Opens the run's database, migrates it and publishes the gateway services for in-process policy tests. */
export async function openServices(): Promise<InProcessServices> {
  const log = createLogger({ level: 'silent' });
  const db = new Database(runDatabaseUrl(), { max: 4, log });
  await migrate(db, log);
  const partners = new PartnerStore(db);
  setServices({
    settings: readSettings({}),
    log,
    db,
    partners,
    upstreams: { issuer: 'http://127.0.0.1:9', processing: 'http://127.0.0.1:9', accounts: 'http://127.0.0.1:9' },
  });
  return { db, partners, log, close: () => db.close() };
}

/** A server running the given middlewares the way the partner app does (context, body, 404, problems). */
export async function serve(middlewares: RequestHandler[], log: Logger): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(requestContext(log, 'test'));
  app.use(jsonBody());
  app.get('/probe', ...middlewares);
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
