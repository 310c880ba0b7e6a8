import { expect } from 'chai';
import { SCHEMAS } from '../../../../gateway/schemas';
import { bodyAjv, validatorOnFirstUse } from '../../../../gateway/validation/ajv';

/**
 * The decision endpoint's `requestTypes` on `POST` and `PATCH /authorization-endpoint`
 * (docs/authorization-endpoint.md): 1 or 2 distinct of the two request types, nothing else.
 */
describe('unit: the decision endpoint bodies take requestTypes (gateway/schemas/authorization-endpoint.ts)', function () {
  const create = validatorOnFirstUse(bodyAjv, SCHEMAS['authorization-endpoint-create']);
  const update = validatorOnFirstUse(bodyAjv, SCHEMAS['authorization-endpoint-update']);
  const accepted = [['authorization.request'], ['tokenization.request'], ['authorization.request', 'tokenization.request'], ['tokenization.request', 'authorization.request']];
  const refused: unknown[] = [[], ['authentication.request'], ['tokenization.request', 'tokenization.request'], ['authorization.request', 'tokenization.request', 'authorization.request'], 'tokenization.request', null, [1]];

  for (const requestTypes of accepted) {
    it(`accepts ${JSON.stringify(requestTypes)}`, function () {
      expect(create()({ url: 'https://decide.example/d', requestTypes }), 'create').to.equal(true);
      expect(update()({ requestTypes }), 'update').to.equal(true);
    });
  }
  for (const requestTypes of refused) {
    it(`refuses ${JSON.stringify(requestTypes)}`, function () {
      expect(create()({ url: 'https://decide.example/d', requestTypes }), 'create').to.equal(false);
      expect(update()({ requestTypes }), 'update').to.equal(false);
    });
  }
});
