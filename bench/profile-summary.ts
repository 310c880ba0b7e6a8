/**
 * `node dist/bench/profile-summary.js <file.cpuprofile> [--top 25]`
 *
 * Sums up a V8 CPU profile (from `npm run bench -- --profile S1`): self time by area (our code, each
 * dependency, Node's own modules, V8's garbage collector and native code), the functions with the
 * most self time, and our own functions by inclusive time, as shares of the busy (non-idle) time. docs/performance.md quotes its output.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The area a frame belongs to: a dependency by package name, our own top-level folder, or Node/V8. */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  // The innermost package: a dependency's own nested copy counts as that package.
  const dependency = [...url.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].pop();
  if (dependency) return dependency[1]!;
  if (url.startsWith('node:')) return 'node';
  const own = /\/dist\/([^/]+)\//.exec(url);
  if (own) return `our ${own[1]}/`;
  return url;
}

export function summarise(profile: Profile, top: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    busy += us;
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = url ? `${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  // Inclusive time of our own functions (their synchronous callees included), each counted once
  // per stack even when it recurses.
  const inclusive = new Map<string, number>();
  const subtree = (node: ProfileNode, open: Set<string>): number => {
    const { functionName, url, lineNumber } = node.callFrame;
    const own = areaOf(url, functionName).startsWith('our ');
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/dist\//, 'dist/')}:${lineNumber + 1}`;
    const counted = own && !open.has(key);
    if (counted) open.add(key);
    let us = functionName === '(idle)' ? 0 : selfUs.get(node.id) ?? 0;
    for (const child of node.children ?? []) us += subtree(byId.get(child)!, open);
    if (counted) {
      open.delete(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
    return us;
  };
  subtree(profile.nodes[0]!, new Set());
  const share = (us: number) => `${((us * 100) / busy).toFixed(1).padStart(5)} %`;
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return [
    `busy ${(busy / 1000).toFixed(0)} ms of ${((profile.endTime - profile.startTime) / 1000).toFixed(0)} ms profiled`,
    '',
    'self time by area:',
    ...sorted(areas).slice(0, 20).map(([area, us]) => `  ${share(us)}  ${area}`),
    '',
    `top ${top} functions by self time:`,
    ...sorted(functions).slice(0, top).map(([fn, us]) => `  ${share(us)}  ${fn}`),
    '',
    `top ${top} of our functions by inclusive time (synchronous callees included):`,
    ...sorted(inclusive).slice(0, top).map(([fn, us]) => `  ${share(us)}  ${fn}`),
  ].join('\n');
}

if (require.main === module) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
  if (positionals.length !== 1) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [--top 25]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarise(JSON.parse(fs.readFileSync(positionals[0]!, 'utf8')) as Profile, Number(values.top))}\n`);
}
