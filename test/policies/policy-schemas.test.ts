import { expect } from 'chai';
import Ajv from 'ajv';
import { POLICIES } from '../../policies';

// The boot guards compile the policy schemas without checking them against the meta-schema again
// (express-gateway's Ajv 6 does when it registers them): Ajv 8's check of the same draft-07
// meta-schema must pass here.
describe('policies: schemas', function () {
  const ajv = new Ajv({ allErrors: true });
  for (const policy of POLICIES) {
    it(`the ${policy.name} schema is a valid draft-07 schema (with unknown params refused, as the guards compile it)`, function () {
      const { $id: _id, ...rest } = policy.schema;
      for (const schema of [policy.schema, { ...rest, additionalProperties: false }]) {
        expect(ajv.validateSchema(schema), ajv.errorsText()).to.equal(true);
      }
    });
  }

  it('refuses a schema the meta-schema refuses (the check above can fail)', function () {
    expect(ajv.validateSchema({ type: 'object', properties: { a: { type: 'string', minLength: -1 } } })).to.equal(false);
  });
});
