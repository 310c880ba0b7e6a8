import { expect } from 'chai';
import { checkGatewayConfig } from '../../../../gateway/boot/config-guards';
import { contradictionsWithCatalog } from '../../../../gateway/policy-audit';
import { readRouteModel, routeModelOf } from '../../../../gateway/route-model';
import { servedPipelines as servedPipelinesOf } from '../../../../gateway/runtime/served-pipelines';
import { changedConfig as changed, guardContext, shippedConfig, stepOf, SYSTEM_CONFIG, withoutStep, type Yaml } from '../policy-audit/shipped-config';

/** The configuration express-gateway is handed (gateway/runtime/served-pipelines.ts), read through its model. */
function servedPipelines(config: Yaml, sandboxMode: boolean): Yaml {
  return servedPipelinesOf(config, routeModelOf(config), sandboxMode);
}

/** Problems of the whole boot check, as `where: message`. */
function refusals(config: Yaml): string[] {
  return checkGatewayConfig(readRouteModel(config), SYSTEM_CONFIG, guardContext()).map((p) => `${p.where}: ${p.message}`);
}

describe('unit: boot guards refuse a pipeline that contradicts its operation (gateway/catalog)', function () {
  it('finds no contradiction in the shipped config', function () {
    const config = shippedConfig();
    expect(contradictionsWithCatalog(readRouteModel(config))).to.deep.equal([]);
  });

  const cases: { description: string; change: (c: Yaml) => void; refusal: string }[] = [
    {
      description: 'an operation the catalog does not have',
      change: (c) => (stepOf(c, 'me', 'operation').operation = [{ action: { name: 'delete-everything' } }]),
      refusal: 'pipeline "me", operation "delete-everything": is not an operation of the catalog (gateway/catalog)',
    },
    {
      description: 'a pipeline without an operation step',
      change: (c) => withoutStep(c, 'me', 'operation'),
      refusal: 'pipeline "me": has no operation step: every pipeline ends in the operation of the catalog it serves',
    },
    {
      description: 'a step after the operation step',
      change: (c) => c.pipelines.me.policies.push({ 'sensitive-data': [] }),
      refusal: 'pipeline "me": must end in exactly one operation step with one action (it answers: nothing after it runs)',
    },
    {
      description: "an apiEndpoint at another path than its operation's",
      change: (c) => (c.apiEndpoints.me.paths = '/api/partner/whoami'),
      refusal: 'pipeline "me", operation "me": apiEndpoint "me" is GET /api/partner/whoami; the operation is GET /api/partner/me',
    },
    {
      description: "an apiEndpoint with another method than its operation's",
      change: (c) => (c.apiEndpoints['lock-card'].methods = 'POST,PUT'),
      refusal: 'pipeline "lock-card", operation "lock-card": apiEndpoint "lock-card" is POST,PUT /api/partner/cards/:id/lock; the operation is POST /api/partner/cards/:id/lock',
    },
    {
      description: 'a pipeline serving its operation under another apiEndpoint name',
      change: (c) => {
        c.apiEndpoints.whoami = c.apiEndpoints.me;
        delete c.apiEndpoints.me;
        c.pipelines.me.apiEndpoints = ['whoami'];
      },
      refusal: 'pipeline "me", operation "me": serves apiEndpoint "whoami": an operation is served by the apiEndpoint of its name (the operationId)',
    },
    {
      description: 'the individual ownership step checking a card',
      change: (c) => (stepOf(c, 'get-individual', 'ownership').ownership = [{ action: { resource: 'card', param: 'id' } }]),
      refusal: 'pipeline "get-individual", operation "get-individual": checks the owner of the individual named by path parameter id, but no unconditional ownership step does ({ resource: individual, param: id })',
    },
    {
      description: 'the ownership step under a condition',
      change: (c) => (stepOf(c, 'get-card-cvv', 'ownership').ownership[0].condition = { name: 'method', methods: ['POST'] }),
      refusal: 'pipeline "get-card-cvv", operation "get-card-cvv": checks the owner of the card named by path parameter id, but no unconditional ownership step does ({ resource: card, param: id })',
    },
    {
      description: "a fee check not checking the body's clientId",
      change: (c) => (stepOf(c, 'check-card-delivery-fee', 'ownership').ownership = [{ action: { resource: 'card', in: 'body', param: 'cardKey' } }]),
      refusal: 'pipeline "check-card-delivery-fee", operation "check-card-delivery-fee": checks the owner of the client named by body.clientId, but no unconditional ownership step does ({ resource: client, param: clientId, in: body })',
    },
    {
      description: 'another body schema',
      change: (c) => (stepOf(c, 'restrict-card-fraud', 'validate').validate = [{ action: { body: 'card-status-change' } }]),
      refusal: 'pipeline "restrict-card-fraud", operation "restrict-card-fraud": reads the body as card-restrict, but no unconditional validate step checks it ({ body: card-restrict })',
    },
    {
      description: 'no query validation',
      change: (c) => withoutStep(c, 'get-card-pan', 'validate'),
      refusal: 'pipeline "get-card-pan", operation "get-card-pan": reads the query as card-secret-query, but no unconditional validate step checks it ({ query: card-secret-query })',
    },
    {
      description: 'no path parameter validation',
      change: (c) => (stepOf(c, 'set-card-limit', 'validate').validate = [{ action: { body: 'limit-set' } }]),
      refusal: 'pipeline "set-card-limit", operation "set-card-limit": reads the path parameters as limit-params, but no unconditional validate step checks it ({ params: limit-params })',
    },
    {
      description: 'an Idempotency-Key claimed before the body is validated (a request without a body would claim it)',
      change: (c) => {
        const steps = c.pipelines['lock-card'].policies as Yaml[];
        const claim = steps.findIndex((step) => 'idempotency' in step);
        steps.splice(steps.findIndex((step) => 'validate' in step), 0, ...steps.splice(claim, 1));
      },
      refusal: 'pipeline "lock-card", operation "lock-card": claims an Idempotency-Key before its validate step checks the body: a request without a body, or with an invalid one, would claim a key; put the idempotency step after validate',
    },
    {
      description: 'a sensitive operation without sensitive-data',
      change: (c) => withoutStep(c, 'set-card-3ds-answer', 'sensitive-data'),
      refusal: 'pipeline "set-card-3ds-answer", operation "set-card-3ds-answer": returns or carries card data, a PIN or a 3DS answer, but the pipeline runs no unconditional sensitive-data step',
    },
    {
      description: 'a timeout on an operation that does not call an upstream straight',
      change: (c) => (stepOf(c, 'lock-card', 'operation').operation = [{ action: { name: 'lock-card', timeoutMs: 5000 } }]),
      refusal: 'pipeline "lock-card", operation "lock-card": does not call an upstream straight (it ends in an orchestration, whose clients take UPSTREAM_TIMEOUT_MS): timeoutMs does not apply',
    },
  ];
  for (const row of cases) {
    it(`refuses ${row.description}, naming the pipeline and the operation`, function () {
      expect(refusals(changed(row.change))).to.include(row.refusal);
    });
  }

  it('refuses a non-public operation without es512-jwt, whatever the catalog says', function () {
    expect(refusals(changed((c) => withoutStep(c, 'get-card-status', 'es512-jwt')))).to.include(
      'apiEndpoint "get-card-status": route /api/partner/cards/:id/status (pipeline "get-card-status") lacks the es512-jwt policy as its first, unconditional policy'
    );
  });

  it('accepts a replayOnly idempotency step before validate (it claims nothing), as replace and re-issue run it', function () {
    const steps = (shippedConfig().pipelines['replace-card'].policies as Yaml[]).map((step) => Object.keys(step)[0]);
    expect(steps.indexOf('idempotency')).to.be.below(steps.indexOf('validate'));
    expect(refusals(shippedConfig())).to.deep.equal([]);
  });

  it('accepts steps the entry does not ask for (validating more, no-store on the PIN key)', function () {
    const config = changed((c) => {
      c.pipelines['get-card-status'].policies.splice(3, 0, { 'sensitive-data': [] });
      c.pipelines['get-pin-encryption-key'].policies.splice(2, 0, { validate: [{ action: { query: 'delivery-methods-query' } }] });
    });
    expect(refusals(config)).to.deep.equal([]);
  });
});

describe('unit: outside sandbox mode the sandbox-only pipelines are not mounted (servedPipelines)', function () {
  const sandboxOnly = [
    'simulate-card-transaction',
    'simulate-card-issuer-status',
    'simulate-card-authorization',
    'simulate-transaction-clearing',
    'simulate-transaction-reversal',
    'simulate-transaction-expiry',
    'simulate-transaction-refund',
    'simulate-card-tokenization',
    'simulate-token-verification',
    'simulate-token-authorization',
  ];

  it('mounts every pipeline in sandbox mode (the same object)', function () {
    const config = shippedConfig();
    expect(servedPipelines(config, true)).to.equal(config);
  });

  it('leaves out the pipelines ending in a sandbox-only operation, with their apiEndpoints, and nothing else', function () {
    const config = shippedConfig();
    const served = servedPipelines(config, false);
    expect(Object.keys(served.pipelines)).to.deep.equal(Object.keys(config.pipelines).filter((name) => !sandboxOnly.includes(name)));
    expect(Object.keys(served.apiEndpoints)).to.deep.equal(Object.keys(config.apiEndpoints).filter((name) => !sandboxOnly.includes(name)));
    expect(config.pipelines, 'the checked config is not changed').to.include.keys(sandboxOnly);
    const model = routeModelOf(served);
    expect([...model.pipelines.keys()], 'its route model, remembered with it, is the model without them').to.deep.equal(Object.keys(served.pipelines));
    expect([...model.apiEndpoints.keys()]).to.deep.equal(Object.keys(served.apiEndpoints));
  });

  it('decides by the operation a pipeline ends in, not by its name or path', function () {
    const config = changed((c) => {
      // A renamed simulation pipeline on another path is still left out ...
      c.pipelines['renamed'] = c.pipelines['simulate-card-transaction'];
      delete c.pipelines['simulate-card-transaction'];
      // ... and a pipeline named like one, ending in another operation, is kept.
      c.pipelines['simulate-card-issuer-status'] = c.pipelines['me'];
    });
    const served = servedPipelines(config, false);
    expect(served.pipelines).to.not.have.key('renamed');
    expect(served.pipelines).to.have.property('simulate-card-issuer-status');
    expect(served.apiEndpoints, 'an apiEndpoint another kept pipeline serves stays').to.have.property('me');
  });
});
