import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import YAML from 'yaml';
import { ERROR_CATALOG } from '../../../../gateway/errors';
import { API_VERSION, buildOpenApiDocument, SECURITY_SCHEME } from '../../../../gateway/openapi/document';
import { requestExamples, responseExamples } from '../../../../gateway/openapi/examples';
import { OPERATION_NAMES, OPERATIONS, type Operation } from '../../../../gateway/catalog';
import { routeTable } from '../../../../gateway/openapi/route-table';
import { readRouteModel } from '../../../../gateway/route-model';
import { withCatalogParams } from '../../../../gateway/runtime/catalog-params';
import { SCHEMAS, type SchemaName } from '../../../../gateway/schemas';
import { RESPONSE_SCHEMAS, type ResponseSchemaName } from '../../../../gateway/schemas/responses';
import { bodyAjv, queryAjv } from '../../../../gateway/validation/ajv';

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', '..', '..', 'config', 'gateway.config.yml');
const NOW = new Date('2026-11-22T10:00:00Z');

type Json = Record<string, any>;

/** A strict AJV for the response schemas (union types are how OpenAPI 3.1 says "or null"). */
function responseAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv, ['date', 'date-time', 'email', 'uri']);
  return ajv;
}

/** Every operation of the document as [method, path, operation]. */
function operationsOf(document: Json): [string, string, Json][] {
  return Object.entries<Json>(document.paths).flatMap(([p, item]) => Object.entries<Json>(item).map(([method, op]) => [method, p, op] as [string, string, Json]));
}

/** Every value under `node` (objects and arrays), with its JSON pointer. */
function* walk(node: unknown, pointer = ''): Generator<[string, unknown]> {
  yield [pointer, node];
  if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) yield* walk(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  }
}

function resolvePointer(document: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, key) => (node === undefined ? undefined : node[key]), document);
}

describe('gateway/openapi/document', function () {
  // As the gateway reads it: the steps written without params take the catalog's.
  const gatewayConfig = withCatalogParams(YAML.parse(fs.readFileSync(SHIPPED_CONFIG, 'utf8')) as Json) as Json;
  // Read as a JSON tree without narrowing (the document types its members as JSON objects): a wrong path fails the assertion.
  const document: Json = buildOpenApiDocument(gatewayConfig, { now: NOW });
  const routes = routeTable(readRouteModel(gatewayConfig));
  const operations = operationsOf(document);

  it('is an OpenAPI 3.1 document of API version 1.0.0, served under /api/partner', function () {
    expect(document.openapi).to.equal('3.1.0');
    expect(document.info.version).to.equal(API_VERSION).and.to.equal('1.0.0');
    expect(document.servers).to.deep.equal([{ url: '/api/partner', description: 'This gateway' }]);
  });

  it('is the same document for the same configuration and day (generated once, deterministic)', function () {
    expect(JSON.stringify(buildOpenApiDocument(gatewayConfig, { now: NOW }))).to.equal(JSON.stringify(document));
  });

  it('has one operation per route, the apiEndpoint name as its operationId', function () {
    expect(operations.map(([m, p, op]) => `${m} ${p} ${op.operationId}`).sort()).to.deep.equal(routes.map((r) => `${r.method} ${r.path} ${r.name}`).sort());
    expect(new Set(operations.map(([, , op]) => op.operationId)).size).to.equal(operations.length);
  });

  it('documents every operation with the text of its catalog entry (summary, description, tag)', function () {
    const tags = new Set(document.tags.map((t: Json) => t.name));
    for (const [, , op] of operations) {
      const entry: Operation = OPERATIONS[op.operationId as keyof typeof OPERATIONS];
      expect(op.summary, op.operationId).to.equal(entry.doc.summary);
      expect(op.tags, op.operationId).to.deep.equal([entry.doc.tag]);
      if (entry.doc.description) expect(op.description.startsWith(`${entry.doc.description}\n\n`), op.operationId).to.equal(true);
      expect(op.tags).to.have.length(1);
      expect(tags.has(op.tags[0]), `${op.operationId} tag`).to.equal(true);
      expect(op.description, op.operationId).to.include(`Pipeline \`${op.operationId}\``);
    }
  });

  describe('request schemas come from gateway/schemas (the validate policy’s), never restated', function () {
    it('a body schema is the validate step’s schema, only without $id', function () {
      for (const route of routes.filter((r) => r.validate.body)) {
        const name = route.validate.body!;
        const op = document.paths[route.path][route.method];
        expect(op.requestBody.content['application/json'].schema).to.deep.equal({ $ref: `#/components/schemas/${name}` });
        // Required even where every field is optional: the validate step answers none 400 body_required.
        expect(op.requestBody.required, `${op.operationId}: requestBody.required`).to.equal(true);
        expect(op.responses['400'], `${op.operationId}: 400 (body_required)`).to.deep.equal({ $ref: '#/components/responses/BadRequest' });
        const { $id: _id, ...expected } = SCHEMAS[name];
        expect(JSON.parse(JSON.stringify(document.components.schemas[name])), name).to.deep.equal(JSON.parse(JSON.stringify(expected)));
      }
    });

    it('query parameters are the properties of the validate step’s query schema, with its required list', function () {
      for (const route of routes.filter((r) => r.validate.query)) {
        const schema = SCHEMAS[route.validate.query!] as Json;
        const op = document.paths[route.path][route.method];
        const query = (op.parameters as Json[]).filter((p) => p.in === 'query');
        expect(query.map((p) => p.name), route.name).to.deep.equal(Object.keys(schema.properties));
        for (const parameter of query) {
          expect(parameter.schema, `${route.name} ${parameter.name}`).to.deep.equal(JSON.parse(JSON.stringify(schema.properties[parameter.name])));
          expect(parameter.required).to.equal((schema.required ?? []).includes(parameter.name));
        }
      }
    });

    it('path parameters are every :name of the route, typed by ownership or the params schema', function () {
      for (const route of routes) {
        const op = document.paths[route.path][route.method];
        const pathParams = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
        expect(pathParams.map((p) => p.name), route.name).to.deep.equal(route.pathParams);
        for (const p of pathParams) expect(p.required).to.equal(true);
      }
      const limit = document.paths['/cards/{id}/limits/{limitName}'].put.parameters as Json[];
      expect(limit.find((p) => p.name === 'limitName')!.schema).to.deep.equal(JSON.parse(JSON.stringify((SCHEMAS['limit-params'] as Json).properties.limitName)));
      expect(limit.find((p) => p.name === 'id')!.schema.pattern).to.equal('^[A-Za-z0-9_-]{1,64}$');
      expect((document.paths['/individual/accounts/{id}'].get.parameters as Json[])[0].schema.pattern).to.equal('^[0-9a-f]{24}$');
    });
  });

  describe('responses follow the pipeline', function () {
    it('an authenticated operation has the bearer scheme, 401 and 503; a public one has no security', function () {
      for (const route of routes) {
        const op = document.paths[route.path][route.method];
        if (route.jwt) {
          expect(op.security, route.name).to.deep.equal([{ [SECURITY_SCHEME]: [] }]);
          expect(op.responses, route.name).to.include.keys('401', '503');
        } else {
          expect(op.security, route.name).to.deep.equal([]);
          expect(op.responses, route.name).to.not.have.property('401');
        }
      }
      expect(routes.filter((r) => !r.jwt).map((r) => r.name).sort()).to.deep.equal(['api-docs', 'health-check', 'openapi-document']);
    });

    it('validation and ownership imply 400; ownership 403 and 404; a body 413 and 415; idempotency 409 and the header; upstream calls 422, 502, 504', function () {
      for (const route of routes) {
        const op = document.paths[route.path][route.method];
        const statuses = Object.keys(op.responses);
        const has = (status: string, when: boolean) => expect(statuses.includes(status), `${route.name} ${status}`).to.equal(when);
        has('400', Boolean(route.validate.body || route.validate.query || route.validate.params || route.ownership || route.idempotency));
        has('403', Boolean(route.ownership));
        has('413', Boolean(route.validate.body));
        has('415', Boolean(route.validate.body));
        has('429', route.rateLimited);
        const upstream = route.operation !== undefined && route.operation.entry.ends.kind !== 'local';
        has('422', upstream);
        has('502', upstream);
        has('504', upstream);
        if (route.ownership || upstream) has('404', true);
        const idempotencyKey = ((op.parameters ?? []) as Json[]).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
        if (route.idempotency) {
          has('409', true);
          expect(idempotencyKey?.description, route.name).to.include(`for ${route.idempotency.ttlHours} hours`);
        } else {
          expect(idempotencyKey, route.name).to.equal(undefined);
        }
      }
    });

    it('the card status changes take an Idempotency-Key (24 h), as the creations, replace and re-issue do: a retry after a timeout is the same issuer operation (docs/cards.md)', function () {
      const takesKey = (name: string) => {
        const route = routes.find((r) => r.name === name)!;
        const op = document.paths[route.path][route.method];
        const header = ((op.parameters ?? []) as Json[]).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
        return [name, header?.required ?? false, route.idempotency?.ttlHours, Object.keys(op.responses['200']?.headers ?? {}).includes('Idempotent-Replayed')];
      };
      const names = OPERATION_NAMES.filter((name) => (OPERATIONS[name] as Operation).statusChange !== undefined);
      expect(names).to.have.length(10);
      expect(names.map(takesKey)).to.deep.equal(names.map((name) => [name, false, 24, true]));
    });

    it('the success answers: 201 for creations, the documented schema for each', function () {
      const success = (p: string, method: string) => {
        const responses = document.paths[p][method].responses;
        const status = Object.keys(responses).find((s) => s.startsWith('2'))!;
        return { status, schema: responses[status].content?.['application/json']?.schema };
      };
      expect(success('/individual/accounts', 'post')).to.deep.equal({ status: '201', schema: { $ref: '#/components/schemas/IndividualAccount' } });
      expect(success('/individual/accounts/{id}/cards/virtual', 'post')).to.deep.equal({ status: '201', schema: { $ref: '#/components/schemas/Card' } });
      expect(success('/cards/{id}/reissue', 'post').status).to.equal('201');
      expect(success('/cards/{id}/replace', 'post').status).to.equal('200');
      expect(success('/cards/{id}/lock', 'post').schema).to.deep.equal({ $ref: '#/components/schemas/CardStatusResult' });
      expect(success('/individual/accounts/{id}/cards', 'get').schema).to.deep.equal({ type: 'array', items: { $ref: '#/components/schemas/CardListItem' } });
      expect(success('/cards', 'get').schema).to.deep.equal({ $ref: '#/components/schemas/CardPage' });
      expect(document.paths['/health-check'].get.responses['200'].content).to.have.keys('text/plain');
    });

    it('the network-token routes (issue 35): each documented with its answer, the token path id, provisioning without an Idempotency-Key', function () {
      const op = (p: string, method: string) => document.paths[p]?.[method];
      const answer = (p: string, method: string, status: string) => op(p, method)?.responses[status]?.content?.['application/json']?.schema;
      expect(answer('/cards/{id}/wallet-provisioning/apple-pay', 'post', '200')).to.deep.equal({ $ref: '#/components/schemas/ApplePayProvisioning' });
      expect(answer('/cards/{id}/wallet-provisioning/google-pay', 'post', '200')).to.deep.equal({ $ref: '#/components/schemas/GooglePayProvisioning' });
      expect(answer('/cards/{id}/tokens', 'get', '200')).to.deep.equal({ $ref: '#/components/schemas/CardTokens' });
      expect(answer('/tokens', 'get', '200')).to.deep.equal({ $ref: '#/components/schemas/TokenList' });
      for (const p of ['/tokens/{id}', '/tokens/{id}/suspend', '/tokens/{id}/resume', '/tokens/{id}/deactivate', '/simulate/tokens/{id}/verify']) {
        const method = p === '/tokens/{id}' ? 'get' : 'post';
        expect(answer(p, method, '200'), p).to.deep.equal({ $ref: '#/components/schemas/Token' });
        const id = (op(p, method).parameters as Json[]).find((param) => param.in === 'path' && param.name === 'id');
        expect(id?.schema.pattern, p).to.equal('^tok_[0-9a-f]{24}$');
        expect(op(p, method).responses, p).to.include.keys('403', '404');
      }
      expect(answer('/simulate/cards/{id}/tokenizations', 'post', '201')).to.deep.equal({ $ref: '#/components/schemas/Token' });
      expect(answer('/simulate/tokens/{id}/authorizations', 'post', '201')).to.deep.equal({ $ref: '#/components/schemas/Transaction' });
      const headerNames = (p: string, method: string) => ((op(p, method).parameters ?? []) as Json[]).filter((param) => param.in === 'header').map((param) => param.name);
      for (const wallet of ['apple-pay', 'google-pay']) {
        const p = `/cards/{id}/wallet-provisioning/${wallet}`;
        expect(headerNames(p, 'post'), p).to.not.include('Idempotency-Key');
        expect(op(p, 'post').tags).to.deep.equal(['Wallet provisioning']);
        expect(op(p, 'post').responses).to.include.keys('409');
      }
      for (const action of ['suspend', 'resume', 'deactivate']) expect(headerNames(`/tokens/{id}/${action}`, 'post')).to.include('Idempotency-Key');
      expect(document.tags.map((t: Json) => t.name)).to.include.members(['Wallet provisioning', 'Tokens']);
    });

    it('the token events (issue 35) are in the webhooks section, each with its envelope, and in the event list\'s type filter', function () {
      for (const [type, schema] of [
        ['token.created', 'EventTokenCreated'],
        ['token.updated', 'EventTokenUpdated'],
        ['token.verification_code', 'EventTokenVerificationCode'],
      ]) {
        expect(document.webhooks[type]?.post.requestBody.content['application/json'].schema, type).to.deep.equal({ $ref: `#/components/schemas/${schema}` });
      }
      const typeFilter = (document.paths['/events'].get.parameters as Json[]).find((param) => param.name === 'type');
      expect(typeFilter?.schema.enum).to.include.members(['token.created', 'token.updated', 'token.verification_code']);
    });

    it('every 4xx and 5xx is an application/problem+json of the Problem schema', function () {
      for (const [name, response] of Object.entries<Json>(document.components.responses)) {
        expect(response.content, name).to.have.keys('application/problem+json');
        expect(response.content['application/problem+json'].schema).to.deep.equal({ $ref: '#/components/schemas/Problem' });
      }
      for (const [, , op] of operations) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (Number(status) >= 400) expect(response.$ref, `${op.operationId} ${status}`).to.match(/^#\/components\/responses\//);
        }
      }
    });

    it('the Problem schema has code (every catalog code), requestId, invalidParams, upstream and upstreamCode', function () {
      const problem = document.components.schemas.Problem;
      expect(problem.required).to.include.members(['type', 'title', 'status', 'detail', 'code', 'requestId']);
      expect(problem.properties.code.enum).to.deep.equal(Object.keys(ERROR_CATALOG));
      expect(problem.properties).to.include.keys('invalidParams', 'upstream', 'upstreamCode');
      expect(problem.properties.invalidParams.items).to.deep.equal({ $ref: '#/components/schemas/InvalidParam' });
    });
  });

  it('describes the security scheme: HTTP bearer JWT, ES512 on P-521, the claims, lifetime and skew of the configuration', function () {
    const scheme = document.components.securitySchemes[SECURITY_SCHEME];
    expect(scheme).to.include({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    for (const text of ['ES512', 'P-521', '`iss`', '`sub`', '`exp`', '`iat`', 'at most 300 s', 'skew', '30 s']) expect(scheme.description).to.include(text);
    const tuned: Json = buildOpenApiDocument({
      apiEndpoints: { me: { paths: '/api/partner/me', methods: 'GET' } },
      pipelines: { me: { apiEndpoints: ['me'], policies: [{ 'es512-jwt': [{ action: { clockSkewSeconds: 5, maxLifetimeSeconds: 120 } }] }, { operation: [{ action: { name: 'me' } }] }] } },
    });
    expect(tuned.components.securitySchemes[SECURITY_SCHEME].description).to.include('at most 120 s').and.include(': 5 s.');
  });

  it('has no $id (it would rebase the $refs) and every $ref resolves inside the document', function () {
    let refs = 0;
    for (const [pointer, node] of walk(document)) {
      if (!node || typeof node !== 'object' || Array.isArray(node)) continue;
      expect(node, pointer).to.not.have.property('$id');
      const target = (node as Json).$ref;
      if (typeof target === 'string') {
        refs += 1;
        expect(target, pointer).to.match(/^#\//);
        expect(resolvePointer(document, target.slice(1)), `${pointer} → ${target}`).to.not.equal(undefined);
      }
    }
    expect(refs).to.be.greaterThan(100);
  });

  it('nests named response schemas as $refs to their components', function () {
    expect(document.components.schemas.Me.properties.partner).to.deep.equal({ $ref: '#/components/schemas/Partner' });
    expect(document.components.schemas.CardPage.properties.pagination).to.deep.equal({ $ref: '#/components/schemas/Pagination' });
    expect(document.components.schemas.CardPage.properties.data.items).to.deep.equal({ $ref: '#/components/schemas/CardSummary' });
  });

  describe('examples', function () {
    const requests = requestExamples(NOW);
    for (const name of Object.keys(SCHEMAS) as SchemaName[]) {
      it(`the ${name} example passes the gateway's own validation`, function () {
        const schema = SCHEMAS[name];
        const isQueryOrPath = name.endsWith('-query') || name.endsWith('-params');
        const ajv = isQueryOrPath ? queryAjv : bodyAjv;
        const validate = ajv.getSchema(schema.$id) ?? ajv.compile(schema);
        const example = structuredClone(requests[name]);
        expect(validate(example), JSON.stringify(validate.errors)).to.equal(true);
      });
    }

    const responses = responseExamples(NOW);
    const ajv = responseAjv();
    for (const name of Object.keys(RESPONSE_SCHEMAS) as ResponseSchemaName[]) {
      it(`the ${name} example matches its response schema`, function () {
        const validate = ajv.compile(RESPONSE_SCHEMAS[name]);
        expect(validate(responses[name]), JSON.stringify(validate.errors)).to.equal(true);
      });
    }

    it('every operation shows a request example (body, query and path) and a success example', function () {
      for (const [, , op] of operations) {
        for (const parameter of (op.parameters ?? []) as Json[]) {
          if (parameter.$ref) continue;
          if (parameter.in === 'path') expect(parameter, `${op.operationId} ${parameter.name}`).to.have.property('example');
        }
        if (op.requestBody) expect(op.requestBody.content['application/json'], op.operationId).to.have.property('example');
        const status = Object.keys(op.responses).find((s) => s.startsWith('2'))!;
        if (status === '204') {
          expect(op.responses[status], op.operationId).to.not.have.property('content');
          continue;
        }
        const content = Object.values<Json>(op.responses[status].content)[0];
        expect(content, op.operationId).to.have.property('example');
      }
    });
  });
});
