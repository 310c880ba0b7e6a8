import type { RequestHandler } from 'express';
import { LOCAL_HANDLERS } from '../../gateway/handlers';
import type { PolicyDefinition } from '../policy';
import { schema, type LocalHandlerParams } from './schema';

function localHandler(params: LocalHandlerParams, config?: unknown): RequestHandler {
  const factory = LOCAL_HANDLERS[params.handler] as ((pipelineConfig?: unknown) => RequestHandler) | undefined;
  if (!factory) throw new Error(`local-handler: unknown handler "${String(params.handler)}"`);
  // The config being built is passed on: the OpenAPI document describes the routes of the config
  // that serves it, including after a hot reload.
  return factory(config);
}

/** Terminal policy that answers from the gateway itself. */
const definition: PolicyDefinition<LocalHandlerParams> = { name: 'local-handler', schema, policy: localHandler };
export = definition;
