/**
 * The typed route model of gateway.config.yml (docs/architecture.md, "The route model"): the one
 * reader of express-gateway's configuration format outside gateway/runtime.
 */
export {
  EVERY_METHOD,
  normalizeMethods,
  readRouteModel,
  rememberRouteModel,
  routeModelOf,
  withoutPipelines,
  type Action,
  type ApiEndpoint,
  type Condition,
  type EndpointEntry,
  type Params,
  type PathToRegexp,
  type Pipeline,
  type Route,
  type RouteModel,
  type ShapeProblem,
  type Step,
} from './model';
