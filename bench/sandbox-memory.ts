/**
 * `node --expose-gc dist/bench/sandbox-memory.js [--cards 8000] [--step 2000] [--accounts 8] [--max-cards N] [--snapshot file]`
 *
 * Where the sandboxes' memory goes (issue 14). Starts the three sandboxes in this process, as
 * `startSandboxes()` does, and drives them over HTTP the way the gateway and the soak do: a few
 * accounts (`POST /accounts`), then cards issued to them (`POST /cards` with an
 * `Idempotency-Key`, the `card_created` webhook), with per card a status change (with a key),
 * a limits read, an emboss-name change and a page of its account's transactions. After every
 * `--step` cards it forces a full GC and prints the heap used and RSS, in all and per card; at the
 * end it writes a heap snapshot summary (self size by object shape) when `--snapshot` names a
 * file, then clears the request logs (`DELETE /__sandbox/requests`) to show their share.
 */
import fs from 'node:fs';
import http from 'node:http';
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
function residentByMapping(): string {
  let text: string;
  try {
    text = fs.readFileSync('/proc/self/smaps', 'utf8');
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cards: { type: 'string', default: '8000' },
      step: { type: 'string', default: '2000' },
      accounts: { type: 'string', default: '8' },
      'max-cards': { type: 'string' },
      snapshot: { type: 'string' },
      spaces: { type: 'boolean', default: false },
    },
  });
  const total = Number(values.cards);
  const step = Number(values.step);
  const sandboxes = await startSandboxes({ maxCards: values['max-cards'] ? Number(values['max-cards']) : undefined });
  const { issuer, processing, accounts } = { issuer: sandboxes.issuer.url, processing: sandboxes.processing.url, accounts: sandboxes.accounts.url };
  gc();
  const base = process.memoryUsage();
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
    if (n % 6 === 0) await newAccount();
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
  while (done < total) {
    const batch = Math.min(step, total - done);
    for (let i = 0; i < batch; i += 16) {
      await Promise.all(Array.from({ length: Math.min(16, batch - i) }, (_, k) => issueOne(done + i + k)));
    }
    done += batch;
    gc();
    const now = process.memoryUsage();
    console.log(
      `${String(done).padStart(6)} cards: heapUsed ${mb(now.heapUsed)} MB (+${Math.round((now.heapUsed - before.heapUsed) / batch)} B/card over the step, ` +
        `${Math.round((now.heapUsed - base.heapUsed) / done)} B/card overall), heapTotal ${mb(now.heapTotal)} MB, rss ${mb(now.rss)} MB, external ${mb(now.external)} MB`,
    );
    if (values.spaces) {
      console.log(`  ${v8.getHeapSpaceStatistics().map((s) => `${s.space_name} ${mb(s.space_used_size)}/${mb(s.space_size)}`).join(', ')}`);
    }
    before = now;
  }
  if (values.snapshot) {
    const file = v8.writeHeapSnapshot(values.snapshot);
    for (const line of summariseSnapshot(file)) console.log(line);
    gc();
  }
  if (values.spaces) console.log(`resident by mapping kind: ${residentByMapping()}`);
  for (const [name, url] of Object.entries({ issuer, processing, accounts })) {
    const listed = await send(url, 'GET', '/__sandbox/requests');
    const entries = listed.body as unknown[];
    const bytes = entries.reduce<number>((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0);
    console.log(`request log of ${name}: ${entries.length} requests, ${mb(bytes)} MB as JSON (${Math.round(bytes / Math.max(1, entries.length))} B each)`);
  }
  gc();
  const beforeLogs = process.memoryUsage().heapUsed;
  for (const url of [issuer, processing, accounts]) await send(url, 'DELETE', '/__sandbox/requests');
  gc();
  console.log(`request logs (3 sandboxes) held ${mb(beforeLogs - process.memoryUsage().heapUsed)} MB`);
  agent.destroy();
  await sandboxes.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
