import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { checkGatewayConfig } from '../../../../gateway/boot/config-guards';
import { OPERATIONS } from '../../../../gateway/catalog';
import { impliedParams } from '../../../../gateway/catalog/policy-contracts';
import { readRouteModel } from '../../../../gateway/route-model';
import { withCatalogParams } from '../../../../gateway/runtime/catalog-params';
import type { GatewayConfig } from '../../../../gateway/runtime/gateway-config';
import { parseGatewayYaml } from '../../../../gateway/runtime/gateway-yaml';
import { substituteEnv } from '../../../../gateway/runtime/config-file';
import { changedConfig, guardContext, SHIPPED_CONFIG_FILE, shippedConfig, stepOf, SYSTEM_CONFIG, type Yaml } from '../policy-audit/shipped-config';

/** The shipped file as written (no params filled in), parsed. */
function writtenConfig(): Yaml {
  return parseGatewayYaml(substituteEnv(fs.readFileSync(SHIPPED_CONFIG_FILE, 'utf8'), {}), path.basename(SHIPPED_CONFIG_FILE)) as Yaml;
}

const refusals = (config: Yaml): string[] => checkGatewayConfig(readRouteModel(config), SYSTEM_CONFIG, guardContext()).map((p) => `${p.where}: ${p.message}`);

describe('unit: gateway/runtime/catalog-params (the YAML says the chain, the catalog says the parameters)', function () {
  it('implies one ownership action per check, one validate action with every schema, and sensitive-data without params', function () {
    expect(impliedParams('ownership', OPERATIONS['get-card'])).to.deep.equal([{ resource: 'card', param: 'id' }]);
    expect(impliedParams('ownership', OPERATIONS['check-card-issuing-fee'])).to.deep.equal([
      { resource: 'card', in: 'body', param: 'cardKey' },
      { resource: 'client', in: 'body', param: 'clientId' },
    ]);
    expect(impliedParams('validate', OPERATIONS['set-card-limit'])).to.deep.equal([{ body: 'limit-set', params: 'limit-params' }]);
    expect(impliedParams('sensitive-data', OPERATIONS['get-card-cvv'])).to.deep.equal([{}]);
    expect(impliedParams('ownership', OPERATIONS['list-cards'])).to.equal(undefined);
    expect(impliedParams('validate', OPERATIONS.me)).to.equal(undefined);
    expect(impliedParams('rate-limit', OPERATIONS.me)).to.equal(undefined);
  });

  it('writes the shipped ownership and validate steps without params, every one taking the catalog\'s', function () {
    const written = writtenConfig();
    let bare = 0;
    for (const pipeline of Object.values(written.pipelines as Record<string, Yaml>)) {
      for (const step of pipeline.policies as Yaml[]) {
        for (const policy of ['ownership', 'validate']) if (policy in step && (step[policy] as unknown[]).length === 0) bare += 1;
      }
    }
    expect(bare, 'steps written without params').to.be.greaterThan(60);
    const resolved = withCatalogParams(written as GatewayConfig) as Yaml;
    for (const [name, pipeline] of Object.entries(resolved.pipelines as Record<string, Yaml>)) {
      const operation = OPERATIONS[stepOf(resolved, name, 'operation').operation[0].action.name as keyof typeof OPERATIONS];
      for (const policy of ['ownership', 'validate']) {
        const step = (pipeline.policies as Yaml[]).find((s) => policy in s);
        if (step) expect(step[policy].map((a: Yaml) => a.action), `${name} ${policy}`).to.deep.equal(impliedParams(policy, operation));
      }
    }
    expect(refusals(resolved)).to.deep.equal([]);
  });

  it('leaves the written configuration unchanged (aliased steps are shared), and a configuration without such steps as it is', function () {
    const written = writtenConfig();
    const before = JSON.stringify(written);
    const resolved = withCatalogParams(written as GatewayConfig);
    expect(JSON.stringify(written)).to.equal(before);
    expect(resolved).to.not.equal(written);
    const plain = { pipelines: { me: { apiEndpoints: ['me'], policies: [{ operation: [{ action: { name: 'me' } }] }] } } };
    expect(withCatalogParams(plain)).to.equal(plain);
    expect(withCatalogParams({})).to.deep.equal({});
  });

  it('fills an action listed without params under its condition, and keeps written params as written', function () {
    const config: GatewayConfig = {
      pipelines: {
        'get-card': {
          apiEndpoints: ['get-card'],
          policies: [{ ownership: [{ condition: { name: 'method', methods: ['GET'] } }] }, { validate: [{ action: { query: 'pagination-query' } }] }, { operation: [{ action: { name: 'get-card' } }] }],
        },
      },
    };
    const policies = (withCatalogParams(config).pipelines!['get-card']!.policies as Yaml[]);
    expect(policies[0]).to.deep.equal({ ownership: [{ condition: { name: 'method', methods: ['GET'] }, action: { resource: 'card', param: 'id' } }] });
    expect(policies[1]).to.equal((config.pipelines!['get-card']!.policies as Yaml[])[1]);
  });

  it('accepts written params that agree with the catalog, refuses those that contradict it, and a step without params its operation implies none for', function () {
    const agreeing = changedConfig((c) => (stepOf(c, 'get-card', 'ownership').ownership = [{ action: { resource: 'card', param: 'id' } }]));
    expect(refusals(agreeing)).to.deep.equal([]);
    const contradicting = changedConfig((c) => (stepOf(c, 'get-card', 'ownership').ownership = [{ action: { resource: 'individual', param: 'id' } }]));
    expect(refusals(contradicting)).to.include('pipeline "get-card", operation "get-card": checks the owner of the card named by path parameter id, but no unconditional ownership step does ({ resource: card, param: id })');
    const nothingImplied = withCatalogParams(changedConfig((c) => c.pipelines['list-cards'].policies.splice(2, 0, { ownership: [] })) as GatewayConfig) as Yaml;
    expect(refusals(nothingImplied)).to.include('pipeline "list-cards", operation "list-cards": has an ownership step without params, and the operation implies none (its catalog entry checks no owner): write its params, or remove the step');
    expect(shippedConfig().pipelines['get-card'].policies).to.deep.include({ ownership: [{ action: { resource: 'card', param: 'id' } }] });
  });
});
