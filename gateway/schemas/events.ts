import { CURSOR_PATTERN } from '../db/cursor';
import { PARTNER_EVENT_TYPES } from '../outbox/partner-events';
import type { JsonSchema } from './common';

/** Query of the event log (`GET /events`): an optional type, the cursor of the page before, the page size. */
export const eventsQuery = {
  $id: 'https://partner-gateway.dev/schemas/events-query.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: PARTNER_EVENT_TYPES, description: 'Only events of this type' },
    after: { type: 'string', pattern: CURSOR_PATTERN, description: "The `nextCursor` of the previous page: the events older than that page's last" },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' },
  },
} as const satisfies JsonSchema;

const EVENT_TYPES_FIELD = {
  type: 'array',
  minItems: 1,
  maxItems: PARTNER_EVENT_TYPES.length + 1,
  uniqueItems: true,
  items: { type: 'string', enum: [...PARTNER_EVENT_TYPES, '*'] },
  description: 'The event types sent to the endpoint; `*` (the default) is every type, future ones included',
} as const;
const URL_FIELD = { type: 'string', minLength: 1, maxLength: 2048, description: 'Where events are POSTed: https, resolving to public addresses only (in sandbox mode, http and localhost too)' } as const;
const DESCRIPTION_FIELD = { type: 'string', maxLength: 500, description: 'Your note about the endpoint' } as const;

/** Body of `POST /webhooks/endpoints`. */
export const webhookEndpointCreate = {
  $id: 'https://partner-gateway.dev/schemas/webhook-endpoint-create.json',
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url: URL_FIELD, events: EVENT_TYPES_FIELD, description: DESCRIPTION_FIELD },
} as const satisfies JsonSchema;

/** Body of `PATCH /webhooks/endpoints/{id}`: at least one field. */
export const webhookEndpointUpdate = {
  $id: 'https://partner-gateway.dev/schemas/webhook-endpoint-update.json',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url: URL_FIELD,
    events: EVENT_TYPES_FIELD,
    description: DESCRIPTION_FIELD,
    status: { type: 'string', enum: ['enabled', 'disabled'], description: 'A disabled endpoint is sent nothing; events meanwhile are not queued for it' },
  },
} as const satisfies JsonSchema;

/** Query of `GET /webhooks/endpoints/{id}/deliveries`. */
export const webhookDeliveriesQuery = {
  $id: 'https://partner-gateway.dev/schemas/webhook-deliveries-query.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    after: { type: 'string', pattern: CURSOR_PATTERN, description: "The `nextCursor` of the previous page: the attempts older than that page's last" },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' },
  },
} as const satisfies JsonSchema;
