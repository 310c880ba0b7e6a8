// Temporary: CPU per request of the upstream-proxy policy on http-proxy-middleware against the
// shared upstream client, two gateways side by side in one run (same database, same sandbox).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { signPartnerToken } from '../scripts/token';
import { cpuTimeMs, startNode, type BenchProcess } from './processes';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');

async function json(url: string, init: RequestInit = {}): Promise<any> {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url} → ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function main(): Promise<void> {
  const amount = Number(process.env.AMOUNT ?? 5000);
  const rounds = Number(process.env.ROUNDS ?? 5);
  const serverUrl = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = `pgw_cmp_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${database}`;
  const processes: BenchProcess[] = [];
  try {
    const sandbox = await startNode(path.join(DIST, 'sandbox', 'main.js'), {}, (l) => typeof l.issuer === 'string');
    processes.push(sandbox);
    const adminToken = crypto.randomBytes(24).toString('base64url');
    const env = (transport: string) => ({
      DATABASE_URL: dbUrl.toString(),
      ISSUER_URL: sandbox.ready.issuer as string,
      PROCESSING_URL: sandbox.ready.processing as string,
      ACCOUNTS_URL: sandbox.ready.accounts as string,
      PORT: '0', ADMIN_PORT: '0', ADMIN_TOKEN: adminToken, WORKERS: '1', LOG_LEVEL: 'info',
      NODE_OPTIONS: '--max-old-space-size=160',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000', RATE_LIMIT_READS_PER_MINUTE: '100000000', RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
      DATA_DIR: fs.mkdtempSync(path.join(ROOT, '.data-bench-')),
      PROXY_TRANSPORT: transport,
    });
    const client = await startNode(path.join(DIST, 'gateway', 'main.js'), env('client'), (l) => l.msg === 'gateway ready');
    processes.push(client);
    const hpm = await startNode(path.join(DIST, 'gateway', 'main.js'), env('hpm'), (l) => l.msg === 'gateway ready');
    processes.push(hpm);
    const base = (g: BenchProcess) => `http://127.0.0.1:${String(g.ready.port)}`;
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
    const partner = await json(`http://127.0.0.1:${String(client.ready.adminPort)}/admin/partners`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ name: 'cmp', issuer: 'https://cmp.example', publicKey: publicKey.export({ type: 'spki', format: 'pem' }) }),
    });
    const auth = async () => ({
      authorization: `Bearer ${await signPartnerToken({ partnerId: partner._id, issuer: 'https://cmp.example', privateKey, ttlSeconds: 300 })}`,
      'content-type': 'application/json',
    });
    let headers = await auth();
    const individual = await json(`${base(client)}/api/partner/individual/accounts`, {
      method: 'POST', headers,
      body: JSON.stringify({
        firstName: 'Bench', middleName: 'Mark', lastName: 'Runner', country: 'DE', city: 'Berlin', zipCode: '10115', buildingNumber: '1',
        idType: 'PASSPORT', address1: 'Main 1', passportNumber: 'C01X00T47', issuingDate: '2020-01-01', validityDate: '2030-01-01',
        passportCountry: 'DE', birthCountry: 'DE', birthDate: '1990-01-01', nationality: 'DE', phone: '+4915112345678', email: 'bench@example.com',
      }),
    });
    const expDate = `12/${new Date().getUTCFullYear() + 3}`;
    const card = await json(`${base(client)}/api/partner/individual/accounts/${individual._id}/cards/virtual`, {
      method: 'POST', headers,
      body: JSON.stringify({ expDate, clientCode: individual.clientID, currency: 'EUR', productCode: 'P-STD', embossedName: 'BENCH.RUNNER' }),
    });
    const routes = (process.env.ROUTES ?? 'status,details').split(',');
    const pathOf = (route: string) => (route === 'status' ? `/api/partner/cards/${card.cardKey}/status` : `/api/partner/cards/${card.cardKey}`);
    const variants = [
      { name: 'client', g: client },
      { name: 'hpm', g: hpm },
    ];
    const results: Record<string, number[]> = {};
    for (const route of routes) {
      headers = await auth();
      for (const v of variants) {
        // Warm-up: JIT, pools, caches.
        const warm = await autocannon({ url: `${base(v.g)}${pathOf(route)}`, headers, connections: 50, amount: 3000, sampleInt: 100 });
        if (warm.non2xx + warm.errors > 0) throw new Error(`${v.name} ${route}: ${warm.non2xx} non-2xx`);
      }
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? variants : [...variants].reverse();
        for (const v of order) {
          const before = cpuTimeMs(v.g.child.pid!);
          const r = await autocannon({ url: `${base(v.g)}${pathOf(route)}`, headers, connections: 50, amount, sampleInt: 100 });
          const us = ((cpuTimeMs(v.g.child.pid!) - before) * 1000) / r.requests.total;
          if (r.non2xx + r.errors > 0) throw new Error(`${v.name} ${route}: ${r.non2xx} non-2xx`);
          (results[`${route}/${v.name}`] ??= []).push(Math.round(us));
          process.stderr.write(`${route} ${v.name} round ${round + 1}: ${Math.round(us)} µs/request, ${r.requests.total} requests, p50 ${r.latency.p50} ms\n`);
        }
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const [key, xs] of Object.entries(results)) process.stdout.write(`${key}: median ${median(xs)} µs/request (rounds ${xs.join(', ')})\n`);
  } finally {
    for (const p of processes.reverse()) await p.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((err) => {
  process.stderr.write(`${String(err?.stack ?? err)}\n`);
  process.exit(1);
});
