import { LOCAL_HANDLER_NAMES, type LocalHandlerName } from '../../gateway/handlers/names';
import type { PolicySchema } from '../policy';

/** Action params of the local-handler policy. */
export interface LocalHandlerParams {
  handler: LocalHandlerName;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/local-handler.json',
  type: 'object',
  description: 'Ends the pipeline in a handler of the gateway itself (answered from PostgreSQL), not in an upstream.',
  properties: {
    handler: {
      type: 'string',
      enum: [...LOCAL_HANDLER_NAMES],
      description: 'Name of the local handler that answers the request.',
    },
  },
  required: ['handler'],
};
