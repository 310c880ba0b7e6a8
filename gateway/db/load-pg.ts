/**
 * Loads the `pg` package without loading Node's fetch implementation: import this module before
 * `pg` (a side-effect import) wherever the gateway uses it.
 *
 * When it loads, pg chooses between Node's sockets and Cloudflare's. Without a `navigator` global
 * (Node before 21) it finds out by constructing a fetch `Response`, which loads undici, about 30 ms
 * of CPU at every start for nothing: the gateway makes no fetch call. A `navigator` whose
 * `userAgent` is not Cloudflare's gives pg the same answer (Node's sockets). It exists only while
 * pg loads, with the `userAgent` Node 21 and later give theirs (`Node.js/<major>`); a real
 * `navigator` is left alone.
 */
const scope = globalThis as { navigator?: unknown };
if (scope.navigator === undefined && require.cache[require.resolve('pg')] === undefined) {
  Object.defineProperty(scope, 'navigator', { value: { userAgent: `Node.js/${process.versions.node.split('.')[0]}` }, configurable: true, enumerable: false, writable: true });
  try {
    require('pg');
  } finally {
    delete scope.navigator;
  }
}

export {};
