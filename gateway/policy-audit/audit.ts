import net from 'node:net';
import {
  BODY_METHODS,
  BUILTIN_POLICIES,
  CODE_CONDITION,
  hasPathParameter,
  OWNED_BODY_FIELDS,
  PLUGIN_POLICY_NAMES,
  POLICY,
  PUBLIC_ROUTE_PATHS,
  QUERY_READERS,
  SENSITIVE_PATHS,
  SENSITIVE_STEPS,
} from './route-facts';

/** Finding severities, most severe first. */
export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Every rule of the audit and its severity (docs/policy-audit.md explains each). */
export const AUDIT_RULES = {
  'jwt-missing': 'CRITICAL',
  'jwt-not-first': 'CRITICAL',
  'ownership-missing': 'CRITICAL',
  'expression-policy': 'CRITICAL',
  'expression-condition': 'CRITICAL',
  'stock-admin-api': 'CRITICAL',
  'admin-api-exposed': 'CRITICAL',
  'admin-token-missing': 'CRITICAL',
  'validation-missing': 'HIGH',
  'sensitive-data-missing': 'HIGH',
  'proxy-timeout-missing': 'HIGH',
  'builtin-policy': 'HIGH',
  'route-unauditable': 'HIGH',
  'rate-limit-missing': 'MEDIUM',
  'pipeline-ambiguous': 'MEDIUM',
  'route-unserved': 'LOW',
  'public-route': 'INFO',
} as const satisfies Record<string, Severity>;
export type AuditRule = keyof typeof AUDIT_RULES;

/** One finding: its severity, rule, where in the configuration, and what is wrong. */
export interface AuditFinding {
  severity: Severity;
  rule: AuditRule;
  where: string;
  message: string;
}

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
}

/** What the audit reads: the loaded gateway config (env vars substituted) and the admin listener's settings. */
export interface AuditInput {
  gatewayConfig: object;
  /** `ADMIN_HOST` of our admin API. */
  adminHost: string;
  /** True when the admin API has a bearer token (ADMIN_TOKEN, or the generated token file). */
  adminTokenConfigured: boolean;
}

export interface AuditResult {
  routes: AuditedRoute[];
  findings: AuditFinding[];
}

type Json = Record<string, any>;

/** One pipeline step: a policy and its actions (each with params and an optional condition). */
interface Step {
  policy: string;
  actions: { params: Json; condition?: Json }[];
}

function asArray<T>(value: T | T[] | undefined | null): T[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function stepsOf(pipeline: Json | undefined): Step[] {
  const steps: Step[] = [];
  for (const entry of asArray<Json>(pipeline?.policies ?? pipeline?.policy)) {
    if (!entry || typeof entry !== 'object') continue;
    const policy = Object.keys(entry)[0];
    if (policy === undefined) continue;
    const actions = asArray<Json>(entry[policy]).filter((a) => a && typeof a === 'object');
    steps.push({
      policy,
      actions: (actions.length === 0 ? [{}] : actions).map((a) => ({ params: (a.action as Json | undefined) ?? {}, condition: a.condition as Json | undefined })),
    });
  }
  return steps;
}

/** express-gateway fills `condition: {name: always}` in; only that, or no condition, runs every time. */
function unconditional(action: Step['actions'][number]): boolean {
  return action.condition === undefined || action.condition === null || action.condition.name === 'always';
}

/** The step's actions that run on every request. */
function alwaysRun(step: Step): Step['actions'] {
  return step.actions.filter(unconditional);
}

function runs(steps: Step[], policy: string, accept: (params: Json) => boolean = () => true): boolean {
  return steps.some((s) => s.policy === policy && alwaysRun(s).some((a) => accept(a.params)));
}

/** Names of every condition in a (possibly nested: allOf, oneOf, not) condition. */
function conditionNames(condition: unknown): string[] {
  if (!condition || typeof condition !== 'object') return [];
  const c = condition as Json;
  return [
    ...(typeof c.name === 'string' ? [c.name] : []),
    ...asArray<unknown>(c.conditions).flatMap(conditionNames),
    ...conditionNames(c.condition),
  ];
}

/** True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

function describeCondition(steps: Step[], policy: string): string {
  return steps.some((s) => s.policy === policy) ? ` (its ${policy} step runs only under a condition)` : '';
}

/**
 * Audits a gateway configuration: lists every route (apiEndpoint) with its pipeline's policy chain,
 * and finds what a security reviewer would flag, by severity (rules: `AUDIT_RULES`,
 * docs/policy-audit.md). Pure: it reads nothing but its input. A step under a condition other than
 * `always` does not count as run.
 *
 * The gateway runs it at boot and on every reload (`checkGatewayConfig`) and refuses CRITICAL
 * findings; `npm run audit:policies` prints it and fails on HIGH or CRITICAL.
 *
 * @example auditGatewayConfig({ gatewayConfig: YAML.parse(text), adminHost: '127.0.0.1', adminTokenConfigured: true })
 */
export function auditGatewayConfig(input: AuditInput): AuditResult {
  const config = (input.gatewayConfig ?? {}) as Json;
  const findings: AuditFinding[] = [];
  const add = (rule: AuditRule, where: string, message: string) => findings.push({ severity: AUDIT_RULES[rule], rule, where, message });

  // The admin side: our admin API's listener and token, and express-gateway's stock admin API.
  if (config.admin !== undefined && config.admin !== null) {
    add('stock-admin-api', 'gateway.config.yml admin', "express-gateway's admin API has no authentication and can run code: remove the admin section (use ADMIN_HOST/ADMIN_PORT/ADMIN_TOKEN)");
  }
  if (!isLoopbackHost(input.adminHost)) {
    add('admin-api-exposed', 'ADMIN_HOST', `the admin API listens on ${input.adminHost}, beyond loopback: it can register partners and keys; keep ADMIN_HOST on 127.0.0.1 or ::1`);
  }
  if (!input.adminTokenConfigured) add('admin-token-missing', 'ADMIN_TOKEN', 'the admin API has no bearer token');

  // The whitelist: expression runs code; the other built-ins are not used by any route.
  for (const name of asArray<string>(config.policies)) {
    if (name === 'expression') add('expression-policy', `policies "${name}"`, 'the expression policy runs code from configuration and is never allowed');
    else if (name in BUILTIN_POLICIES && !PLUGIN_POLICY_NAMES.has(name)) {
      add(
        'builtin-policy',
        `policies "${name}"`,
        `express-gateway's built-in ${name} policy is whitelisted${BUILTIN_POLICIES[name].runsCode ? ' (it evaluates code from configuration)' : ''}; no route needs it: remove it`
      );
    }
  }

  // Pipelines: conditions that run code, proxies without their own timeout.
  const pipelines: Json = config.pipelines && typeof config.pipelines === 'object' ? config.pipelines : {};
  const servedBy = new Map<string, string[]>();
  for (const [pipelineName, pipeline] of Object.entries(pipelines) as [string, Json][]) {
    for (const endpoint of asArray<string>(pipeline?.apiEndpoints ?? pipeline?.apiEndpoint)) {
      servedBy.set(endpoint, [...(servedBy.get(endpoint) ?? []), pipelineName]);
    }
    for (const step of stepsOf(pipeline)) {
      const at = `pipeline "${pipelineName}", policy "${step.policy}"`;
      step.actions.forEach((action, index) => {
        const stepAt = step.actions.length > 1 ? `${at} (step ${index + 1})` : at;
        if (conditionNames(action.condition).includes(CODE_CONDITION)) {
          add('expression-condition', stepAt, 'the expression condition runs code from configuration and is never allowed');
        }
        if (step.policy === POLICY.proxy && typeof action.params.timeoutMs !== 'number') {
          add('proxy-timeout-missing', stepAt, 'the proxy step has no timeoutMs of its own: set one (e.g. timeoutMs: ${UPSTREAM_TIMEOUT_MS:-5000})');
        }
      });
    }
  }

  // Routes: each apiEndpoint and the pipeline express-gateway mounts for it (the last declaring it).
  const routes: AuditedRoute[] = [];
  const apiEndpoints: Json = config.apiEndpoints && typeof config.apiEndpoints === 'object' ? config.apiEndpoints : {};
  for (const [name, definition] of Object.entries(apiEndpoints) as [string, Json][]) {
    const entries = asArray<Json>(definition).filter((e) => e && typeof e === 'object');
    const methods = [...new Set(entries.flatMap(methodsOf))];
    const paths = [...new Set(entries.flatMap((e) => asArray<string>(e.paths ?? e.path).map(String)))];
    const servers = servedBy.get(name) ?? [];
    const pipelineName = servers.length > 0 ? servers[servers.length - 1] : null;
    const steps = pipelineName === null ? [] : stepsOf(pipelines[pipelineName]);
    routes.push({ name, methods, paths, pipeline: pipelineName, policies: steps.map((s) => s.policy) });

    const where = pipelineName === null ? `apiEndpoint "${name}"` : `apiEndpoint "${name}" (pipeline "${pipelineName}")`;
    const routeText = `${methods.join(',')} ${paths.join(', ') || '(no path)'}`;
    if (pipelineName === null) {
      add('route-unserved', where, `${routeText} is served by no pipeline (express-gateway answers 404)`);
      continue;
    }
    if (servers.length > 1) {
      add('pipeline-ambiguous', where, `served by pipelines ${servers.map((s) => `"${s}"`).join(', ')}: only the last one runs; keep one`);
    }
    if (entries.some((e) => e.pathRegex !== undefined) || paths.length === 0 || paths.some((p) => /[*(]/.test(p))) {
      add('route-unauditable', where, 'list explicit paths (no pathRegex, wildcard or regular expression): the route\'s protection cannot be checked');
    }

    // Authentication: es512-jwt first, unconditionally, except on the public routes.
    const isPublic = paths.length > 0 && paths.every((p) => PUBLIC_ROUTE_PATHS.has(p));
    const jwtIndex = steps.findIndex((s) => s.policy === POLICY.jwt && alwaysRun(s).length === s.actions.length);
    if (isPublic) {
      add('public-route', where, `${routeText} is public by design: served without a token`);
    } else if (jwtIndex === -1) {
      add('jwt-missing', where, `route ${paths.join(', ')} (pipeline "${pipelineName}") lacks the ${POLICY.jwt} policy${describeCondition(steps, POLICY.jwt)}: anyone can call it`);
    } else if (jwtIndex > 0) {
      add('jwt-not-first', where, `${steps.slice(0, jwtIndex).map((s) => s.policy).join(', ')} run before ${POLICY.jwt}: on unauthenticated requests`);
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
    const sensitive = steps.some(returnsSensitiveData) || paths.some((p) => SENSITIVE_PATHS.some((re) => re.test(p)));
    if (sensitive && !runs(steps, POLICY.sensitiveData)) {
      add('sensitive-data-missing', where, `${routeText} returns or carries card data, a PIN or a 3DS answer but runs no ${POLICY.sensitiveData} step (no-store, URL kept out of the access log)`);
    }

    if (!runs(steps, POLICY.rateLimit)) add('rate-limit-missing', where, `${routeText} has no ${POLICY.rateLimit} step${describeCondition(steps, POLICY.rateLimit)}`);
  }

  findings.sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  return { routes, findings };
}

/** Upper-case methods of one apiEndpoint entry, as express-gateway splits them; `*` when none are listed. */
function methodsOf(entry: Json): string[] {
  if (entry.methods === undefined || entry.methods === null || entry.methods === '*') return ['*'];
  const methods = asArray<string>(entry.methods)
    .flatMap((m) => String(m).split(','))
    .map((m) => m.trim().toUpperCase())
    .filter(Boolean);
  return methods.length > 0 ? methods : ['*'];
}

/** Body schemas the route's `validate` steps check (`validate: { body: <schema> }`). */
function bodySchemasOf(steps: Step[]): string[] {
  return steps.filter((s) => s.policy === POLICY.validate).flatMap((s) => s.actions.map((a) => a.params.body).filter((b): b is string => typeof b === 'string'));
}

/** A step that reads `req.query`: a proxy forwarding query parameters, or a handler of QUERY_READERS. */
function readsQuery(step: Step): boolean {
  if (step.policy === POLICY.proxy) return step.actions.some((a) => asArray(a.params.query).length > 0);
  const reader = QUERY_READERS[step.policy];
  return reader !== undefined && step.actions.some((a) => reader.names.has(String(a.params[reader.param])));
}

/** A step whose answer is card data, or that carries PINs or 3DS answers (SENSITIVE_STEPS). */
function returnsSensitiveData(step: Step): boolean {
  const known = SENSITIVE_STEPS[step.policy];
  return known !== undefined && step.actions.some((a) => known.names.has(String(a.params[known.param])));
}
