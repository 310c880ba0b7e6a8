import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import fc from 'fast-check';
import { operationNamed } from '../../gateway/catalog';
import { withCatalogParams } from '../../gateway/runtime/catalog-params';
import type { GatewayConfig } from '../../gateway/runtime/gateway-config';
import { parseGatewayYaml } from '../../gateway/runtime/gateway-yaml';
import { SCHEMAS, type SchemaName } from '../../gateway/schemas';
import { recordSecret } from '../support/secrets';

/**
 * The fuzzer's view of the gateway: every route of `config/gateway.config.yml` with the schemas
 * its `validate` step names, request arbitraries derived from those schemas (valid, near-valid
 * and invalid), and a raw HTTP sender (paths are sent exactly as generated, `..` and broken
 * percent-encoding included).
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** One partner route as the pipelines declare it. */
export interface FuzzRoute {
  name: string;
  method: string;
  /** Express-style path, e.g. `/api/partner/cards/:id/limits/:limitName`. */
  path: string;
  params: string[];
  auth: boolean;
  ownership?: { resource: 'individual' | 'card' | 'event'; param: string };
  body?: SchemaName;
  query?: SchemaName;
  pathSchema?: SchemaName;
  idempotent: boolean;
  /** The upstream the route's operation calls straight, or `orchestrated` / `local` (the catalog's `ends`). */
  terminal: string;
}

type Step = Record<string, { action?: Record<string, unknown> }[] | null>;

/**
 * Reads every route from the gateway's YAML (the same file the gateway serves), parsed by the
 * gateway's own parser (express-gateway's js-yaml): about 50 ms of CPU for this file, against
 * about 550 ms for the same object with the `yaml` package.
 */
export function loadRoutes(configFile = path.join(ROOT, 'config', 'gateway.config.yml')): FuzzRoute[] {
  // As the gateway reads it: the steps written without params take the catalog's.
  const config = withCatalogParams(parseGatewayYaml(fs.readFileSync(configFile, 'utf8'), configFile) as GatewayConfig) as {
    apiEndpoints: Record<string, { paths: string; methods: string }>;
    pipelines: Record<string, { apiEndpoints: string[]; policies: Step[] }>;
  };
  const routes: FuzzRoute[] = [];
  for (const [name, pipeline] of Object.entries(config.pipelines)) {
    for (const endpointName of pipeline.apiEndpoints) {
      const endpoint = config.apiEndpoints[endpointName];
      const actions = (policy: string) => pipeline.policies.flatMap((step) => (step[policy] ?? []).map((s) => s.action ?? {}));
      const validate = actions('validate')[0] as { body?: SchemaName; query?: SchemaName; params?: SchemaName } | undefined;
      const owner = actions('ownership')[0] as { resource: 'individual' | 'card' | 'event'; param?: string } | undefined;
      const ends = operationNamed(actions('operation')[0]?.name)?.ends;
      routes.push({
        name,
        method: String(endpoint.methods).toUpperCase(),
        path: String(endpoint.paths),
        params: [...String(endpoint.paths).matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]),
        auth: pipeline.policies.some((step) => 'es512-jwt' in step),
        ownership: owner ? { resource: owner.resource, param: owner.param ?? 'id' } : undefined,
        body: validate?.body,
        query: validate?.query,
        pathSchema: validate?.params,
        idempotent: pipeline.policies.some((step) => 'idempotency' in step),
        terminal: ends === undefined ? 'unknown' : ends.kind === 'upstream' ? ends.upstream : ends.kind === 'orchestration' ? 'orchestrated' : 'local',
      });
    }
  }
  return routes;
}

/** What the fuzzer knows of the world: the partners' resources and valid secrets to send. */
export interface FuzzContext {
  individualId: string;
  clientID: string;
  otherIndividualId: string;
  /** This route's own card (replace and re-issue move it to the new key). */
  card: { cardKey: string; expDate: string };
  otherCardKey: string;
  /** An event of each partner (the individual.created of its individual). */
  eventId: string;
  otherEventId: string;
  securityKey: string;
  pinBlocks: string[];
}

/** Where a path parameter points: resolved against the context when the request is sent. */
export type Segment = { own: true } | { other: true } | { raw: string };

/** One generated request, before the context resolves its path. */
export interface FuzzRequest {
  category: string;
  method: string;
  segments: Record<string, Segment>;
  /** The query string without `?`, sent as is. */
  query: string;
  body?: { text: string; contentType?: string; contentEncoding?: string };
  token: 'valid' | 'none' | 'garbage' | 'other-partner';
  idempotencyKey?: string;
}

const FUTURE_YEAR = new Date().getUTCFullYear() + 2;
const futureExpDate = fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: FUTURE_YEAR, max: FUTURE_YEAR + 6 })).map(([m, y]) => `${String(m).padStart(2, '0')}/${y}`);
const pastDate = fc.tuple(fc.integer({ min: 1950, max: 2015 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 })).map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
const countries = fc.constantFrom('DE', 'GB', 'FR', 'NL', 'US', 'ES', 'IT', 'PL');
const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
/** Values partners must never see logged: recorded as they are generated (test/support/secrets.ts). */
const recorded = <T extends string>(kind: Parameters<typeof recordSecret>[0], arb: fc.Arbitrary<T>) =>
  arb.map((value) => {
    recordSecret(kind, value);
    return value;
  });

/** A valid value for a known field, where the schema alone would rarely produce one. */
function hintFor(field: string, schema: Record<string, unknown>, ctx: FuzzContext): fc.Arbitrary<unknown> | undefined {
  if (schema.enum) return undefined;
  if (schema['x-country']) return countries;
  if (schema.format === 'date') return pastDate;
  switch (field) {
    case 'expDate':
      return schema['x-exp-date-not-past'] ? fc.oneof(fc.constant(ctx.card.expDate), futureExpDate) : fc.constant(ctx.card.expDate);
    case 'clientCode':
      return fc.constant(ctx.clientID);
    case 'clientId':
      return fc.oneof(fc.constant(ctx.clientID), fc.stringMatching(/^[0-9]{8}$/));
    case 'cardKey':
      return fc.constant(ctx.card.cardKey);
    case 'iban':
      return fc.constantFrom('DE89370400440532013000', 'GB29NWBK60161331926819', 'NL91ABNA0417164300');
    case 'pin':
      return fc.constantFrom(...ctx.pinBlocks);
    case 'securityKey':
      return fc.constant(ctx.securityKey);
    case 'answer':
      return recorded('threeDsAnswer', hex(6).map((h) => `fz3ds-${h}`));
    case 'passportNumber':
    case 'taxIdNumber':
      return recorded('passportNumber', fc.stringMatching(/^[0-9]{7,9}$/).map((d) => `FZ${d}`));
    case 'phone':
    case 'phoneNumber':
      return fc.stringMatching(/^[0-9]{7,10}$/).map((d) => `+49${d}`);
    case 'email':
      return hex(4).map((h) => `fz${h}@example.com`);
    case 'currency':
      return fc.constantFrom('EUR', 'USD', 'GBP');
    case 'embossedName':
      return fc.stringMatching(/^[A-Z]{1,12}(\.[A-Z]{1,12})?$/);
    case 'search':
      return fc.string({ minLength: 3, maxLength: 12 });
    default:
      return undefined;
  }
}

/** An arbitrary of values valid for `schema` (a subset of JSON Schema: what gateway/schemas uses). */
export function validValue(schema: Record<string, unknown>, ctx: FuzzContext, field = ''): fc.Arbitrary<unknown> {
  const hinted = hintFor(field, schema, ctx);
  if (hinted) return hinted;
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'string': {
      const minLength = Number(schema.minLength ?? 0);
      const maxLength = Math.min(Number(schema.maxLength ?? 40), 40);
      if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= minLength && s.length <= Number(schema.maxLength ?? Infinity));
      return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) });
    }
    case 'integer':
      return fc.integer({ min: Number(schema.minimum ?? 0), max: Math.min(Number(schema.maximum ?? 1_000_000), 1_000_000) });
    case 'number':
      return fc.double({ min: Number(schema.minimum ?? 0), max: Math.min(Number(schema.maximum ?? 1e6), 1e6), noNaN: true, noDefaultInfinity: true }).map((n) => Math.round(n * 100) / 100);
    case 'array': {
      const items = schema.items as Record<string, unknown>;
      const minLength = Number(schema.minItems ?? 0);
      const maxLength = Number(schema.maxItems ?? 5);
      if (schema['x-unique-names']) return fc.uniqueArray(validValue(items, ctx), { minLength, maxLength, selector: (item) => (item as { name: unknown }).name });
      return fc.array(validValue(items, ctx), { minLength, maxLength });
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      let required = new Set((schema.required ?? []) as string[]);
      // `anyOf: [{required: [...]}, ...]`: one branch's fields become required.
      const branches = Array.isArray(schema.anyOf) ? (schema.anyOf as { required?: string[] }[]) : [];
      const record = (extra: string[]) => {
        required = new Set([...required, ...extra]);
        const shape: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, property] of Object.entries(properties)) shape[name] = validValue(property, ctx, name);
        return fc.record(shape, { requiredKeys: [...required].filter((name) => name in properties) });
      };
      if (branches.length > 0) return fc.oneof(...branches.map((b) => record(b.required ?? [])));
      return record([]);
    }
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

/** Characters that survive JSON but not every store or log: NUL (thrice as likely), C0 controls, a lone surrogate, a bidi override, a non-character. */
const ODD_CHARACTERS = ['\u0000', '\u0000', '\u0000', '\u0001', '\u001f', '\u007f', '\ud800', '\u202e', '\uffff'];

/**
 * Single code points of any plane but the surrogates, exactly what fast-check's `unit: 'binary'`
 * generates (its `mapToConstant` over [0, 0xD7FF] and [0xE000, 0x10FFFF]; a seed draws the same
 * strings). fast-check's own unit builds a Map of all 1,112,064 code points the first time a string
 * of it is made (about 1 s of CPU, once per process): its unmapper, asked whether the dangerous
 * strings it mixes into every string arbitrary ("__proto__", "constructor"...) can be made of
 * that unit. Computing the index answers the same question without the Map.
 */
const SURROGATES = 0xe000 - 0xd800;
const binaryUnit = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (value) => {
    const codePoint = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (codePoint === undefined || (codePoint >= 0xd800 && codePoint < 0xe000) || String.fromCodePoint(codePoint) !== value) throw new Error('not one code point outside the surrogates');
    return codePoint < 0xd800 ? codePoint : codePoint - SURROGATES;
  }
);

/**
 * Bad values, built once per length limit: `mutated` asks for them inside `chain`, that is for
 * every value it generates, and building the `oneof` anew cost about 0.1 ms each time (0.5 s of
 * the fuzz's CPU). Arbitraries are stateless: a seed generates the same requests as before.
 */
let anyBadValue: fc.Arbitrary<unknown>[] | undefined;
const badValues = new Map<number, fc.Arbitrary<unknown>>();

/** Values that break a field: wrong types, huge numbers, unicode, lengths just past the limits. */
function badValue(schema: Record<string, unknown> | undefined): fc.Arbitrary<unknown> {
  const max = Number(schema?.maxLength ?? 64);
  let arbitrary = badValues.get(max);
  if (arbitrary) return arbitrary;
  anyBadValue ??= [
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(null, true, false, 0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 1.5, '', ' ', '\u0000', '../../etc/passwd', '%00', '${7*7}', '<script>', '{"$ne":null}', [], {}),
    fc.bigInt({ min: 10n ** 20n, max: 10n ** 40n }).map((n) => Number(n)),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
    fc.string({ unit: binaryUnit, minLength: 1, maxLength: 20 }),
  ];
  arbitrary = fc.oneof(
    ...anyBadValue,
    fc.string({ minLength: max + 1, maxLength: max + 40 }),
    fc.integer().map(String),
    fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 })
  );
  badValues.set(max, arbitrary);
  return arbitrary;
}

/** An invalid (or near-valid) variant of a valid value of `schema`. */
function mutated(schema: Record<string, unknown>, ctx: FuzzContext): fc.Arbitrary<unknown> {
  const valid = validValue(schema, ctx);
  if (schema.type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    const names = Object.keys(properties);
    const required = (schema.required ?? []) as string[];
    const variants: fc.Arbitrary<unknown>[] = [
      // one field set to a bad value
      ...(names.length ? [fc.tuple(valid, fc.constantFrom(...names)).chain(([value, name]) => badValue(properties[name]).map((bad) => ({ ...(value as object), [name]: bad })))] : []),
      // an unknown field
      fc.tuple(valid, fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })).map(([value, key, extra]) => ({ ...(value as object), [key]: extra })),
      fc.tuple(valid, fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty')).map(([value, key]) => JSON.parse(JSON.stringify(value).replace(/^\{/, `{"${key}":{"polluted":1},`).replace(',}', '}'))),
      // the whole body of another shape
      fc.jsonValue({ maxDepth: 3 }),
    ];
    // a valid body but for one control or odd character inside a string field (NUL, a lone surrogate, bidi override...)
    const strings = names.filter((name) => properties[name].type === 'string' && !properties[name].enum);
    if (strings.length) {
      variants.push(
        fc.tuple(valid, fc.constantFrom(...strings), fc.constantFrom(...ODD_CHARACTERS), fc.nat()).map(([value, name, character, at]) => {
          const current = (value as Record<string, unknown>)[name];
          const text = typeof current === 'string' ? current : 'text';
          const cut = at % (text.length + 1);
          return { ...(value as object), [name]: `${text.slice(0, cut)}${character}${text.slice(cut)}` };
        })
      );
    }
    // a required field missing
    if (required.length) variants.push(fc.tuple(valid, fc.constantFrom(...required)).map(([value, name]) => Object.fromEntries(Object.entries(value as object).filter(([k]) => k !== name))));
    return fc.oneof(...variants);
  }
  if (schema.type === 'array') {
    return fc.oneof(
      fc.constant([]),
      valid.map((items) => [...(items as unknown[]), ...(items as unknown[])]),
      fc.array(badValue(undefined), { minLength: 1, maxLength: 7 }),
      fc.array(validValue(schema.items as Record<string, unknown>, ctx), { minLength: 6, maxLength: 9 }),
      fc.jsonValue({ maxDepth: 2 })
    );
  }
  return badValue(schema);
}

/** Encodes a query object the way clients do (arrays repeat the key). */
function queryString(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return `q=${encodeURIComponent(JSON.stringify(value))}`;
  const params = new URLSearchParams();
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (Array.isArray(v)) v.forEach((item) => params.append(key, typeof item === 'string' ? item : JSON.stringify(item)));
    else params.append(key, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return params.toString();
}

/** Query strings no client library would send. */
const rawQueries = fc.oneof(
  fc.constantFrom('%', '%zz', 'page=%', 'search=ab%00cd', 'cardKey=%00', 'search=%C0%AF%C0%AF', 'page=1&page=2', 'limit[]=5', 'page[a]=1', '__proto__[x]=1', 'constructor[prototype][x]=1', '&&&', '=', 'a=%E0%A4%A', 'page=1e3', 'limit=0x10', 'page=-0', 'page=%00'),
  fc.string({ unit: 'grapheme', maxLength: 30 }).map(encodeURIComponent),
  fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c)).replace(/#/g, '%23'))
);

/** Path segments that are not ids: traversal, broken or exotic encodings, lengths past any limit. */
const rawSegments = fc.oneof(
  fc.constantFrom('..', '.', '%2e%2e', '..%2F..%2Fme', '%2F', '%00', '%', '%zz', '%E0%A4%A', '%F0%9F%92%A9', '__proto__', 'constructor', '%20', 'CK%0D%0AX-Injected:1', "'%3B--", 'null', 'undefined', '0'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
  fc.string({ minLength: 1, maxLength: 30 }).map((s) => s.replace(/[^\x21-\x7e]|[/?#]/g, (c) => encodeURIComponent(c))),
  fc.integer({ min: 65, max: 400 }).map((n) => 'A'.repeat(n)),
  hex(12),
  hex(8).map((h) => `CK${h.toUpperCase()}`)
);

const bodyText = (value: unknown) => ({ text: JSON.stringify(value), contentType: 'application/json' });

/**
 * Requests for one route: about a third schema-valid, the rest near-valid or invalid in the body,
 * the query, the path, the media type or encoding, the token or the method.
 */
export function requestArbitrary(route: FuzzRoute, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const bodySchema = route.body ? (SCHEMAS[route.body] as Record<string, unknown>) : undefined;
  const querySchema = route.query ? (SCHEMAS[route.query] as Record<string, unknown>) : undefined;
  const sendsBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
  const ownSegments: Record<string, Segment> = Object.fromEntries(route.params.map((p) => [p, p === 'limitName' ? { raw: 'dailyPurchase' } : { own: true }]));
  const limitNames = fc.constantFrom('dailyPurchase', 'monthlyPurchase', 'dailyWithdrawal', 'monthlyWithdrawal', 'singleTransaction');
  const validSegments: fc.Arbitrary<Record<string, Segment>> = route.params.includes('limitName')
    ? limitNames.map((name) => ({ ...ownSegments, limitName: { raw: name } }))
    : fc.constant(ownSegments);
  const validBody = bodySchema ? validValue(bodySchema, ctx).map(bodyText) : fc.constant(sendsBody ? undefined : undefined);
  const validQuery = querySchema ? validValue(querySchema, ctx).map(queryString) : fc.constant('');
  const base = fc.record({ segments: validSegments, body: validBody, query: validQuery });
  const request = (category: string, parts: Partial<FuzzRequest> & Pick<FuzzRequest, 'segments' | 'query'>): FuzzRequest => ({
    category,
    method: route.method,
    token: 'valid',
    ...parts,
  });

  const variants: { weight: number; arbitrary: fc.Arbitrary<FuzzRequest> }[] = [
    { weight: 30, arbitrary: base.map((b) => request('valid', b)) },
    {
      weight: 10,
      arbitrary: fc.tuple(base, fc.dictionary(fc.constantFrom(...(route.params.length ? route.params : ['none'])), fc.oneof(fc.constant<Segment>({ other: true }), rawSegments.map<Segment>((raw) => ({ raw }))), { minKeys: 1 })).map(([b, segments]) =>
        request('path', { ...b, segments: { ...b.segments, ...Object.fromEntries(Object.entries(segments).filter(([k]) => route.params.includes(k))) } })
      ),
    },
    { weight: 8, arbitrary: fc.tuple(base, rawQueries).map(([b, query]) => request('raw-query', { ...b, query })) },
    { weight: 8, arbitrary: fc.tuple(base, fc.constantFrom<FuzzRequest['token']>('none', 'garbage', 'other-partner')).map(([b, token]) => request('token', { ...b, token })) },
    {
      weight: 8,
      arbitrary: fc.tuple(
        base,
        fc.oneof(
          fc.string({ maxLength: 40 }).map((text) => ({ text, contentType: 'application/json' })),
          fc.constantFrom('{', '[1,', '{"a":}', '\u0000', '"just a string"', '42', 'null', '{"a":1}{"b":2}', '\uFEFF{}').map((text) => ({ text, contentType: 'application/json' })),
          fc.tuple(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/merge-patch+json', 'application/json; charset=utf-16')).map(([value, contentType]) => ({ text: JSON.stringify(value), contentType })),
          fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown').map((contentEncoding) => ({ text: '{"a":1}', contentType: 'application/json', contentEncoding })),
          fc.integer({ min: 65 * 1024, max: 70 * 1024 }).map((size) => ({ text: JSON.stringify({ filler: 'x'.repeat(size) }), contentType: 'application/json' }))
        )
      ).map(([b, body]) => request('raw-body', { ...b, body })),
    },
    { weight: 4, arbitrary: fc.tuple(base, fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD').filter((m) => m !== route.method)).map(([b, method]) => request('method', { ...b, method })) },
  ];
  if (bodySchema) variants.push({ weight: 25, arbitrary: fc.tuple(base, mutated(bodySchema, ctx)).map(([b, value]) => request('body', { ...b, body: bodyText(value) })) });
  else if (sendsBody || route.method === 'GET') variants.push({ weight: 5, arbitrary: fc.tuple(base, fc.jsonValue({ maxDepth: 2 })).map(([b, value]) => request('unexpected-body', { ...b, body: bodyText(value) })) });
  if (querySchema) variants.push({ weight: 15, arbitrary: fc.tuple(base, mutated(querySchema, ctx)).map(([b, value]) => request('query', { ...b, query: queryString(value) })) });
  else variants.push({ weight: 4, arbitrary: fc.tuple(base, fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 })).map(([b, q]) => request('unexpected-query', { ...b, query: queryString(q) })) });
  if (route.pathSchema) variants.push({ weight: 10, arbitrary: fc.tuple(base, rawSegments).map(([b, raw]) => request('limit-name', { ...b, segments: { ...b.segments, limitName: { raw } } })) });
  if (route.idempotent) {
    const keys = fc.oneof(
      hex(8).map((h) => `fz-${h}`),
      fc.constantFrom('', ' ', 'x'.repeat(256), 'ключ', 'a\u0007b'),
      fc.string({ minLength: 1, maxLength: 300 })
    );
    variants.push({
      weight: 10,
      arbitrary: fc.tuple(base, keys).map(([b, idempotencyKey]) => request('idempotency-key', { ...b, idempotencyKey: idempotencyKey.replace(/[^\x20-\x7e]/g, '?') })),
    });
  }
  return fc.oneof(...variants);
}

/** A request as sent: the concrete path, headers and body. */
export interface SentRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** What came back. */
export interface FuzzResponse {
  status: number;
  contentType: string;
  body: any;
  text: string;
}

/** Resolves the generated request against the context (ids and tokens) into what goes on the wire. */
export function materialize(route: FuzzRoute, request: FuzzRequest, ctx: FuzzContext, tokens: { valid: string; other: string }, requestId: string): SentRequest {
  const segment = (name: string): string => {
    const choice = request.segments[name];
    if (!choice) return '';
    if ('raw' in choice) return choice.raw;
    const resource = route.ownership?.resource;
    if ('own' in choice) return resource === 'individual' ? ctx.individualId : resource === 'event' ? ctx.eventId : ctx.card.cardKey;
    return resource === 'individual' ? ctx.otherIndividualId : resource === 'event' ? ctx.otherEventId : ctx.otherCardKey;
  };
  const routePath = route.path.replace(/:([A-Za-z]+)/g, (_m, name: string) => segment(name));
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (request.token === 'valid') headers.authorization = `Bearer ${tokens.valid}`;
  if (request.token === 'other-partner') headers.authorization = `Bearer ${tokens.other}`;
  if (request.token === 'garbage') headers.authorization = `Bearer ${crypto.randomBytes(12).toString('base64url')}.e30.AAAA`;
  if (request.body?.contentType) headers['content-type'] = request.body.contentType;
  if (request.body?.contentEncoding) headers['content-encoding'] = request.body.contentEncoding;
  if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
  return { method: request.method, path: `${routePath}${request.query ? `?${request.query}` : ''}`, headers, body: request.body?.text };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/**
 * A response whose text and JSON body are decoded when first read: the rules read them for errors
 * and a few routes' answers only, about 1.3 MB of the 27 MB a run receives (list pages and the
 * OpenAPI document make up most of the rest).
 */
class ReceivedResponse implements FuzzResponse {
  private decoded?: { text: string; body: any };

  constructor(
    readonly status: number,
    readonly contentType: string,
    private readonly raw: Buffer
  ) {}

  private decode(): { text: string; body: any } {
    if (!this.decoded) {
      const text = this.raw.toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      this.decoded = { text, body };
    }
    return this.decoded;
  }

  get text(): string {
    return this.decode().text;
  }

  get body(): any {
    return this.decode().body;
  }
}

/** Sends one request exactly as given (no URL normalisation), over a keep-alive agent. */
export function send(baseUrl: string, request: SentRequest): Promise<FuzzResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        agent,
        headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve(new ReceivedResponse(res.statusCode ?? 0, String(res.headers['content-type'] ?? ''), Buffer.concat(chunks))));
      }
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

/** Closes the sender's keep-alive sockets. */
export function closeSender(): void {
  agent.destroy();
}

/** Problem codes that mean the gateway refused the request itself, before any upstream call. */
export const GATEWAY_REFUSALS = /^(validation_failed|invalid_id|malformed_json|body_required|body_too_deep|unsupported_media_type|payload_too_large|token_.*|alg_not_allowed|header_not_allowed|claim_.*|lifetime_too_long|unknown_partner|partner_disabled|issuer_mismatch|key_unknown|key_revoked|signature_invalid|route_not_found|forbidden|rate_limited)$/;
