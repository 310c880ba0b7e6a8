import { IDEMPOTENCY_TTL_HOURS_DEFAULT } from '../../gateway/catalog/policy-contracts';
import { SCHEMAS, type SchemaName } from '../../gateway/schemas';
import type { PolicySchema } from '../policy-schema';

/** Action params of the idempotency policy. */
export interface IdempotencyParams {
  ttlHours: number;
  /** Replay-only step: placed before ownership (see the schema's description). */
  replayOnly?: boolean;
  /** With `replayOnly`: the body schema of the route's validate step. */
  body?: SchemaName;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/idempotency.json',
  type: 'object',
  description:
    'Honours an Idempotency-Key header: the same key and body replay the first response, another body is 409, a concurrent duplicate is 409. Keys are per partner and expire.',
  properties: {
    ttlHours: { type: 'integer', minimum: 1, maximum: 168, default: IDEMPOTENCY_TTL_HOURS_DEFAULT, description: 'How long a key is remembered, in hours.' },
    replayOnly: {
      type: 'boolean',
      default: false,
      description:
        "Only replay: answer the stored first response of the same partner, key, route and request, and let anything else through unchanged (no claim). For a step before ownership on routes whose resource moves (replace, re-issue: the old cardKey is 404 after the first answer); the route's ordinary idempotency step still follows validation.",
    },
    body: {
      type: 'string',
      enum: Object.keys(SCHEMAS),
      description: "With replayOnly: the body schema of the route's validate step, so that the request is compared as that step will have validated it (unset: compared as sent).",
    },
  },
};
