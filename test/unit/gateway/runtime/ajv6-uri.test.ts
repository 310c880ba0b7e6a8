import path from 'node:path';
import { expect } from 'chai';
import { ajv6UriJsPath, fastUriPath, loadAndCheck } from '../../../../gateway/runtime/express-gateway';

const SHIPPED_CONFIG = path.resolve(__dirname, '..', '..', '..', '..', '..', 'config');

interface UriLibrary {
  parse(uri: string): { fragment?: string };
  serialize(components: object): string;
  resolve(base: string, relative: string): string;
}

/** uri-js itself, required past the stand-in loadAndCheck put in the require cache. */
function realUriJs(): UriLibrary {
  const modulePath = ajv6UriJsPath();
  const standIn = require.cache[modulePath];
  delete require.cache[modulePath];
  try {
    return require(modulePath) as UriLibrary;
  } finally {
    if (standIn) require.cache[modulePath] = standIn;
  }
}

/** Every `$id`/`id` and `$ref` in a schema, with the `$id` it is resolved against. */
function idsAndRefs(schema: unknown, base: string, out: { base: string; value: string; kind: 'id' | 'ref' }[]): void {
  if (Array.isArray(schema)) {
    for (const item of schema) idsAndRefs(item, base, out);
    return;
  }
  if (typeof schema !== 'object' || schema === null) return;
  const node = schema as Record<string, unknown>;
  const id = typeof node.$id === 'string' ? node.$id : undefined;
  if (id !== undefined) out.push({ base, value: id, kind: 'id' });
  if (typeof node.$ref === 'string') out.push({ base: id ?? base, value: node.$ref, kind: 'ref' });
  for (const [key, value] of Object.entries(node)) {
    // enum, const and default hold data, not schemas.
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
    idsAndRefs(value, id ?? base, out);
  }
}

describe("unit: gateway/runtime/express-gateway (fast-uri in place of uri-js for express-gateway's AJV 6)", function () {
  let schemas: { schema: unknown }[];

  before(function () {
    const { runtime } = loadAndCheck({ configDir: SHIPPED_CONFIG, adminHost: '127.0.0.1' });
    // The condition registry registers the conditions' schemas too.
    expect(runtime.guardContext.conditions.size).to.be.greaterThan(0);
    schemas = (require('express-gateway/lib/schemas') as { find(): { schema: unknown }[] }).find();
  });

  it("gives AJV 6 fast-uri (AJV 8's own) when it requires uri-js", function () {
    expect(require.cache[ajv6UriJsPath()]?.exports).to.equal(require(fastUriPath()));
  });

  it('resolves, parses and serializes every $id and $ref of the schemas AJV 6 holds as uri-js does', function () {
    const uriJs = realUriJs();
    const fastUri = require(fastUriPath()) as UriLibrary;
    const metaSchema = require(require.resolve('ajv/lib/refs/json-schema-draft-07.json', { paths: [path.dirname(ajvOfExpressGateway())] })) as unknown;
    const found: { base: string; value: string; kind: 'id' | 'ref' }[] = [];
    for (const { schema } of schemas) idsAndRefs(schema, '', found);
    idsAndRefs(metaSchema, '', found);
    // The models, the system and gateway configuration schemas, the plugin's policy schemas and the conditions', with their references.
    expect(schemas.length).to.be.greaterThan(20);
    expect(found.filter((entry) => entry.kind === 'ref').length).to.be.greaterThan(10);
    for (const { base, value } of found) {
      expect(fastUri.serialize(fastUri.parse(value)), value).to.equal(uriJs.serialize(uriJs.parse(value)));
      expect(fastUri.parse(value).fragment, value).to.equal(uriJs.parse(value).fragment);
      const normalizedBase = base.replace(/#\/?$/, '');
      const normalized = value.replace(/#\/?$/, '');
      expect(fastUri.resolve(normalizedBase, normalized), `${base} + ${value}`).to.equal(uriJs.resolve(normalizedBase, normalized));
    }
  });
});

function ajvOfExpressGateway(): string {
  return require.resolve('ajv', { paths: [path.dirname(require.resolve('express-gateway/package.json'))] });
}
