import type { PathToRegexp } from './mount-paths';

// The one lookup of the compiled dispatch (compiled-dispatch.ts): every mount path of a
// configuration in one trie of path segments, found in one walk per request. It answers what
// express's router would find by trying each route's regular expression in turn (path-to-regexp
// 0.1, as express 4 mounts a route: case-insensitive, an optional trailing slash, `:name` one
// non-empty segment), and the mount paths a trie cannot hold (a `pathRegex`, `*`, optional or
// custom parameters...) are matched by that same regular expression, in the same walk.

/** A mount path that matched: its index (declaration order) and its parameters, not decoded. */
export interface PathHit {
  index: number;
  /** Parameter names (path-to-regexp's keys: a name, or a number for an unnamed group). */
  names: readonly (string | number)[];
  /** The raw values, in the order of `names` (undefined for an optional parameter left out). */
  values: (string | undefined)[];
}

interface TrieNode {
  /** Static segments, lower-cased (path-to-regexp matches case-insensitively). */
  statics: Map<string, TrieNode>;
  /** `:name`: one non-empty segment. */
  param?: TrieNode;
  /** Mount paths ending here: their indices and parameter names. */
  ends: { index: number; names: readonly string[] }[];
}

interface RegexMount {
  index: number;
  regexp: RegExp;
  names: (string | number)[];
  /** `*`: express's fast path (everything, as parameter 0). */
  star: boolean;
}

const STATIC_SEGMENT = /^[A-Za-z0-9_~-][A-Za-z0-9_~.-]*$/;
const PARAM_SEGMENT = /^:(\w+)$/;

function node(): TrieNode {
  return { statics: new Map(), ends: [] };
}

/**
 * The segments of a mount path the trie can hold, or undefined: static segments of letters,
 * digits and `_~.-`, and `:name` segments, with at most one trailing slash (path-to-regexp makes a
 * trailing slash optional either way). Anything else keeps its regular expression.
 */
export function trieSegments(path: string | RegExp): string[] | undefined {
  if (typeof path !== 'string') return undefined;
  if (path === '' || path === '/') return [];
  if (!path.startsWith('/')) return undefined;
  const body = path.endsWith('/') ? path.slice(1, -1) : path.slice(1);
  const segments = body.split('/');
  return segments.every((s) => STATIC_SEGMENT.test(s) || PARAM_SEGMENT.test(s)) ? segments : undefined;
}

/** Every mount path of a configuration, in declaration order, looked up at once. */
export class RouteTrie {
  private readonly root = node();
  private readonly regexMounts: RegexMount[] = [];

  /** @param pathToRegexp express's own (mount-paths.ts), for the paths the trie cannot hold. */
  constructor(
    mountPaths: readonly (string | RegExp)[],
    pathToRegexp: PathToRegexp
  ) {
    mountPaths.forEach((path, index) => {
      const segments = trieSegments(path);
      if (segments) {
        let at = this.root;
        const names: string[] = [];
        for (const segment of segments) {
          const param = PARAM_SEGMENT.exec(segment);
          if (param) {
            names.push(param[1]!);
            at = at.param ??= node();
          } else {
            const key = segment.toLowerCase();
            let next = at.statics.get(key);
            if (!next) at.statics.set(key, (next = node()));
            at = next;
          }
        }
        at.ends.push({ index, names });
      } else {
        const keys: { name: string | number }[] = [];
        const regexp = pathToRegexp(path, keys, { sensitive: false, strict: false, end: true });
        this.regexMounts.push({ index, regexp, names: keys.map((k) => k.name), star: path === '*' });
      }
    });
  }

  /** True when every mount path is in the trie (no regular expression is tried on a request). */
  get trieOnly(): boolean {
    return this.regexMounts.length === 0;
  }

  /**
   * Every mount path matching `pathname` (raw, as express's router reads it), in declaration order.
   */
  match(pathname: string): PathHit[] {
    const hits: PathHit[] = [];
    if (pathname === '/') {
      // The root's mount paths ("/" or "").
      for (const { index, names } of this.root.ends) hits.push({ index, names, values: [] });
    } else if (pathname.charCodeAt(0) === 47 /* / */) {
      const segments = pathname.split('/');
      // segments[0] is the empty string before the leading slash; one trailing slash is optional.
      const end = segments[segments.length - 1] === '' ? segments.length - 1 : segments.length;
      collect(this.root, segments, 1, end, [], hits);
    }
    if (this.regexMounts.length > 0) {
      for (const mount of this.regexMounts) {
        if (mount.star) {
          hits.push({ index: mount.index, names: [0], values: [pathname] });
          continue;
        }
        const found = mount.regexp.exec(pathname);
        if (found) hits.push({ index: mount.index, names: mount.names, values: found.slice(1) });
      }
      hits.sort((a, b) => a.index - b.index);
    } else if (hits.length > 1) {
      hits.sort((a, b) => a.index - b.index);
    }
    return hits;
  }
}

function collect(at: TrieNode, segments: string[], i: number, end: number, values: string[], hits: PathHit[]): void {
  if (i >= end) {
    for (const { index, names } of at.ends) hits.push({ index, names, values: values.slice() });
    return;
  }
  const segment = segments[i]!;
  // An empty segment ("//") matches no mount path the trie holds.
  if (segment === '') return;
  const exact = at.statics.get(segment) ?? at.statics.get(segment.toLowerCase());
  if (exact) collect(exact, segments, i + 1, end, values, hits);
  if (at.param) {
    values.push(segment);
    collect(at.param, segments, i + 1, end, values, hits);
    values.pop();
  }
}
