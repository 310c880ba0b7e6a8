import type { RequestHandler } from 'express';
import { operationNamed, type HandledOperationName } from '../../gateway/catalog';
import type { PipelineConfig } from '../../gateway/handlers/api-docs';
import upstreamProxy from '../proxy';
import type { OperationParams } from './schema';

/**
 * The operation policy: ends a pipeline in the operation of the catalog it names, as the entry's
 * `ends` says. An upstream call is the proxy's (policies/proxy), set up with the entry's upstream,
 * method, path, query, transform, fixed body fields and audit action, and the step's `timeoutMs`;
 * a local answer or an orchestration is the handler of gateway/handlers, loaded now (when the
 * pipeline is built), not when the plugin registers the policy.
 *
 * @param config the configuration whose pipelines are being built (express-gateway's second
 *   argument to a policy factory), handed to the handler: the OpenAPI document describes it.
 */
export function operation(params: OperationParams, config?: unknown): RequestHandler {
  const entry = operationNamed(params.name);
  if (!entry) throw new Error(`operation: "${String(params.name)}" is not in the operation catalog`);
  const ends = entry.ends;
  if (ends.kind === 'upstream') {
    return upstreamProxy.policy(
      {
        upstream: ends.upstream,
        method: ends.method,
        path: ends.path,
        ...(ends.query ? { query: [...ends.query] } : {}),
        ...(ends.setBody ? { setBody: { ...ends.setBody } } : {}),
        response: ends.response,
        ...(params.timeoutMs === undefined ? {} : { timeoutMs: params.timeoutMs }),
        ...(entry.audit ? { audit: entry.audit } : {}),
      },
      config
    );
  }
  const { HANDLERS } = require('../../gateway/handlers') as typeof import('../../gateway/handlers');
  return HANDLERS[params.name as HandledOperationName](config as PipelineConfig | undefined);
}
