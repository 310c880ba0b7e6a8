import { operationNamed } from '../catalog';
import { impliedParams, PARAMS_FROM_CATALOG } from '../catalog/policy-contracts';
import type { ActionYaml, GatewayConfig, PipelineYaml, PolicyStepYaml } from './gateway-config';

const FROM_CATALOG: ReadonlySet<string> = new Set(PARAMS_FROM_CATALOG);

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function asList<T>(value: T | readonly T[] | null | undefined): readonly T[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? (value as readonly T[]) : [value as T];
}

/** The name the pipeline's (last) operation step gives, as the route model reads it. */
function operationOf(steps: readonly PolicyStepYaml[]): unknown {
  let name: unknown;
  for (const step of steps) {
    if (!isMap(step) || !('operation' in step)) continue;
    const actions = asList(step.operation);
    const last = actions[actions.length - 1];
    if (isMap(last) && isMap(last.action)) name = last.action.name;
  }
  return name;
}

/** True for an action written without params (none, null or `{}`). */
function withoutParams(action: ActionYaml): boolean {
  return action.action === undefined || action.action === null || (isMap(action.action) && Object.keys(action.action).length === 0);
}

/** A step with the params its operation implies put in each action written without any; the step itself when none is. */
function stepWithParams(step: PolicyStepYaml, operation: NonNullable<ReturnType<typeof operationNamed>>): PolicyStepYaml {
  if (!isMap(step)) return step;
  const keys = Object.keys(step);
  const policy = keys[0];
  if (keys.length !== 1 || policy === undefined || !FROM_CATALOG.has(policy)) return step;
  const implied = impliedParams(policy, operation);
  // Nothing to fill in: none implied, or only empty params (sensitive-data takes none).
  if (!implied || implied.every((params) => Object.keys(params).length === 0)) return step;
  const written = asList(step[policy]);
  // No action listed (`- ownership: []`, or left empty): one unconditional action per implied map.
  if (written.length === 0) return { [policy]: implied.map((params) => ({ action: { ...params } })) };
  if (!written.some((a) => isMap(a) && withoutParams(a))) return step;
  // An action listed without params (under its condition, if any) takes every implied map.
  const actions = written.flatMap((a) => (isMap(a) && withoutParams(a) ? implied.map((params) => ({ ...a, action: { ...params } })) : [a]));
  return { [policy]: actions };
}

function pipelineWithParams(pipeline: PipelineYaml): PipelineYaml {
  if (!isMap(pipeline)) return pipeline;
  const key = pipeline.policies ? 'policies' : pipeline.policy ? 'policy' : undefined;
  if (key === undefined) return pipeline;
  const steps = asList(pipeline[key]);
  const operation = operationNamed(operationOf(steps));
  if (!operation) return pipeline;
  const resolved = steps.map((step) => stepWithParams(step, operation));
  return resolved.every((step, i) => step === steps[i]) ? pipeline : { ...pipeline, [key]: resolved };
}

/**
 * The configuration with, in each pipeline, the params of the steps written without them that
 * follow from the operation the pipeline ends in (`ownership`, `validate`, `sensitive-data`:
 * gateway/catalog/policy-contracts.ts, `impliedParams`), as if they were written. What the boot's
 * rules check, the policy audit prints and the pipelines are built from is this configuration:
 * params written and agreeing with the catalog are kept as written; written ones that contradict
 * it are kept too, and the boot's rules refuse them; a step the catalog implies nothing for is left
 * as written (the boot's rules refuse a step without its params).
 *
 * Pure: the configuration is not changed (YAML aliases may share a step between pipelines); the
 * pipelines it changes are copies. Never throws on a configuration express-gateway would refuse.
 *
 * @example withCatalogParams(parsed).pipelines['get-card'].policies[2] // { ownership: [{ action: { resource: 'card', param: 'id' } }] }
 */
export function withCatalogParams(config: GatewayConfig): GatewayConfig {
  const pipelines = config.pipelines;
  if (!isMap(pipelines)) return config;
  let changed = false;
  const resolved: Record<string, PipelineYaml> = {};
  for (const [name, pipeline] of Object.entries(pipelines)) {
    const withParams = pipelineWithParams(pipeline);
    if (withParams !== pipeline) changed = true;
    resolved[name] = withParams;
  }
  return changed ? { ...config, pipelines: resolved } : config;
}
