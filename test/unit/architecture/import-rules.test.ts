import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

/**
 * The import rules of docs/architecture.md ("Layers"), held by reading every import of the
 * gateway's source (static, dynamic and `require`, type-only ones included: a type is a
 * dependency too). A file may import its own layer or a lower one, never a higher one, and no two
 * folders (nor two files) import each other, directly or round a longer circle.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const SOURCE_DIRS = ['contracts', 'gateway', 'policies', 'plugins'];

/**
 * The layers, lowest first. A file belongs to the layer of the longest prefix that matches its
 * path; every source file must match one (a new folder gets its place here and in the doc).
 */
export const LAYERS: ReadonlyArray<{ name: string; paths: readonly string[] }> = [
  {
    name: 'base',
    paths: [
      'contracts/',
      'gateway/errors.ts',
      'gateway/ids.ts',
      'gateway/bounded-lru.ts',
      'gateway/settings.ts',
      'gateway/logging/',
      'gateway/metrics/',
      'gateway/background/',
      'gateway/validation/',
      'gateway/cluster/',
      'gateway/shapes/',
    ],
  },
  { name: 'database', paths: ['gateway/db/'] },
  {
    name: 'domain',
    paths: ['gateway/audit/', 'gateway/authorizations/', 'gateway/cards/', 'gateway/individuals/', 'gateway/partners/', 'gateway/outbox/', 'gateway/idempotency/', 'gateway/ownership/', 'gateway/outbound/', 'gateway/schemas/', 'gateway/tokens/', 'gateway/transactions/', 'gateway/upstreams/', 'gateway/webhooks/'],
  },
  { name: 'http', paths: ['gateway/http/'] },
  { name: 'catalog, route model and policy contracts', paths: ['gateway/catalog/', 'gateway/route-model/', 'policies/policy-schema.ts'] },
  { name: 'features', paths: ['gateway/handlers/', 'gateway/inbound/', 'gateway/openapi/', 'gateway/policy-audit/', 'gateway/boot/', 'gateway/admin/'] },
  { name: 'policies', paths: ['policies/'] },
  { name: 'runtime', paths: ['gateway/runtime/', 'plugins/'] },
  { name: 'composition root', paths: ['gateway/main.ts', 'gateway/start.ts', 'gateway/serve.ts', 'gateway/compose-services.ts'] },
];

function matches(file: string, pattern: string): boolean {
  if (pattern.includes('*')) return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('[^/]+')}$`).test(file);
  return pattern.endsWith('/') ? file.startsWith(pattern) : file === pattern;
}

/** The layer of a source file (index in LAYERS) and the pattern that placed it there. */
export function layerOf(file: string): { index: number; pattern: string } | undefined {
  let best: { index: number; pattern: string } | undefined;
  LAYERS.forEach((layer, index) => {
    for (const pattern of layer.paths) {
      // The most specific pattern wins: a file pattern over a folder, a longer folder over a shorter one.
      if (matches(file, pattern) && (!best || pattern.length > best.pattern.length || (!pattern.endsWith('/') && best.pattern.endsWith('/')))) best = { index, pattern };
    }
  });
  return best;
}

/** The folder a file counts in for the circle check: its folder, split by layer where one folder spans two. */
function nodeOf(file: string): string {
  const folder = path.posix.dirname(file);
  return `${folder === 'gateway' || folder === 'policies' ? file : folder}@${layerOf(file)?.index ?? '?'}`;
}

function sourceFiles(dirs = SOURCE_DIRS): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(rel);
    }
  };
  for (const dir of dirs) walk(dir);
  return files;
}

/**
 * The source without its comments (a doc comment's `@example` may show a `require`), strings and
 * template literals kept as they are, and so are its line breaks.
 */
export function withoutComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    const next = text[i + 1];
    if (char === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (char === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const after = end === -1 ? text.length : end + 2;
      // Its line breaks kept: a finding's line number is the file's.
      out += `${'\n'.repeat(text.slice(i, after).split('\n').length - 1)} `;
      i = after;
    } else if (char === "'" || char === '"' || char === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== char) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += char;
      i += 1;
    }
  }
  return out;
}

const IMPORT = /(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"\n]+)\1/gm;

/** The project files a source file imports (relative specifiers resolved; packages left out). */
export function importsOf(file: string, text = fs.readFileSync(path.join(ROOT, file), 'utf8')): string[] {
  const found: string[] = [];
  for (const [, , fileName] of withoutComments(text).matchAll(IMPORT) as IterableIterator<[string, string, string]>) {
    if (!fileName.startsWith('.')) continue;
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName));
    const target = [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => fs.existsSync(path.join(ROOT, candidate)) && fs.statSync(path.join(ROOT, candidate)).isFile());
    if (target) found.push(target);
  }
  return found;
}

/** Every circle in a directed graph, as the strongly connected components of more than one node. */
export function circles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/**
 * Where a source text writes an answer itself, past the one writer (gateway/http/answer.ts): a call
 * of `json` (with a body: `response.json()` of a fetch reads one), `jsonp`, `send`, `sendStatus`,
 * `sendFile`, `end`, `write`, `writeHead`, `redirect` or `render` on a response, directly or at the
 * end of a chain of calls on it (`res.status(201).json(card)`). A response is `res`, `response`, a
 * `.res` of a request, or a name declared as an Express or node:http `Response`/`ServerResponse`,
 * as far as a scan of the text can tell. Comments are left out. Gives `line N: the call`.
 */
export function answerWrites(text: string): string[] {
  const source = withoutComments(text);
  const names = new Set(['res', 'response']);
  for (const [, name] of source.matchAll(/\b(\w+)\s*\??:\s*(?:express\.|http\.)?(?:Response|ServerResponse)\b/g) as IterableIterator<[string, string]>) names.add(name);
  const call = String.raw`\s*\(\s*(?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)`;
  const chain = new RegExp(String.raw`\b(${[...names].join('|')})!?((?:\s*\.\s*\w+${call})*)\s*\.\s*(jsonp?(?=\s*\(\s*[^\s)])|send|sendStatus|sendFile|end|write|writeHead|redirect|render)\s*\(`, 'g');
  const found: string[] = [];
  for (const match of source.matchAll(chain)) {
    const line = source.slice(0, match.index).split('\n').length;
    found.push(`line ${line}: ${match[0].replace(/\s+/g, ' ')}`);
  }
  return found;
}

/** The files that write their answers themselves, and why (the test fails when one no longer does). */
const OWN_WRITERS: Readonly<Record<string, string>> = {
  'gateway/metrics/route.ts': "the Prometheus text of the admin API: base layer, below gateway/http/, and written with `end` so that Express neither rewrites its content type's parameters nor hashes it for an ETag",
  'gateway/metrics/scrape-proxy.ts': 'a process of its own on node:http (no Express application) that forwards the scrape to the admin API',
};

describe('unit: architecture import rules (docs/architecture.md, "Layers")', () => {
  const files = sourceFiles();
  const imports = new Map(files.map((file) => [file, importsOf(file)]));

  it('reads the imports it checks: static, type-only, dynamic and require, relative ones resolved', () => {
    const text = [
      "import { a } from '../errors';",
      "import type { B } from './card-store';",
      "const c = require('../db/database');",
      "const d = import('../ids');",
      "import express from 'express';",
      "import './side-effect';",
      "export { e } from '../errors';",
      "/** @example require('../settings') */ // require('../logging/logger')",
      "const text = '// not a comment'; const f = require('../db/migrate');",
    ].join('\n');
    expect(importsOf('gateway/cards/card-search.ts', text)).to.have.members([
      'gateway/errors.ts',
      'gateway/cards/card-store.ts',
      'gateway/db/database.ts',
      'gateway/ids.ts',
      'gateway/errors.ts',
      'gateway/db/migrate.ts',
    ]);
    expect(files.length, 'source files found').to.be.greaterThan(100);
  });

  it('finds circles: a two-folder one, a longer one, and none in a chain', () => {
    const graph = (edges: string) => {
      const map = new Map<string, Set<string>>();
      for (const edge of edges.split(' ')) {
        const [from, to] = edge.split('>') as [string, string];
        map.set(from, (map.get(from) ?? new Set()).add(to));
        if (!map.has(to)) map.set(to, new Set());
      }
      return map;
    };
    expect(circles(graph('a>b b>a c>a'))).to.deep.equal([['a', 'b']]);
    expect(circles(graph('a>b b>c c>a'))).to.deep.equal([['a', 'b', 'c']]);
    expect(circles(graph('a>b b>c a>c'))).to.deep.equal([]);
  });

  it('places every source file in a layer', () => {
    expect(files.filter((file) => !layerOf(file)), 'files in no layer of LAYERS').to.deep.equal([]);
  });

  it('has no exceptions: every file of gateway/runtime/ is in the runtime layer, every policy\'s schema.ts in the policies layer', () => {
    const layerName = (file: string) => LAYERS[layerOf(file)!.index].name;
    const misplaced = sourceFiles()
      .filter((f) => f.startsWith('gateway/runtime/') || /^policies\/[^/]+\/schema\.ts$/.test(f))
      .filter((f) => layerName(f) !== (f.startsWith('gateway/runtime/') ? 'runtime' : 'policies'))
      .map((f) => `${f} (${layerName(f)})`);
    expect(misplaced).to.deep.equal([]);
  });

  it('no file imports a higher layer', () => {
    const upward: string[] = [];
    for (const [file, targets] of imports) {
      const from = layerOf(file);
      for (const target of targets) {
        const to = layerOf(target);
        if (from && to && to.index > from.index) upward.push(`${file} (${LAYERS[from.index]!.name}) imports ${target} (${LAYERS[to.index]!.name})`);
      }
    }
    expect(upward).to.deep.equal([]);
  });

  it('the sandboxes import nothing from outside sandbox/ but the upstream contracts (contracts/, which import nothing), and only the composition root imports them', () => {
    const outward = sourceFiles(['sandbox']).flatMap((file) => importsOf(file).filter((target) => !target.startsWith('sandbox/') && !target.startsWith('contracts/')).map((target) => `${file} imports ${target}`));
    expect(outward).to.deep.equal([]);
    const fromContracts = sourceFiles(['contracts']).flatMap((file) => importsOf(file).filter((target) => !target.startsWith('contracts/')).map((target) => `${file} imports ${target}`));
    expect(fromContracts).to.deep.equal([]);
    const importers = [...imports].filter(([, targets]) => targets.some((target) => target.startsWith('sandbox/'))).map(([file]) => file);
    expect(importers.filter((file) => LAYERS[layerOf(file)!.index]!.name !== 'composition root')).to.deep.equal([]);
    expect(importers, 'the composition root starts the sandboxes').to.include('gateway/serve.ts');
  });

  it('no folders import each other, directly or round a circle', () => {
    const graph = new Map<string, Set<string>>();
    const why = new Map<string, string>();
    for (const [file, targets] of imports) {
      const from = nodeOf(file);
      if (!graph.has(from)) graph.set(from, new Set());
      for (const target of targets) {
        const to = nodeOf(target);
        if (to === from) continue;
        graph.get(from)!.add(to);
        why.set(`${from}>${to}`, `${file} imports ${target}`);
      }
    }
    const found = circles(graph).map((members) => {
      const inside = new Set(members);
      const edges = [...why].filter(([edge]) => {
        const [from, to] = edge.split('>') as [string, string];
        return inside.has(from) && inside.has(to);
      });
      return `${members.join(' ↔ ')}: ${edges.map(([, reason]) => reason).join('; ')}`;
    });
    expect(found).to.deep.equal([]);
  });

  it('no files import each other, directly or round a circle, within a folder too (runtime/express-gateway.ts and config-candidate.ts did)', function () {
    const graph = new Map([...imports].map(([file, targets]) => [file, new Set(targets)]));
    expect(circles(graph).map((members) => members.join(' ↔ '))).to.deep.equal([]);
  });
  it('answers leave through the one writer: no file of gateway/, policies/ or plugins/ outside gateway/http/ calls res.json, res.send, res.end or res.sendStatus', function () {
    // The scanner finds a handler writing res.json, and the other ways, and leaves reads and answers returned alone.
    const fixture = [
      'return async function listHandler(_facts, _req, res) {',
      '  res.json({ data: [] });',
      '  res.status(201).json(card);',
      "  res.set('Allow', body).send(body);",
      '  res.sendStatus(404);',
      '  res.status(204).end();',
      '  req.res!.send(text);',
      '};',
      "function serve(reply: express.Response): void { reply.type('text/plain').send('OK'); }",
      '// res.json(commented); /* res.end() */',
      'const parsed = await response.json();',
      "worker.send({ type: 'run' });",
      'return { status: 200, body: { data: [] } };',
    ].join('\n');
    expect(answerWrites(fixture)).to.deep.equal([
      'line 2: res.json(',
      'line 3: res.status(201).json(',
      "line 4: res.set('Allow', body).send(",
      'line 5: res.sendStatus(',
      'line 6: res.status(204).end(',
      'line 7: res!.send(',
      "line 9: reply.type('text/plain').send(",
    ]);
    const writers = files
      .filter((file) => !file.startsWith('gateway/http/'))
      .flatMap((file) => answerWrites(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((write) => `${file} ${write}`))
      .filter((write) => !(write.split(' ')[0]! in OWN_WRITERS));
    expect(writers, 'answers written past gateway/http/answer.ts (return a HandlerAnswer, or call writeAnswer)').to.deep.equal([]);
    for (const file of Object.keys(OWN_WRITERS)) expect(answerWrites(fs.readFileSync(path.join(ROOT, file), 'utf8')), `${file} no longer writes: take it off OWN_WRITERS`).to.not.deep.equal([]);
  });
});
