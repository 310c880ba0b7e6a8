import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { Database } from '../../gateway/db/database';
import { migrate } from '../../gateway/db/migrate';
import { createLogger, type Logger } from '../../gateway/logging/logger';
import { createGatewayServices } from '../../gateway/compose-services';
import type { GatewayServices } from '../../policies';
import type { UpstreamUrls } from '../../gateway/upstreams';
import { readSettings, type Settings } from '../../gateway/settings';
import { jsonBody } from '../../gateway/http/body';
import { notFound, problemHandler } from '../../gateway/http/problem';
import { requestContext } from '../../gateway/http/request-context';
import type { PolicyContext } from '../../policies/policy';
import { runDatabaseUrl } from './test-database';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import type { IndividualCreateBody } from '../../gateway/schemas/individual-create';
import { cardBody, individualBody } from './api';
import { insertCard } from '../../gateway/cards/card-store';
import type { IssuerCard } from '../../contracts/upstreams';
import { makeKeyPair } from './partners';

/** The gateway's services on real PostgreSQL (the run's database, migrated), and what closes them. */
export type InProcessServices = GatewayServices & { close(): Promise<void> };

/** Nothing listens there: a call that should never reach an upstream fails at once. */
const NO_UPSTREAMS: UpstreamUrls = { issuer: 'http://127.0.0.1:9', processing: 'http://127.0.0.1:9', accounts: 'http://127.0.0.1:9' };

/**
 * Opens the run's database, migrates it and builds the gateway's services with the gateway's own
 * composition (`createGatewayServices`), for tests that build policies or pipelines in-process.
 * Each call builds a bundle of its own (its pool, caches, limiters and rate-limit counts), on the
 * run's database unless `databaseUrl` names another. `settings` override the defaults (a 2 s
 * upstream timeout here); the logger is silent unless given.
 */
export async function openServices(
  upstreams: UpstreamUrls = NO_UPSTREAMS,
  options: { settings?: Partial<Settings>; log?: Logger; databaseUrl?: string } = {}
): Promise<InProcessServices> {
  const log = options.log ?? createLogger({ level: 'silent' });
  const settings: Settings = { ...readSettings({}), upstreamTimeoutMs: 2000, ...options.settings };
  const db = new Database(options.databaseUrl ?? runDatabaseUrl(), { max: 4, log });
  await migrate(db, log);
  const { services, close } = createGatewayServices({ settings, log, db, upstreams });
  return {
    ...services,
    close: async () => {
      await close();
      await db.close();
    },
  };
}

/** What a policy factory gets when a pipeline is built (the runtime passes the same). */
export function policyContext(services: GatewayServices, gatewayConfig: Record<string, unknown> = {}): PolicyContext<GatewayServices> {
  return { services, gatewayConfig };
}

/** A server running the given middlewares the way the partner app does (context, body, 404, problems). */
export async function serve(middlewares: RequestHandler[], log: Logger, path = '/probe'): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(requestContext(log, 'test'));
  app.use(jsonBody());
  app.get(path, ...middlewares);
  app.use(notFound());
  app.use(problemHandler(log));
  return listenLocally(http.createServer(app));
}

/** Starts `server` on a free loopback port: its base URL, and a close that ends its open connections too. */
export async function listenLocally(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
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

/** Real sandboxes, the gateway's services on them, and one partner with one onboarded individual. */
export interface SandboxedServices {
  sandboxes: Sandboxes;
  services: InProcessServices;
  partnerId: string;
  individualId: string;
  /** A virtual card the issuer sandbox holds and our database records as ACTIVE `00` for the individual. */
  activeCard(clientCode: string): Promise<IssuerCard>;
  close(): Promise<void>;
}

/**
 * Starts the sandboxes, opens the services on them (the run's database, or `databaseUrl`) and makes
 * a partner named `name` with one pending individual: the set-up of the tests of card code in-process.
 */
export async function openSandboxedServices(name: string, settings: Partial<Settings> = {}, databaseUrl?: string): Promise<SandboxedServices> {
  const sandboxes = await startSandboxes();
  const services = await openServices({ issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url }, { settings, ...(databaseUrl ? { databaseUrl } : {}) });
  const partnerId = (await services.partners.create({ name, issuer: `https://${name}.example`, publicKey: makeKeyPair().publicPem }))._id;
  const individualId = (await services.individuals.createPending(partnerId, individualBody() as unknown as IndividualCreateBody)).onboardingId;
  return {
    sandboxes,
    services,
    partnerId,
    individualId,
    async activeCard(clientCode) {
      const issued = await services.clients.issuer.createCard({ requestId: 'test' }, { type: 'virtual', ...(cardBody(clientCode) as any) });
      await insertCard(services.db, { ...issued, partnerId, individualId, status: 'ACTIVE', statusCode: '00', holderClientCode: issued.holderClientCode, embossedName: null });
      return issued;
    },
    async close() {
      await services.close();
      await sandboxes.close();
    },
  };
}
