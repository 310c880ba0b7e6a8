// The one lookup of the compiled dispatch (compiled-dispatch.ts): every mount path of a
// configuration in one trie of path segments, found in one walk per request. It answers what
// express's router would find by trying each route's regular expression in turn (path-to-regexp
// 0.1, as express 4 mounts a route: case-insensitive, an optional trailing slash, `:name` one
// non-empty segment). It holds only the paths the boot's rules accept (an operation's path of the
// catalog: static segments and `:name` parameters); a `pathRegex`, a wildcard or an optional
// parameter, which they refuse, is refused here too.

/** A mount path that matched: its index (declaration order) and its parameters, not decoded. */
export interface PathHit {
  index: number;
  /** Parameter names, in path order. */
  names: readonly string[];
  /** The raw values, in the order of `names`. */
  values: string[];
}

interface TrieNode {
  /** Static segments, lower-cased (path-to-regexp matches case-insensitively). */
  statics: Map<string, TrieNode>;
  /** `:name`: one non-empty segment. */
  param?: TrieNode;
  /** Mount paths ending here: their indices and parameter names. */
  ends: { index: number; names: readonly string[] }[];
}

const STATIC_SEGMENT = /^[A-Za-z0-9_~-][A-Za-z0-9_~.-]*$/;
const PARAM_SEGMENT = /^:(\w+)$/;

function node(): TrieNode {
  return { statics: new Map(), ends: [] };
}

/**
 * The segments of a mount path the trie can hold, or undefined: static segments of letters,
 * digits and `_~.-`, and `:name` segments, with at most one trailing slash (path-to-regexp makes a
 * trailing slash optional either way). Anything else: undefined.
 */
export function trieSegments(path: string): string[] | undefined {
  if (path === '' || path === '/') return [];
  if (!path.startsWith('/')) return undefined;
  const body = path.endsWith('/') ? path.slice(1, -1) : path.slice(1);
  const segments = body.split('/');
  return segments.every((s) => STATIC_SEGMENT.test(s) || PARAM_SEGMENT.test(s)) ? segments : undefined;
}

/** Every mount path of a configuration, in declaration order, looked up at once. */
export class RouteTrie {
  private readonly root = node();

  /** Throws for a mount path the trie cannot hold (one the boot's rules refuse). */
  constructor(mountPaths: readonly string[]) {
    mountPaths.forEach((path, index) => {
      const segments = trieSegments(path);
      if (!segments) {
        throw new Error(`the path "${path}" is not one the compiled dispatch serves: static segments and :name parameters only (the boot's rules refuse pathRegex, wildcards and optional parameters)`);
      }
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
    });
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
    if (hits.length > 1) hits.sort((a, b) => a.index - b.index);
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
