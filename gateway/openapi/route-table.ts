import { operationNamed, PARTNER_BASE_PATH, type Operation } from '../catalog';
import type { SchemaName } from '../schemas';
import { IDEMPOTENCY_TTL_HOURS_DEFAULT, JWT_PARAM_DEFAULTS } from '../catalog/policy-contracts';
import { POLICY } from '../policy-audit/route-facts';
import { EVERY_METHOD, type Params, type Pipeline, type RouteModel } from '../route-model';
import type { OwnedKind } from '../ownership';

/** Base path of every partner route; the OpenAPI document's server URL. */
export const PARTNER_BASE = PARTNER_BASE_PATH;

/** The policies whose steps shape an operation, by the names the policy audit keeps (one table). */
export const POLICY_NAMES = {
  jwt: POLICY.jwt,
  ownership: POLICY.ownership,
  validate: POLICY.validate,
  idempotency: POLICY.idempotency,
  operation: POLICY.operation,
} as const;

/** The policy that answers 429 when a partner exceeds its rate: a pipeline that runs it gets the 429 problem documented. */
export const RATE_LIMIT_POLICY = POLICY.rateLimit;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** One method and path of the active configuration, and what its pipeline does. */
export interface Route {
  /** The apiEndpoint name: the operationId. */
  name: string;
  /** Lower-case HTTP method. */
  method: HttpMethod;
  /** The configured express path, e.g. `/api/partner/cards/:id`. */
  routePath: string;
  /** The OpenAPI path relative to {@link PARTNER_BASE}, e.g. `/cards/{id}`. */
  path: string;
  /** Names of the path parameters, in order. */
  pathParams: string[];
  /** The pipeline serving the apiEndpoint. */
  pipeline: string;
  /** Policy names of the pipeline, in order. */
  policies: string[];
  /** es512-jwt parameters when the pipeline authenticates (defaults applied). */
  jwt?: { clockSkewSeconds: number; maxLifetimeSeconds: number };
  /** The ownership check, when the pipeline has one (`in: body` for an id named in the body). */
  ownership?: { resource: OwnedKind; param: string; in: 'path' | 'body'; checks: string[] };
  /** Request schemas the validate steps apply. */
  validate: { body?: SchemaName; query?: SchemaName; params?: SchemaName };
  /** How long the pipeline remembers an `Idempotency-Key`, when it honours one. */
  idempotency?: { ttlHours: number };
  /** Whether a rate-limit policy may answer 429. */
  rateLimited: boolean;
  /**
   * The operation the pipeline's `operation` step ends in, with its catalog entry; undefined when
   * the pipeline has no such step or names an operation the catalog does not have.
   */
  operation?: { name: string; entry: Operation };
}

/** A number param, or its default (the boot's rules refuse a param of another type). */
function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

const IDEMPOTENCY_TTL_DEFAULT = IDEMPOTENCY_TTL_HOURS_DEFAULT;

const JWT_DEFAULTS = JWT_PARAM_DEFAULTS;

/** express path → OpenAPI path relative to the base: `/api/partner/cards/:id` → `/cards/{id}`. */
export function openApiPath(routePath: string): { path: string; pathParams: string[] } {
  const pathParams: string[] = [];
  const relative = routePath === PARTNER_BASE ? '/' : routePath.startsWith(`${PARTNER_BASE}/`) ? routePath.slice(PARTNER_BASE.length) : routePath;
  const path = relative.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    pathParams.push(name);
    return `{${name}}`;
  });
  return { path, pathParams };
}

/** The lower-case methods of an apiEndpoint entry (the route model's reading); throws for every method or an unknown one. */
function methodsOf(endpointName: string, methods: readonly string[]): HttpMethod[] {
  if (methods.includes(EVERY_METHOD)) {
    throw new Error(`apiEndpoint "${endpointName}": list its methods explicitly so that the OpenAPI document can describe each operation`);
  }
  const list = methods.map((m) => m.toLowerCase());
  for (const method of list) {
    if (!(HTTP_METHODS as readonly string[]).includes(method)) throw new Error(`apiEndpoint "${endpointName}": unknown method "${method}"`);
  }
  return list as HttpMethod[];
}

function describePipeline(pipeline: Pipeline): Omit<Route, 'name' | 'method' | 'routePath' | 'path' | 'pathParams'> {
  const policies = pipeline.steps.map((step) => step.policy);
  const route: Omit<Route, 'name' | 'method' | 'routePath' | 'path' | 'pathParams'> = {
    pipeline: pipeline.name,
    policies,
    validate: {},
    rateLimited: policies.includes(RATE_LIMIT_POLICY),
  };
  for (const step of pipeline.steps) {
    const actions: Params[] = step.actions.map((a) => a.params);
    const first: Params = actions[0] ?? {};
    switch (step.policy) {
      case POLICY_NAMES.jwt:
        route.jwt = {
          clockSkewSeconds: numberOr(first.clockSkewSeconds, JWT_DEFAULTS.clockSkewSeconds),
          maxLifetimeSeconds: numberOr(first.maxLifetimeSeconds, JWT_DEFAULTS.maxLifetimeSeconds),
        };
        break;
      case POLICY_NAMES.ownership:
        route.ownership = {
          resource: first.resource as NonNullable<Route['ownership']>['resource'],
          param: typeof first.param === 'string' ? first.param : 'id',
          in: first.in === 'body' ? 'body' : 'path',
          checks: actions.map((a) => (a.in === 'body' ? `${String(a.resource)} in body.${typeof a.param === 'string' ? a.param : 'id'}` : String(a.resource))),
        };
        break;
      case POLICY_NAMES.validate:
        // Several validate steps (or actions) add up.
        for (const action of actions) {
          for (const where of ['body', 'query', 'params'] as const) if (action[where]) route.validate[where] = action[where] as SchemaName;
        }
        break;
      case POLICY_NAMES.idempotency:
        // A replay-only step (before ownership) adds nothing: the route's ordinary step documents the header.
        if (first.replayOnly === true) break;
        route.idempotency = { ttlHours: numberOr(first.ttlHours, IDEMPOTENCY_TTL_DEFAULT) };
        break;
      case POLICY_NAMES.operation: {
        const entry = operationNamed(first.name);
        route.operation = entry ? { name: String(first.name), entry } : undefined;
        break;
      }
      default:
        break;
    }
  }
  return route;
}

/**
 * The route table of a configuration's route model: one {@link Route} per apiEndpoint path and
 * method, with what its pipeline does. Like express-gateway, an apiEndpoint served by several
 * pipelines is served by the last one. Throws when an apiEndpoint does not list its methods (`*`,
 * `all` or none): such a route cannot be documented operation by operation.
 *
 * @example routeTable(readRouteModel(YAML.parse(fs.readFileSync('config/gateway.config.yml', 'utf8'))))
 */
export function routeTable(model: RouteModel): Route[] {
  const routes: Route[] = [];
  for (const { endpoint, pipeline: served } of model.routes) {
    if (!served) continue; // express-gateway mounts nothing for it (and the boot refuses it)
    const pipeline = describePipeline(served);
    for (const entry of endpoint.entries) {
      for (const routePath of entry.paths) {
        const { path, pathParams } = openApiPath(routePath);
        for (const method of methodsOf(endpoint.name, entry.methods)) {
          routes.push({ name: endpoint.name, method, routePath, path, pathParams, ...pipeline, validate: { ...pipeline.validate } });
        }
      }
    }
  }
  return routes;
}
