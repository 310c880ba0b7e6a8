import type { RequestHandler } from 'express';
import type { PolicyDefinition } from '../policy';
import { schema, type LocalHandlerParams } from './schema';

function localHandler(params: LocalHandlerParams, config?: unknown): RequestHandler {
  // Loaded when a pipeline is built (the guards need the handler names only: gateway/handlers/names).
  const { LOCAL_HANDLERS } = require('../../gateway/handlers') as typeof import('../../gateway/handlers');
  const factory = LOCAL_HANDLERS[params.handler] as ((pipelineConfig?: unknown) => RequestHandler) | undefined;
  if (!factory) throw new Error(`local-handler: unknown handler "${String(params.handler)}"`);
  // The config being built is passed on: the OpenAPI document describes the routes of the config
  // that serves it, including after a hot reload.
  return factory(config);
}

/** Terminal policy that answers from the gateway itself. */
const definition: PolicyDefinition<LocalHandlerParams> = { name: 'local-handler', schema, policy: localHandler };
export = definition;
