import { operationNamed } from '../catalog';
import { POLICY } from '../policy-audit/route-facts';
import { rememberRouteModel, withoutPipelines, type RouteModel } from '../route-model';
import type { GatewayConfig } from './gateway-config';

/**
 * The configuration to hand express-gateway's pipeline builder: outside sandbox mode, without the
 * pipelines ending in a sandbox-only operation of the catalog (`sandboxOnly`: the simulations), so
 * their routes do not exist and a call is answered 404 `route_not_found` before any step of theirs
 * (authentication included) runs, as for any path no pipeline serves. Decided by the operation a
 * pipeline ends in (read from the route model), never by its path.
 *
 * Their apiEndpoints go too: express-gateway answers an apiEndpoint no pipeline serves with a
 * plain-text 404 of its own instead of letting the request reach our problem 404. The object
 * returned is the configuration's own when nothing is left out; otherwise a shallow copy, whose
 * route model (the model without them) is remembered with it.
 */
export function servedPipelines(gatewayConfig: GatewayConfig, model: RouteModel, sandboxMode: boolean): GatewayConfig {
  if (sandboxMode) return gatewayConfig;
  const sandboxOnly = new Set(
    [...model.pipelines.values()]
      .filter((pipeline) => pipeline.steps.some((step) => step.policy === POLICY.operation && step.actions.some((a) => operationNamed(a.params.name)?.sandboxOnly)))
      .map((pipeline) => pipeline.name)
  );
  if (sandboxOnly.size === 0) return gatewayConfig;
  const served = withoutPipelines(model, sandboxOnly);
  const apiEndpoints = Object.fromEntries(Object.entries(gatewayConfig.apiEndpoints ?? {}).filter(([name]) => served.apiEndpoints.has(name)));
  const pipelines = Object.fromEntries(Object.entries(gatewayConfig.pipelines ?? {}).filter(([name]) => !sandboxOnly.has(name)));
  const config: GatewayConfig = { ...gatewayConfig, apiEndpoints, pipelines };
  rememberRouteModel(config, served);
  return config;
}
