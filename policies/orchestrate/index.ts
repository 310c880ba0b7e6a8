import type { RequestHandler } from 'express';
import type { PolicyDefinition } from '../policy';
import { schema, type OrchestrateParams } from './schema';

function orchestrate(params: OrchestrateParams): RequestHandler {
  // Loaded when a pipeline is built (the guards need the operation names only: gateway/handlers/names).
  const { ORCHESTRATIONS } = require('../../gateway/handlers') as typeof import('../../gateway/handlers');
  const factory = ORCHESTRATIONS[params.operation];
  if (!factory) throw new Error(`orchestrate: unknown operation "${String(params.operation)}"`);
  return factory();
}

/** Terminal policy for operations that call upstreams and write PostgreSQL. */
const definition: PolicyDefinition<OrchestrateParams> = { name: 'orchestrate', schema, policy: orchestrate };
export = definition;
