import type { RequestHandler } from 'express';
import { operationNamed, type HandledOperationName } from '../../gateway/catalog';
import type { PolicyContext } from '../policy';
import upstreamProxy from '../proxy';
import type { OperationParams } from './schema';
import type { HandlerServices } from '../../gateway/handlers/services';
import type { HandlerFactory } from '../../gateway/handlers';
import { handlerFactsReader, runWithFacts } from '../../gateway/handlers/context';

/**
 * The operation policy: ends a pipeline in the operation of the catalog it names, as the entry's
 * `ends` says. An upstream call is the proxy's (policies/proxy), set up with the entry's upstream,
 * method, path, query, transform, fixed body fields and audit action, and the step's `timeoutMs`;
 * a local answer or an orchestration is the handler of gateway/handlers, loaded now (when the
 * pipeline is built), not when the plugin registers the policy. The handler gets its typed context
 * (gateway/handlers/context.ts): the facts its entry implies (partner, owned resource, validated
 * body, upstream operation), read off the request here, once per request; one missing is a 500
 * problem and an error log, which the boot guards make unreachable.
 *
 * @param context the gateway's services, which the proxy and the handler are built with, and the
 *   configuration whose pipelines are being built: the OpenAPI document describes it.
 */
export function operation(params: OperationParams, context: PolicyContext<HandlerServices>): RequestHandler {
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
      context
    );
  }
  // Not an upstream ending: the catalog's types make it a handled operation, whose handler is
  // registered against this key, typed by this entry.
  const name = params.name as HandledOperationName;
  const { handlerOf } = require('../../gateway/handlers') as typeof import('../../gateway/handlers');
  const factory = handlerOf(name) as HandlerFactory;
  const handler = factory(context.services, { name, operation: entry, gatewayConfig: context.gatewayConfig });
  return runWithFacts(handler, handlerFactsReader(name, entry));
}
