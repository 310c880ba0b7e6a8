import type { OutgoingHttpHeaders } from 'node:http';

/**
 * Pure builders of what the proxy policy sends upstream: the path (from a `{name}` template), the
 * selected query parameters, the JSON body and the header set. Everything the partner sent that is
 * not named here stays behind.
 */

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/** A compiled `path` param: the parameter names it uses and the function filling them in. */
export interface PathTemplate {
  params: string[];
  build(values: Record<string, string | undefined>): string;
}

/** Encodes one path parameter; `.` and `..` are escaped too, so no hop can normalise them away. */
export function encodePathParam(value: string): string {
  if (value === '.' || value === '..') return value.replace(/\./g, '%2E');
  return encodeURIComponent(value);
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
        return encodePathParam(value);
      });
    },
  };
}

/**
 * The query string of the listed parameters only, from the (validated) query object, encoded with
 * URLSearchParams: a base64 `securityKey`'s `+`, `/` and `=` arrive intact. Scalars are sent as
 * strings, arrays as repeated parameters; objects and absent values are left out. Returns `''`
 * or `?a=1&b=2`.
 *
 * @example selectQuery({ expDate: '12/2030', securityKey: 'a+b/c=', other: 'x' }, ['expDate', 'securityKey']) // '?expDate=12%2F2030&securityKey=a%2Bb%2Fc%3D'
 */
export function selectQuery(query: Record<string, unknown> | undefined, names: readonly string[]): string {
  const params = new URLSearchParams();
  for (const name of names) {
    const value = query?.[name];
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') params.append(name, String(item));
    }
  }
  const text = params.toString();
  return text.length > 0 ? `?${text}` : '';
}

/** Methods whose requests carry no body upstream, whatever the partner sent. */
const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * The JSON payload sent upstream, or `undefined` for none: `body: none`, a GET/HEAD, or a
 * DELETE without a partner body. Otherwise the (already parsed and validated) partner body is
 * re-serialised with `setBody` merged over it; a non-object body with `setBody` becomes `setBody`.
 */
export function upstreamPayload(
  method: string,
  mode: 'forward' | 'none',
  partnerBody: unknown,
  setBody: Record<string, unknown> | undefined,
): Buffer | undefined {
  if (mode === 'none' || BODYLESS.has(method)) return undefined;
  const isObject = partnerBody !== null && typeof partnerBody === 'object' && !Array.isArray(partnerBody);
  const hasPartnerBody = isObject ? Object.keys(partnerBody as object).length > 0 : partnerBody !== undefined && partnerBody !== null;
  if (method === 'DELETE' && !hasPartnerBody && !setBody) return undefined;
  let body: unknown;
  if (setBody) body = { ...(isObject ? (partnerBody as object) : {}), ...setBody };
  else body = partnerBody ?? {};
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * The complete header set of an upstream request: `accept`, `x-request-id`, and `content-type` /
 * `content-length` for a body. Nothing of the partner's request (authorization, cookies,
 * idempotency-key, forwarding headers...) is ever included. Node adds `host` and `connection`.
 */
export function upstreamHeaders(method: string, requestId: string, payload: Buffer | undefined): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { accept: 'application/json', 'x-request-id': requestId };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  } else if (!BODYLESS.has(method)) {
    // No chunked encoding for an empty POST/PUT/PATCH/DELETE.
    headers['content-length'] = '0';
  }
  return headers;
}
