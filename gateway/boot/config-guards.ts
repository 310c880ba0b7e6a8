import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import type { PolicySchema } from '../../policies/policy-schema';
// The audit itself, not the policy-audit index: its config-file reader (and the yaml package) is
// for `npm run audit:policies`, not for the boot.
import { auditGatewayConfig, type AuditRule } from '../policy-audit/audit';
import { PARTNER_BASE_PATH, POLICY, PUBLIC_ROUTE_PATHS } from '../policy-audit/route-facts';
import { operationNamed, type Operation } from '../catalog';

export { PARTNER_BASE_PATH };
/**
 * Paths of the public routes: the liveness probe and the public API documentation. A route on one
 * of them goes without the JWT policy only in its exact public shape (the policy audit's
 * `public-route-shape` rule, docs/policy-audit.md), never because of its path.
 */
export const PUBLIC_PATHS = PUBLIC_ROUTE_PATHS;
/** Model files express-gateway `require`s at boot (a missing one crashes it with a stack trace). */
export const REQUIRED_MODEL_FILES = ['users.json', 'credentials.json', 'applications.json'];
/**
 * express-gateway built-in policies the gateway may whitelist. None today: every route runs our
 * own policies; `expression` (runs code from YAML) is never allowed.
 */
export const ALLOWED_BUILTIN_POLICIES = new Set<string>();

/** One reason the configuration is refused. */
export interface ConfigProblem {
  /** Where: `pipeline "me", policy "es512-jwt"`, `apiEndpoint "x"`, `system.config.yml` ... */
  where: string;
  message: string;
}

/** Thrown by main when the guards found problems; its message lists all of them. */
export class ConfigRefusedError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(`configuration refused:\n${problems.map((p) => `  - ${p.where}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigRefusedError';
  }
}

/** Checks, before express-gateway reads the folder, that every model file it requires is there. */
export function checkConfigDir(configDir: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const file of ['gateway.config.yml', 'system.config.yml']) {
    if (!fs.existsSync(path.join(configDir, file))) problems.push({ where: configDir, message: `${file} is missing` });
  }
  for (const file of REQUIRED_MODEL_FILES) {
    const full = path.join(configDir, 'models', file);
    if (!fs.existsSync(full)) {
      problems.push({ where: `models/${file}`, message: 'missing: express-gateway requires it at boot' });
      continue;
    }
    try {
      const parsed = JSON.parse(fs.readFileSync(full, 'utf8')) as { $id?: unknown };
      if (typeof parsed.$id !== 'string') problems.push({ where: `models/${file}`, message: 'has no "$id"' });
    } catch (err) {
      problems.push({ where: `models/${file}`, message: `is not valid JSON (${(err as Error).message})` });
    }
  }
  return problems;
}

/** What the guards know about the runtime: registered policies and conditions, plugin errors. */
export interface GuardContext {
  /** Our plugin's policies, by name, with their schemas. */
  pluginPolicies: Map<string, PolicySchema>;
  /** Names of express-gateway's built-in policies (its lib/policies folders). */
  builtinPolicies: Set<string>;
  /** Condition names express-gateway knows (predefined and registered by plugins). */
  conditions: Set<string>;
  /** Errors express-gateway's plugin loader logged (it carries on after a failed plugin). */
  pluginLoadErrors: string[];
  /** Name of the JWT policy every protected route must run. */
  jwtPolicy: string;
  /** `ADMIN_HOST` of our admin API (the policy audit refuses anything beyond loopback). */
  adminHost: string;
  /** True when the admin API has a bearer token: ADMIN_TOKEN, or the token generated into DATA_DIR. */
  adminTokenConfigured: boolean;
}

/**
 * Policy-audit rules the checks below already refuse, as strictly or more (e.g. the JWT check
 * covers every pipeline serving a route): their findings are not listed a second time.
 */
const RULES_CHECKED_HERE: ReadonlySet<AuditRule> = new Set(['stock-admin-api', 'expression-policy', 'expression-condition', 'jwt-missing', 'jwt-not-first']);

type Json = Record<string, any>;

// validateSchema: false: these are the plugin's policy schemas, which express-gateway's Ajv checked
// against the same draft-07 meta-schema when loadAndCheck registered them (an invalid one stops the
// boot there, before any guard runs). Checking them again cost a refused boot about 30 ms of CPU.
// test/policies/policy-schemas.test.ts checks them with this Ajv's own meta-schema too.
const strictAjv = new Ajv({ allErrors: true, strict: false, useDefaults: false, validateSchema: false });
const strictValidators = new Map<string, ValidateFunction>();

function strictValidator(name: string, schema: PolicySchema): ValidateFunction {
  let validate = strictValidators.get(name);
  if (!validate) {
    // The shipped schema omits additionalProperties (express-gateway's AJV 6 cannot take it);
    // here unknown params are refused so that a typo in YAML cannot silently drop a setting.
    const { $id: _id, ...rest } = schema;
    validate = strictAjv.compile({ ...rest, additionalProperties: false });
    strictValidators.set(name, validate);
  }
  return validate;
}

function asArray<T>(value: T | T[] | undefined | null): T[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** A condition and every condition nested in it (allOf/oneOf `conditions`, not's `condition`). */
function nestedConditions(condition: Json): Json[] {
  const inner = [...asArray<Json>(condition.conditions), ...asArray<Json>(condition.condition)].filter((c) => c && typeof c === 'object');
  return [condition, ...inner.flatMap(nestedConditions)];
}

/**
 * Every check the gateway makes on `gateway.config.yml` and `system.config.yml` before it serves a
 * request, including the policy audit (`gateway/policy-audit`), whose CRITICAL findings refuse.
 * An empty list means the configuration may be served; anything else refuses the boot (and a
 * hot reload).
 */
export function checkGatewayConfig(gatewayConfig: Json, systemConfig: Json, context: GuardContext): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (where: string, message: string) => problems.push({ where, message });

  for (const error of context.pluginLoadErrors) add('system.config.yml plugins', `a plugin failed to load: ${error}`);
  const declaredPlugins = Object.keys(systemConfig.plugins ?? {});
  if (declaredPlugins.length === 0) add('system.config.yml plugins', 'no plugin is declared: the partner-gateway plugin is required');

  if (gatewayConfig.admin !== undefined && gatewayConfig.admin !== null) {
    add('gateway.config.yml admin', "express-gateway's admin API has no authentication and can run code: remove the admin section (use ADMIN_HOST/ADMIN_PORT/ADMIN_TOKEN)");
  }
  if (gatewayConfig.http !== undefined || gatewayConfig.https !== undefined) {
    add('gateway.config.yml http/https', 'listeners are configured by PORT and HOST, not in gateway.config.yml');
  }

  // The policy whitelist: our plugin's policies, and only allowed built-ins (none today).
  const whitelist = new Set<string>(asArray(gatewayConfig.policies));
  for (const name of whitelist) {
    if (name === 'expression') add(`policies "${name}"`, 'the expression policy runs code from configuration and is never allowed');
    else if (context.builtinPolicies.has(name) && !context.pluginPolicies.has(name) && !ALLOWED_BUILTIN_POLICIES.has(name)) {
      add(`policies "${name}"`, 'express-gateway built-in policies are not whitelisted; use the Partner Gateway policies');
    } else if (!context.pluginPolicies.has(name) && !context.builtinPolicies.has(name)) {
      add(`policies "${name}"`, 'unknown policy: no loaded plugin registers it');
    }
  }

  // Pipelines: known, whitelisted policies; valid action params; known conditions.
  const pipelines: Json = gatewayConfig.pipelines ?? {};
  const apiEndpoints: Json = gatewayConfig.apiEndpoints ?? {};
  const endpointPipelines = new Map<string, string[]>();
  if (Object.keys(pipelines).length === 0) add('gateway.config.yml pipelines', 'no pipeline is configured');

  for (const [pipelineName, pipeline] of Object.entries(pipelines) as [string, Json][]) {
    const where = `pipeline "${pipelineName}"`;
    if (!pipeline || typeof pipeline !== 'object') {
      add(where, 'must be an object with apiEndpoints and policies');
      continue;
    }
    for (const endpoint of asArray<string>(pipeline.apiEndpoints ?? pipeline.apiEndpoint)) {
      if (!(endpoint in apiEndpoints)) add(where, `serves unknown apiEndpoint "${endpoint}"`);
      endpointPipelines.set(endpoint, [...(endpointPipelines.get(endpoint) ?? []), pipelineName]);
    }
    const steps = asArray<Json>(pipeline.policies ?? pipeline.policy);
    if (steps.length === 0) add(where, 'has no policies');
    for (const step of steps) {
      if (!step || typeof step !== 'object' || Object.keys(step).length !== 1) {
        add(where, 'each entry of policies must be a single-key map: - <policy>: [actions]');
        continue;
      }
      const policyName = Object.keys(step)[0];
      const at = `${where}, policy "${policyName}"`;
      if (!whitelist.has(policyName)) add(at, 'is not declared in the policies whitelist');
      const schema = context.pluginPolicies.get(policyName);
      if (!schema) {
        add(at, 'unknown policy: no loaded plugin registers it');
        continue;
      }
      const actions = asArray<Json>(step[policyName]);
      const effective = actions.length === 0 ? [{}] : actions;
      effective.forEach((action, index) => {
        const stepAt = effective.length > 1 ? `${at} (step ${index + 1})` : at;
        if (!action || typeof action !== 'object') {
          add(stepAt, 'each step must be a map with action and optional condition');
          return;
        }
        const validate = strictValidator(policyName, schema);
        const params = action.action ?? {};
        if (!validate(params)) {
          const reasons = (validate.errors ?? [])
            .map((e) => `${e.instancePath || 'action'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` "${String(e.params.additionalProperty)}"` : ''}`)
            .join('; ');
          add(stepAt, `invalid action params: ${reasons}`);
        }
        const condition = action.condition as Json | undefined;
        if (condition !== undefined) {
          if (!condition || typeof condition.name !== 'string') add(stepAt, 'condition must have a name');
          else {
            // allOf, oneOf and not carry conditions of their own: each is checked like the outer one.
            let allKnown = true;
            for (const c of nestedConditions(condition)) {
              const refusal =
                typeof c.name !== 'string'
                  ? 'condition must have a name'
                  : c.name === 'expression'
                    ? 'the expression condition runs code from configuration and is never allowed'
                    : context.conditions.has(c.name)
                      ? undefined
                      : `unknown condition "${c.name}"`;
              if (refusal) {
                add(stepAt, refusal);
                allKnown = false;
              }
            }
            if (allKnown && policyName === context.jwtPolicy && condition.name !== 'always') add(stepAt, 'the JWT policy must run unconditionally');
          }
        }
      });
    }
  }

  for (const problem of contradictionsWithCatalog(pipelines, apiEndpoints)) add(problem.where, problem.message);

  // The policy audit: also says which routes are public (their exact public shape, not their path).
  const audit = auditGatewayConfig({ gatewayConfig, adminHost: context.adminHost, adminTokenConfigured: context.adminTokenConfigured });
  const publicShaped = new Set(audit.routes.filter((r) => r.public).map((r) => r.name));

  // Routes: all under /api/partner, each served by a pipeline, each protected but the public routes
  // in their exact public shape.
  for (const [endpointName, definition] of Object.entries(apiEndpoints) as [string, Json][]) {
    const where = `apiEndpoint "${endpointName}"`;
    const served = endpointPipelines.get(endpointName) ?? [];
    if (served.length === 0) add(where, 'is served by no pipeline');
    for (const entry of asArray<Json>(definition)) {
      if (entry.pathRegex !== undefined) {
        add(where, 'pathRegex is not allowed: list explicit paths so that each route\'s protection can be checked');
        continue;
      }
      const paths = asArray<string>(entry.paths ?? entry.path);
      if (paths.length === 0) add(where, `must list explicit paths under ${PARTNER_BASE_PATH}`);
      for (const routePath of paths) {
        if (typeof routePath !== 'string' || !(routePath === PARTNER_BASE_PATH || routePath.startsWith(`${PARTNER_BASE_PATH}/`))) {
          add(where, `path "${String(routePath)}" is outside ${PARTNER_BASE_PATH}`);
          continue;
        }
        if (/[*(]/.test(routePath)) add(where, `path "${routePath}" must not use wildcards or regular expressions`);
        if (PUBLIC_PATHS.has(routePath) && publicShaped.has(endpointName)) continue;
        for (const pipelineName of served) {
          if (!runsJwtFirst(pipelines[pipelineName], context)) {
            add(where, `route ${routePath} (pipeline "${pipelineName}") lacks the ${context.jwtPolicy} policy as its first, unconditional policy`);
          }
        }
      }
    }
  }

  // The policy audit: its CRITICAL findings refuse (HIGH and below are for `npm run audit:policies`).
  for (const finding of audit.findings) {
    if (finding.severity === 'CRITICAL' && !RULES_CHECKED_HERE.has(finding.rule)) add(finding.where, `${finding.message} [policy audit: ${finding.rule}]`);
  }
  return problems;
}

/**
 * True when the JWT policy is the pipeline's first policy and runs unconditionally: nothing (no
 * handler, proxy, or policy that reads the request) runs for an unauthenticated caller.
 */
function runsJwtFirst(pipeline: Json | undefined, context: GuardContext): boolean {
  const first = asArray<Json>(pipeline?.policies ?? pipeline?.policy)[0];
  if (!first || typeof first !== 'object' || Object.keys(first)[0] !== context.jwtPolicy) return false;
  return asArray<Json>(first[context.jwtPolicy]).every((a) => !a?.condition || a.condition.name === 'always');
}

/** The actions of a pipeline's steps of one policy, as `{ params, unconditional }`. */
function actionsOf(steps: Json[], policy: string): { params: Json; unconditional: boolean }[] {
  return steps
    .filter((step) => step && typeof step === 'object' && Object.keys(step)[0] === policy)
    .flatMap((step) => {
      const actions = asArray<Json>(step[policy]).filter((a) => a && typeof a === 'object');
      return (actions.length === 0 ? [{}] : actions).map((a) => ({
        params: (a.action as Json | undefined) ?? {},
        unconditional: !a.condition || a.condition.name === 'always',
      }));
    });
}

/** Upper-case methods of one apiEndpoint entry (`*` for none listed), as express-gateway splits them. */
function endpointMethods(entry: Json): string[] {
  const methods = asArray<string>(entry.methods)
    .flatMap((m) => String(m).split(','))
    .map((m) => m.trim().toUpperCase())
    .filter(Boolean);
  return methods.length > 0 ? methods : ['*'];
}

/**
 * A pipeline that contradicts the catalog entry of the operation it ends in (gateway/catalog): the
 * catalog says what an operation is (its route, the resources whose owner it checks, the request
 * schemas its implementation reads unchecked, whether it returns card data); the YAML may add
 * steps, never leave one out. Refused at boot and on reload, naming the pipeline and the operation.
 */
export function contradictionsWithCatalog(pipelines: Json, apiEndpoints: Json): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [pipelineName, pipeline] of Object.entries(pipelines ?? {}) as [string, Json][]) {
    if (!pipeline || typeof pipeline !== 'object') continue;
    const steps = asArray<Json>(pipeline.policies ?? pipeline.policy).filter((step) => step && typeof step === 'object');
    const operationSteps = actionsOf(steps, POLICY.operation);
    const where = `pipeline "${pipelineName}"`;
    if (operationSteps.length === 0) {
      problems.push({ where, message: `has no ${POLICY.operation} step: every pipeline ends in the operation of the catalog it serves` });
      continue;
    }
    const last = steps[steps.length - 1];
    if (operationSteps.length > 1 || Object.keys(last ?? {})[0] !== POLICY.operation) {
      problems.push({ where, message: `must end in exactly one ${POLICY.operation} step with one action (it answers: nothing after it runs)` });
    }
    const name = operationSteps[operationSteps.length - 1].params.name;
    const operation = operationNamed(name);
    const at = `${where}, operation "${String(name)}"`;
    if (!operation) {
      problems.push({ where: at, message: 'is not an operation of the catalog (gateway/catalog)' });
      continue;
    }
    problems.push(...contradictions(operation, String(name), steps, asArray<string>(pipeline.apiEndpoints ?? pipeline.apiEndpoint), apiEndpoints).map((message) => ({ where: at, message })));
  }
  return problems;
}

/**
 * The pipelines to mount: outside sandbox mode, those ending in a sandbox-only operation of the
 * catalog (`sandboxOnly`: the simulations) are left out, so their routes do not exist, and a call
 * is answered 404 `route_not_found` before any step of theirs (authentication included) runs, as
 * for any path no pipeline serves. Decided by the operation a pipeline ends in, never by its path.
 */
export function servedPipelines(gatewayConfig: Json, sandboxMode: boolean): Json {
  if (sandboxMode || !gatewayConfig?.pipelines || typeof gatewayConfig.pipelines !== 'object') return gatewayConfig;
  const entries = Object.entries(gatewayConfig.pipelines) as [string, Json][];
  const sandboxOnly = (pipeline: Json) => {
    const steps = asArray<Json>(pipeline?.policies ?? pipeline?.policy).filter((step) => step && typeof step === 'object');
    return actionsOf(steps, POLICY.operation).some((a) => operationNamed(a.params.name)?.sandboxOnly);
  };
  const endpointsOf = (pipeline: Json) => asArray<string>(pipeline?.apiEndpoints ?? pipeline?.apiEndpoint);
  const left = entries.filter(([, pipeline]) => sandboxOnly(pipeline));
  if (left.length === 0) return gatewayConfig;
  const kept = entries.filter(([, pipeline]) => !sandboxOnly(pipeline));
  // Their apiEndpoints go too: express-gateway answers an apiEndpoint no pipeline serves with a
  // plain-text 404 of its own instead of letting the request reach our problem 404.
  const stillServed = new Set(kept.flatMap(([, pipeline]) => endpointsOf(pipeline)));
  const dropped = new Set(left.flatMap(([, pipeline]) => endpointsOf(pipeline)).filter((name) => !stillServed.has(name)));
  const apiEndpoints = Object.fromEntries(Object.entries(gatewayConfig.apiEndpoints ?? {}).filter(([name]) => !dropped.has(name)));
  return { ...gatewayConfig, apiEndpoints, pipelines: Object.fromEntries(kept) };
}

/** How a pipeline (its steps and apiEndpoints) contradicts its operation's entry. */
function contradictions(operation: Operation, name: string, steps: Json[], endpoints: string[], apiEndpoints: Json): string[] {
  const out: string[] = [];
  for (const endpoint of endpoints) {
    if (endpoint !== name) out.push(`serves apiEndpoint "${endpoint}": an operation is served by the apiEndpoint of its name (the operationId)`);
    for (const entry of asArray<Json>(apiEndpoints?.[endpoint]).filter((e) => e && typeof e === 'object')) {
      const paths = asArray<unknown>(entry.paths ?? entry.path).map(String);
      const methods = endpointMethods(entry);
      if (paths.length !== 1 || paths[0] !== operation.path || methods.length !== 1 || methods[0] !== operation.method) {
        out.push(`apiEndpoint "${endpoint}" is ${methods.join(',')} ${paths.join(', ') || '(no path)'}; the operation is ${operation.method} ${operation.path}`);
      }
    }
  }

  const ownership = actionsOf(steps, POLICY.ownership).filter((a) => a.unconditional);
  for (const check of operation.ownership ?? []) {
    const found = ownership.some((a) => a.params.resource === check.resource && (a.params.param ?? 'id') === check.param && (a.params.in ?? 'path') === check.in);
    if (!found) {
      out.push(`checks the owner of the ${check.resource} named by ${check.in === 'body' ? `body.${check.param}` : `path parameter ${check.param}`}, but no unconditional ownership step does ({ resource: ${check.resource}, param: ${check.param}${check.in === 'body' ? ', in: body' : ''} })`);
    }
  }

  const validate = actionsOf(steps, POLICY.validate).filter((a) => a.unconditional);
  for (const where of ['body', 'query', 'params'] as const) {
    const schema = operation.schemas?.[where];
    if (schema !== undefined && !validate.some((a) => a.params[where] === schema)) {
      out.push(`reads the ${where === 'params' ? 'path parameters' : where} as ${schema}, but no unconditional validate step checks it ({ ${where}: ${schema} })`);
    }
  }

  if (operation.sensitive && !actionsOf(steps, POLICY.sensitiveData).some((a) => a.unconditional)) {
    out.push(`returns or carries card data, a PIN or a 3DS answer, but the pipeline runs no unconditional ${POLICY.sensitiveData} step`);
  }

  const timeoutMs = actionsOf(steps, POLICY.operation).find((a) => a.params.timeoutMs !== undefined);
  if (timeoutMs && operation.ends.kind !== 'upstream') {
    out.push(`does not call an upstream straight (it ends ${operation.ends.kind === 'local' ? 'in a local handler' : 'in an orchestration, whose clients take UPSTREAM_TIMEOUT_MS'}): timeoutMs does not apply`);
  }
  return out;
}
