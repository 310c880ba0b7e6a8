import { ORCHESTRATIONS, type OrchestrationName } from '../../gateway/handlers';
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
    operation: { type: 'string', enum: Object.keys(ORCHESTRATIONS), description: 'Name of the orchestrated operation.' },
  },
  required: ['operation'],
};
