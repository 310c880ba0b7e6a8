import { SCHEMAS, type SchemaName } from '../../gateway/schemas';
import type { PolicySchema } from '../policy-schema';

/** Action params of the validate policy. */
export interface ValidateParams {
  body?: SchemaName;
  query?: SchemaName;
  params?: SchemaName;
}

const names = Object.keys(SCHEMAS);

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/validate.json',
  type: 'object',
  description: "Validates the JSON body, the query string and/or the path parameters against named JSON Schemas (gateway/schemas); 400 lists every invalid field. Written without params (`- validate: []`), the step takes the request schemas of the operation's catalog entry.",
  properties: {
    body: { type: 'string', enum: names, description: 'Schema of the JSON body, which the request must then carry: none (no bytes, or only whitespace) is 400 `body_required` (unset: the body is not validated).' },
    query: { type: 'string', enum: names, description: 'Schema of the query string (unset: the query is not validated).' },
    params: { type: 'string', enum: names, description: 'Schema of the path parameters (unset: not validated beyond the ownership policy).' },
  },
  anyOf: [{ required: ['body'] }, { required: ['query'] }, { required: ['params'] }],
};
