import type { PolicySchema } from '../policy';

/** Action params of the idempotency policy. */
export interface IdempotencyParams {
  ttlHours: number;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/idempotency.json',
  type: 'object',
  description:
    'Honours an Idempotency-Key header: the same key and body replay the first response, another body is 409, a concurrent duplicate is 409. Keys are per partner and expire.',
  properties: {
    ttlHours: { type: 'integer', minimum: 1, maximum: 168, default: 24, description: 'How long a key is remembered, in hours.' },
  },
};
