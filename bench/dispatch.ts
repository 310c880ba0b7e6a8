/**
 * `node dist/bench/dispatch.js [--iterations 20000] [--rounds 7]`
 *
 * The routing cost of each pipeline engine alone, without HTTP: the shipped gateway.config.yml
 * built by both engines (`PIPELINE_ENGINE` compiled and express-gateway) in this process, and
 * requests handed straight to each engine's handler as the partner app hands them (a plain object
 * for `req`, nothing for `res`). Each request has no token, so the first policy (es512-jwt) refuses
 * it at once and the engine hands the error on: the figure is the engine's way from the request to
 * the route's first step and back, plus the same refusal on both. Paths: the first route
 * (health-check is public, so `me`, the 4th), `GET /cards/{id}/status` (16th), `POST
 * /cards/{id}/lock` (17th) and an unknown path (every route tried). CPU time of this process per
 * request (`process.cpuUsage`), rounds alternating the engines, medians. No database is touched.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Request, RequestHandler, Response } from 'express';
import { createGatewayServices } from '../gateway/compose-services';
import { Database } from '../gateway/db/database';
import { createLogger } from '../gateway/logging/logger';
import { buildChecked, checkConfig, readConfigSource } from '../gateway/runtime/config-candidate';
import { loadAndCheck } from '../gateway/runtime/express-gateway';
import { readSettings } from '../gateway/settings';

const CONFIG = path.resolve(__dirname, '..', '..', 'config');

const PATHS: [string, string, string][] = [
  ['me (4th route)', 'GET', '/api/partner/me'],
  ['card status (16th)', 'GET', '/api/partner/cards/5355701234567890abc/status'],
  ['lock (17th)', 'POST', '/api/partner/cards/5355701234567890abc/lock'],
  ['unknown path (404)', 'GET', '/api/partner/no/such/route'],
];

function request(method: string, url: string): Request {
  return { method, url, originalUrl: url, headers: { host: 'localhost' }, params: {}, query: {}, socket: { remoteAddress: '127.0.0.1' }, requestId: 'bench' } as unknown as Request;
}

async function perRequestUs(handler: RequestHandler, method: string, url: string, iterations: number): Promise<number> {
  const res = {} as Response;
  const started = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    await new Promise<void>((resolve) => handler(request(method, url), res, () => resolve()));
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / iterations;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { iterations: { type: 'string' }, rounds: { type: 'string' } } });
  const iterations = Number(values.iterations ?? 20000);
  const rounds = Number(values.rounds ?? 7);
  const log = createLogger({ level: 'silent' });
  const settings = { ...readSettings({}), sandboxMode: true };
  const db = new Database('postgres://nobody@127.0.0.1:1/none', { max: 1, log });
  const { services } = createGatewayServices({ settings, log, db, upstreams: { issuer: 'http://127.0.0.1:9', processing: 'http://127.0.0.1:9', accounts: 'http://127.0.0.1:9' } });
  const loaded = loadAndCheck({ configDir: CONFIG, adminHost: '127.0.0.1' });
  const checked = checkConfig(readConfigSource(path.join(CONFIG, 'gateway.config.yml')), loaded.runtime);
  const handlers = {
    compiled: (await buildChecked(checked, loaded.runtimeFor('compiled'), services)).router,
    'express-gateway': (await buildChecked(checked, loaded.runtimeFor('express-gateway'), services)).router,
  };
  const results: Record<string, Record<string, number[]>> = {};
  for (const [name, method, url] of PATHS) {
    results[name] = { compiled: [], 'express-gateway': [] };
    // Warm-up: both engines' code compiled by V8.
    for (const handler of Object.values(handlers)) await perRequestUs(handler, method, url, Math.min(iterations, 5000));
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['compiled', 'express-gateway'] as const) : (['express-gateway', 'compiled'] as const);
    for (const [name, method, url] of PATHS) {
      for (const engine of order) results[name]![engine]!.push(await perRequestUs(handlers[engine], method, url, iterations));
    }
  }
  const lines = ['| path | compiled µs | express-gateway µs | difference µs |', '|---|---|---|---|'];
  for (const [name] of PATHS) {
    const c = median(results[name]!.compiled!);
    const e = median(results[name]!['express-gateway']!);
    lines.push(`| ${name} | ${c.toFixed(1)} | ${e.toFixed(1)} | ${(e - c).toFixed(1)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n(${rounds} rounds of ${iterations} requests per path and engine, alternating; medians of CPU µs per request, the es512-jwt refusal included on both)\n`);
  await db.close();
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`dispatch bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
