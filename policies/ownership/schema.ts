import type { PolicySchema } from '../policy';

/** Action params of the ownership policy. */
export interface OwnershipParams {
  resource: 'individual' | 'card';
  param: string;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/ownership.json',
  type: 'object',
  description:
    "Checks that the resource named by a path parameter belongs to the authenticated partner (spec section 5): another partner's → 403, unknown → 404, malformed id → 400. Read through the shared ownership LRU.",
  properties: {
    resource: { type: 'string', enum: ['individual', 'card'], description: 'individual: the onboarding _id; card: the cardKey.' },
    param: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_]*$', default: 'id', description: 'Name of the path parameter holding the id.' },
  },
  required: ['resource'],
};
