import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { DOCUMENT_SHA256, OPERATION_METHODS, OPERATIONS, WEBHOOK_EVENT_TYPES } from '../../sdk/src';
import { sharedGateway } from '../support/gateway-process';

const SDK = path.resolve(__dirname, '..', '..', '..', 'sdk');

type Json = Record<string, any>;

/** The SDK's generation helpers (sdk/scripts/document.js): the test normalizes as the generator does. */
const documentTools = require(path.join(SDK, 'scripts', 'document.js')) as {
  normalizeDocument(document: Json): Json;
  documentText(document: Json): string;
  documentHash(document: Json): string;
  operationTable(document: Json): Json;
};

/** What differs between the document the SDK was generated from and another: operations, schemas, webhooks. */
function drift(committed: Json, served: Json): string[] {
  const differences: string[] = [];
  const operations = (document: Json) => {
    const out = new Map<string, string>();
    for (const [p, item] of Object.entries<Json>(document.paths ?? {})) for (const [method, op] of Object.entries<Json>(item)) out.set(`${op.operationId ?? '?'} (${method.toUpperCase()} ${p})`, JSON.stringify(op));
    return out;
  };
  const compare = (kind: string, a: Map<string, string>, b: Map<string, string>) => {
    for (const name of b.keys()) if (!a.has(name)) differences.push(`${kind} ${name} is served but not in the SDK`);
    for (const name of a.keys()) if (!b.has(name)) differences.push(`${kind} ${name} is in the SDK but no longer served`);
    for (const [name, value] of a) if (b.has(name) && b.get(name) !== value) differences.push(`${kind} ${name} changed`);
  };
  const entries = (node: Json | undefined) => new Map(Object.entries(node ?? {}).map(([k, v]) => [k, JSON.stringify(v)]));
  compare('operation', operations(committed), operations(served));
  compare('schema', entries(committed.components?.schemas), entries(served.components?.schemas));
  compare('response', entries(committed.components?.responses), entries(served.components?.responses));
  compare('webhook', entries(committed.webhooks), entries(served.webhooks));
  if (differences.length === 0 && documentTools.documentText(committed) !== documentTools.documentText(served)) differences.push('the documents differ (info, servers, security or order)');
  return differences;
}

const REGENERATE = 'regenerate the SDK: `npm run sdk:generate` (after `npm install` in sdk/ once; docs/sdk.md#types)';

describe('sdk: the generated types match the document the gateway serves', function () {
  this.timeout(60_000);
  let served: Json;
  let committed: Json;

  before(async function () {
    const gateway = await sharedGateway();
    const response = await fetch(`${gateway.baseUrl}/api/partner/openapi.json`);
    expect(response.status).to.equal(200);
    served = documentTools.normalizeDocument((await response.json()) as Json);
    committed = JSON.parse(fs.readFileSync(path.join(SDK, 'openapi.json'), 'utf8')) as Json;
  });

  it('sdk/openapi.json is the served document (without examples), and the generated files carry its hash', function () {
    expect(drift(committed, served), REGENERATE).to.deep.equal([]);
    const hash = documentTools.documentHash(served);
    expect(DOCUMENT_SHA256, `src/generated/operations.ts: ${REGENERATE}`).to.equal(hash);
    const api = fs.readFileSync(path.join(SDK, 'src', 'generated', 'api.ts'), 'utf8');
    expect(/^\/\/ Document sha256: ([0-9a-f]{64})$/m.exec(api)?.[1], `src/generated/api.ts: ${REGENERATE}`).to.equal(hash);
  });

  it('the generated types and operation table have every operation and webhook event of the served document, and the client a method for each', function () {
    expect(OPERATIONS, REGENERATE).to.deep.equal(documentTools.operationTable(served));
    expect([...WEBHOOK_EVENT_TYPES]).to.deep.equal(Object.keys(served.webhooks));
    const api = fs.readFileSync(path.join(SDK, 'src', 'generated', 'api.ts'), 'utf8');
    const section = (start: string, end?: string) => api.slice(api.indexOf(start), end ? api.indexOf(end) : undefined);
    const declares = (text: string, name: string) => new RegExp(`^ {4}"?${name.replace(/[.-]/g, '\\$&')}"?: \\{`, 'm').test(text);
    const operations = section('export interface operations {');
    const webhooks = section('export interface webhooks {', 'export interface components {');
    for (const id of Object.keys(documentTools.operationTable(served))) {
      expect(declares(operations, id), `operations["${id}"] in api.ts: ${REGENERATE}`).to.equal(true);
      expect(OPERATION_METHODS, `a client method for ${id}`).to.have.property(id);
    }
    for (const type of Object.keys(served.webhooks)) expect(declares(webhooks, type), `webhooks["${type}"] in api.ts`).to.equal(true);
    const schemas = section('export interface components {', 'export type $defs');
    for (const name of Object.keys(served.components.schemas)) expect(schemas, `schema ${name}`).to.match(new RegExp(`^ {8}"?${name.replace(/[-]/g, '\\-')}"?: `, 'm'));
  });

  it('fails when the gateway serves an operation the SDK was not regenerated for (a catalog operation added), or changes one', function () {
    const added = structuredClone(served);
    added.paths['/cards/{id}/freeze'] = { post: { ...structuredClone(served.paths['/cards/{id}/lock'].post), operationId: 'freeze-card' } };
    expect(drift(committed, added)).to.deep.equal(['operation freeze-card (POST /cards/{id}/freeze) is served but not in the SDK']);
    expect(documentTools.documentHash(added)).to.not.equal(DOCUMENT_SHA256);
    expect(documentTools.operationTable(added)).to.not.deep.equal(OPERATIONS);

    const changed = structuredClone(served);
    changed.components.schemas.Card.properties.cardMask.description = 'changed';
    expect(drift(committed, changed)).to.deep.equal(['schema Card changed']);
    // Examples are not compared: the gateway computes them when it builds the document.
    const withExample = structuredClone(served);
    withExample.components.schemas.Card.example = { cardKey: 'CK1' };
    expect(documentTools.documentHash(documentTools.normalizeDocument(withExample))).to.equal(DOCUMENT_SHA256);
  });
});
