import type { RequestHandler } from 'express';
import type { PolicySchema } from './policy-schema';
import type { FactKey } from '../gateway/http/request-facts';

export type { PolicySchema } from './policy-schema';

/**
 * What a policy factory receives beside its action params, when a pipeline is built: the
 * gateway's services (built once by the composition root, the same for every build and reload)
 * and the configuration whose pipelines are being built. The runtime (gateway/runtime) hands it to
 * every policy of our plugin in place of express-gateway's own config object.
 */
export interface PolicyContext<Services = unknown> {
  /** The services this policy declares it needs: a part of the gateway's bundle (GatewayServices, policies/index.ts). */
  services: Services;
  /** The gateway.config.yml being built (a reload's candidate, not necessarily the one serving). */
  gatewayConfig: Record<string, unknown>;
}

/**
 * An Express Gateway policy as our plugin registers it: `name`, the JSON Schema of its action
 * params (with `$id`, a description and a default on every property), and the factory that does
 * the set-up once, from its params and its {@link PolicyContext}, and returns the request-path
 * middleware. Everything a factory needs comes through these two arguments.
 *
 * express-gateway validates action params with a shared AJV 6 (`useDefaults`, `coerceTypes`) and
 * copies a helper onto every params object, so the schemas here never say
 * `additionalProperties: false`; the boot guard re-checks params strictly (unknown keys refused).
 */
export interface PolicyDefinition<Params = Record<string, unknown>, Services = unknown> {
  name: string;
  schema: PolicySchema;
  policy: (params: Params, context: PolicyContext<Services>) => RequestHandler;
  /**
   * The facts its steps establish for the steps after them and the handler (gateway/http/request-facts.ts):
   * each key's `providedBy` is this policy's name (test/unit/gateway/handlers/context.test.ts).
   */
  provides?: readonly FactKey<unknown>[];
}


/**
 * A policy factory whose implementation module is loaded at its first call (when a pipeline is
 * built), not when the plugin registers the policy: the boot guards read only a policy's name and
 * schema, so a refused configuration exits without loading jose, ioredis
 * and the rest. `load` returns the factory (a `require` of the implementation module).
 *
 * @example policy: loadedOnFirstUse(() => (require('./validate') as typeof import('./validate')).validate)
 */
export function loadedOnFirstUse<Params, Services>(load: () => PolicyDefinition<Params, Services>['policy']): PolicyDefinition<Params, Services>['policy'] {
  return (params, context) => load()(params, context);
}
