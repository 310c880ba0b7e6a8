import type { RequestHandler } from 'express';
import { LOCAL_HANDLERS } from '../../gateway/handlers';
import type { PolicyDefinition } from '../policy';
import { schema, type LocalHandlerParams } from './schema';

function localHandler(params: LocalHandlerParams): RequestHandler {
  const factory = LOCAL_HANDLERS[params.handler];
  if (!factory) throw new Error(`local-handler: unknown handler "${String(params.handler)}"`);
  return factory();
}

/** Terminal policy that answers from the gateway itself. */
const definition: PolicyDefinition<LocalHandlerParams> = { name: 'local-handler', schema, policy: localHandler };
export = definition;
