import type { JsonSchema } from './common';

/** docs/authorization-endpoint.md: the partner's decision endpoint. Bounds as in gateway/authorizations/endpoint-store.ts and migration 017. */
const URL_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description: 'Where authorization requests are POSTed: https, resolving to public addresses only (in sandbox mode, http and localhost too)',
} as const;
const TIMEOUT_FIELD = {
  type: 'integer',
  minimum: 100,
  maximum: 1500,
  description: 'How long the gateway waits for your answer, in ms (100 to 1500; default 1000); past it your defaultDecision applies',
} as const;
const DEFAULT_DECISION_FIELD = {
  type: 'string',
  enum: ['approve', 'decline'],
  description: 'What applies to a purchase when your endpoint does not answer in time, answers an error or an answer of another shape (default decline); never to a tokenization',
} as const;

const REQUEST_TYPES_FIELD = {
  type: 'array',
  minItems: 1,
  maxItems: 2,
  uniqueItems: true,
  items: { type: 'string', enum: ['authorization.request', 'tokenization.request'] },
  description:
    'The requests your endpoint is sent (default ["authorization.request"]): add "tokenization.request" to decide tokenizations of your cards too (docs/tokens.md, "The decision")',
} as const;

/** Body of `POST /authorization-endpoint`. */
export const authorizationEndpointCreate = {
  $id: 'https://partner-gateway.dev/schemas/authorization-endpoint-create.json',
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url: URL_FIELD, timeoutMs: TIMEOUT_FIELD, defaultDecision: DEFAULT_DECISION_FIELD, requestTypes: REQUEST_TYPES_FIELD },
} as const satisfies JsonSchema;

/** Body of `PATCH /authorization-endpoint`: at least one field. */
export const authorizationEndpointUpdate = {
  $id: 'https://partner-gateway.dev/schemas/authorization-endpoint-update.json',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url: URL_FIELD,
    timeoutMs: TIMEOUT_FIELD,
    defaultDecision: DEFAULT_DECISION_FIELD,
    requestTypes: REQUEST_TYPES_FIELD,
    status: { type: 'string', enum: ['enabled', 'disabled'], description: 'A disabled endpoint is not asked: purchases are decided as if you had none' },
  },
} as const satisfies JsonSchema;
