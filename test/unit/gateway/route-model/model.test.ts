import { expect } from 'chai';
import { EVERY_METHOD, normalizeMethods, readRouteModel, routeModelOf, withoutPipelines } from '../../../../gateway/route-model';
import { shippedConfig, type Yaml } from '../policy-audit/shipped-config';

describe('unit: gateway/route-model (the one reading of gateway.config.yml)', function () {
  describe('methods, read one way', function () {
    const cases: { description: string; methods: unknown; expected: string[] }[] = [
      { description: 'one method', methods: 'GET', expected: ['GET'] },
      { description: 'lower case, upper-cased', methods: 'post', expected: ['POST'] },
      { description: 'a comma-separated string, trimmed, as express-gateway splits it', methods: 'get, POST ,put', expected: ['GET', 'POST', 'PUT'] },
      { description: 'a list', methods: ['GET', 'head'], expected: ['GET', 'HEAD'] },
      { description: 'a list of comma-separated strings', methods: ['GET,POST', 'DELETE'], expected: ['GET', 'POST', 'DELETE'] },
      { description: 'a method named twice, once', methods: 'GET,get', expected: ['GET'] },
      { description: 'no methods: every method (router.all)', methods: undefined, expected: [EVERY_METHOD] },
      { description: 'null: every method', methods: null, expected: [EVERY_METHOD] },
      { description: "'*': every method", methods: '*', expected: [EVERY_METHOD] },
      { description: "['*']: every method", methods: ['*'], expected: [EVERY_METHOD] },
      { description: "express's all: every method", methods: 'all', expected: [EVERY_METHOD] },
      { description: 'ALL: every method', methods: 'ALL', expected: [EVERY_METHOD] },
      { description: 'a list naming every method beside others: every method', methods: ['GET', 'all'], expected: [EVERY_METHOD] },
      { description: 'an empty list: every method', methods: [], expected: [EVERY_METHOD] },
      { description: 'an empty string: every method', methods: '', expected: [EVERY_METHOD] },
      { description: 'only commas: every method', methods: ' , ', expected: [EVERY_METHOD] },
    ];
    for (const { description, methods, expected } of cases) {
      it(description, function () {
        expect(normalizeMethods(methods)).to.deep.equal(expected);
        const model = readRouteModel({ apiEndpoints: { x: { paths: '/api/partner/x', methods } } });
        expect(model.apiEndpoints.get('x')!.entries[0]!.methods).to.deep.equal(expected);
      });
    }

    it("an apiEndpoint's methods: those of every entry, once; every method when one entry has no list", function () {
      const model = readRouteModel({
        apiEndpoints: {
          two: [{ paths: '/api/partner/a', methods: 'GET' }, { paths: '/api/partner/b', methods: 'GET,POST' }],
          open: [{ paths: '/api/partner/a', methods: 'GET' }, { paths: '/api/partner/b' }],
        },
      });
      expect(model.apiEndpoints.get('two')!.methods).to.deep.equal(['GET', 'POST']);
      expect(model.apiEndpoints.get('open')!.methods).to.deep.equal([EVERY_METHOD]);
    });
  });

  describe("express-gateway's aliases, read here only", function () {
    it('path for paths, apiEndpoint for apiEndpoints, policy for policies', function () {
      const model = readRouteModel({
        apiEndpoints: { one: { path: '/api/partner/one', methods: 'GET' }, many: { paths: ['/api/partner/a', '/api/partner/b'] } },
        pipelines: { p: { apiEndpoint: 'one', policy: [{ operation: [{ action: { name: 'me' } }] }] } },
      });
      expect(model.apiEndpoints.get('one')!.paths).to.deep.equal(['/api/partner/one']);
      expect(model.apiEndpoints.get('many')!.paths).to.deep.equal(['/api/partner/a', '/api/partner/b']);
      const pipeline = model.pipelines.get('p')!;
      expect(pipeline.apiEndpoints).to.deep.equal(['one']);
      expect(pipeline.steps.map((s) => s.policy)).to.deep.equal(['operation']);
      expect(model.routes[0]!.pipeline).to.equal(pipeline);
    });

    it('the plural wins when both are given, as express-gateway reads them (paths || path)', function () {
      const model = readRouteModel({
        apiEndpoints: { x: { paths: '/api/partner/plural', path: '/api/partner/singular' } },
        pipelines: { p: { apiEndpoints: ['x'], apiEndpoint: 'y', policies: [{ a: [] }], policy: [{ b: [] }] } },
      });
      expect(model.apiEndpoints.get('x')!.paths).to.deep.equal(['/api/partner/plural']);
      expect(model.pipelines.get('p')!.apiEndpoints).to.deep.equal(['x']);
      expect(model.pipelines.get('p')!.steps.map((s) => s.policy)).to.deep.equal(['a']);
    });

    it('host, hostRegex and pathRegex as written; every host when none is given', function () {
      const model = readRouteModel({ apiEndpoints: { x: [{ host: 'api.example', pathRegex: '^/api/partner/.*$' }, { hostRegex: '.*\\.example', paths: '/api/partner/x' }, { paths: '/api/partner/y' }] } });
      const [a, b, c] = model.apiEndpoints.get('x')!.entries;
      expect(a).to.deep.include({ host: 'api.example', pathRegex: '^/api/partner/.*$', paths: [] });
      expect(b).to.deep.include({ host: '*', hostRegex: '.*\\.example', paths: ['/api/partner/x'] });
      expect(c).to.deep.include({ host: '*', paths: ['/api/partner/y'] });
      expect(c).to.not.have.any.keys('hostRegex', 'pathRegex');
    });
  });

  describe('declaration order', function () {
    it('apiEndpoints, pipelines and routes keep the order of the YAML; a route is served by the last pipeline naming it', function () {
      const model = readRouteModel({
        apiEndpoints: { zeta: { paths: '/api/partner/z' }, alpha: { paths: '/api/partner/a' }, mid: { paths: '/api/partner/m' }, lone: { paths: '/api/partner/l' } },
        pipelines: {
          second: { apiEndpoints: ['alpha', 'zeta'], policies: [{ x: [] }] },
          first: { apiEndpoints: ['zeta', 'mid'], policies: [{ y: [] }] },
        },
      });
      expect([...model.apiEndpoints.keys()]).to.deep.equal(['zeta', 'alpha', 'mid', 'lone']);
      expect([...model.pipelines.keys()]).to.deep.equal(['second', 'first']);
      expect(model.routes.map((r) => [r.endpoint.name, r.pipeline?.name ?? null, r.servedBy.map((p) => p.name)])).to.deep.equal([
        ['zeta', 'first', ['second', 'first']],
        ['alpha', 'second', ['second']],
        ['mid', 'first', ['first']],
        ['lone', null, []],
      ]);
    });

    it('steps and actions keep their order, with their positions; a step listing no action runs once with empty params', function () {
      const model = readRouteModel({
        pipelines: {
          p: {
            apiEndpoints: ['x'],
            policies: [
              { 'es512-jwt': null },
              { validate: [{ action: { params: 'a' } }, { action: { body: 'b' }, condition: { name: 'method', methods: ['POST'] } }] },
              { operation: { action: { name: 'me' } } },
            ],
          },
        },
      });
      const steps = model.pipelines.get('p')!.steps;
      expect(steps.map((s) => [s.policy, s.declaredActions, s.actions.map((a) => a.position)])).to.deep.equal([
        ['es512-jwt', 1, [1]],
        ['validate', 2, [1, 2]],
        ['operation', 1, [1]],
      ]);
      expect(steps[0]!.actions[0]).to.deep.equal({ params: {}, unconditional: true, position: 1 });
      expect(steps[1]!.actions[1]).to.deep.equal({ params: { body: 'b' }, condition: { name: 'method', params: { methods: ['POST'] }, nested: [] }, unconditional: false, position: 2 });
      expect(steps[2]!.actions[0]!.params).to.deep.equal({ name: 'me' });
    });
  });

  describe('conditions', function () {
    it('always, or none, runs on every request; any other condition does not; nested ones are read', function () {
      const model = readRouteModel({
        pipelines: {
          p: {
            policies: [
              { a: [{ condition: { name: 'always' } }] },
              { b: [{ condition: { name: 'never' } }] },
              { c: [{ condition: { name: 'allOf', conditions: [{ name: 'pathExact', paths: '/x' }, { name: 'not', condition: { name: 'expression', expression: 'true' } }] } }] },
            ],
          },
        },
      });
      const [a, b, c] = model.pipelines.get('p')!.steps.map((s) => s.actions[0]!);
      expect([a!.unconditional, b!.unconditional, c!.unconditional]).to.deep.equal([true, false, false]);
      const names = (cond: { name: string | undefined; nested: readonly any[] }): unknown[] => [cond.name, ...cond.nested.map(names)];
      expect(names(c!.condition!)).to.deep.equal(['allOf', ['pathExact'], ['not', ['expression']]]);
    });

    it('an empty condition is kept without a name (refused by the boot), though it runs on every request', function () {
      const action = readRouteModel({ pipelines: { p: { policies: [{ a: [{ condition: null }] }] } } }).pipelines.get('p')!.steps[0]!.actions[0]!;
      expect(action.condition).to.deep.equal({ name: undefined, params: {}, nested: [] });
      expect(action.unconditional).to.equal(true);
    });
  });

  describe('what cannot be read', function () {
    it('is left out and listed, in the words of the boot', function () {
      const model = readRouteModel({
        apiEndpoints: { x: [{ paths: '/api/partner/x' }, 'not a map'] },
        pipelines: {
          broken: 'not a map',
          p: { apiEndpoints: ['x'], policies: [{ a: [], b: [] }, 'oops', { c: [{ action: {} }, 'bad action'] }] },
        },
      });
      expect(model.apiEndpoints.get('x')!.entries).to.have.length(1);
      expect([...model.pipelines.keys()]).to.deep.equal(['p']);
      expect(model.pipelines.get('p')!.steps.map((s) => [s.policy, s.actions.length, s.declaredActions])).to.deep.equal([['c', 1, 2]]);
      expect(model.problems).to.deep.equal([
        { where: 'pipeline "broken"', message: 'must be an object with apiEndpoints and policies' },
        { where: 'pipeline "p"', message: 'each entry of policies must be a single-key map: - <policy>: [actions]' },
        { where: 'pipeline "p"', message: 'each entry of policies must be a single-key map: - <policy>: [actions]' },
        { where: 'pipeline "p", policy "c" (step 2)', message: 'each step must be a map with action and optional condition' },
      ]);
    });

    it('reads an empty or missing configuration as an empty model', function () {
      for (const config of [{}, null, 'text', { apiEndpoints: null, pipelines: null }]) {
        const model = readRouteModel(config);
        expect([model.apiEndpoints.size, model.pipelines.size, model.routes.length, model.problems.length]).to.deep.equal([0, 0, 0, 0]);
      }
    });

    it('the admin and listener sections and the whitelist', function () {
      expect(readRouteModel({ admin: { port: 1 }, http: { port: 2 }, policies: ['a', 'b'] })).to.deep.include({ adminSection: true, listenerSection: true, policies: ['a', 'b'] });
      expect(readRouteModel({ policies: 'a' })).to.deep.include({ adminSection: false, listenerSection: false, policies: ['a'] });
    });
  });

  it('action params are a copy: changing the YAML object after reading does not change the model', function () {
    const config: Yaml = { pipelines: { p: { policies: [{ a: [{ action: { limit: 1 } }] }] } } };
    const model = readRouteModel(config);
    config.pipelines.p.policies[0].a[0].action.limit = 2;
    expect(model.pipelines.get('p')!.steps[0]!.actions[0]!.params).to.deep.equal({ limit: 1 });
  });

  it('reads the shipped configuration: every apiEndpoint served by the pipeline of its name, nothing unread', function () {
    const model = readRouteModel(shippedConfig());
    expect(model.problems).to.deep.equal([]);
    expect(model.routes.length).to.equal(model.apiEndpoints.size).and.to.be.greaterThan(50);
    for (const route of model.routes) expect(route.pipeline?.name, route.endpoint.name).to.equal(route.endpoint.name);
  });

  it('routeModelOf reads a configuration object once', function () {
    const config = shippedConfig();
    expect(routeModelOf(config)).to.equal(routeModelOf(config));
    expect(routeModelOf(shippedConfig())).to.not.equal(routeModelOf(config));
  });

  it('withoutPipelines drops pipelines and the apiEndpoints only they served', function () {
    const model = readRouteModel({
      apiEndpoints: { a: { paths: '/api/partner/a' }, b: { paths: '/api/partner/b' }, c: { paths: '/api/partner/c' } },
      pipelines: { one: { apiEndpoints: ['a', 'b'], policies: [{ x: [] }] }, two: { apiEndpoints: ['b'], policies: [{ y: [] }] }, three: { apiEndpoints: ['c'], policies: [{ z: [] }] } },
    });
    const left = withoutPipelines(model, new Set(['one']));
    expect([...left.pipelines.keys()]).to.deep.equal(['two', 'three']);
    expect([...left.apiEndpoints.keys()]).to.deep.equal(['b', 'c']);
    expect(left.routes.map((r) => [r.endpoint.name, r.pipeline?.name])).to.deep.equal([
      ['b', 'two'],
      ['c', 'three'],
    ]);
  });
});
