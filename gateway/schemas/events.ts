import { CURSOR_PATTERN } from '../db/cursor';
import { PARTNER_EVENT_TYPES } from '../outbox/partner-events';
import type { JsonSchema } from './common';

/** Query of the event log (`GET /events`): an optional type, the cursor of the page before, the page size. */
export const eventsQuery: JsonSchema = {
  $id: 'https://partner-gateway.dev/schemas/events-query.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: PARTNER_EVENT_TYPES, description: 'Only events of this type' },
    after: { type: 'string', pattern: CURSOR_PATTERN, description: "The `nextCursor` of the previous page: the events older than that page's last" },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' },
  },
};
