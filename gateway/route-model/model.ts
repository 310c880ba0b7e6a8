/**
 * The one typed reading of `gateway.config.yml` (express-gateway's format, as operators edit it):
 * its apiEndpoints, pipelines, routes and steps. The boot's rules and the policy audit
 * (gateway/policy-audit) and the OpenAPI route table (gateway/openapi) read this model, never the
 * parsed YAML: express-gateway's aliases (`apiEndpoint`/`apiEndpoints`, `policy`/`policies`,
 * `path`/`paths`) and its ways of writing methods are read here, and only here.
 *
 * The model is read once per configuration: at boot and for each hot-reload candidate, after
 * express-gateway's schema accepted the YAML (`routeModelOf` remembers it per parsed object).
 */

/**
 * The matcher a route's path is mounted with: path-to-regexp 0.1's signature, as express 4 calls it
 * for a mounted route. The runtime supplies express-gateway's own copy (gateway/runtime/mount-paths.ts),
 * so that whoever matches a path (the compiled dispatch, the policy audit) matches it as express-gateway does.
 */
export type PathToRegexp = (path: string | RegExp, keys: unknown[], options: { sensitive: boolean; strict: boolean; end: boolean }) => RegExp;

/** Action params as written in the YAML: unknown values, narrowed where they are read. */
export type Params = Readonly<Record<string, unknown>>;

/** Every HTTP method: no `methods`, `'*'`, `all` (express's `router.all`) or an empty list. */
export const EVERY_METHOD = '*';

/** One of an apiEndpoint's entries (an apiEndpoint is one map or a list of them). */
export interface EndpointEntry {
  /** `host`, or `'*'` (every host) when none is given. */
  host: string;
  /** `hostRegex`, when given (express-gateway then ignores `host`). */
  hostRegex?: string;
  /** `paths` (or its alias `path`), as a list; empty when neither is given (express-gateway mounts `*`). */
  paths: readonly string[];
  /** `pathRegex`, when given (express-gateway then mounts it and ignores `paths`). */
  pathRegex?: string;
  /**
   * Upper-case methods, each once, in the order written; `['*']` ({@link EVERY_METHOD}) when the
   * entry answers every method (no `methods`, `'*'`, `all`, an empty list, or a list naming any of
   * these). A comma-separated string is split as express-gateway splits it.
   */
  methods: readonly string[];
}

/** An apiEndpoint: its name (the operationId) and its entries. */
export interface ApiEndpoint {
  name: string;
  entries: readonly EndpointEntry[];
  /** Every path of its entries, each once. */
  paths: readonly string[];
  /** Every method of its entries, each once (`['*']` when one entry answers every method). */
  methods: readonly string[];
}

/** A step's condition, and the conditions nested in it (allOf/oneOf `conditions`, not's `condition`). */
export interface Condition {
  /** Its name; undefined when the YAML gives none (the boot refuses it). */
  name: string | undefined;
  /** Its other fields (`paths` of pathExact...), as written. */
  params: Params;
  nested: readonly Condition[];
}

/** One action of a step: its params and its condition. */
export interface Action {
  params: Params;
  condition?: Condition;
  /**
   * True when it runs on every request: no condition (or an empty one, which express-gateway skips)
   * or `always` (express-gateway's schema fills that in).
   */
  unconditional: boolean;
  /** 1-based position among the step's declared actions (`(step 2)` in messages). */
  position: number;
}

/** One entry of a pipeline's `policies`: a policy and its actions (one empty action when none is listed). */
export interface Step {
  policy: string;
  actions: readonly Action[];
  /** How many actions the YAML lists (the numbering of `position`); at least 1. */
  declaredActions: number;
}

/** A pipeline: the apiEndpoints it names (`apiEndpoints` or its alias `apiEndpoint`) and its steps, in order. */
export interface Pipeline {
  name: string;
  apiEndpoints: readonly string[];
  steps: readonly Step[];
}

/**
 * A route: an apiEndpoint and the pipelines naming it, in declaration order. express-gateway mounts
 * the last of them (`pipeline`); the routes are in the apiEndpoints' declaration order, the order
 * in which express-gateway mounts them (the first declared answers when two overlap).
 */
export interface Route {
  endpoint: ApiEndpoint;
  /** The pipeline express-gateway mounts for it: the last one naming it; undefined when none does. */
  pipeline: Pipeline | undefined;
  /** Every pipeline naming it, in declaration order. */
  servedBy: readonly Pipeline[];
}

/** Something the YAML holds that the model cannot read as express-gateway would run it (the boot refuses it). */
export interface ShapeProblem {
  where: string;
  message: string;
}

/** A gateway.config.yml, read. */
export interface RouteModel {
  /** By name, in declaration order. */
  apiEndpoints: ReadonlyMap<string, ApiEndpoint>;
  /** By name, in declaration order. */
  pipelines: ReadonlyMap<string, Pipeline>;
  /** One per apiEndpoint, in declaration order. */
  routes: readonly Route[];
  /** The `policies` whitelist. */
  policies: readonly string[];
  /** True when the YAML has an `admin:` section (express-gateway's stock admin API). */
  adminSection: boolean;
  /** True when the YAML has an `http:` or `https:` section (express-gateway's listeners). */
  listenerSection: boolean;
  /** What could not be read (the boot's `config-shape` rule refuses each). */
  problems: readonly ShapeProblem[];
}

type Json = Record<string, unknown>;

function isMap(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The fields of a map (or the items of a list, by index), as `Object.entries` reads them. */
function entriesOf(value: unknown): [string, unknown][] {
  return value !== null && typeof value === 'object' ? Object.entries(value) : [];
}

function asList(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * The one reading of an entry's `methods`, as express-gateway mounts them: none, `'*'` or an empty
 * list is every method (`router.all`); otherwise each name of a list or comma-separated string,
 * trimmed and upper-cased; `all` is express's `router.all`, every method too.
 *
 * @example normalizeMethods('get, POST') // ['GET', 'POST']
 * @example normalizeMethods(['ALL']) // ['*']
 */
export function normalizeMethods(methods: unknown): string[] {
  const names = [
    ...new Set(
      asList(methods)
        .flatMap((m) => String(m).split(','))
        .map((m) => m.trim().toUpperCase())
        .filter((m) => m !== '')
    ),
  ];
  return names.length === 0 || names.some((m) => m === EVERY_METHOD || m === 'ALL') ? [EVERY_METHOD] : names;
}

function readEntry(raw: Json): EndpointEntry {
  // express-gateway: `route.paths = route.paths || route.path`.
  const paths = asList(raw.paths || raw.path).map(String);
  return {
    host: typeof raw.host === 'string' && raw.host !== '' ? raw.host : '*',
    ...(raw.hostRegex !== undefined && raw.hostRegex !== null ? { hostRegex: String(raw.hostRegex) } : {}),
    paths,
    ...(raw.pathRegex !== undefined && raw.pathRegex !== null ? { pathRegex: String(raw.pathRegex) } : {}),
    methods: normalizeMethods(raw.methods),
  };
}

function readCondition(raw: unknown): Condition {
  if (!isMap(raw)) return { name: undefined, params: {}, nested: [] };
  const { name, ...params } = raw;
  const nested = [...asList(raw.conditions), ...asList(raw.condition)].filter(isMap).map(readCondition);
  return { name: typeof name === 'string' ? name : undefined, params: structuredClone(params), nested };
}

function readStep(raw: Json, where: string, problems: ShapeProblem[]): Step {
  const policy = Object.keys(raw)[0]!;
  const declared = asList(raw[policy]);
  const at = `${where}, policy "${policy}"`;
  // express-gateway runs a step listing no action once, with empty params.
  if (declared.length === 0) return { policy, actions: [{ params: {}, unconditional: true, position: 1 }], declaredActions: 1 };
  const actions: Action[] = [];
  declared.forEach((action, index) => {
    const stepAt = declared.length > 1 ? `${at} (step ${index + 1})` : at;
    if (!isMap(action)) {
      problems.push({ where: stepAt, message: 'each step must be a map with action and optional condition' });
      return;
    }
    // `condition:` left empty (null) is kept as a condition without a name (the boot refuses it),
    // though express-gateway would run the step on every request.
    const condition = action.condition !== undefined ? readCondition(action.condition) : undefined;
    actions.push({
      params: isMap(action.action) ? structuredClone(action.action) : {},
      ...(condition ? { condition } : {}),
      unconditional: action.condition === undefined || action.condition === null || condition?.name === 'always',
      position: index + 1,
    });
  });
  return { policy, actions, declaredActions: declared.length };
}

function readPipeline(name: string, raw: Json, problems: ShapeProblem[]): Pipeline {
  const where = `pipeline "${name}"`;
  const steps: Step[] = [];
  // express-gateway: `pipeline.policies || pipeline.policy`, `pipeline.apiEndpoints || pipeline.apiEndpoint`.
  for (const entry of asList(raw.policies || raw.policy)) {
    if (!isMap(entry) || Object.keys(entry).length !== 1) {
      problems.push({ where, message: 'each entry of policies must be a single-key map: - <policy>: [actions]' });
      continue;
    }
    steps.push(readStep(entry, where, problems));
  }
  return { name, apiEndpoints: asList(raw.apiEndpoints || raw.apiEndpoint).map(String), steps };
}

function endpointOf(name: string, entries: EndpointEntry[]): ApiEndpoint {
  const methods = [...new Set(entries.flatMap((e) => e.methods))];
  return {
    name,
    entries,
    paths: [...new Set(entries.flatMap((e) => e.paths))],
    methods: methods.includes(EVERY_METHOD) ? [EVERY_METHOD] : methods,
  };
}

function routesOf(apiEndpoints: ReadonlyMap<string, ApiEndpoint>, pipelines: ReadonlyMap<string, Pipeline>): Route[] {
  const servedBy = new Map<string, Pipeline[]>();
  for (const pipeline of pipelines.values()) {
    for (const name of pipeline.apiEndpoints) servedBy.set(name, [...(servedBy.get(name) ?? []), pipeline]);
  }
  return [...apiEndpoints.values()].map((endpoint) => {
    const servers = servedBy.get(endpoint.name) ?? [];
    return { endpoint, pipeline: servers[servers.length - 1], servedBy: servers };
  });
}

/**
 * Reads a parsed gateway.config.yml (`${VAR}` substituted) into the {@link RouteModel}. Pure; it
 * never throws: what it cannot read is left out and listed in `problems`.
 *
 * @example readRouteModel(readGatewayConfigFile('config/gateway.config.yml')).routes[0].endpoint.name // 'health-check'
 */
export function readRouteModel(gatewayConfig: unknown): RouteModel {
  const config = isMap(gatewayConfig) ? gatewayConfig : {};
  const problems: ShapeProblem[] = [];

  const apiEndpoints = new Map<string, ApiEndpoint>();
  for (const [name, definition] of entriesOf(config.apiEndpoints)) {
    const entries = asList(definition).filter(isMap).map(readEntry);
    apiEndpoints.set(name, endpointOf(name, entries));
  }

  const pipelines = new Map<string, Pipeline>();
  for (const [name, raw] of entriesOf(config.pipelines)) {
    if (!isMap(raw)) {
      problems.push({ where: `pipeline "${name}"`, message: 'must be an object with apiEndpoints and policies' });
      continue;
    }
    pipelines.set(name, readPipeline(name, raw, problems));
  }

  return {
    apiEndpoints,
    pipelines,
    routes: routesOf(apiEndpoints, pipelines),
    policies: asList(config.policies).map(String),
    adminSection: config.admin !== undefined && config.admin !== null,
    listenerSection: config.http !== undefined || config.https !== undefined,
    problems,
  };
}

/**
 * The model without some pipelines, and without the apiEndpoints that only they served (what
 * express-gateway is handed outside sandbox mode: gateway/runtime/served-pipelines.ts).
 */
export function withoutPipelines(model: RouteModel, dropped: ReadonlySet<string>): RouteModel {
  const pipelines = new Map([...model.pipelines].filter(([name]) => !dropped.has(name)));
  const stillServed = new Set([...pipelines.values()].flatMap((p) => p.apiEndpoints));
  const gone = new Set([...model.pipelines.values()].filter((p) => dropped.has(p.name)).flatMap((p) => p.apiEndpoints).filter((name) => !stillServed.has(name)));
  const apiEndpoints = new Map([...model.apiEndpoints].filter(([name]) => !gone.has(name)));
  return { ...model, apiEndpoints, pipelines, routes: routesOf(apiEndpoints, pipelines) };
}

const read = new WeakMap<object, RouteModel>();

/**
 * The model of a parsed configuration object, read at the first call for that object and
 * remembered with it: the boot and each reload read their configuration once, and the OpenAPI
 * document built with its pipelines reads the same model.
 */
export function routeModelOf(gatewayConfig: object): RouteModel {
  let model = read.get(gatewayConfig);
  if (!model) {
    model = readRouteModel(gatewayConfig);
    read.set(gatewayConfig, model);
  }
  return model;
}

/** Remembers `model` as the model of `gatewayConfig` (a configuration derived from one already read). */
export function rememberRouteModel(gatewayConfig: object, model: RouteModel): void {
  read.set(gatewayConfig, model);
}
