import Ajv, { type ValidateFunction } from 'ajv';
import type { PolicySchema } from '../../policies/policy-schema';
import { operationNamed, type Operation } from '../catalog';
import type { ApiEndpoint, Condition, Pipeline, RouteModel, Step } from '../route-model';
import { PARTNER_BASE_PATH, POLICY, PUBLIC_ROUTE_PATHS } from './route-facts';
import { finding, type AuditFinding, type AuditRule } from './rules';

/**
 * express-gateway built-in policies the gateway may whitelist. None today: every route runs our
 * own policies; `expression` (runs code from YAML) is never allowed.
 */
export const ALLOWED_BUILTIN_POLICIES = new Set<string>();

/** What the boot's rules check a configuration against: the runtime's registries, loaded at boot. */
export interface RuntimeFacts {
  /** Our plugin's policies, by name, with their schemas. */
  pluginPolicies: Map<string, PolicySchema>;
  /** Names of express-gateway's built-in policies (its lib/policies folders). */
  builtinPolicies: Set<string>;
  /** Condition names express-gateway knows (predefined and registered by plugins); read only when a step has a condition. */
  readonly conditions: Set<string>;
  /** Errors express-gateway's plugin loader logged (it carries on after a failed plugin). */
  pluginLoadErrors: string[];
  /** Name of the JWT policy every protected route must run. */
  jwtPolicy: string;
}

/** What the boot's rules read beside the route model: the runtime's facts and the plugins system.config.yml declares. */
export interface BootInput {
  facts: RuntimeFacts;
  declaredPlugins: readonly string[];
}

// validateSchema: false: these are the plugin's policy schemas, which express-gateway's Ajv checked
// against the same draft-07 meta-schema when loadAndCheck registered them (an invalid one stops the
// boot there, before any rule runs). Checking them again would cost a refused boot about 30 ms of CPU.
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

/** A condition and every condition nested in it. */
function nestedConditions(condition: Condition): Condition[] {
  return [condition, ...condition.nested.flatMap(nestedConditions)];
}

/** Where a step's action is: `pipeline "p", policy "x"`, `(step n)` when the step lists several. */
function actionWhere(pipeline: Pipeline, step: Step, position: number): string {
  const at = `pipeline "${pipeline.name}", policy "${step.policy}"`;
  return step.declaredActions > 1 ? `${at} (step ${position})` : at;
}

/**
 * The boot's rules, in the order they list their findings: the shape of
 * the configuration, the runtime's registries (plugins, policies and their params, conditions), the
 * catalog, and each route's path and authentication. `publicRoutes` names the routes the policy
 * audit found public in their exact public shape (the only ones without the JWT policy).
 * Not run by `npm run audit:policies`, which loads no runtime.
 */
export function bootFindings(model: RouteModel, { facts, declaredPlugins }: BootInput, publicRoutes: ReadonlySet<string>): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const add = (rule: AuditRule, where: string, message: string) => findings.push(finding(rule, where, message));

  for (const error of facts.pluginLoadErrors) add('plugin-load', 'system.config.yml plugins', `a plugin failed to load: ${error}`);
  if (declaredPlugins.length === 0) add('plugin-load', 'system.config.yml plugins', 'no plugin is declared: the partner-gateway plugin is required');
  if (model.listenerSection) add('listener-section', 'gateway.config.yml http/https', 'listeners are configured by PORT and HOST, not in gateway.config.yml');

  // The policy whitelist: our plugin's policies, and only allowed built-ins (none today). `expression`
  // is the policy audit's expression-policy.
  const whitelist = new Set(model.policies);
  for (const name of whitelist) {
    if (name === 'expression') continue;
    if (facts.builtinPolicies.has(name) && !facts.pluginPolicies.has(name) && !ALLOWED_BUILTIN_POLICIES.has(name)) {
      add('policy-whitelist', `policies "${name}"`, 'express-gateway built-in policies are not whitelisted; use the Partner Gateway policies');
    } else if (!facts.pluginPolicies.has(name) && !facts.builtinPolicies.has(name)) {
      add('policy-unknown', `policies "${name}"`, 'unknown policy: no loaded plugin registers it');
    }
  }

  // Pipelines: readable, serving known apiEndpoints, known and whitelisted policies, valid action
  // params, known conditions.
  for (const problem of model.problems) add('config-shape', problem.where, problem.message);
  if (model.pipelines.size === 0 && !model.problems.some((p) => p.where.startsWith('pipeline '))) add('config-shape', 'gateway.config.yml pipelines', 'no pipeline is configured');
  for (const pipeline of model.pipelines.values()) {
    const where = `pipeline "${pipeline.name}"`;
    for (const endpoint of pipeline.apiEndpoints) {
      if (!model.apiEndpoints.has(endpoint)) add('endpoint-unknown', where, `serves unknown apiEndpoint "${endpoint}"`);
    }
    if (pipeline.steps.length === 0 && !model.problems.some((p) => p.where === where)) add('config-shape', where, 'has no policies');
    for (const step of pipeline.steps) {
      const at = `${where}, policy "${step.policy}"`;
      if (!whitelist.has(step.policy)) add('policy-whitelist', at, 'is not declared in the policies whitelist');
      const schema = facts.pluginPolicies.get(step.policy);
      if (!schema) {
        add('policy-unknown', at, 'unknown policy: no loaded plugin registers it');
        continue;
      }
      for (const action of step.actions) {
        const stepAt = actionWhere(pipeline, step, action.position);
        const validate = strictValidator(step.policy, schema);
        if (!validate(action.params)) {
          const reasons = (validate.errors ?? [])
            .map((e) => `${e.instancePath || 'action'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` "${String(e.params.additionalProperty)}"` : ''}`)
            .join('; ');
          add('action-params', stepAt, `invalid action params: ${reasons}`);
        }
        const condition = action.condition;
        if (condition === undefined) continue;
        if (condition.name === undefined) {
          add('condition-unknown', stepAt, 'condition must have a name');
          continue;
        }
        // allOf, oneOf and not carry conditions of their own: each is checked like the outer one.
        // `expression` is the policy audit's expression-condition.
        let allKnown = true;
        for (const c of nestedConditions(condition)) {
          if (c.name === 'expression') allKnown = false;
          else if (c.name === undefined || !facts.conditions.has(c.name)) {
            add('condition-unknown', stepAt, c.name === undefined ? 'condition must have a name' : `unknown condition "${c.name}"`);
            allKnown = false;
          }
        }
        if (allKnown && step.policy === facts.jwtPolicy && condition.name !== 'always') add('jwt-conditional', stepAt, 'the JWT policy must run unconditionally');
      }
    }
  }

  for (const problem of contradictionsWithCatalog(model)) add('catalog-contradiction', problem.where, problem.message);

  // Routes: all under /api/partner, each served by a pipeline, each protected but the public routes
  // in their exact public shape.
  for (const { endpoint, servedBy } of model.routes) {
    const where = `apiEndpoint "${endpoint.name}"`;
    if (servedBy.length === 0) add('endpoint-unserved', where, 'is served by no pipeline');
    for (const entry of endpoint.entries) {
      if (entry.pathRegex !== undefined) {
        add('route-path', where, "pathRegex is not allowed: list explicit paths so that each route's protection can be checked");
        continue;
      }
      if (entry.paths.length === 0) add('route-path', where, `must list explicit paths under ${PARTNER_BASE_PATH}`);
      for (const routePath of entry.paths) {
        if (!(routePath === PARTNER_BASE_PATH || routePath.startsWith(`${PARTNER_BASE_PATH}/`))) {
          add('route-path', where, `path "${routePath}" is outside ${PARTNER_BASE_PATH}`);
          continue;
        }
        if (/[*(]/.test(routePath)) add('route-path', where, `path "${routePath}" must not use wildcards or regular expressions`);
        if (PUBLIC_ROUTE_PATHS.has(routePath) && publicRoutes.has(endpoint.name)) continue;
        for (const pipeline of servedBy) {
          if (!runsJwtFirst(pipeline, facts.jwtPolicy)) {
            add('jwt-first', where, `route ${routePath} (pipeline "${pipeline.name}") lacks the ${facts.jwtPolicy} policy as its first, unconditional policy`);
          }
        }
      }
    }
  }
  return findings;
}

/**
 * True when the JWT policy is the pipeline's first policy and runs unconditionally: nothing (no
 * handler, proxy, or policy that reads the request) runs for an unauthenticated caller.
 */
function runsJwtFirst(pipeline: Pipeline, jwtPolicy: string): boolean {
  const first = pipeline.steps[0];
  return first !== undefined && first.policy === jwtPolicy && first.actions.every((a) => a.unconditional);
}

/** The actions of a pipeline's steps of one policy. */
function actionsOf(pipeline: Pipeline, policy: string): Step['actions'] {
  return pipeline.steps.filter((step) => step.policy === policy).flatMap((step) => step.actions);
}

/**
 * A pipeline that contradicts the catalog entry of the operation it ends in (gateway/catalog): the
 * catalog says what an operation is (its route, the resources whose owner it checks, the request
 * schemas its implementation reads unchecked, whether it returns card data); the YAML may add
 * steps, never leave one out, nor claim an Idempotency-Key before the body is validated. Refused at
 * boot and on reload, naming the pipeline and the operation.
 */
export function contradictionsWithCatalog(model: RouteModel): { where: string; message: string }[] {
  const problems: { where: string; message: string }[] = [];
  for (const pipeline of model.pipelines.values()) {
    const operationSteps = actionsOf(pipeline, POLICY.operation);
    const where = `pipeline "${pipeline.name}"`;
    if (operationSteps.length === 0) {
      problems.push({ where, message: `has no ${POLICY.operation} step: every pipeline ends in the operation of the catalog it serves` });
      continue;
    }
    const last = pipeline.steps[pipeline.steps.length - 1];
    if (operationSteps.length > 1 || last?.policy !== POLICY.operation) {
      problems.push({ where, message: `must end in exactly one ${POLICY.operation} step with one action (it answers: nothing after it runs)` });
    }
    const name = operationSteps[operationSteps.length - 1]!.params.name;
    const operation = operationNamed(name);
    const at = `${where}, operation "${String(name)}"`;
    if (!operation) {
      problems.push({ where: at, message: 'is not an operation of the catalog (gateway/catalog)' });
      continue;
    }
    const endpoints = pipeline.apiEndpoints.map((e) => ({ name: e, endpoint: model.apiEndpoints.get(e) }));
    problems.push(...contradictions(operation, String(name), pipeline, endpoints).map((message) => ({ where: at, message })));
  }
  return problems;
}

/** How a pipeline (its steps and apiEndpoints) contradicts its operation's entry. */
function contradictions(operation: Operation, name: string, pipeline: Pipeline, endpoints: { name: string; endpoint: ApiEndpoint | undefined }[]): string[] {
  const out: string[] = [];
  for (const { name: endpointName, endpoint } of endpoints) {
    if (endpointName !== name) out.push(`serves apiEndpoint "${endpointName}": an operation is served by the apiEndpoint of its name (the operationId)`);
    for (const entry of endpoint?.entries ?? []) {
      const { paths, methods } = entry;
      if (paths.length !== 1 || paths[0] !== operation.path || methods.length !== 1 || methods[0] !== operation.method) {
        out.push(`apiEndpoint "${endpointName}" is ${methods.join(',')} ${paths.join(', ') || '(no path)'}; the operation is ${operation.method} ${operation.path}`);
      }
    }
  }

  // A step written without params takes its operation's (gateway/runtime/catalog-params.ts); one
  // still without any is one whose operation implies none.
  for (const policy of [POLICY.ownership, POLICY.validate]) {
    if (actionsOf(pipeline, policy).some((a) => Object.keys(a.params).length === 0)) {
      out.push(`has ${policy === POLICY.ownership ? 'an' : 'a'} ${policy} step without params, and the operation implies none (its catalog entry ${policy === POLICY.ownership ? 'checks no owner' : 'declares no request schema'}): write its params, or remove the step`);
    }
  }

  const ownership = actionsOf(pipeline, POLICY.ownership).filter((a) => a.unconditional);
  for (const check of operation.ownership ?? []) {
    const found = ownership.some((a) => a.params.resource === check.resource && (a.params.param ?? 'id') === check.param && (a.params.in ?? 'path') === check.in);
    if (!found) {
      out.push(`checks the owner of the ${check.resource} named by ${check.in === 'body' ? `body.${check.param}` : `path parameter ${check.param}`}, but no unconditional ownership step does ({ resource: ${check.resource}, param: ${check.param}${check.in === 'body' ? ', in: body' : ''} })`);
    }
  }

  const validate = actionsOf(pipeline, POLICY.validate).filter((a) => a.unconditional);
  for (const where of ['body', 'query', 'params'] as const) {
    const schema = operation.schemas?.[where];
    if (schema !== undefined && !validate.some((a) => a.params[where] === schema)) {
      out.push(`reads the ${where === 'params' ? 'path parameters' : where} as ${schema}, but no unconditional validate step checks it ({ ${where}: ${schema} })`);
    }
  }

  // A request of a body-taking operation without a body (400 body_required) or with an invalid one
  // changes nothing, not even an Idempotency-Key claim: the claiming step follows the body's
  // validation (a replayOnly step, which claims nothing, may come before it).
  const body = operation.schemas?.body;
  if (body !== undefined) {
    const validatesAt = pipeline.steps.findIndex((step) => step.policy === POLICY.validate && step.actions.some((a) => a.unconditional && a.params.body === body));
    const claimsAt = pipeline.steps.findIndex((step) => step.policy === POLICY.idempotency && step.actions.some((a) => a.params.replayOnly !== true));
    if (validatesAt >= 0 && claimsAt >= 0 && claimsAt < validatesAt) {
      out.push(`claims an Idempotency-Key before its validate step checks the body: a request without a body, or with an invalid one, would claim a key; put the ${POLICY.idempotency} step after validate`);
    }
  }

  if (operation.sensitive && !actionsOf(pipeline, POLICY.sensitiveData).some((a) => a.unconditional)) {
    out.push(`returns or carries card data, a PIN or a 3DS answer, but the pipeline runs no unconditional ${POLICY.sensitiveData} step`);
  }

  const timeoutMs = actionsOf(pipeline, POLICY.operation).find((a) => a.params.timeoutMs !== undefined);
  if (timeoutMs && operation.ends.kind !== 'upstream') {
    out.push(`does not call an upstream straight (it ends ${operation.ends.kind === 'local' ? 'in a local handler' : 'in an orchestration, whose clients take UPSTREAM_TIMEOUT_MS'}): timeoutMs does not apply`);
  }
  return out;
}
