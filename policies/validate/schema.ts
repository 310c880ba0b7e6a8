import { SCHEMAS, type SchemaName } from '../../gateway/schemas';
import type { PolicySchema } from '../policy';

/** Action params of the validate policy. */
export interface ValidateParams {
  body?: SchemaName;
  query?: SchemaName;
}

const names = Object.keys(SCHEMAS);

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/validate.json',
  type: 'object',
  description: 'Validates the JSON body and/or the query string against named JSON Schemas (gateway/schemas); 400 lists every invalid field.',
  properties: {
    body: { type: 'string', enum: names, description: 'Schema of the JSON body (unset: the body is not validated).' },
    query: { type: 'string', enum: names, description: 'Schema of the query string (unset: the query is not validated).' },
  },
  anyOf: [{ required: ['body'] }, { required: ['query'] }],
};
