/**
 * `node --expose-gc dist/bench/sandbox-memory.js [--cards 8000] [--step 2000] [--accounts 8]
 *   [--account-every 6] [--max-cards N] [--max-accounts N] [--process [--node-flags '...']] [--spaces] [--snapshot file]`
 *
 * Where the sandboxes' memory goes (docs/performance.md, "The sandboxes"). Starts the three sandboxes, in this process as
 * `startSandboxes()` does or (`--process`) as `node dist/sandbox/main.js` like `npm run soak`,
 * and drives them over HTTP the way the gateway and the soak do: a few accounts
 * (`POST /accounts`), then cards issued to them (`POST /cards` with an `Idempotency-Key`, the
 * `card_created` webhook), one more account every `--account-every` cards, and per card a status
 * change (with a key), a limits read, an emboss-name change and a page of its account's
 * transactions. After every `--step` cards it prints the sandbox's RSS, then forces a full GC and
 * prints the heap used, in all and per card. In-process, at the end, it writes a heap snapshot
 * summary (self size by object shape) when `--snapshot` names a file, and the resident memory by
 * mapping with `--spaces`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { startSandboxes } from '../sandbox';

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function send(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: {
          accept: 'application/json',
          'x-request-id': `mem-${Math.random().toString(16).slice(2, 14)}`,
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with node --expose-gc');
  collect();
  collect();
}

function mb(bytes: number): number {
  return Math.round((bytes / 1048576) * 10) / 10;
}

/** Self size and count by object shape (constructor name, or a plain object's first property names). */
function summariseSnapshot(file: string, top = 40): string[] {
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const { meta } = snapshot.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const typeNames = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const [iType, iName, iSelf, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f));
  const [eType, eName] = ['type', 'name_or_index'].map((f) => meta.edge_fields.indexOf(f));
  const byShape = new Map<string, { count: number; bytes: number }>();
  let edge = 0;
  for (let n = 0; n < snapshot.nodes.length; n += nf) {
    const type = typeNames[snapshot.nodes[n + iType]];
    const name = snapshot.strings[snapshot.nodes[n + iName]];
    const edges = snapshot.nodes[n + iEdges];
    let shape = `${type}:${type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : name}`;
    if (type === 'object' && name === 'Object') {
      const props: string[] = [];
      for (let e = edge; e < edge + edges * ef && props.length < 4; e += ef) {
        if (edgeTypes[snapshot.edges[e + eType]] === 'property') props.push(snapshot.strings[snapshot.edges[e + eName]]);
      }
      shape += `{${props.join(',')}}`;
    }
    edge += edges * ef;
    const entry = byShape.get(shape) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += snapshot.nodes[n + iSelf];
    byShape.set(shape, entry);
  }
  return [...byShape.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)
    .map(([shape, { count, bytes }]) => `${String(mb(bytes)).padStart(7)} MB ${String(count).padStart(8)}  ${shape.slice(0, 110)}`);
}

/** Resident memory by mapping (Linux): the brk heap, anonymous mappings by size class, and files. */
function residentByMapping(pid: number | 'self' = 'self'): string {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return 'n/a';
  }
  const kinds = new Map<string, number>();
  let kind = '';
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const size = (parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024;
      const name = head[3];
      kind = name === '[heap]' ? 'brk heap' : name ? (name.startsWith('/') ? 'files' : name) : size >= 60000 ? 'anon >= 60 MB (malloc arenas)' : size >= 1024 ? 'anon 1-60 MB' : 'anon < 1 MB';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kinds.set(kind, (kinds.get(kind) ?? 0) + Number(rss[1]));
  }
  return [...kinds].sort((a, b) => b[1] - a[1]).map(([k, kb]) => `${k} ${mb(kb * 1024)} MB`).join(', ');
}

interface Memory {
  heapUsed: number;
  heapTotal: number;
  external: number;
  rss: number;
}

/** The sandboxes under measurement: their URLs, their memory (after a full GC), their RSS as it is. */
interface Target {
  urls: { issuer: string; processing: string; accounts: string };
  /** Resident set size now, without a GC (what the soak samples). */
  rss(): number;
  /** Memory after a full GC. */
  measure(): Promise<Memory>;
  /** Resident memory by mapping kind (Linux). */
  mappings(): string;
  close(): Promise<void>;
}

async function inProcess(maxCards: number | undefined, maxAccounts: number | undefined): Promise<Target> {
  const sandboxes = await startSandboxes({ maxCards, maxAccounts });
  return {
    urls: { issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url },
    rss: () => process.memoryUsage().rss,
    mappings: () => residentByMapping(),
    measure: async () => {
      gc();
      return process.memoryUsage();
    },
    close: () => sandboxes.close(),
  };
}

/** Preloaded into the sandbox process: SIGUSR2 runs a full GC and writes the memory usage to `$SANDBOX_MEMORY_FILE`. */
const PRELOAD = `
process.on('SIGUSR2', () => {
  gc(); gc();
  require('node:fs').writeFileSync(process.env.SANDBOX_MEMORY_FILE, JSON.stringify(process.memoryUsage()));
});
`;

function vmRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

async function childProcess(maxCards: number | undefined, maxAccounts: number | undefined, nodeFlags: string[]): Promise<Target> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-memory-'));
  const preload = path.join(dir, 'gc-on-signal.js');
  const memoryFile = path.join(dir, 'memory.json');
  fs.writeFileSync(preload, PRELOAD);
  const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX_MEMORY_FILE: memoryFile };
  if (maxCards !== undefined) env.SANDBOX_MAX_CARDS = String(maxCards);
  if (maxAccounts !== undefined) env.SANDBOX_MAX_ACCOUNTS = String(maxAccounts);
  const child = spawn(process.execPath, [...nodeFlags, '--expose-gc', '--require', preload, path.join(__dirname, '..', 'sandbox', 'main.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const urls = await new Promise<Target['urls']>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as Target['urls']);
    });
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code})`)));
  });
  return {
    urls,
    rss: () => vmRss(child.pid!),
    mappings: () => residentByMapping(child.pid!),
    measure: async () => {
      fs.rmSync(memoryFile, { force: true });
      child.kill('SIGUSR2');
      while (!fs.existsSync(memoryFile)) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const usage = JSON.parse(fs.readFileSync(memoryFile, 'utf8')) as Memory;
      return { ...usage, rss: vmRss(child.pid!) };
    },
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cards: { type: 'string', default: '8000' },
      step: { type: 'string', default: '2000' },
      accounts: { type: 'string', default: '8' },
      'account-every': { type: 'string', default: '6' },
      'max-cards': { type: 'string' },
      'max-accounts': { type: 'string' },
      process: { type: 'boolean', default: false },
      'node-flags': { type: 'string', default: '' },
      snapshot: { type: 'string' },
      spaces: { type: 'boolean', default: false },
    },
  });
  const total = Number(values.cards);
  const step = Number(values.step);
  const accountEvery = Number(values['account-every']);
  const caps = [values['max-cards'], values['max-accounts']].map((v) => (v === undefined ? undefined : Number(v))) as [number | undefined, number | undefined];
  const target = values.process ? await childProcess(...caps, values['node-flags'].split(' ').filter(Boolean)) : await inProcess(...caps);
  const { issuer, processing, accounts } = target.urls;
  const base = await target.measure();
  console.log(`baseline: heapUsed ${mb(base.heapUsed)} MB, rss ${mb(base.rss)} MB`);

  const owners: { accountId: string; clientId: string; ownerId: string }[] = [];
  let accountSeq = 0;
  const newAccount = async () => {
    accountSeq += 1;
    const created = await send(accounts, 'POST', '/accounts', {
      partnerId: '65f0000000000000000000aa',
      onboardingId: `65f1${String(accountSeq).padStart(20, '0')}`,
      firstName: 'Ada',
      middleName: 'King',
      lastName: `Memory${accountSeq}`,
      country: 'DE',
      city: 'Berlin',
      zipCode: '10115',
      address1: 'Invalidenstrasse',
      buildingNumber: '117',
      idType: 'PASSPORT',
      passportNumber: `C01X${String(accountSeq).padStart(5, '0')}`,
      issuingDate: '2020-01-15',
      validityDate: '2030-01-14',
      passportCountry: 'DE',
      birthCountry: 'DE',
      birthDate: '1990-12-10',
      nationality: 'DE',
      phone: '+4915112345678',
      email: `memory-${accountSeq}@example.com`,
    });
    if (created.status !== 201) throw new Error(`POST /accounts ${created.status} ${JSON.stringify(created.body)}`);
    return { accountId: created.body.accountId as string, clientId: created.body.clientId as string, ownerId: created.body.accountId as string };
  };
  for (let i = 0; i < Number(values.accounts); i++) owners.push(await newAccount());

  const expDate = `12/${new Date().getUTCFullYear() + 4}`;
  let opSeq = 0;
  const issueOne = async (n: number) => {
    // The soak creates about one individual for 6 cards; its cards go to the 8 fixtures.
    if (n % accountEvery === 0) await newAccount();
    const owner = owners[n % owners.length];
    const currency = ['EUR', 'USD', 'PLN'][n % 3];
    const created = await send(
      issuer,
      'POST',
      '/cards',
      { type: n % 2 ? 'virtual' : 'physical', clientCode: owner.clientId, expDate, currency, productCode: 'P-STD', embossedName: 'SOAK.RUNNER' },
      { 'idempotency-key': `op_${(++opSeq).toString(16).padStart(24, '0')}` },
    );
    if (created.status !== 201) throw new Error(`POST /cards ${created.status}`);
    const card = created.body as { cardKey: string; cardMask: string; type: string };
    await send(processing, 'POST', '/webhooks/card-created', {
      event: 'card_created',
      cardKey: card.cardKey,
      cardMask: card.cardMask,
      type: card.type,
      ownerType: 'individual',
      ownerId: owner.ownerId,
      partnerId: '65f0000000000000000000aa',
      occurredAt: new Date().toISOString(),
      accountId: owner.clientId,
      currency,
    });
    await send(issuer, 'POST', `/cards/${card.cardKey}/status`, { action: n % 2 ? 'lock' : 'activate', expDate, reason: 'soak' }, { 'idempotency-key': `op_${(++opSeq).toString(16).padStart(24, '0')}` });
    await send(issuer, 'GET', `/cards/${card.cardKey}/limits`);
    await send(issuer, 'PATCH', `/cards/${card.cardKey}/emboss-name`, { embossedName: 'SOAK.RUNNER2' });
    await send(processing, 'GET', `/transactions?accountId=${owner.clientId}&page=1&limit=10`);
  };

  let done = 0;
  let before = base;
  let peakRss = 0;
  while (done < total) {
    const batch = Math.min(step, total - done);
    for (let i = 0; i < batch; i += 16) {
      await Promise.all(Array.from({ length: Math.min(16, batch - i) }, (_, k) => issueOne(done + i + k)));
      if (i % 512 === 0) peakRss = Math.max(peakRss, target.rss());
    }
    done += batch;
    const rssNow = target.rss();
    peakRss = Math.max(peakRss, rssNow);
    if (values.spaces) console.log(`  resident by mapping kind, before the GC: ${target.mappings()}`);
    const now = await target.measure();
    console.log(
      `${String(done).padStart(6)} cards, ${accountSeq} accounts: rss ${mb(rssNow)} MB (peak ${mb(peakRss)}); after GC heapUsed ${mb(now.heapUsed)} MB ` +
        `(+${Math.round((now.heapUsed - before.heapUsed) / batch)} B/card over the step, ${Math.round((now.heapUsed - base.heapUsed) / done)} B/card overall), ` +
        `heapTotal ${mb(now.heapTotal)} MB, external ${mb(now.external)} MB, rss ${mb(now.rss)} MB`,
    );
    if (values.spaces && !values.process) {
      console.log(`  heap spaces after the GC: ${v8.getHeapSpaceStatistics().map((s) => `${s.space_name} ${mb(s.space_used_size)}/${mb(s.space_size)}`).join(', ')}`);
    }
    before = now;
  }
  if (values.snapshot && !values.process) {
    const file = v8.writeHeapSnapshot(values.snapshot);
    for (const line of summariseSnapshot(file)) console.log(line);
  }
  for (const [name, url] of Object.entries({ issuer, processing, accounts })) {
    const listed = await send(url, 'GET', '/__sandbox/requests');
    const entries = listed.body as unknown[];
    const bytes = entries.reduce<number>((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0);
    console.log(`request log of ${name}: ${entries.length} requests, ${mb(bytes)} MB as JSON (${Math.round(bytes / Math.max(1, entries.length))} B each)`);
  }
  agent.destroy();
  await target.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
