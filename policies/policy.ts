import type { RequestHandler } from 'express';

/**
 * An Express Gateway policy as our plugin registers it: `name`, the JSON Schema of its action
 * params (with `$id`, a description and a default on every property), and the factory that does
 * the set-up once and returns the request-path middleware.
 *
 * express-gateway validates action params with a shared AJV 6 (`useDefaults`, `coerceTypes`) and
 * copies a helper onto every params object, so the schemas here never say
 * `additionalProperties: false`; the boot guard re-checks params strictly (unknown keys refused).
 */
export interface PolicyDefinition<Params = Record<string, unknown>> {
  name: string;
  schema: PolicySchema;
  policy: (params: Params, config?: unknown) => RequestHandler;
}

/** JSON Schema (draft-07 subset) of a policy's action params. */
export interface PolicySchema {
  $id: string;
  type: 'object';
  description: string;
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  [keyword: string]: unknown;
}

/**
 * A policy factory whose implementation module is loaded at its first call (when a pipeline is
 * built), not when the plugin registers the policy: the boot guards read only a policy's name and
 * schema, so a refused configuration exits without loading jose, ioredis
 * and the rest. `load` returns the factory (a `require` of the implementation module).
 *
 * @example policy: loadedOnFirstUse(() => (require('./validate') as typeof import('./validate')).validate)
 */
export function loadedOnFirstUse<Params>(load: () => PolicyDefinition<Params>['policy']): PolicyDefinition<Params>['policy'] {
  return (params, config) => load()(params, config);
}
