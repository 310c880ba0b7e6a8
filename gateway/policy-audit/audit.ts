import net from 'node:net';
import { operationNamed, type Operation } from '../catalog';
import { impliedParams, PARAMS_FROM_CATALOG } from '../catalog/policy-contracts';
import {
  BODY_METHODS,
  PARTNER_BASE_PATH,
  BUILTIN_POLICIES,
  BODY_REWRITING_CONDITION,
  CODE_CONDITION,
  hasPathParameter,
  OWNED_BODY_FIELDS,
  PLUGIN_POLICY_NAMES,
  POLICY,
  PUBLIC_ROUTE_METHODS,
  PUBLIC_ROUTE_PATHS,
  PUBLIC_ROUTES,
  SENSITIVE_PATHS,
  UPSTREAM_CONTRACT_PATHS,
} from './route-facts';
import type { Action, EndpointEntry, Params, PathToRegexp, Pipeline, RouteModel, Step } from '../route-model';
import { finding, isReported, SEVERITIES, type AuditFinding, type AuditRule } from './rules';
import { bootFindings, type BootInput } from './boot-rules';

export { AUDIT_RULES, SEVERITIES, type AuditFinding, type AuditRule, type RuleSpec, type Severity } from './rules';

/** One route (apiEndpoint) and the chain of policies it runs. */
export interface AuditedRoute {
  /** The apiEndpoint's name. */
  name: string;
  /** Upper-case methods; `*` when the apiEndpoint lists none (all methods). */
  methods: string[];
  paths: string[];
  /** The pipeline that serves it (the last one declaring it, as express-gateway mounts it); null if none. */
  pipeline: string | null;
  /** Policy names of that pipeline, in order. */
  policies: string[];
  /** Each step of that pipeline with its effective params (`policies`, one entry per step). */
  steps: AuditedStep[];
  /**
   * True for a public route in its exact public shape, served without a token (PUBLIC_ROUTES): the
   * only routes exempt from es512-jwt.
   */
  public: boolean;
  /**
   * Set for a route whose operation is served in sandbox mode only (the catalog's `sandboxOnly`):
   * `on` in sandbox mode, `off` outside it (its handler answers 404).
   */
  sandbox?: 'on' | 'off';
}

/** One step of a route's pipeline and the params it runs with. */
export interface AuditedStep {
  policy: string;
  actions: AuditedAction[];
}

/** One action of a step: its effective params, and where they come from. */
export interface AuditedAction {
  /** The params the step runs with: as written, or taken from the catalog when the step is written without them. */
  params: Params;
  /** The condition's name, for an action that runs only under one. */
  condition?: string;
  /** True when the params are those the operation's catalog entry implies (written so, or left out and taken from it). */
  fromCatalog?: true;
  /** For an operation step calling an upstream straight without its own `timeoutMs`: the setting its call's timeout comes from. */
  timeoutFrom?: 'UPSTREAM_TIMEOUT_MS';
}

/** What the audit reads: the route model of a configuration (env vars substituted) and the admin listener's settings. */
export interface AuditInput {
  model: RouteModel;
  /**
   * The matcher express-gateway mounts every apiEndpoint path with (the runtime's
   * `mountPathToRegexp`, gateway/runtime/mount-paths.ts), so that a path matches here as it does
   * when served. Handed in: the audit sits below the runtime and imports none of it.
   */
  pathToRegexp: PathToRegexp;
  /** `ADMIN_HOST` of our admin API. */
  adminHost: string;
  /** True when the admin API has a bearer token (ADMIN_TOKEN, or the generated token file). */
  adminTokenConfigured: boolean;
  /** `SANDBOX_MODE`: whether sandbox-only routes are served (shown on their routes; default false). */
  sandboxMode?: boolean;
}

export interface AuditResult {
  routes: AuditedRoute[];
  findings: AuditFinding[];
}

/** The step's actions that run on every request (no condition, or `always`). */
function alwaysRun(step: Step): readonly Action[] {
  return step.actions.filter((a) => a.unconditional);
}

function runs(steps: readonly Step[], policy: string, accept: (params: Params) => boolean = () => true): boolean {
  return steps.some((s) => s.policy === policy && alwaysRun(s).some((a) => accept(a.params)));
}

/** Names of every condition in a (possibly nested: allOf, oneOf, not) condition. */
function conditionNames(condition: Action['condition']): string[] {
  if (!condition) return [];
  return [...(condition.name !== undefined ? [condition.name] : []), ...condition.nested.flatMap(conditionNames)];
}

/**
 * The public paths that a route pattern answers as express-gateway mounts it: case-insensitive,
 * with or without a trailing slash, `:param` and `*` matching; `pathRegex` as a regular
 * expression; no path at all as `*` (every path).
 */
function publicPathsAnswered(pattern: string | RegExp, pathToRegexp: PathToRegexp): string[] {
  let regexp: RegExp;
  try {
    regexp = pathToRegexp(pattern, [], { sensitive: false, strict: false, end: true });
  } catch {
    return []; // express-gateway cannot mount it either: the reload or boot fails there.
  }
  return [...PUBLIC_ROUTE_PATHS].filter((p) => {
    regexp.lastIndex = 0;
    return regexp.test(p);
  });
}

/** The mount patterns of one apiEndpoint entry, as express-gateway builds them. */
function mountPatterns(entry: EndpointEntry): (string | RegExp)[] {
  if (entry.pathRegex !== undefined) {
    try {
      return [new RegExp(entry.pathRegex)];
    } catch {
      return [];
    }
  }
  return entry.paths.length > 0 ? [...entry.paths] : ['*'];
}

/**
 * The public route rule for one public path, in words (the audit's messages, the CLI's report).
 *
 * @example publicShapeText('/api/partner/health-check') // 'GET or HEAD /api/partner/health-check → operation health-check (no rate limit)'
 */
export function publicShapeText(publicPath: string): string {
  const shape = PUBLIC_ROUTES.get(publicPath);
  if (!shape) return `${publicPath} is not a public path`;
  const chain = [...(shape.rateLimited ? [POLICY.rateLimit] : []), `${POLICY.operation} ${shape.operation}`];
  return `GET or HEAD ${publicPath} → ${chain.join(' → ')}${shape.rateLimited ? '' : ' (no rate limit)'}`;
}

/** The whole public route rule (printed by `npm run audit:policies`, documented in docs/policy-audit.md). */
export const PUBLIC_ROUTE_RULE = [
  'Public routes (served without a token) are judged by what they run, not by their path. Only these shapes are public:',
  ...[...PUBLIC_ROUTES.keys()].map((p) => `  ${publicShapeText(p)}`),
  `Each step runs unconditionally, with one action; ${POLICY.jwt} first is allowed (the route is then protected).`,
  "Anything else that answers a public path (another method, policy or operation, a condition, a second path,",
  `or a pattern such as ${PARTNER_BASE_PATH}/:x that also matches one) is CRITICAL public-route-shape; every other`,
  `route needs ${POLICY.jwt} first (CRITICAL jwt-missing), whatever its path.`,
].join('\n');

/**
 * Where a route answers a public path: that path, and how the route differs from its public shape
 * (PUBLIC_ROUTES; an empty list: exactly the shape). Null when the route answers no public path.
 */
function publicShapeOf(entries: readonly EndpointEntry[], servers: readonly Pipeline[], pathToRegexp: PathToRegexp): { path: string; deviations: string[] } | null {
  const answered = new Set<string>();
  const deviations: string[] = [];
  const otherPaths: string[] = [];
  for (const entry of entries) {
    for (const pattern of mountPatterns(entry)) {
      const hits = publicPathsAnswered(pattern, pathToRegexp);
      hits.forEach((p) => answered.add(p));
      const shown = pattern instanceof RegExp ? `pathRegex ${pattern.source}` : `path "${pattern}"`;
      if (hits.length === 0) otherPaths.push(shown);
      else if (pattern instanceof RegExp || !PUBLIC_ROUTE_PATHS.has(pattern)) {
        deviations.push(`${shown} also answers ${hits.join(', ')} (a public path is served only at its exact path)`);
      }
    }
  }
  if (answered.size === 0) return null;
  const publicPath = [...answered][0];
  if (answered.size > 1) deviations.push(`it answers several public paths (${[...answered].join(', ')})`);
  if (otherPaths.length > 0) deviations.push(`it also serves ${otherPaths.join(', ')}`);
  // Served at another path than its own, the route cannot be in any public shape: its chain is not compared.
  const exactPath = deviations.length === 0;

  for (const entry of entries) {
    const { methods } = entry;
    if (methods.includes('*')) deviations.push('it answers every method (no methods listed)');
    const others = methods.filter((m) => m !== '*' && !PUBLIC_ROUTE_METHODS.has(m));
    if (others.length > 0) deviations.push(`it answers ${others.join(', ')}`);
  }

  const shape = PUBLIC_ROUTES.get(publicPath)!;
  const expected = [...(shape.rateLimited ? [POLICY.rateLimit] : []), POLICY.operation];
  for (const { name, steps } of exactPath ? servers : []) {
    const at = servers.length > 1 ? `pipeline "${name}" ` : '';
    const chain = steps[0]?.policy === POLICY.jwt ? steps.slice(1) : steps;
    const policies = chain.map((s) => s.policy);
    if (policies.join(' → ') !== expected.join(' → ')) {
      deviations.push(`${at}runs ${policies.join(' → ') || 'nothing'}${chain !== steps ? ` after ${POLICY.jwt}` : ''} instead of ${expected.join(' → ')}`);
    }
    for (const step of steps) {
      if (step.actions.length !== 1) deviations.push(`${at}its ${step.policy} step has ${step.actions.length} actions`);
      if (!step.actions.every((a) => a.unconditional)) deviations.push(`${at}its ${step.policy} step runs under a condition`);
      if (step.policy === POLICY.operation) {
        const others = step.actions.map((a) => String(a.params.name)).filter((name) => name !== shape.operation);
        if (others.length > 0) deviations.push(`${at}its operation is ${others.map((name) => `"${name}"`).join(', ')}, not "${shape.operation}"`);
      }
    }
  }
  return { path: publicPath, deviations: [...new Set(deviations)] };
}

const PLACEHOLDER = /^\{([A-Za-z][A-Za-z0-9_]*)\}$/;

/**
 * Why an operation's upstream path is not a path of its upstream's contract (UPSTREAM_CONTRACT_PATHS)
 * with route parameters in its `{}` places; undefined when it is one.
 *
 * @example upstreamPathProblem('issuer', '/cards/{id}/pan') // undefined
 */
export function upstreamPathProblem(upstream: unknown, upstreamPath: unknown): string | undefined {
  if (typeof upstreamPath !== 'string') return undefined; // the guard's schema check refuses it
  const contract = UPSTREAM_CONTRACT_PATHS[String(upstream)];
  if (!contract) return `upstream "${String(upstream)}" has no contract (docs/upstreams.md): the path "${upstreamPath}" cannot be checked`;
  const segments = upstreamPath.split('/').slice(1);
  const fits = (template: string) => {
    const fixed = template.split('/').slice(1);
    return (
      upstreamPath.startsWith('/') &&
      fixed.length === segments.length &&
      fixed.every((f, i) => (f.startsWith('{') ? PLACEHOLDER.test(segments[i]) : f === segments[i]))
    );
  };
  if (contract.some(fits)) return undefined;
  const known = new Set(contract.flatMap((t) => t.split('/').filter((f) => f !== '' && !f.startsWith('{'))));
  const literals = segments.filter((seg) => !PLACEHOLDER.test(seg) && !known.has(seg));
  if (literals.length > 0) {
    return `the upstream path "${upstreamPath}" names ${literals.map((l) => `"${l}"`).join(', ')}: neither a fixed segment of the ${String(upstream)} contract (docs/upstreams.md) nor a {route parameter}. An upstream path holds only contract segments and route parameters, never a literal card key or id`;
  }
  return `the upstream path "${upstreamPath}" is not a path of the ${String(upstream)} contract (docs/upstreams.md), with a route parameter in each {} place`;
}

/** `{name}` placeholders of an upstream path. */
function placeholdersOf(upstreamPath: unknown): string[] {
  if (typeof upstreamPath !== 'string') return [];
  return [...upstreamPath.matchAll(/\{([A-Za-z][A-Za-z0-9_]*)\}/g)].map((m) => m[1]);
}

/** `:name` parameters of an express route path. */
function routeParamsOf(routePath: string): Set<string> {
  return new Set([...routePath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
}

/** True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

function describeCondition(steps: readonly Step[], policy: string): string {
  return steps.some((s) => s.policy === policy) ? ` (its ${policy} step runs only under a condition)` : '';
}

/**
 * The one rule set over a route model (`AUDIT_RULES`, docs/policy-audit.md): every route
 * (apiEndpoint) with its pipeline's policy chain, and every finding in two lists: the policy audit's
 * (by severity, as `npm run audit:policies` prints them) and, with the runtime's facts, the boot's
 * own rules (in the order the boot lists them), when `boot` is given. Pure: it reads nothing but its input. A step under
 * a condition other than `always` does not count as run.
 */
export function auditRouteModel(input: AuditInput, boot?: BootInput): AuditResult & { bootFindings: AuditFinding[] } {
  const { model } = input;
  const findings: AuditFinding[] = [];
  const add = (rule: AuditRule, where: string, message: string) => findings.push(finding(rule, where, message));

  // The admin side: our admin API's listener and token, and express-gateway's stock admin API.
  if (model.adminSection) {
    add('stock-admin-api', 'gateway.config.yml admin', "express-gateway's admin API has no authentication and can run code: remove the admin section (use ADMIN_HOST/ADMIN_PORT/ADMIN_TOKEN)");
  }
  if (!isLoopbackHost(input.adminHost)) {
    add('admin-api-exposed', 'ADMIN_HOST', `the admin API listens on ${input.adminHost}, beyond loopback: it can register partners and keys; keep ADMIN_HOST on 127.0.0.1 or ::1`);
  }
  if (!input.adminTokenConfigured) add('admin-token-missing', 'ADMIN_TOKEN', 'the admin API has no bearer token');

  // The whitelist: expression runs code; the other built-ins are not used by any route.
  for (const name of model.policies) {
    if (name === 'expression') add('expression-policy', `policies "${name}"`, 'the expression policy runs code from configuration and is never allowed');
    else if (name in BUILTIN_POLICIES && !PLUGIN_POLICY_NAMES.has(name)) {
      add(
        'builtin-policy',
        `policies "${name}"`,
        `express-gateway's built-in ${name} policy is whitelisted${BUILTIN_POLICIES[name]!.runsCode ? ' (it evaluates code from configuration)' : ''}; no route needs it: remove it`
      );
    }
  }

  // Pipelines: conditions that run code; operations calling an upstream straight outside the
  // upstream's contract (the catalog's entry).
  for (const pipeline of model.pipelines.values()) {
    for (const step of pipeline.steps) {
      const at = `pipeline "${pipeline.name}", policy "${step.policy}"`;
      for (const action of step.actions) {
        const stepAt = step.declaredActions > 1 ? `${at} (step ${action.position})` : at;
        const conditions = conditionNames(action.condition);
        if (conditions.includes(CODE_CONDITION)) {
          add('expression-condition', stepAt, 'the expression condition runs code from configuration and is never allowed');
        }
        if (conditions.includes(BODY_REWRITING_CONDITION)) {
          add('body-rewriting-condition', stepAt, 'the json-schema condition rewrites the request body after validation (defaults and type coercion by express-gateway\'s AJV 6) and is never allowed');
        }
        const ends = upstreamCallOf(step, action.params);
        if (ends) {
          const problem = upstreamPathProblem(ends.upstream, ends.path);
          if (problem) add('proxy-path-contract', stepAt, `operation "${String(action.params.name)}": ${problem}`);
        }
      }
    }
  }

  // Routes: each apiEndpoint and the pipeline express-gateway mounts for it (the last declaring it).
  const routes: AuditedRoute[] = [];
  for (const { endpoint, pipeline, servedBy: servers } of model.routes) {
    const { name, entries, methods, paths } = endpoint;
    const pipelineName = pipeline?.name ?? null;
    const steps = pipeline?.steps ?? [];
    const route: AuditedRoute = { name, methods: [...methods], paths: [...paths], pipeline: pipelineName, policies: steps.map((s) => s.policy), steps: describeSteps(steps), public: false };
    if (steps.some((s) => operationsOf(s).some((o) => o.sandboxOnly))) route.sandbox = input.sandboxMode ? 'on' : 'off';
    routes.push(route);

    const where = pipelineName === null ? `apiEndpoint "${name}"` : `apiEndpoint "${name}" (pipeline "${pipelineName}")`;
    const routeText = `${methods.join(',')} ${paths.join(', ') || '(no path)'}`;
    if (pipelineName === null) {
      add('route-unserved', where, `${routeText} is served by no pipeline (express-gateway answers 404)`);
      continue;
    }
    if (servers.length > 1) {
      add('pipeline-ambiguous', where, `served by pipelines ${servers.map((s) => `"${s.name}"`).join(', ')}: only the last one runs; keep one`);
    }
    if (entries.some((e) => e.pathRegex !== undefined) || paths.length === 0 || paths.some((p) => /[*(]/.test(p))) {
      add('route-unauditable', where, 'list explicit paths (no pathRegex, wildcard or regular expression): the route\'s protection cannot be checked');
    }

    // Public routes: judged by what every pipeline serving them runs, never by their path alone.
    const publicShape = publicShapeOf(entries, servers, input.pathToRegexp);
    if (publicShape && publicShape.deviations.length > 0) {
      add(
        'public-route-shape',
        where,
        `${routeText} answers the public path ${publicShape.path} but is not its public shape (${publicShapeText(publicShape.path)}, optionally behind ${POLICY.jwt}): ${publicShape.deviations.join('; ')}`
      );
    }
    const isPublic = publicShape !== null && publicShape.deviations.length === 0;
    route.public = isPublic && servers.some((s) => s.steps[0]?.policy !== POLICY.jwt);

    // Authentication: es512-jwt first, unconditionally, on every pipeline serving the route, except
    // a public route in its exact public shape.
    for (const server of servers) {
      const serverWhere = `apiEndpoint "${name}" (pipeline "${server.name}")`;
      const jwtIndex = server.steps.findIndex((s) => s.policy === POLICY.jwt && alwaysRun(s).length === s.actions.length);
      if (jwtIndex === 0) continue;
      if (isPublic) {
        add('public-route', serverWhere, `${routeText} is public by design: served without a token, in its exact public shape (${publicShapeText(publicShape!.path)})`);
      } else if (jwtIndex === -1) {
        add('jwt-missing', serverWhere, `route ${paths.join(', ') || '(every path)'} (pipeline "${server.name}") lacks the ${POLICY.jwt} policy${describeCondition(server.steps, POLICY.jwt)}: anyone can call it`);
      } else {
        add('jwt-not-first', serverWhere, `${server.steps.slice(0, jwtIndex).map((s) => s.policy).join(', ')} run before ${POLICY.jwt}: on unauthenticated requests`);
      }
    }

    // An upstream path's {parameters} are the route's own.
    for (const server of servers) {
      for (const step of server.steps) {
        for (const action of step.actions) {
          const ends = upstreamCallOf(step, action.params);
          if (!ends) continue;
          for (const routePath of paths) {
            const missing = placeholdersOf(ends.path).filter((p) => !routeParamsOf(routePath).has(p));
            if (missing.length > 0) {
              add(
                'proxy-path-contract',
                `apiEndpoint "${name}" (pipeline "${server.name}")`,
                `the upstream path "${ends.path}" of operation "${String(action.params.name)}" uses ${missing.map((m) => `{${m}}`).join(', ')}, which route ${routePath} does not have: only route parameters fill an upstream path`
              );
            }
          }
        }
      }
    }

    // Ownership of the resource named in the path (a step checking a body field does not count).
    if (paths.some(hasPathParameter) && !runs(steps, POLICY.ownership, (p) => p.in !== 'body')) {
      add('ownership-missing', where, `${routeText} names a resource in its path but runs no ${POLICY.ownership} step${describeCondition(steps, POLICY.ownership)}: a partner could reach another partner's resource`);
    }

    // Ownership of the resources named in the body (OWNED_BODY_FIELDS).
    const unownedBodyFields = bodySchemasOf(steps).flatMap((schemaName) =>
      (OWNED_BODY_FIELDS[schemaName] ?? []).filter(({ field, resource }) => !runs(steps, POLICY.ownership, (p) => p.in === 'body' && p.param === field && p.resource === resource))
    );
    if (unownedBodyFields.length > 0) {
      const missing = unownedBodyFields.map(({ field, resource }) => `"${field}" names a ${resource} ({ resource: ${resource}, in: body, param: ${field} })`).join(', ');
      add('ownership-missing', where, `${routeText} takes a body in which ${missing} but runs no ${POLICY.ownership} step checking it: a partner could name another partner's resource`);
    }

    // Validation of what the partner sends: the body, and the query string when the route reads it.
    if (methods.some((m) => BODY_METHODS.has(m)) && !runs(steps, POLICY.validate, (p) => typeof p.body === 'string')) {
      add('validation-missing', where, `${routeText} takes a body but no ${POLICY.validate} step checks it (validate: { body: <schema> })`);
    }
    const queryReader = steps.find((s) => readsQuery(s));
    if (queryReader && !runs(steps, POLICY.validate, (p) => typeof p.query === 'string')) {
      add('validation-missing', where, `${routeText} reads the query string (${queryReader.policy}) but no ${POLICY.validate} step checks it (validate: { query: <schema> })`);
    }

    // Card data, PINs, 3DS answers: never cached, never logged with their URL.
    const returnsSecret = steps.some(returnsSensitiveData);
    const sensitive = returnsSecret || paths.some((p) => SENSITIVE_PATHS.some((re) => re.test(p)));
    if (sensitive && !runs(steps, POLICY.sensitiveData)) {
      add('sensitive-data-missing', where, `${routeText} returns or carries card data, a PIN or a 3DS answer but runs no ${POLICY.sensitiveData} step (no-store, URL kept out of the access log)`);
    }
    // The idempotency policy keeps each answer's bytes for its replays: an answer carrying a secret
    // (a CVV, a PAN, a webhook signing secret) would sit in clear in idempotency_keys for the key's lifetime.
    // Any idempotency step, conditional or not: a condition that lets it run at all is enough.
    if (returnsSecret && steps.some((s) => s.policy === POLICY.idempotency)) {
      add('secret-replay-store', where, `${routeText} answers or carries a secret (card data, a PIN, a 3DS answer or a webhook signing secret) but runs ${POLICY.idempotency}, whose replay store would keep the answer in clear: remove the ${POLICY.idempotency} step`);
    }

    // A public route's shape says whether it is rate limited (the health check is not).
    if (!isPublic && !runs(steps, POLICY.rateLimit)) add('rate-limit-missing', where, `${routeText} has no ${POLICY.rateLimit} step${describeCondition(steps, POLICY.rateLimit)}`);
  }

  findings.sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  const publicRoutes = new Set(routes.filter((r) => r.public).map((r) => r.name));
  return { routes, findings, bootFindings: boot ? bootFindings(model, boot, publicRoutes) : [] };
}

/**
 * The policy audit's report of a configuration: every route with its policy chain, and the findings
 * of the rules `npm run audit:policies` lists, by severity. Run by the CLI; the boot runs the whole
 * rule set (`auditRouteModel` with the runtime's facts) and refuses CRITICAL findings.
 *
 * @example auditGatewayConfig({ model: readRouteModel(YAML.parse(text)), adminHost: '127.0.0.1', adminTokenConfigured: true })
 */
export function auditGatewayConfig(input: AuditInput): AuditResult {
  const { routes, findings } = auditRouteModel(input);
  return { routes, findings: findings.filter((f) => isReported(f.rule)) };
}

/** Body schemas the route's `validate` steps check (`validate: { body: <schema> }`). */
function bodySchemasOf(steps: readonly Step[]): string[] {
  return steps.filter((s) => s.policy === POLICY.validate).flatMap((s) => s.actions.map((a) => a.params.body).filter((b): b is string => typeof b === 'string'));
}

/** The catalog entries of an `operation` step's actions (none for another policy, or an unknown name). */
function operationsOf(step: Step): Operation[] {
  if (step.policy !== POLICY.operation) return [];
  return step.actions.map((a) => operationNamed(a.params.name)).filter((o): o is Operation => o !== undefined);
}

/** The upstream call of an `operation` step's action, when its operation calls an upstream straight. */
function upstreamCallOf(step: Step, params: Params): Extract<Operation['ends'], { kind: 'upstream' }> | undefined {
  if (step.policy !== POLICY.operation) return undefined;
  const ends = operationNamed(params.name)?.ends;
  return ends?.kind === 'upstream' ? ends : undefined;
}

/** A step that reads `req.query`: an operation with a query schema, or one forwarding query parameters upstream. */
function readsQuery(step: Step): boolean {
  return operationsOf(step).some((o) => o.schemas?.query !== undefined || (o.ends.kind === 'upstream' && (o.ends.query?.length ?? 0) > 0));
}

/** A step whose answer is card data, or that carries PINs or 3DS answers (the catalog's `sensitive`). */
function returnsSensitiveData(step: Step): boolean {
  return operationsOf(step).some((o) => o.sensitive === true);
}

const FROM_CATALOG: ReadonlySet<string> = new Set(PARAMS_FROM_CATALOG);

/** A map's JSON with its keys sorted (params compared whatever order they were written in). */
function canonical(params: Params): string {
  return JSON.stringify(Object.fromEntries(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/**
 * A pipeline's steps with their effective params (the route model's: a step written without params
 * holds those its operation's catalog entry implies, gateway/runtime/catalog-params.ts), each marked
 * when its params are the catalog's, and an upstream call's timeout marked when the setting gives it.
 */
function describeSteps(steps: readonly Step[]): AuditedStep[] {
  const operation = steps.flatMap(operationsOf).at(-1);
  return steps.map((step) => {
    const implied = operation && FROM_CATALOG.has(step.policy) ? new Set((impliedParams(step.policy, operation) ?? []).map(canonical)) : undefined;
    return {
      policy: step.policy,
      actions: step.actions.map((action) => {
        const described: AuditedAction = { params: action.params };
        if (!action.unconditional) described.condition = action.condition?.name ?? '(unnamed)';
        if (implied?.has(canonical(action.params))) described.fromCatalog = true;
        if (upstreamCallOf(step, action.params) && action.params.timeoutMs === undefined) described.timeoutFrom = 'UPSTREAM_TIMEOUT_MS';
        return described;
      }),
    };
  });
}
