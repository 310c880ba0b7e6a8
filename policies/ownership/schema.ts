import { OWNED_KINDS, OWNED_KIND_NAMES, type OwnedKind } from '../../gateway/ownership';
import type { PolicySchema } from '../policy-schema';

/** Action params of the ownership policy. */
export interface OwnershipParams {
  resource: OwnedKind;
  param: string;
  in?: 'path' | 'body';
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/ownership.json',
  type: 'object',
  description:
    "Checks that the resource named by a path parameter, or by a field of the JSON body, belongs to the authenticated partner (spec section 5): another partner's → 403, unknown → 404, malformed id → 400. Read through the shared ownership LRU. A body field that is absent is not checked (the validate step says which fields are required). Written without params (`- ownership: []`), the step takes those of the operation's catalog entry: one action per resource whose owner it checks.",
  properties: {
    resource: {
      type: 'string',
      enum: OWNED_KIND_NAMES,
      description: `${OWNED_KIND_NAMES.map((kind) => `${kind}: ${OWNED_KINDS[kind].describe}`).join('; ')}.`,
    },
    param: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_]*$', default: 'id', description: 'Name of the path parameter (in: path) or top-level body field (in: body) holding the id.' },
    in: { type: 'string', enum: ['path', 'body'], default: 'path', description: 'Where the id is: a path parameter, or a top-level field of the JSON body (run it after validate).' },
  },
  required: ['resource'],
};
