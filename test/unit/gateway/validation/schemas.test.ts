import { expect } from 'chai';
import { SCHEMAS, type SchemaName } from '../../../../gateway/schemas';
import { bodyAjv, queryAjv, validatorOnFirstUse } from '../../../../gateway/validation/ajv';

// The validate and idempotency policies compile a route's schemas at its first request, not when the
// pipelines are built: a schema Ajv refuses (strict mode, meta-schema) must fail here instead.
describe('unit: gateway/schemas compile', function () {
  for (const name of Object.keys(SCHEMAS) as SchemaName[]) {
    it(`compiles ${name} for bodies and for query strings and paths`, function () {
      for (const ajv of [bodyAjv, queryAjv]) {
        const validate = validatorOnFirstUse(ajv, SCHEMAS[name])();
        expect(validate).to.be.a('function');
        // Compiled once: the same function again, and Ajv's own under the schema's $id.
        expect(validatorOnFirstUse(ajv, SCHEMAS[name])()).to.equal(validate);
        expect(ajv.getSchema(SCHEMAS[name].$id)).to.equal(validate);
      }
    });
  }

  it('throws at the first call when Ajv refuses the schema', function () {
    const broken = { $id: 'https://partner-gateway.dev/schemas/test/broken.json', type: 'object', properties: { a: { type: 'string', maxLenght: 3 } } };
    const validator = validatorOnFirstUse(bodyAjv, broken);
    expect(() => validator()).to.throw(/strict mode: unknown keyword: "maxLenght"/);
  });
});
