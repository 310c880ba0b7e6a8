import { expect } from 'chai';
import Ajv, { type Options } from 'ajv';
import { withSharedMetaSchema } from '../../../../gateway/validation/shared-meta-schema';

/** What compiling `schema` gives: "ok", or the error's message. */
function outcome(ajv: Ajv, schema: object): string {
  try {
    ajv.compile(schema);
    return 'ok';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('unit: gateway/validation/shared-meta-schema', function () {
  // Schemas the meta-schema refuses (and Ajv's compiler alone would not all refuse), schemas strict
  // mode refuses, and valid ones.
  const schemas: Record<string, object> = {
    'negative minLength': { type: 'string', minLength: -1 },
    'required not an array': { type: 'object', required: 'name' },
    'two problems': { type: 'object', properties: { a: { maxLength: 'x' } }, minProperties: 1.5 },
    'enum not an array': { enum: 'a' },
    'properties not an object': { type: 'object', properties: [] },
    'unknown keyword (strict mode)': { type: 'string', maxLen: 3 },
    'unknown type': { type: 'strin' },
    'valid object': { type: 'object', properties: { a: { type: 'string', minLength: 1 } }, required: ['a'], additionalProperties: false },
    'valid with $schema': { $schema: 'http://json-schema.org/draft-07/schema#', type: 'integer', minimum: 0 },
    'invalid with $schema': { $schema: 'http://json-schema.org/draft-07/schema#', type: 'integer', minimum: 'zero' },
  };
  const optionSets: Options[] = [
    { allErrors: true, strict: false, useDefaults: false },
    { allErrors: true },
    { allErrors: true, useDefaults: true, strict: true, strictRequired: false, coerceTypes: true },
    { allErrors: false },
  ];

  for (const options of optionSets) {
    it(`refuses and accepts the same schemas, with the same messages, as Ajv's own check (${JSON.stringify(options)})`, function () {
      const own = new Ajv(options);
      const shared = withSharedMetaSchema(new Ajv(options));
      for (const [name, schema] of Object.entries(schemas)) {
        // Each instance gets its own copy (Ajv caches a compiled schema by the object).
        expect(outcome(shared, structuredClone(schema)), name).to.equal(outcome(own, structuredClone(schema)));
      }
    });
  }

  it('still refuses an invalid schema (the shared check runs)', function () {
    const ajv = withSharedMetaSchema(new Ajv({ allErrors: true }));
    expect(() => ajv.compile({ type: 'string', minLength: -1 })).to.throw(/^schema is invalid: data\/minLength must be >= 0/);
    expect(ajv.validateSchema({ type: 'object', required: 'x' })).to.equal(false);
    expect(ajv.errors?.[0]?.instancePath).to.equal('/required');
    expect(ajv.validateSchema({ type: 'object', required: ['x'] })).to.equal(true);
  });
});
