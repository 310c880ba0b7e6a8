import { ORCHESTRATION_NAMES, type OrchestrationName } from '../../gateway/handlers/names';
import type { PolicySchema } from '../policy';

/** Action params of the orchestrate policy. */
export interface OrchestrateParams {
  operation: OrchestrationName;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/orchestrate.json',
  type: 'object',
  description:
    'Ends the pipeline in an orchestrated handler: it calls the upstreams through the typed clients (timeouts, failure mapping, x-request-id) and keeps PostgreSQL consistent with them.',
  properties: {
    operation: { type: 'string', enum: [...ORCHESTRATION_NAMES], description: 'Name of the orchestrated operation.' },
  },
  required: ['operation'],
};
