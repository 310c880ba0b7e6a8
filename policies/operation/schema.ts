import type { OperationName } from '../../gateway/catalog';
import type { PolicySchema } from '../policy-schema';

/** Action params of the operation policy. */
export interface OperationParams {
  name: OperationName;
  timeoutMs?: number;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/operation.json',
  type: 'object',
  description:
    "Ends the pipeline in an operation of the catalog (gateway/catalog), which says how it ends: a handler of the gateway answering from PostgreSQL, an orchestration calling upstreams through the typed clients, or one upstream call through the proxy. The boot guards refuse a pipeline that contradicts the operation's entry (method, path, ownership, request schemas, sensitive data).",
  properties: {
    name: {
      type: 'string',
      pattern: '^[a-z0-9][a-z0-9-]*$',
      description: 'Name of the operation: a key of the catalog, and the name of the apiEndpoint the pipeline serves (an unknown name is refused at boot).',
    },
    timeoutMs: {
      type: 'integer',
      minimum: 50,
      maximum: 120000,
      description: 'Timeout of the upstream call, for an operation that calls an upstream straight (default: UPSTREAM_TIMEOUT_MS); refused on any other.',
    },
  },
  required: ['name'],
};
