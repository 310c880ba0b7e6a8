
/**
 * Pure builders of what is sent to an upstream: the path, the query string, the JSON body of a
 * proxied route and the header set. Every caller (typed client methods, the `upstream-proxy`
 * policy) goes through them, so encoding and the header policy exist once.
 */

/**
 * Encodes one path segment; `.` and `..` are escaped too, so no hop can normalise them away.
 * Throws a TypeError for an empty segment (it would change the path's shape).
 */
export function encodePathSegment(segment: string | number): string {
  const text = String(segment);
  if (text.length === 0) throw new TypeError('upstream path segment must not be empty');
  if (text === '.' || text === '..') return text.replace(/\./g, '%2E');
  return encodeURIComponent(text);
}

/**
 * Builds an upstream path, URL-encoding every interpolated value as one path segment.
 *
 * @example upstreamPath`/cards/${cardKey}/limits/${name}` // '/cards/CK1/limits/daily%2FPurchase' for name 'daily/Purchase'
 */
export function upstreamPath(strings: TemplateStringsArray, ...segments: Array<string | number>): string {
  let out = strings[0];
  segments.forEach((segment, i) => {
    out += encodePathSegment(segment) + strings[i + 1];
  });
  return out;
}

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/** A compiled `path` param: the parameter names it uses and the function filling them in. */
export interface PathTemplate {
  params: string[];
  build(values: Record<string, string | undefined>): string;
}

/**
 * Compiles a `path` template once (factory time). Throws for a brace that is not part of a
 * `{name}` placeholder. `build` throws a TypeError when a named value is missing or empty.
 *
 * @example compilePath('/cards/{id}/limits/{limitName}').build({ id: 'CK1', limitName: 'a/b' }) // '/cards/CK1/limits/a%2Fb'
 */
export function compilePath(template: string): PathTemplate {
  if (/[{}]/.test(template.replace(PLACEHOLDER, ''))) throw new TypeError(`path "${template}" has a brace outside a {name} placeholder`);
  const params = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]);
  return {
    params,
    build(values) {
      return template.replace(PLACEHOLDER, (_match, name: string) => {
        const value = values[name];
        if (typeof value !== 'string' || value.length === 0) throw new TypeError(`path parameter "${name}" is missing`);
        return encodePathSegment(value);
      });
    },
  };
}

/**
 * The query string of `query`, encoded with URLSearchParams: a base64 `securityKey`'s `+`, `/` and
 * `=` arrive intact. Undefined values, objects and nulls are left out. Returns `''` or `?a=1&b=2`.
 *
 * @example encodeQuery({ expDate: '12/2030', securityKey: 'a+b/c=' }) // '?expDate=12%2F2030&securityKey=a%2Bb%2Fc%3D'
 */
export function encodeQuery(query: Readonly<Record<string, unknown>> | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const name in query) {
    const value = query[name];
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') params.append(name, String(item));
    }
  }
  const text = params.toString();
  return text.length > 0 ? `?${text}` : '';
}

/**
 * The listed parameters of a (validated) partner query, in the order listed; every other
 * parameter stays behind.
 *
 * @example pickQuery({ expDate: '12/2030', debug: 'true' }, ['expDate', 'securityKey']) // { expDate: '12/2030' }
 */
export function pickQuery(query: Readonly<Record<string, unknown>> | undefined, names: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of names) if (query?.[name] !== undefined) picked[name] = query[name];
  return picked;
}

/** Methods whose requests carry no body upstream, whatever the partner sent. */
const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * The JSON body a proxied route sends upstream, or `undefined` for none: `body: none`, a GET/HEAD,
 * or a DELETE without a partner body. Otherwise the (already parsed and validated) partner body
 * with `setBody` merged over it; a non-object body with `setBody` becomes `setBody`.
 */
export function proxiedBody(method: string, mode: 'forward' | 'none', partnerBody: unknown, setBody: Record<string, unknown> | undefined): unknown {
  if (mode === 'none' || BODYLESS.has(method)) return undefined;
  const isObject = partnerBody !== null && typeof partnerBody === 'object' && !Array.isArray(partnerBody);
  const hasPartnerBody = isObject ? Object.keys(partnerBody as object).length > 0 : partnerBody !== undefined && partnerBody !== null;
  if (method === 'DELETE' && !hasPartnerBody && !setBody) return undefined;
  if (setBody) return { ...(isObject ? (partnerBody as object) : {}), ...setBody };
  return partnerBody ?? {};
}

/**
 * The complete header set of an upstream request, as the flat list undici takes (name, value, …):
 * `accept`, `x-request-id`, `idempotency-key` for an operation id, `content-type` /
 * `content-length` for a body, and last `host` (the client's, prebuilt; undici then adds none of its
 * own, and `connection: keep-alive` itself). Nothing of the partner's request (authorization,
 * cookies, its idempotency-key, forwarding headers...) is ever included.
 */
export function upstreamHeaders(method: string, requestId: string | undefined, payload: Buffer | undefined, operationId: string | undefined, host: string): string[] {
  const headers = ['accept', 'application/json'];
  if (requestId) headers.push('x-request-id', requestId);
  if (operationId !== undefined) headers.push('idempotency-key', operationId);
  if (payload !== undefined) headers.push('content-type', 'application/json', 'content-length', String(payload.length));
  // No chunked encoding for an empty POST/PUT/PATCH/DELETE.
  else if (!BODYLESS.has(method)) headers.push('content-length', '0');
  headers.push('host', host);
  return headers;
}
