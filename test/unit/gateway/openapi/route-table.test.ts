import { expect } from 'chai';
import { openApiPath, POLICY_NAMES, RATE_LIMIT_POLICY, routeTable } from '../../../../gateway/openapi/route-table';
import { readRouteModel } from '../../../../gateway/route-model';
import es512Jwt from '../../../../policies/es512-jwt';
import idempotency from '../../../../policies/idempotency';
import { OPERATIONS } from '../../../../gateway/catalog';
import operation from '../../../../policies/operation';
import ownership from '../../../../policies/ownership';
import rateLimit from '../../../../policies/rate-limit';
import validate from '../../../../policies/validate';

describe('gateway/openapi/route-table', function () {
  describe('openApiPath', function () {
    const cases: { description: string; routePath: string; path: string; pathParams: string[] }[] = [
      { description: 'a path without parameters', routePath: '/api/partner/me', path: '/me', pathParams: [] },
      { description: 'one parameter', routePath: '/api/partner/cards/:id', path: '/cards/{id}', pathParams: ['id'] },
      { description: 'two parameters and a suffix', routePath: '/api/partner/cards/:id/limits/:limitName/available', path: '/cards/{id}/limits/{limitName}/available', pathParams: ['id', 'limitName'] },
      { description: 'the base path itself', routePath: '/api/partner', path: '/', pathParams: [] },
      { description: 'a dot in a literal segment', routePath: '/api/partner/openapi.json', path: '/openapi.json', pathParams: [] },
    ];
    for (const { description, routePath, path, pathParams } of cases) {
      it(description, function () {
        expect(openApiPath(routePath)).to.deep.equal({ path, pathParams });
      });
    }
  });

  it('names the policies as the plugin registers them', function () {
    expect(POLICY_NAMES).to.deep.equal({
      jwt: es512Jwt.name,
      ownership: ownership.name,
      validate: validate.name,
      idempotency: idempotency.name,
      operation: operation.name,
    });
    expect(RATE_LIMIT_POLICY).to.equal(rateLimit.name);
  });

  describe('routeTable', function () {
    const config = {
      apiEndpoints: {
        'get-card': { paths: '/api/partner/cards/:id', methods: 'GET' },
        'set-limit': { paths: ['/api/partner/cards/:id/limits/:limitName'], methods: ['PUT'] },
        both: [{ paths: '/api/partner/a', methods: 'GET,POST' }, { path: '/api/partner/b', methods: 'DELETE' }],
        orphan: { paths: '/api/partner/orphan', methods: 'GET' },
      },
      pipelines: {
        'get-card': {
          apiEndpoints: ['get-card'],
          policies: [
            { 'es512-jwt': [{ action: { clockSkewSeconds: 10 } }] },
            { ownership: [{ action: { resource: 'card' } }] },
            { operation: [{ action: { name: 'get-card', timeoutMs: 5000 } }] },
          ],
        },
        'set-limit': {
          apiEndpoints: 'set-limit',
          policies: [
            { 'es512-jwt': null },
            { 'rate-limit': [{ action: { limit: 5 } }] },
            { ownership: [{ action: { resource: 'card', param: 'id' } }] },
            { validate: [{ action: { params: 'limit-params' } }, { action: { body: 'limit-set' } }] },
            { idempotency: [{ action: { ttlHours: 1 } }] },
            { operation: [{ action: { name: 'set-card-limit' } }] },
          ],
        },
        both: { apiEndpoints: ['both'], policies: [{ operation: [{ action: { name: 'health-check' } }] }] },
        unknown: { apiEndpoints: ['orphan'], policies: [{ operation: [{ action: { name: 'no-such-operation' } }] }] },
      },
    };

    it('lists one route per path and method, with what its pipeline does', function () {
      const routes = routeTable(readRouteModel(config));
      expect(routes.map((r) => `${r.method} ${r.path} ${r.name}`)).to.deep.equal([
        'get /cards/{id} get-card',
        'put /cards/{id}/limits/{limitName} set-limit',
        'get /a both',
        'post /a both',
        'delete /b both',
        'get /orphan orphan',
      ]);
      const [getCard, setLimit, getA] = routes;
      const orphan = routes.find((r) => r.name === 'orphan')!;
      expect(getCard).to.deep.include({
        pipeline: 'get-card',
        policies: ['es512-jwt', 'ownership', 'operation'],
        jwt: { clockSkewSeconds: 10, maxLifetimeSeconds: 300 },
        ownership: { resource: 'card', param: 'id', in: 'path', checks: ['card'] },
        validate: {},
        rateLimited: false,
        operation: { name: 'get-card', entry: OPERATIONS['get-card'] },
        routePath: '/api/partner/cards/:id',
        pathParams: ['id'],
      });
      expect(setLimit).to.deep.include({
        jwt: { clockSkewSeconds: 30, maxLifetimeSeconds: 300 },
        validate: { params: 'limit-params', body: 'limit-set' },
        idempotency: { ttlHours: 1 },
        rateLimited: true,
        operation: { name: 'set-card-limit', entry: OPERATIONS['set-card-limit'] },
      });
      expect(getCard.idempotency).to.equal(undefined);
      expect(getA.jwt).to.equal(undefined);
      expect(getA.operation).to.deep.equal({ name: 'health-check', entry: OPERATIONS['health-check'] });
      expect(orphan.operation, 'an operation the catalog does not have').to.equal(undefined);
    });

    const unlisted: { description: string; methods: unknown }[] = [
      { description: 'no methods', methods: undefined },
      { description: 'all methods (*)', methods: '*' },
      { description: 'an empty list', methods: [] },
      { description: "express's all", methods: 'all' },
      { description: '* in a list', methods: ['GET', '*'] },
    ];
    for (const { description, methods } of unlisted) {
      it(`refuses an apiEndpoint with ${description}, naming it`, function () {
        const broken = { apiEndpoints: { loose: { paths: '/api/partner/loose', methods } }, pipelines: { loose: { apiEndpoints: ['loose'], policies: [{ 'es512-jwt': [] }] } } };
        expect(() => routeTable(readRouteModel(broken))).to.throw(/apiEndpoint "loose": list its methods/);
      });
    }

    it('refuses an unknown method', function () {
      const broken = { apiEndpoints: { x: { paths: '/api/partner/x', methods: 'FETCH' } }, pipelines: { x: { apiEndpoints: ['x'], policies: [] } } };
      expect(() => routeTable(readRouteModel(broken))).to.throw(/unknown method "fetch"/);
    });
  });
});
