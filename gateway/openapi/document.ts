import { EVENT_ID } from '../ids';
import { OWNED_KINDS, type OwnedKind } from '../ownership';
import { PARTNER_EVENT_TYPES, type PartnerEventType } from '../outbox/partner-events';
import { ERROR_CATALOG, PROBLEM_TYPE_BASE, type ErrorCode } from '../errors';
import { SCHEMAS, type SchemaName } from '../schemas';
import type { JsonSchema } from '../schemas/common';
import { RESPONSE_SCHEMAS, type ResponseSchemaName } from '../schemas/responses';
import { EXAMPLE_IDS, requestExamples, responseExamples } from './examples';
import { TAGS, type Operation, type SuccessAnswer } from '../catalog';
import { PARTNER_BASE, POLICY_NAMES, routeTable, type Route } from './route-table';
import { routeModelOf } from '../route-model';

/** Version of the Partner Card-Management API (spec section 9). */
export const API_VERSION = '1.0.0';

/** Name of the security scheme in `components.securitySchemes`. */
export const SECURITY_SCHEME = 'partnerJwt';

/** A JSON object of the document; a value read back from it (or from a schema) is narrowed where read ({@link objectOf}). */
type Json = Record<string, unknown>;

/** `value` as a JSON object, or undefined when it is not one (an array, a primitive, absent). */
function objectOf(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/** An OpenAPI 3.1 document (only the members the generator writes are typed). */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: Json;
  servers: Json[];
  tags: Json[];
  paths: Record<string, Record<string, Json>>;
  webhooks: Record<string, { post: Json }>;
  components: { securitySchemes: Json; schemas: Json; responses: Json; headers: Json };
}

/**
 * The path parameter of each owned kind a path names, its pattern the kind's own (OWNED_KINDS,
 * gateway/ownership: the ownership policy checks that one). `client` is named in bodies only.
 */
const PATH_IDS = {
  individual: { type: 'string', pattern: OWNED_KINDS.individual.id.source, description: 'The individual account `_id` (24 hexadecimal characters)', example: EXAMPLE_IDS.individualId },
  card: { type: 'string', pattern: OWNED_KINDS.card.id.source, description: 'The cardKey', example: EXAMPLE_IDS.cardKey },
  event: { type: 'string', pattern: OWNED_KINDS.event.id.source, description: 'The event id (`evt_` and 24 hexadecimal characters)', example: EXAMPLE_IDS.eventId },
  transaction: { type: 'string', pattern: OWNED_KINDS.transaction.id.source, description: 'The transaction id (the card processing system\'s)', example: EXAMPLE_IDS.transactionId },
  'webhook-endpoint': { type: 'string', pattern: OWNED_KINDS['webhook-endpoint'].id.source, description: 'The webhook endpoint id (`we_` and 24 hexadecimal characters)', example: EXAMPLE_IDS.webhookEndpointId },
  token: { type: 'string', pattern: OWNED_KINDS.token.id.source, description: 'The token id (`tok_` and 24 hexadecimal characters)', example: EXAMPLE_IDS.tokenId },
} as const satisfies Record<Exclude<OwnedKind, 'client'>, Json>;

/** Problem responses by HTTP status: component name, when it happens, example code and headers. */
const PROBLEMS: Record<number, { component: string; description: string; example: ErrorCode | undefined; headers?: string[]; extensions?: Json }> = {
  400: { component: 'BadRequest', description: 'The request is invalid; `invalidParams` lists every invalid field', example: 'validation_failed' },
  401: { component: 'Unauthorized', description: 'The token is missing or refused; `code` says why (docs/authentication.md)', example: 'token_expired', headers: ['WWW-Authenticate'] },
  403: { component: 'Forbidden', description: 'The resource belongs to another partner', example: 'forbidden' },
  404: { component: 'NotFound', description: 'The resource does not exist', example: 'not_found' },
  409: {
    component: 'Conflict',
    description: 'The request conflicts with the state of the resource or with an earlier request of the same Idempotency-Key (`Retry-After` on `idempotency_in_progress`)',
    example: 'invalid_transition',
    headers: ['Retry-After'],
    extensions: { cardStatus: 'CLOSED', statusCode: 'S4' },
  },
  413: { component: 'PayloadTooLarge', description: 'The body exceeds 64 KB', example: 'payload_too_large' },
  415: { component: 'UnsupportedMediaType', description: 'The body is not UTF-8 `application/json`', example: 'unsupported_media_type' },
  422: {
    component: 'UpstreamRejected',
    description: 'An upstream system refused the request; `upstream` names it and `upstreamCode` says why',
    example: 'upstream_rejected',
    extensions: { upstream: 'issuer', upstreamCode: 'EXP_DATE_MISMATCH' },
  },
  429: {
    component: 'TooManyRequests',
    description: 'Over the rate limit of the route: wait `Retry-After` seconds (`RateLimit-Policy` and `RateLimit` say the quota)',
    example: undefined,
    headers: ['Retry-After', 'RateLimit-Policy', 'RateLimit'],
  },
  502: {
    component: 'BadGateway',
    description: 'An upstream system failed or answered something unusable (`Retry-After` when it said it is unavailable)',
    example: 'upstream_error',
    headers: ['Retry-After'],
    extensions: { upstream: 'issuer' },
  },
  503: { component: 'ServiceUnavailable', description: 'The database is unavailable: retry after `Retry-After` seconds', example: 'database_unavailable', headers: ['Retry-After'] },
  504: { component: 'GatewayTimeout', description: 'An upstream system did not answer in time (`UPSTREAM_TIMEOUT_MS`, 5 s by default)', example: 'upstream_timeout', extensions: { upstream: 'issuer' } },
};

/** Codes that never answer a partner operation: the admin API's, and unknown routes. */
const NOT_PER_OPERATION = new Set<string>(['admin_unauthorized', 'route_not_found']);

const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'The request id: yours if you sent a well-formed `X-Request-Id` (1 to 128 of `A-Z a-z 0-9 . _ : -`), else generated. Quote it to support.',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': {
    description: 'The refusal, RFC 6750 style',
    schema: { type: 'string' },
    example: 'Bearer realm="partner-api", error="invalid_token", error_description="token_expired"',
  },
  'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
  'RateLimit-Policy': {
    description: 'The quota of the route (IETF RateLimit header fields): `"<name>";q=<requests>;w=<window seconds>`',
    schema: { type: 'string' },
    example: '"get-card";q=600;w=60',
  },
  RateLimit: { description: 'What is left of the quota: `"<name>";r=<remaining>;t=<seconds to reset>`', schema: { type: 'string' }, example: '"get-card";r=599;t=60' },
  'X-Total-Capped': { description: '`true` when more items exist than the list counts exactly (10,000 cards matching a search; 1,000 entries of an individual\'s history): `total` is then a lower bound, and `hasMore` says whether the next page holds items', schema: { type: 'string', enum: ['true'] } },
  ETag: { description: 'Version of the document, for `If-None-Match`', schema: { type: 'string' } },
  Link: {
    description: 'RFC 8288: the next page of the list, when there is one (`rel="next"`); absent on the last page',
    schema: { type: 'string' },
    example: '</api/partner/individual/accounts/64f1c2a9e4b0a1b2c3d4e5f6/cards?page=2&limit=100>; rel="next"',
  },
};

const INFO_DESCRIPTION = `Onboard individual cardholders, issue virtual and physical cards for them and operate those cards,
look up fees and delivery methods. Every path is relative to \`${PARTNER_BASE}\`.

## Authentication
Every operation but the public ones (health check, this document and its page) needs
\`Authorization: Bearer <token>\`: a short-lived JWT you sign with your own P-521 key (ES512). You
make the key pair and give the operator the public key (the partner quickstart, docs/quickstart.md,
walks through it).

<!-- ReDoc-Inject: <security-definitions> -->

## Errors
Every error is an RFC 9457 problem (\`application/problem+json\`) with a machine-readable \`code\`
and the \`requestId\` of the \`X-Request-Id\` header; validation failures (400) list every invalid
field in \`invalidParams\`; problems caused by an upstream system carry \`upstream\` and, when it gave
one, \`upstreamCode\`. Any operation may also answer 500 \`internal_error\`: quote the \`requestId\`.

## Conventions
- Paginated lists take \`page\` (from 1, default 1) and \`limit\` (1 to 100, default 20) and answer
  \`{data, pagination}\` with the Pagination object, newest first; the individual list answers \`{count, data}\`.
- An operation that takes a body needs one, even when every field is optional (send \`{}\`): a
  request without a body, with zero bytes or with only whitespace is 400 \`body_required\` and
  changes nothing.
- Unknown body fields and query parameters are refused (400).
- The creation routes (individual, cards, replace, re-issue) honour an \`Idempotency-Key\` header (24 hours by default).
- Every answer about your cardholders and cards is \`Cache-Control: no-store\`.
- Card numbers and CVVs are only ever returned encrypted under your RSA key (RSA-OAEP-256).

## Events
Every change to your cards and individuals is written as an event in the same database
transaction as the change: \`GET /events\` lists them (30 days), newest first. The \`webhooks\`
section documents each type's payload and the headers of its delivery to your endpoints
(docs/events.md).`;

/** Each event type's envelope component, and what its `webhooks` entry says. */
const WEBHOOK_EVENTS: Record<PartnerEventType, { schema: ResponseSchemaName; summary: string }> = {
  'card.created': { schema: 'EventCardCreated', summary: 'A card was issued, replaced or re-issued' },
  'card.status_changed': { schema: 'EventCardStatusChanged', summary: "A card's status changed" },
  'card.updated': { schema: 'EventCardUpdated', summary: "A card's nickname, emboss name, 3DS phone or limits changed" },
  'individual.created': { schema: 'EventIndividualCreated', summary: 'An individual account was created' },
  'transaction.created': { schema: 'EventTransactionCreated', summary: 'A transaction was recorded on a card' },
  'transaction.updated': { schema: 'EventTransactionUpdated', summary: 'A transaction took a step: cleared, reversed or expired' },
  'token.created': { schema: 'EventTokenCreated', summary: 'A network token of a card was made (a wallet or a merchant tokenized it)' },
  'token.updated': { schema: 'EventTokenUpdated', summary: "A token's status, card or device changed" },
  'token.verification_code': { schema: 'EventTokenVerificationCode', summary: 'A one-time code for you to deliver to the cardholder' },
};

/** The headers of a webhook delivery (docs/webhooks.md), as the receiver's parameters. */
const WEBHOOK_HEADERS: Json[] = [
  { name: 'Partner-Gateway-Event-Id', in: 'header', required: true, description: "The event's `id`: the same on every attempt, so a receiver can drop repeats", schema: { type: 'string', pattern: EVENT_ID.source } },
  { name: 'Partner-Gateway-Event-Type', in: 'header', required: true, description: "The event's `type`", schema: { type: 'string', enum: [...PARTNER_EVENT_TYPES] } },
  {
    name: 'Partner-Gateway-Signature',
    in: 'header',
    required: true,
    description: '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes.',
    schema: { type: 'string', pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' },
  },
];

/** The OpenAPI 3.1 `webhooks` section: one entry per event type, its envelope as the request body. */
function webhooksSection(examples: Record<ResponseSchemaName, unknown>): OpenApiDocument['webhooks'] {
  const webhooks: OpenApiDocument['webhooks'] = {};
  for (const type of PARTNER_EVENT_TYPES) {
    const { schema, summary } = WEBHOOK_EVENTS[type];
    webhooks[type] = {
      post: {
        operationId: `event-${type.replace(/[._]/g, '-')}`,
        summary,
        description: `The \`${type}\` event, POSTed to every enabled endpoint subscribed to it, and listed by \`GET /events\` with the same bytes. docs/events.md says when it is written.`,
        tags: ['Events'],
        security: [],
        parameters: WEBHOOK_HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', schema), example: examples[schema] } } },
        responses: { '2XX': { description: 'Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days' } },
      },
    };
  }
  return webhooks;
}

/** Deep copy of a schema for the document: named response schemas nested in it become `$ref`s, `$id` goes. */
function documentSchema(schema: unknown, componentOf: Map<unknown, string>, root: unknown = schema): unknown {
  if (Array.isArray(schema)) return schema.map((item) => documentSchema(item, componentOf, root));
  if (schema === null || typeof schema !== 'object') return schema;
  const component = componentOf.get(schema);
  if (component && schema !== root) return { $ref: `#/components/schemas/${component}` };
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    // $id would change the base URI that `#/components/...` references resolve against (JSON Schema 2020-12).
    if (key === '$id') continue;
    copy[key] = documentSchema(value, componentOf, root);
  }
  return copy;
}

const ref = (kind: 'schemas' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** The security scheme, with the token rules of the configured es512-jwt steps. */
function securityScheme(routes: Route[]): Json {
  const skews = [...new Set(routes.filter((r) => r.jwt).map((r) => r.jwt!.clockSkewSeconds))].sort((a, b) => a - b);
  const lifetimes = [...new Set(routes.filter((r) => r.jwt).map((r) => r.jwt!.maxLifetimeSeconds))].sort((a, b) => a - b);
  const range = (values: number[]) => (values.length <= 1 ? `${values[0] ?? '?'} s` : `${values[0]} to ${values[values.length - 1]} s depending on the route`);
  return {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: [
      'A compact JWS signed with **ES512** (ECDSA on the P-521 curve, secp521r1, with SHA-512) by one of your registered',
      'P-521 keys. You make the key pair; the operator registers the public key; the private key never leaves you.',
      '',
      '- Header: `alg` exactly `ES512`; optional `kid` (your key id, the RFC 7638 thumbprint by default). `jwk`, `jku`,',
      '  `x5u`, `x5c` and `crit` are refused: keys are registered, never taken from a token.',
      '- Claims, all required: `iss` (the issuer URL registered for you), `sub` (your partner `_id`), `iat` and `exp`',
      '  (Unix seconds, `exp` > `iat`).',
      `- Lifetime: \`exp - iat\` at most ${range(lifetimes)} (60 s recommended). Clock skew tolerated on \`exp\`, \`iat\` and`,
      `  \`nbf\`: ${range(skews)}.`,
      '- Sign a fresh token for each request (or reuse one until shortly before its `exp`).',
      '',
      `A refused token is 401 with \`WWW-Authenticate\` and a problem whose \`code\` says why: ${codesOf(401).join(', ')}.`,
    ].join('\n'),
  };
}

/** The catalog's codes of a status that a partner operation can answer, as markdown code. */
function codesOf(status: number): string[] {
  return Object.entries(ERROR_CATALOG)
    .filter(([code, entry]) => entry.status === status && !NOT_PER_OPERATION.has(code))
    .map(([code]) => `\`${code}\``);
}

/** The problem+json response component of a status. */
function problemResponse(status: number, headersUsed: Set<string>): Json {
  const problem = PROBLEMS[status];
  const codes = codesOf(status);
  const headers: Json = { 'X-Request-Id': ref('headers', 'X-Request-Id') };
  headersUsed.add('X-Request-Id');
  for (const header of problem.headers ?? []) {
    headers[header] = ref('headers', header);
    headersUsed.add(header);
  }
  const content: Json = { schema: ref('schemas', 'Problem') };
  const example = problem.example ?? (Object.keys(ERROR_CATALOG) as ErrorCode[]).find((code) => ERROR_CATALOG[code].status === status);
  if (example) {
    const entry = ERROR_CATALOG[example];
    content.example = {
      type: `${PROBLEM_TYPE_BASE}${example}`,
      title: entry.title,
      status,
      detail: example === 'validation_failed' ? 'The request body is invalid' : entry.title,
      code: example,
      requestId: EXAMPLE_IDS.requestId,
      ...(example === 'validation_failed' ? { invalidParams: [{ name: 'expDate', reason: 'must match pattern "^(0[1-9]|1[0-2])/[0-9]{4}$"' }] } : {}),
      ...problem.extensions,
    };
  }
  return {
    description: `${problem.description}.${codes.length > 0 ? ` Codes: ${codes.join(', ')}.` : ''}`,
    headers,
    content: { 'application/problem+json': content },
  };
}

/** The answer of the route's operation (the catalog's); undefined when the pipeline names none. */
function successOf(route: Route): SuccessAnswer | undefined {
  return route.operation?.entry.doc.answer;
}

/** What the pipeline line says of the operation step: the operation, or the upstream and transform it calls. */
function operationDetail(operation: NonNullable<Route['operation']>): string {
  const ends = operation.entry.ends;
  return ends.kind === 'upstream' ? `${ends.upstream}: ${ends.response}` : operation.name;
}

/** One line for readers and security reviewers: the pipeline's policies and what each is set to. */
function pipelineLine(route: Route): string {
  const detail = (policy: string): string => {
    if (policy === 'ownership' && route.ownership) return `ownership (${route.ownership.checks.join(', ')})`;
    if (policy === 'validate') return `validate (${Object.entries(route.validate).map(([where, name]) => `${where}: ${name}`).join(', ')})`;
    if (policy === POLICY_NAMES.operation && route.operation) return `${policy} (${operationDetail(route.operation)})`;
    return policy;
  };
  return `Pipeline \`${route.pipeline}\`: ${route.policies.map(detail).join(' → ')}.`;
}

/**
 * Builds the OpenAPI 3.1 document of a gateway configuration (read through its route model, the one
 * the boot's rules checked when it is the object they read): every route of its apiEndpoints
 * (method and path), with what its pipeline implies (authentication, ownership, the request
 * schemas of its validate steps, idempotency, upstream calls) and the answer of its terminal step.
 * Request schemas come from `gateway/schemas` (SCHEMAS, the validate policy's), response schemas
 * from `gateway/schemas/responses.ts`; neither is restated here.
 *
 * @example buildOpenApiDocument(YAML.parse(fs.readFileSync('config/gateway.config.yml', 'utf8')))
 */
export function buildOpenApiDocument(gatewayConfig: Json, options: { now?: Date } = {}): OpenApiDocument {
  const routes = routeTable(routeModelOf(gatewayConfig));
  const requestExample = requestExamples(options.now);
  const responseExample = responseExamples(options.now);
  const componentOf = new Map<unknown, string>(Object.entries(RESPONSE_SCHEMAS).map(([name, schema]) => [schema, name]));
  const schemas: Json = {};
  const problemStatuses = new Set<number>();
  const headersUsed = new Set<string>();
  const operationIds = new Map<string, number>();
  const paths: OpenApiDocument['paths'] = {};

  const requestSchema = (name: SchemaName): JsonSchema => SCHEMAS[name];
  const headerRefs = (names: string[]) => {
    const out: Json = {};
    for (const name of names) {
      out[name] = ref('headers', name);
      headersUsed.add(name);
    }
    return out;
  };

  for (const route of routes) {
    const doc: Pick<Operation['doc'], 'summary' | 'description' | 'tag' | 'conflicts' | 'notFound'> = route.operation?.entry.doc ?? {
      summary: route.name.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase()),
      tag: 'Service',
    };
    const upstreamCalling = route.operation !== undefined && route.operation.entry.ends.kind !== 'local';
    const count = (operationIds.get(route.name) ?? 0) + 1;
    operationIds.set(route.name, count);
    const operation: Json = {
      operationId: count === 1 ? route.name : `${route.name}-${route.method}-${count}`,
      summary: doc.summary,
      description: [doc.description, pipelineLine(route)].filter(Boolean).join('\n\n'),
      tags: [doc.tag],
      security: route.jwt ? [{ [SECURITY_SCHEME]: [] }] : [],
      'x-pipeline': route.policies,
    };

    // Parameters: path (ownership format or the params schema), query (the query schema's properties), Idempotency-Key.
    const params: Json[] = [];
    const paramsProperties = route.validate.params ? objectOf(requestSchema(route.validate.params).properties) : undefined;
    const paramsExample = (route.validate.params ? objectOf(requestExample[route.validate.params]) : undefined) ?? {};
    for (const name of route.pathParams) {
      let schema: Json = { type: 'string' };
      let example: unknown = paramsExample[name];
      if (route.ownership?.in === 'path' && route.ownership.param === name && route.ownership.resource !== 'client') {
        const { example: idExample, ...idSchema } = PATH_IDS[route.ownership.resource];
        schema = idSchema;
        example = idExample;
      } else if (paramsProperties?.[name]) {
        schema = objectOf(documentSchema(paramsProperties[name], componentOf)) ?? schema;
      }
      params.push({ name, in: 'path', required: true, description: schema.description, schema, ...(example === undefined ? {} : { example }) });
    }
    if (route.validate.query) {
      const querySchema = requestSchema(route.validate.query);
      const example = objectOf(requestExample[route.validate.query]);
      const required = new Set<unknown>(Array.isArray(querySchema.required) ? querySchema.required : []);
      for (const [name, value] of Object.entries(objectOf(querySchema.properties) ?? {})) {
        const property = objectOf(value) ?? {};
        params.push({
          name,
          in: 'query',
          required: required.has(name),
          ...(property.description ? { description: property.description } : {}),
          schema: documentSchema(property, componentOf),
          ...(example?.[name] === undefined ? {} : { example: example[name] }),
        });
      }
    }
    if (route.idempotency) {
      const hours = route.idempotency.ttlHours;
      params.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: `Makes the request safe to retry for ${hours} hour${hours === 1 ? '' : 's'}: the same key and body replay the first answer (\`Idempotent-Replayed: true\`); the same key with another body is 409 \`idempotency_key_reused\`; while the first request runs, 409 \`idempotency_in_progress\`. 1 to 255 visible ASCII characters, scoped to you.`,
        schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
        example: 'b1c7c0de-6f0a-4d1e-9d3b-2b7e1f0c9a11',
      });
    }
    if (params.length > 0) operation.parameters = params;

    // Body: the validate step's body schema, as a component named like the schema in YAML. Always
    // required, even where every field is optional: the validate step refuses a request without one
    // (400 body_required).
    if (route.validate.body) {
      const name = route.validate.body;
      schemas[name] ??= documentSchema(requestSchema(name), componentOf);
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: ref('schemas', name), example: requestExample[name] } },
      };
    }

    // Responses: the terminal step's success, then every problem the pipeline can answer.
    const responses: Json = {};
    const success = successOf(route);
    if (success) {
      const headers = headerRefs([
        'X-Request-Id',
        ...(success.headers ?? []),
        ...(route.idempotency ? ['Idempotent-Replayed'] : []),
        ...(route.rateLimited ? ['RateLimit-Policy', 'RateLimit'] : []),
      ]);
      let content: Json | undefined;
      if (success.status === 204) {
        content = undefined;
      } else if (success.raw) {
        content = { [success.raw.mediaType]: { schema: success.raw.schema, example: success.raw.example } };
      } else {
        const { schema, array } = success.body!;
        content = {
          'application/json': {
            schema: array ? { type: 'array', items: ref('schemas', schema) } : ref('schemas', schema),
            example: array ? [responseExample[schema as ResponseSchemaName]] : responseExample[schema as ResponseSchemaName],
          },
        };
      }
      responses[String(success.status)] = { description: success.description, headers, ...(content ? { content } : {}) };
    } else {
      responses['200'] = { description: 'Success' };
    }
    const hasBody = route.validate.body !== undefined;
    const statuses = new Set<number>();
    if (route.validate.body || route.validate.query || route.validate.params || route.ownership || route.idempotency) statuses.add(400);
    if (route.jwt) statuses.add(401).add(503);
    if (route.ownership) statuses.add(403).add(404);
    if (doc.notFound) statuses.add(404);
    if (upstreamCalling) statuses.add(404).add(422).add(502).add(504);
    if (route.idempotency || (doc.conflicts?.length ?? 0) > 0 || (upstreamCalling && route.method !== 'get')) statuses.add(409);
    if (hasBody) statuses.add(400).add(413).add(415);
    if (route.rateLimited) statuses.add(429);
    for (const status of [...statuses].sort((a, b) => a - b)) {
      responses[String(status)] = ref('responses', PROBLEMS[status].component);
      problemStatuses.add(status);
    }
    operation.responses = responses;

    paths[route.path] ??= {};
    paths[route.path][route.method] = operation;
  }

  for (const [name, schema] of Object.entries(RESPONSE_SCHEMAS)) schemas[name] = documentSchema(schema, componentOf);
  const problemResponses: Json = {};
  for (const status of [...problemStatuses].sort((a, b) => a - b)) problemResponses[PROBLEMS[status].component] = problemResponse(status, headersUsed);
  const headers: Json = {};
  for (const name of Object.keys(HEADERS)) if (headersUsed.has(name)) headers[name] = HEADERS[name];
  const usedTags = new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags as string[])));

  return {
    openapi: '3.1.0',
    info: {
      title: 'Partner Card-Management API',
      version: API_VERSION,
      description: INFO_DESCRIPTION,
    },
    servers: [{ url: PARTNER_BASE, description: 'This gateway' }],
    tags: TAGS.filter((tag) => usedTags.has(tag.name)).map((tag) => ({ ...tag })),
    paths,
    webhooks: webhooksSection(responseExample),
    components: {
      securitySchemes: { [SECURITY_SCHEME]: securityScheme(routes) },
      schemas,
      responses: problemResponses,
      headers,
    },
  };
}
