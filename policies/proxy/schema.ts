import type { PolicySchema } from '../policy-schema';

// Declared in the catalog's layer (an operation's entry names its transform); re-exported here for the policy.
import { RESPONSE_TRANSFORMS, type ResponseTransformName } from '../../gateway/catalog/policy-contracts';

export { RESPONSE_TRANSFORMS, type ResponseTransformName };

/** Action params of the proxy policy. */
export interface ProxyParams {
  upstream: 'issuer' | 'processing';
  path: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  query?: string[];
  body?: 'forward' | 'none';
  setBody?: Record<string, string | number | boolean>;
  response: ResponseTransformName;
  timeoutMs?: number;
  audit?: string;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/proxy.json',
  type: 'object',
  description:
    'Ends the pipeline in one call to an upstream (its shared client: keep-alive pool, timeout, retry rule, size cap): the upstream path and method per route, selected query parameters, the JSON body, a named response transform. Timeouts → 504, connection errors → 502, upstream 4xx → a problem with the upstream\'s reason, never the upstream body.',
  properties: {
    upstream: { type: 'string', enum: ['issuer', 'processing'], description: 'Which upstream system to call.' },
    path: {
      type: 'string',
      pattern: '^(/[A-Za-z0-9._~{}-]+)+$',
      description: 'Upstream path; {name} is replaced by the URL-encoded path parameter of that name.',
    },
    method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], description: 'Upstream method (default: the request method).' },
    query: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_]*$' }, default: [], description: 'Query parameters forwarded upstream (default: none).' },
    body: { type: 'string', enum: ['forward', 'none'], default: 'forward', description: 'Forward the (validated) JSON body, or send none.' },
    setBody: { type: 'object', description: 'Fields set over the forwarded body (e.g. a fixed OperationType).' },
    response: { type: 'string', enum: [...RESPONSE_TRANSFORMS], description: 'How the upstream answer becomes the partner response.' },
    timeoutMs: { type: 'integer', minimum: 50, maximum: 120000, description: 'Timeout of the upstream call (default: UPSTREAM_TIMEOUT_MS).' },
    audit: {
      type: 'string',
      pattern: '^[a-z][a-z0-9.-]*$',
      description: 'Operation name of an audit entry written after a successful answer (reads of card data: card.cvv.read, card.pan.read).',
    },
  },
  required: ['upstream', 'path', 'response'],
};
