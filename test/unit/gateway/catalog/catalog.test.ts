import Ajv from 'ajv';
import { expect } from 'chai';
import { OPERATION_NAMES, OPERATIONS, PUBLIC_OPERATIONS, type Operation } from '../../../../gateway/catalog';
import { OWNED_BODY_FIELDS } from '../../../../gateway/policy-audit/route-facts';
import { operation } from '../../../../policies/operation/operation';
import upstreamProxy from '../../../../policies/proxy';

const entries = OPERATION_NAMES.map((name) => [name, OPERATIONS[name] as Operation] as const);

describe('unit: the operation catalog (gateway/catalog)', function () {
  it('declares every partner operation once: 86, each at its own method and path', function () {
    expect(entries).to.have.length(86);
    const routes = entries.map(([, o]) => `${o.method} ${o.path}`);
    expect(new Set(routes).size).to.equal(routes.length);
    for (const [name, o] of entries) expect(o.path, name).to.match(/^\/api\/partner\/[a-z0-9/:.-]+$/i);
  });

  it('serves only the simulations in sandbox mode only, each owning its card, transaction or token and writing an audit entry', function () {
    const sandboxOnly = entries.filter(([, o]) => o.sandboxOnly);
    expect(sandboxOnly.map(([name]) => name)).to.deep.equal([
      'simulate-card-transaction',
      'simulate-card-authorization',
      'simulate-transaction-clearing',
      'simulate-transaction-reversal',
      'simulate-transaction-expiry',
      'simulate-transaction-refund',
      'simulate-card-issuer-status',
      'simulate-card-tokenization',
      'simulate-token-verification',
      'simulate-token-authorization',
    ]);
    const resources = { cards: 'card', transactions: 'transaction', tokens: 'token' } as const;
    for (const [name, o] of sandboxOnly) {
      const folder = /^\/api\/partner\/simulate\/(cards|transactions|tokens)\/:id\//.exec(o.path)?.[1] as keyof typeof resources | undefined;
      expect(folder, name).to.be.a('string');
      const resource = resources[folder!];
      expect(o.ownership, name).to.deep.equal([{ resource, param: 'id', in: 'path' }]);
      expect(o.audit, name).to.match(resource === 'token' ? /^token\.simulate\./ : /^card\.simulate\./);
      expect(o.doc.tag, name).to.equal('Sandbox');
    }
  });

  it('marks wallet provisioning sensitive, its answer being the wallet\'s payload, and refuses a card that is not active (docs/tokens.md)', function () {
    for (const name of ['provision-card-apple-pay', 'provision-card-google-pay'] as const) {
      const o: Operation = OPERATIONS[name];
      expect(o.sensitive, name).to.equal(true);
      expect(o.ownership, name).to.deep.equal([{ resource: 'card', param: 'id', in: 'path' }]);
      expect(o.doc.conflicts, name).to.deep.equal(['card_not_active']);
    }
  });

  it('checks the owner of every resource a path names (each :param is an ownership check or a validated param)', function () {
    for (const [name, o] of entries) {
      const params = [...o.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
      if (params.length === 0) continue;
      expect(o.ownership?.some((c) => c.in === 'path' && c.param === params[0]), `${name} owns :${params[0]}`).to.equal(true);
      for (const extra of params.slice(1)) expect(o.schemas?.params, `${name} validates :${extra}`).to.be.a('string');
    }
  });

  it('checks the owner of every resource its body schema names (OWNED_BODY_FIELDS)', function () {
    for (const [name, o] of entries) {
      for (const { field, resource } of OWNED_BODY_FIELDS[o.schemas?.body ?? ''] ?? []) {
        expect(o.ownership, name).to.deep.include({ resource, param: field, in: 'body' });
      }
    }
  });

  it('validates the body of every operation that takes one (DELETE takes none)', function () {
    for (const [name, o] of entries) if (o.method !== 'GET' && o.method !== 'DELETE') expect(o.schemas?.body, name).to.be.a('string');
  });

  it('has only GET public operations, answered by the gateway itself, none sensitive or owned', function () {
    expect([...PUBLIC_OPERATIONS.values()].map((p) => p.name)).to.deep.equal(['health-check', 'openapi-document', 'api-docs']);
    for (const { name } of PUBLIC_OPERATIONS.values()) {
      const o: Operation = OPERATIONS[name];
      expect(o).to.deep.include({ method: 'GET', ends: { kind: 'local' } });
      expect(o.sensitive ?? false, name).to.equal(false);
      expect(o.ownership, name).to.equal(undefined);
    }
  });

  it("gives the proxy params its schema accepts (strictly) for every operation that calls an upstream straight", function () {
    const { $id: _id, ...schema } = upstreamProxy.schema;
    const validate = new Ajv({ allErrors: true, strict: false }).compile({ ...schema, additionalProperties: false });
    const upstreamCalls = entries.filter(([, o]) => o.ends.kind === 'upstream');
    expect(upstreamCalls.map(([name]) => name)).to.include.members(['get-card', 'get-card-cvv', 'get-card-pan', 'check-card-issuing-fee', 'list-delivery-methods']);
    for (const [name, o] of upstreamCalls) {
      const { kind: _kind, ...params } = o.ends as Extract<Operation['ends'], { kind: 'upstream' }>;
      expect(validate({ ...params, ...(o.audit ? { audit: o.audit } : {}), timeoutMs: 5000 }), `${name}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    }
  });

  it('the operation policy refuses, when the pipeline is built, a name the catalog does not have', function () {
    // Refused before it reads a service: none are needed.
    expect(() => operation({ name: 'delete-everything' as never }, { services: undefined as never, gatewayConfig: {} })).to.throw(/"delete-everything" is not in the operation catalog/);
  });
});
